//go:build !js

package history

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
)

// enc appends a compact, unambiguous binary encoding: unsigned and signed
// varints, and strings as uvarint length + bytes. It stores lists in BLOB
// columns and feeds the canonical hash of a run.
type enc struct{ b []byte }

func (e *enc) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) str(s string)  { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) raw(b []byte)  { e.uint(uint64(len(b))); e.b = append(e.b, b...) }

// xattr writes a hash cache entry's extended attributes
// (snapshot.Entry.Xattr): 0 unknown, 1 none (the common case: one byte);
// a record written before (where every file has an SELinux label, most
// share one) as 2 + twice its number in seen; a new one as 3, then the
// record, and it is numbered next.
func (e *enc) xattr(x string, seen map[string]uint64) {
	switch i, ok := seen[x]; {
	case x == "":
		e.uint(0)
	case x == snapshot.XattrNone:
		e.uint(1)
	case ok:
		e.uint(2 + 2*i)
	default:
		seen[x] = uint64(len(seen))
		e.uint(3)
		e.str(x)
	}
}
func (e *enc) bool(v bool) {
	if v {
		e.uint(1)
	} else {
		e.uint(0)
	}
}

// dec reads what enc wrote; the first error sticks.
type dec struct {
	b   []byte
	err error
}

var errCorruptBlob = errors.New("corrupt encoded value")

func (d *dec) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorruptBlob
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCorruptBlob
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) bytes() []byte {
	n := d.uint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errCorruptBlob
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string { return string(d.bytes()) }

// count reads a list length, bounded by the bytes left (each item takes at
// least min bytes).
func (d *dec) count(min int) int {
	n := d.uint()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.err = errCorruptBlob
		return 0
	}
	return int(n)
}

// encodeList encodes a list of strings (never nil, so the column is NOT NULL).
func encodeList(ss []string) []byte {
	e := enc{b: []byte{}}
	e.uint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
	return e.b
}

// decodeList decodes encodeList's output; an empty list is non-nil.
func decodeList(b []byte) ([]string, error) {
	d := dec{b: b}
	n := d.count(1)
	out := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.str())
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorruptBlob
	}
	return out, d.err
}

func encodeLeftovers(ls []report.Leftover) []byte {
	e := enc{b: []byte{}}
	e.uint(uint64(len(ls)))
	for _, l := range ls {
		e.int(int64(l.PID))
		e.str(l.Cmd)
	}
	return e.b
}

func decodeLeftovers(b []byte) ([]report.Leftover, error) {
	d := dec{b: b}
	n := d.count(2)
	out := make([]report.Leftover, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, report.Leftover{PID: int(d.int()), Cmd: d.str()})
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorruptBlob
	}
	return out, d.err
}

// deflate compresses data with raw DEFLATE at the given level.
func deflate(data []byte, level int) []byte {
	var buf bytes.Buffer
	buf.Grow(len(data)/2 + 64)
	// A flate.Writer is about 1 MiB of state: recording a run with
	// thousands of changed files made one per content, gigabytes of
	// garbage and a heap far above what the run holds.
	w := getFlater(level)
	w.Reset(&buf)
	w.Write(data)
	w.Close()
	putFlater(level, w)
	return buf.Bytes()
}

// flaters keeps a few idle writers per compression level (HuffmanOnly..
// BestCompression). Not a sync.Pool: that drops writers at every
// collection, and at random under the race detector.
var (
	flaterMu sync.Mutex
	flaters  [flate.BestCompression - flate.HuffmanOnly + 1][]*flate.Writer
)

func getFlater(level int) *flate.Writer {
	flaterMu.Lock()
	free := flaters[level-flate.HuffmanOnly]
	if n := len(free); n > 0 {
		w := free[n-1]
		flaters[level-flate.HuffmanOnly] = free[:n-1]
		flaterMu.Unlock()
		return w
	}
	flaterMu.Unlock()
	w, _ := flate.NewWriter(nil, level) // a valid level never fails
	return w
}

func putFlater(level int, w *flate.Writer) {
	w.Reset(nil)
	flaterMu.Lock()
	if free := &flaters[level-flate.HuffmanOnly]; len(*free) < 4 {
		*free = append(*free, w)
	}
	flaterMu.Unlock()
}

// inflate decompresses DEFLATE data, refusing output beyond max bytes.
func inflate(data []byte, max int64) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(data))
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	if int64(len(out)) > max {
		return nil, errors.New("decompress: larger than recorded")
	}
	return out, nil
}

// Entry encoding: a snapshot.Entry's metadata (its path is the change's),
// version 1. The SHA-256 is stored raw when it is 64 lowercase hex digits.
const entryV1 = 1

func encodeEntry(x *snapshot.Entry) []byte {
	e := enc{b: make([]byte, 0, 64+len(x.Target)+len(x.Err))}
	e.uint(entryV1)
	e.str(string(x.Type))
	e.uint(uint64(x.Perm))
	e.int(x.Size)
	e.int(x.UID)
	e.int(x.GID)
	e.int(x.MTime)
	e.int(x.CTime)
	e.uint(x.Dev)
	e.uint(x.Ino)
	var sum [32]byte
	switch {
	case x.SHA256 == "":
		e.uint(0)
	case isHexSHA(x.SHA256):
		hex.Decode(sum[:], []byte(x.SHA256))
		e.uint(1)
		e.b = append(e.b, sum[:]...)
	default:
		e.uint(2)
		e.str(x.SHA256)
	}
	e.str(x.Target)
	e.uint(x.Rdev)
	e.str(x.Err)
	// Later fields, only when set: older encodings (and their hashes) stay
	// as they were. The link count comes after the xattrs, written (even
	// empty) when the count is.
	if x.Xattr != "" || x.Nlink != 0 {
		e.str(x.Xattr)
	}
	if x.Nlink != 0 {
		e.uint(uint64(x.Nlink))
	}
	return e.b
}

func decodeEntry(b []byte, path string) (*snapshot.Entry, error) {
	d := dec{b: b}
	if v := d.uint(); v != entryV1 && d.err == nil {
		return nil, fmt.Errorf("entry encoding version %d", v)
	}
	x := &snapshot.Entry{Path: path}
	x.Type = snapshot.Type(d.str())
	x.Perm = uint32(d.uint())
	x.Size = d.int()
	x.UID, x.GID = d.int(), d.int()
	x.MTime, x.CTime = d.int(), d.int()
	x.Dev, x.Ino = d.uint(), d.uint()
	switch d.uint() {
	case 0:
	case 1:
		if d.err == nil && len(d.b) < 32 {
			d.err = errCorruptBlob
			break
		}
		if d.err == nil {
			x.SHA256 = hex.EncodeToString(d.b[:32])
			d.b = d.b[32:]
		}
	case 2:
		x.SHA256 = d.str()
	default:
		d.err = errCorruptBlob
	}
	x.Target = d.str()
	x.Rdev = d.uint()
	x.Err = d.str()
	if d.err == nil && len(d.b) != 0 {
		x.Xattr = d.str()
	}
	if d.err == nil && len(d.b) != 0 {
		if n := d.uint(); n <= 1<<32-1 {
			x.Nlink = uint32(n)
		} else if d.err == nil {
			d.err = errCorruptBlob
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorruptBlob
	}
	if d.err != nil {
		return nil, d.err
	}
	return x, nil
}

// isHexSHA reports whether s is 64 lowercase hex digits.
func isHexSHA(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !lowerHex[s[i]] {
			return false
		}
	}
	return true
}

var lowerHex = func() (t [256]bool) {
	for _, c := range "0123456789abcdef" {
		t[c] = true
	}
	return t
}()

// Run extras: the report extensions that have no column of their own.
// Version 1; version 2 (a staged run's) adds the stage's id and mechanism
// (its state is not the run's: see stage_events). Empty when the run has
// none of them.
const (
	extraV1 = 1
	extraV2 = 2
	// extraV3 adds the containment object (report.Containment, as JSON).
	extraV3 = 3
	// extraV4 has version 3's fields (the containment object behind a
	// flag), then the blocked actions, the watch and the changes outside
	// the workspace, encoded field by field (raw bytes: a path that is not
	// valid UTF-8 stays as it was).
	extraV4 = 4
	// extraV5 has version 4's fields, then the requests through the
	// gate's proxy (report.Network) and how many were left out.
	extraV5 = 5
)

func encodeExtra(r *report.Report) []byte {
	p := &r.Process
	network := len(r.Network) > 0 || r.NetworkDropped > 0
	guarded := len(r.Blocked) > 0 || r.Watch != nil || len(r.Outside) > 0 || network
	if r.Script.Command == "" && !r.Script.Inline && p.Supervisor == "" && len(r.Unreadable) == 0 && r.Stage == nil && r.Containment == nil && !guarded {
		return nil
	}
	var e enc
	var contained []byte
	if r.Containment != nil {
		var err error
		if contained, err = json.Marshal(r.Containment); err != nil {
			contained = nil
		}
	}
	switch {
	case guarded || r.Containment != nil:
		// Version 3: a stage flag, then version 1's fields, then the
		// containment object (JSON). Version 4: the same with the
		// containment object behind a flag, then the blocked actions, the
		// watch and the outside changes.
		switch {
		case network:
			e.uint(extraV5)
		case guarded:
			e.uint(extraV4)
		default:
			e.uint(extraV3)
		}
		e.bool(r.Stage != nil)
		if r.Stage != nil {
			e.str(r.Stage.ID)
			e.str(r.Stage.Mechanism)
		}
	case r.Stage != nil:
		e.uint(extraV2)
		e.str(r.Stage.ID)
		e.str(r.Stage.Mechanism)
	default:
		e.uint(extraV1)
	}
	e.str(r.Script.Command)
	e.bool(r.Script.Inline)
	e.str(p.Supervisor)
	e.uint(uint64(len(r.Unreadable)))
	for _, u := range r.Unreadable {
		e.str(u.Path)
		e.str(u.When)
		e.str(u.Reason)
	}
	if guarded {
		e.bool(r.Containment != nil)
	}
	if r.Containment != nil {
		e.str(string(contained))
	}
	if guarded {
		encodeGuarded(&e, r)
	}
	if network {
		encodeNetwork(&e, r)
	}
	return e.b
}

// encodeNetwork appends the requests through the proxy.
func encodeNetwork(e *enc, r *report.Report) {
	e.uint(uint64(len(r.Network)))
	for _, n := range r.Network {
		e.str(n.Host)
		e.int(int64(n.Port))
		e.str(n.Method)
		e.int(n.BytesOut)
		e.int(n.BytesIn)
		e.bool(n.Allowed)
		e.str(n.Reason)
		e.int(int64(n.PID))
		e.str(n.Cmd)
		e.str(n.Addr)
	}
	e.int(int64(r.NetworkDropped))
}

// decodeNetwork reads what encodeNetwork wrote.
func decodeNetwork(d *dec, r *report.Report) {
	if n := d.count(10); n > 0 {
		r.Network = make([]report.NetRequest, n)
		for i := range r.Network {
			q := &r.Network[i]
			q.Host = d.str()
			q.Port = int(d.int())
			q.Method = d.str()
			q.BytesOut, q.BytesIn = d.int(), d.int()
			q.Allowed = d.uint() == 1
			q.Reason = d.str()
			q.PID = int(d.int())
			q.Cmd, q.Addr = d.str(), d.str()
		}
	}
	r.NetworkDropped = int(d.int())
}

// encodeGuarded appends the blocked actions, the watch (a flag first) and
// the changes outside the workspace.
func encodeGuarded(e *enc, r *report.Report) {
	e.uint(uint64(len(r.Blocked)))
	for _, b := range r.Blocked {
		e.str(b.Kind)
		e.str(b.Target)
		e.int(int64(b.PID))
		e.str(b.Cmd)
		e.str(b.Op)
		e.int(int64(b.Count))
	}
	e.bool(r.Watch != nil)
	if w := r.Watch; w != nil {
		e.int(int64(w.Entries))
		e.uint(uint64(len(w.Paths)))
		for _, p := range w.Paths {
			e.str(p.Path)
			e.bool(p.Default)
			e.str(p.Via)
			e.int(int64(p.Entries))
			e.str(p.Cut)
			e.str(p.Skipped)
			e.str(p.For)
		}
		e.uint(uint64(len(w.Unwatchable)))
		for _, u := range w.Unwatchable {
			e.str(u.Path)
			e.str(u.Reason)
		}
	}
	e.uint(uint64(len(r.Outside)))
	for _, o := range r.Outside {
		e.str(o.Path)
		e.str(string(o.Kind))
		e.raw(encodeList(o.Aspects))
		for _, side := range []*snapshot.Entry{o.Before, o.After} {
			e.bool(side != nil)
			if side != nil {
				e.raw(encodeEntry(side))
			}
		}
	}
}

// decodeGuarded reads what encodeGuarded wrote.
func decodeGuarded(d *dec, r *report.Report) {
	if n := d.count(6); n > 0 {
		r.Blocked = make([]report.Blocked, n)
		for i := range r.Blocked {
			b := &r.Blocked[i]
			b.Kind, b.Target = d.str(), d.str()
			b.PID = int(d.int())
			b.Cmd, b.Op = d.str(), d.str()
			b.Count = int(d.int())
		}
	}
	if d.uint() == 1 {
		w := &report.Watch{Entries: int(d.int())}
		w.Paths = make([]report.WatchedPath, d.count(7))
		for i := range w.Paths {
			p := &w.Paths[i]
			p.Path = d.str()
			p.Default = d.uint() == 1
			p.Via = d.str()
			p.Entries = int(d.int())
			p.Cut, p.Skipped, p.For = d.str(), d.str(), d.str()
		}
		if n := d.count(2); n > 0 {
			w.Unwatchable = make([]report.Unwatchable, n)
			for i := range w.Unwatchable {
				w.Unwatchable[i].Path, w.Unwatchable[i].Reason = d.str(), d.str()
			}
		}
		r.Watch = w
	}
	if n := d.count(5); n > 0 {
		r.Outside = make([]report.Outside, n)
		for i := range r.Outside {
			o := &r.Outside[i]
			o.Path, o.Kind = d.str(), diff.Kind(d.str())
			aspects, err := decodeList(d.bytes())
			if err != nil && d.err == nil {
				d.err = err
			}
			o.Aspects = aspects
			for _, side := range []**snapshot.Entry{&o.Before, &o.After} {
				if d.uint() != 1 {
					continue
				}
				x, err := decodeEntry(d.bytes(), o.Path)
				if err != nil && d.err == nil {
					d.err = err
				}
				*side = x
			}
		}
	}
}

func decodeExtra(b []byte, r *report.Report) error {
	if len(b) == 0 {
		return nil
	}
	d := dec{b: b}
	v := d.uint()
	switch {
	case d.err != nil, v == extraV1:
	case v == extraV2:
		r.Stage = &report.Stage{ID: d.str(), Mechanism: d.str(), State: report.StagePending}
	case v == extraV3 || v == extraV4 || v == extraV5:
		if d.uint() == 1 {
			r.Stage = &report.Stage{ID: d.str(), Mechanism: d.str(), State: report.StagePending}
		}
	default:
		return fmt.Errorf("extra encoding version %d", v)
	}
	r.Script.Command = d.str()
	r.Script.Inline = d.uint() == 1
	r.Process.Supervisor = d.str()
	if n := d.count(3); n > 0 {
		r.Unreadable = make([]diff.Unknown, n)
		for i := range r.Unreadable {
			u := &r.Unreadable[i]
			u.Path, u.When, u.Reason = d.str(), d.str(), d.str()
		}
	}
	if (v == extraV3 || v >= extraV4 && d.uint() == 1) && d.err == nil {
		var c report.Containment
		if err := json.Unmarshal([]byte(d.str()), &c); err != nil && d.err == nil {
			d.err = errCorruptBlob
		}
		r.Containment = &c
	}
	if v >= extraV4 && d.err == nil {
		decodeGuarded(&d, r)
	}
	if v == extraV5 && d.err == nil {
		decodeNetwork(&d, r)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorruptBlob
	}
	return d.err
}
