//go:build !js

package history

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/diffgate/diffgate/core/report"
)

// enc appends a compact, unambiguous binary encoding: unsigned and signed
// varints, and strings as uvarint length + bytes. It stores lists in BLOB
// columns and feeds the canonical hash of a run.
type enc struct{ b []byte }

func (e *enc) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) str(s string)  { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) raw(b []byte)  { e.uint(uint64(len(b))); e.b = append(e.b, b...) }
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
	w, _ := flate.NewWriter(&buf, level) // a valid level never fails
	w.Write(data)
	w.Close()
	return buf.Bytes()
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
