package snapshot

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/diffgate/diffgate/internal/gcpause"
	"github.com/diffgate/diffgate/internal/oneline"
)

// Progress counts what a walk has done so far.
type Progress struct {
	// Entries is the number of entries recorded.
	Entries int64
	// Bytes is the number of content bytes hashed.
	Bytes int64
}

// Options tune Take. The zero value is ready to use.
type Options struct {
	// Workers is the number of goroutines listing and hashing; 0 picks a
	// number suited to the machine (a little more than GOMAXPROCS).
	Workers int
	// Progress, if set, is called periodically and once at the end with the
	// running totals. It may be called from several goroutines.
	Progress func(Progress)
	// Prior is an earlier manifest of the same tree. A file's hash is reused
	// when its device, inode, size, mtime and ctime all match the prior entry
	// and that ctime is older than Prior.CreatedAt minus Granularity (so a
	// change made in the same clock tick as the prior hash is never missed).
	// So is a symlink's target and, when the prior is Listed, a
	// directory's names: adding, removing or renaming a name sets the
	// directory's ctime to the time of the change, after the prior was
	// taken. Every name is still lstat'ed: a file's content does not
	// change its directory.
	Prior *Manifest
	// Granularity is the filesystem timestamp granularity assumed by the
	// reuse rule; 0 means 2 seconds.
	Granularity time.Duration
	// KeepMax, with Keep, asks for the content of regular files of at most
	// KeepMax bytes (read while hashing, no extra I/O).
	KeepMax int64
	// Keep receives kept contents; data is only valid during the call. It
	// may be called from several goroutines.
	Keep func(e *Entry, data []byte)
	// Exclude, if set, is called with each entry's relative path; returning
	// true leaves the entry (and, for a directory, everything below it) out.
	Exclude func(rel string) bool
	// KeepRoot takes root as it is: a root that is a symlink is recorded as
	// one (Manifest.Self), never followed, and a root that is not a
	// directory or cannot be opened or listed is recorded with an error
	// instead of failing Take. Only a missing root is still an error.
	KeepRoot bool
	// Partial makes a cancelled walk return what it recorded: the
	// directories it did not finish and the files it did not hash carry an
	// error ("not walked: cancelled", "not hashed: timed out").
	Partial bool
	// NoXattr skips extended attributes.
	NoXattr bool
	// NoMappedScan leaves out the record of the files some process maps
	// shared and writable (read from /proc/*/maps) that a walk without a
	// Prior keeps for the walk that will use its manifest as Prior: for a
	// manifest that is written out (the record is not part of the file) and
	// never used as a Prior in this process. A walk with a Prior reads the
	// maps regardless.
	NoMappedScan bool
}

// bigFile is the size above which a file is hashed as its own job, so large
// files in one directory are hashed in parallel.
const bigFile = 4 << 20

// bufSize is the read buffer per worker: small files are read in one call,
// large ones in few (larger buffers gain nothing measurable).
const bufSize = 256 << 10

// ErrRoot is wrapped by Take when the root cannot be walked at all.
var ErrRoot = errors.New("cannot snapshot")

// errStopped is returned by a hash cut short because the walk was cancelled.
var errStopped = errors.New("stopped")

// defaultWorkers is the number of walking goroutines when Options.Workers is
// 0. With a warm page cache every system call returns at once and the walk
// is CPU-bound, so one goroutine per core plus a few to cover the moments a
// goroutine waits (a cold read, the job queue) is fastest; far more only adds
// scheduler work (measured with tests/bench: see BenchmarkTake).
func defaultWorkers() int {
	n := runtime.GOMAXPROCS(0)
	return min(max(n+n/2, n+2), 32)
}

// Take walks root and returns its manifest. Only a missing or unreadable root
// is an error (with Options.KeepRoot, only a missing one); problems with
// single entries are recorded in Entry.Err.
//
// Every directory is opened relative to its parent's descriptor with
// O_NOFOLLOW|O_DIRECTORY: a directory swapped for a symlink mid-walk is not
// followed, and depth is not limited by PATH_MAX.
func Take(ctx context.Context, root string, opt Options) (*Manifest, error) {
	abs, err := filepath.Abs(root)
	if err == nil && !opt.KeepRoot {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrRoot, root, oneline.Reason(err))
	}
	return takeRoot(ctx, abs, root, opt)
}

// TakeDir is Take of a directory its caller resolved once (the gate's
// workspace): the root is not resolved again.
func TakeDir(ctx context.Context, root fspath.Dir, opt Options) (*Manifest, error) {
	if root.IsZero() {
		return nil, fmt.Errorf("%w: none given", ErrRoot)
	}
	return takeRoot(ctx, root.Path(), root.Given(), opt)
}

// takeRoot walks abs, the resolved root (root as given, for messages).
func takeRoot(ctx context.Context, abs, root string, opt Options) (*Manifest, error) {
	// The root is listed here, not by a worker, so that a root that cannot
	// be read is an error of Take rather than an entry's.
	self := &Entry{Path: ".", UID: -1, GID: -1}
	start := time.Now()
	sc := newScratch()
	d, err := openListRoot(abs, self, sc)
	if err != nil {
		if !opt.KeepRoot || self.Type == "" {
			if self.Type != "" && self.Type != Dir {
				return nil, fmt.Errorf("%w %s: not a directory", ErrRoot, root)
			}
			return nil, fmt.Errorf("%w %s: %v", ErrRoot, root, oneline.Reason(err))
		}
		// KeepRoot: the root is recorded as it is, nothing below it is known.
		return &Manifest{Root: abs, CreatedAt: start, Self: self}, nil
	}
	// What a walk allocates is its manifest: no collection while it grows
	// (see gcpause).
	defer gcpause.Hold()()
	w := newWalker(ctx, abs, opt, start)
	top := w.walk(d, self, sc)
	if err := ctx.Err(); err != nil && !opt.Partial {
		return nil, err
	}
	<-w.scanned
	return w.manifest(top, self), nil
}

// openListRoot opens the root and lists it into sc, recording its metadata
// in self; on an error self says what is known (its type, why it could not
// be opened or listed) and nothing is left open.
func openListRoot(abs string, self *Entry, sc *scratch) (dirHandle, error) {
	d, err := openRoot(abs, self)
	if err == nil {
		if err = d.list(sc); err != nil {
			d.close()
			self.Err = "cannot list directory: " + describe(err)
		}
	} else if self.Type != "" {
		self.Err = "cannot open directory: " + describe(err)
		if self.Type != Dir {
			self.Err = "not a directory"
		}
	}
	return d, err
}

// newWalker sets up a walk of abs: the hash cache's cutoff and the files it
// must never reuse (mapped shared and writable, now or when the prior was
// taken), and an arena sized by the prior.
func newWalker(ctx context.Context, abs string, opt Options, start time.Time) *walker {
	w := &walker{ctx: ctx, root: abs, opt: opt, start: start, xattr: xattrSupported && !opt.NoXattr}
	if p := opt.Prior; p != nil && len(p.Entries) > 0 && !p.Seed {
		g := opt.Granularity
		if g == 0 {
			g = 2 * time.Second
		}
		w.cutoff = p.CreatedAt.Add(-g).UnixNano()
		w.prior = p.Entries
		w.listings = p.Listed
		// Files mapped shared and writable now, or when the prior was
		// taken, can change without a ctime update: never reuse theirs.
		w.scanMapped(p.mapped, true)
	} else {
		// Nothing is reused, but the manifest records the mapped files
		// for the walk that will use it as its prior.
		w.scanMapped(nil, !opt.NoMappedScan)
	}
	if p := opt.Prior; p != nil && len(p.Entries) > 0 {
		w.arena = newArena(len(p.Entries))
	}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// scanMapped records in w.mapped the files some process maps shared and
// writable (sharedWritable; with scan false, none) and those of prior,
// in the background while the walk starts: w.scanned closes when it is
// done, and no hash is reused before (see mappedKnown).
func (w *walker) scanMapped(prior map[devIno]bool, scan bool) {
	w.scanned = make(chan struct{})
	go func() {
		defer close(w.scanned)
		var m map[devIno]bool
		if scan {
			m = sharedWritable()
		}
		for k := range prior {
			if m == nil {
				m = map[devIno]bool{}
			}
			m[k] = true
		}
		w.mapped = m
	}()
}

// mappedKnown waits, once per worker (sc), for the record of mapped files.
func (w *walker) mappedKnown(sc *scratch) {
	if !sc.mappedKnown {
		<-w.scanned
		sc.mappedKnown = true
	}
}

// walk lists the open root d (its listing in sc) on this goroutine while
// the workers take the directories and big files it queues, and returns
// the tree of what was recorded once every job is done (or, cancelled,
// abandoned).
func (w *walker) walk(d dirHandle, self *Entry, sc *scratch) *node {
	n := w.opt.Workers
	if n <= 0 {
		n = defaultWorkers()
	}
	stopWatch := context.AfterFunc(w.ctx, func() {
		w.stopped.Store(true)
		w.mu.Lock()
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stopWatch()
	stopTicker := w.tick()
	top := &node{}
	w.pending = 1 // the root, listed by this goroutine
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	if w.xattr {
		d.xattrs(self, sc)
	}
	sc.stop, sc.xattr = &w.stopped, w.xattr
	ref := &dirRef{d: d}
	ref.refs.Store(1)
	w.listDir(job{node: top, self: self, prior: w.prior}, ref, sc)
	ref.release()
	w.done()
	wg.Wait()
	stopTicker()
	// Jobs left in the queue by a cancelled walk: release their
	// directories, and say what they leave unknown.
	for _, j := range w.queue {
		w.abandon(j)
	}
	w.queue = nil
	return top
}

// manifest gathers the walk's tree into a sorted manifest.
func (w *walker) manifest(top *node, self *Entry) *Manifest {
	m := &Manifest{Root: w.root, CreatedAt: w.start, Self: self, mapped: w.mapped, Listed: w.opt.Exclude == nil}
	if w.arena != nil && !w.arenaMiss.Load() {
		m.Entries = w.gather(top)
		arenaWalks.Add(1)
	} else {
		m.Entries = top.emit(newEntries(int(w.total.Load())))
	}
	if !m.sorted() { // cannot happen: each directory is emitted in order
		unsortedWalks.Add(1)
		m.Sort()
	}
	return m
}

// stopCause says why a walk stopped early, for the entries it leaves unknown.
func (w *walker) stopCause() string {
	if errors.Is(w.ctx.Err(), context.DeadlineExceeded) {
		return "timed out"
	}
	return "cancelled"
}

// abandon releases a job the walk will not run and, for a partial
// manifest, marks what it leaves unknown.
func (w *walker) abandon(j job) {
	if j.file != nil {
		j.file.Err = "not hashed: " + w.stopCause()
	} else if j.self != nil {
		if j.unstatted {
			j.dir.d.lstat(j.name, j.self) // its metadata, as far as known
		}
		j.self.Err = "not walked: " + w.stopCause()
	}
	j.dir.release()
}

// dirRef is an open directory shared by the jobs that need it: its
// subdirectories (opened relative to it) and its big files. The last
// release closes it.
type dirRef struct {
	d    dirHandle
	refs atomic.Int32
}

func (r *dirRef) hold() *dirRef { r.refs.Add(1); return r }

func (r *dirRef) release() {
	if r != nil && r.refs.Add(-1) == 0 {
		r.d.close()
	}
}

// newEntries returns an empty slice with room for n entries, its memory
// mapped up front (see prefault).
func newEntries(n int) []Entry {
	s := make([]Entry, 0, n)
	if n > 0 {
		prefault(unsafe.Pointer(unsafe.SliceData(s)), uintptr(n)*unsafe.Sizeof(Entry{}))
	}
	return s
}

// slabEntries is the size of the blocks directory listings take their
// entries from.
const slabEntries = 2048

// newArena returns the block a walk whose prior manifest had n entries
// records its entries in: room for n and an eighth more (new files, and the
// directories a hash cache leaves out). The part a tree of the same size
// uses is prefaulted; the rest costs no memory until it is written.
func newArena(n int) []Entry {
	a := make([]Entry, n+n/8+1024)
	prefault(unsafe.Pointer(unsafe.SliceData(a)), uintptr(n)*unsafe.Sizeof(Entry{}))
	return a
}

// alloc returns an empty slice with room for exactly n entries and, when
// it was taken from the walk's arena, its index there (else -1). Without an
// arena (or once it is full) the slice is carved from the worker's current
// slab: a few large, prefaulted allocations instead of one per directory.
func (w *walker) alloc(sc *scratch, n int) ([]Entry, int) {
	if w.arena != nil && n > 0 {
		end := w.arenaUsed.Add(int64(n))
		if end <= int64(len(w.arena)) {
			off := int(end) - n
			return w.arena[off:off:end], off
		}
		w.arenaMiss.Store(true)
	}
	return sc.entries(n), -1
}

// gather turns the arena into the manifest's entries, in path order, in
// place: the walk's only copy of its entries is the manifest (a slab per
// worker and a sorted copy would hold every entry twice at the end of the
// walk, the largest part of a gated run's peak memory on a large tree).
func (w *walker) gather(top *node) []Entry {
	used := min(int(w.arenaUsed.Load()), len(w.arena))
	a := w.arena[:used]
	// src[k] is the arena index of the k-th entry in path order; the slots
	// no entry is emitted from (excluded, skipped duplicates, unused room)
	// follow, so src is a permutation of the arena.
	src := make([]int32, 0, used)
	src = top.emitIndex(src)
	n := len(src)
	emitted := make([]bool, used)
	for _, v := range src {
		emitted[v] = true
	}
	for i, ok := range emitted {
		if !ok {
			src = append(src, int32(i))
		}
	}
	// Apply the permutation cycle by cycle: a[k] = old a[src[k]]. emitted
	// is reused as the record of placed slots.
	done := emitted
	clear(done)
	for start := range a {
		if done[start] {
			continue
		}
		done[start] = true
		if int(src[start]) == start {
			continue
		}
		tmp := a[start]
		j := start
		for {
			s := int(src[j])
			if s == start {
				a[j] = tmp
				break
			}
			a[j] = a[s]
			done[s] = true
			j = s
		}
	}
	clear(a[n:]) // what was not emitted must not keep strings alive
	return a[:n:n]
}

// emitIndex appends the arena indexes of the subtree's entries to out in
// path order.
func (n *node) emitIndex(out []int32) []int32 {
	for _, v := range n.order {
		if v >= 0 {
			out = append(out, int32(n.base)+v)
		} else {
			out = n.subs[^v].node.emitIndex(out)
		}
	}
	return out
}

// entries returns an empty slice with room for exactly n entries, carved
// from the worker's current slab.
func (sc *scratch) entries(n int) []Entry {
	if n > slabEntries/4 {
		return newEntries(n)
	}
	if n > len(sc.slab) {
		sc.slab = newEntries(slabEntries)[:slabEntries]
	}
	s := sc.slab[:0:n]
	sc.slab = sc.slab[n:]
	return s
}

// unsortedWalks counts walks whose emission order needed a sort (tests check
// that it stays 0).
var unsortedWalks atomic.Int64

// arenaWalks counts walks whose manifest was gathered in the arena (tests
// check the arena is used when a prior gives the size).
var arenaWalks atomic.Int64

// node is one listed directory: its entries in listing order, the nodes of
// the subdirectories walked as jobs of their own, and, once listed, the order
// in which entries and subtrees are emitted so the manifest comes out sorted
// without a global sort.
type node struct {
	entries []Entry
	// base is the index of entries[0] in the walk's arena (-1: not in it).
	base int
	subs []sub
	// order holds i >= 0 for entries[i] and ^k for the subtree of subs[k].
	order []int32
}

// sub is the subtree of entries[idx], a directory.
type sub struct {
	idx  int32
	node *node
}

// emit appends the subtree's entries to out in path order.
func (n *node) emit(out []Entry) []Entry {
	for _, v := range n.order {
		if v >= 0 {
			out = append(out, n.entries[v])
		} else {
			out = n.subs[^v].node.emit(out)
		}
	}
	return out
}

// setOrder fills n.order so that emitting gives byte-ordered paths, from
// entries recorded in name order (sortListing). Within one directory, an
// entry's path ends in its name and the paths below a subdirectory all
// start with its name and a slash: the entries keep their order, and each
// subtree goes where name+"/" sorts among the names. That is right after
// its own entry unless later names extend its name with a byte below '/'
// ("a", "a-b", "a.txt", then "a/..."): such a subtree waits on a stack.
// A subtree waiting above another extends the other's name that way, so
// its name+"/" sorts first: the stack's top is always the next one due.
func (n *node) setOrder(prefix int) {
	order := make([]int32, 0, len(n.entries)+len(n.subs))
	var room [8]int32
	waiting := room[:0] // indexes into n.subs
	subName := func(k int32) string { return n.entries[n.subs[k].idx].Path[prefix:] }
	next := 0 // the next subtree, in entry order
	for i := range n.entries {
		name := n.entries[i].Path[prefix:]
		for len(waiting) > 0 && cmpName(subName(waiting[len(waiting)-1]), true, name, false) < 0 {
			order = append(order, ^waiting[len(waiting)-1])
			waiting = waiting[:len(waiting)-1]
		}
		order = append(order, int32(i))
		if next < len(n.subs) && int(n.subs[next].idx) == i {
			waiting = append(waiting, int32(next))
			next++
		}
	}
	for k := len(waiting) - 1; k >= 0; k-- {
		order = append(order, ^waiting[k])
	}
	n.order = order
}

// cmpName compares a+"/" (if as) with b+"/" (if bs) without building them.
// Names never contain '/'.
func cmpName(a string, as bool, b string, bs bool) int {
	k := min(len(a), len(b))
	if c := strings.Compare(a[:k], b[:k]); c != 0 {
		return c
	}
	// One name is a prefix of the other; what follows decides.
	next := func(s string, slash bool) int {
		switch {
		case k < len(s):
			return int(s[k])
		case slash:
			return '/'
		}
		return -1 // the string ends
	}
	x, y := next(a, as), next(b, bs)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	case x == -1 || len(a) == len(b):
		// Both end here, or equal names with the same slash.
		if as == bs {
			return 0
		}
		if bs {
			return -1
		}
		return 1
	}
	return 0
}

// sorted reports whether the entries are in strictly increasing path order.
func (m *Manifest) sorted() bool {
	for i := 1; i < len(m.Entries); i++ {
		if m.Entries[i-1].Path >= m.Entries[i].Path {
			return false
		}
	}
	return true
}

// job is a directory to list, or (file set) one big file to hash.
type job struct {
	// dir is the directory holding name: the subdirectory to list or the
	// big file to hash. The job holds a reference to it.
	dir  *dirRef
	name zname
	rel  string
	// node receives a directory's listing; self is the directory's own
	// entry in its parent.
	node *node
	self *Entry
	// file is a big file's entry.
	file *Entry
	// prior holds the prior entries below the directory, among others of
	// its parent's (priorUnder narrows it).
	prior []Entry
	// was is the directory's prior entry, when its names may be taken from
	// the prior (walker.listings).
	was *Entry
	// unstatted says self holds no metadata yet: the listing said
	// "directory" and the job records what it opens (or, when it cannot
	// open it, what lstat finds).
	unstatted bool
}

type walker struct {
	ctx     context.Context
	root    string
	opt     Options
	start   time.Time
	cutoff  int64
	prior   []Entry
	stopped atomic.Bool
	xattr   bool
	// listings: the prior is Listed, an unchanged directory's names may be
	// taken from it.
	listings bool
	// mapped, once scanned closes, holds the files whose hashes are never
	// reused (scanMapped).
	mapped  map[devIno]bool
	scanned chan struct{}

	// arena, when the size of the tree can be guessed (from a prior
	// manifest), holds every entry the walk records; arenaUsed counts the
	// slots handed out and arenaMiss says a listing did not fit.
	arena     []Entry
	arenaUsed atomic.Int64
	arenaMiss atomic.Bool

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []job
	pending int // jobs queued or running

	entries, bytes, total atomic.Int64
}

func (w *walker) push(j job) {
	w.mu.Lock()
	w.queue = append(w.queue, j)
	w.pending++
	w.mu.Unlock()
	w.cond.Signal()
}

// next blocks for a job; ok is false when all work is done.
func (w *walker) next() (job, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.queue) == 0 {
		if w.pending == 0 || w.stopped.Load() {
			return job{}, false
		}
		w.cond.Wait()
	}
	j := w.queue[len(w.queue)-1]
	w.queue[len(w.queue)-1] = job{}
	w.queue = w.queue[:len(w.queue)-1]
	return j, true
}

func (w *walker) done() {
	w.mu.Lock()
	w.pending--
	if w.pending == 0 {
		w.cond.Broadcast()
	}
	w.mu.Unlock()
}

func (w *walker) tick() (stop func()) {
	if w.opt.Progress == nil {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				w.opt.Progress(Progress{w.entries.Load(), w.bytes.Load()})
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		wg.Wait()
		w.opt.Progress(Progress{w.entries.Load(), w.bytes.Load()})
	}
}

// scratch is one worker's reusable memory: the read buffer, the SHA-256
// state and the directory listing.
type scratch struct {
	buf []byte
	h   hash.Hash
	sum [sha256.Size]byte
	// names holds a listing's names back to back; ents points into it.
	names []byte
	ents  []dirent
	// slab is what is left of the block entries are taken from.
	slab []Entry
	// stop, when set, cuts a running hash short; live, when set, receives
	// hashed byte counts as they are read (a big file's progress).
	stop *atomic.Bool
	live *atomic.Int64
	// xattr asks hashFile to record extended attributes; xbuf is their
	// list, xval the value being read.
	xattr bool
	xbuf  []byte
	xval  []byte
	// mappedKnown: this worker has waited for the walk's record of mapped
	// files (walker.mappedKnown).
	mappedKnown bool
	// noOverlay leaves overlayfs's own attributes out (Paths).
	noOverlay bool
	// overlayPrefix narrows noOverlay to one name space (Paths).
	overlayPrefix string
}

// digest returns the hash's sum in hex: one allocation, the string (the hex
// digits are written on the stack first).
func (sc *scratch) digest() string {
	var hx [2 * sha256.Size]byte
	hex.Encode(hx[:], sc.h.Sum(sc.sum[:0]))
	return string(hx[:])
}

// zeroBuf is fed to the hash for the holes of sparse files: zeros are
// hashed, never read.
var zeroBuf [256 << 10]byte

// zeros feeds n zero bytes to the hash.
func (sc *scratch) zeros(n int64) error {
	for n > 0 {
		if sc.stop != nil && sc.stop.Load() {
			return errStopped
		}
		k := min(n, int64(len(zeroBuf)))
		sc.h.Write(zeroBuf[:k])
		n -= k
		sc.progress(k)
	}
	return nil
}

// progress reports n more bytes hashed of a big file.
func (sc *scratch) progress(n int64) {
	if sc.live != nil {
		sc.live.Add(n)
	}
}

// dirent is one listed name, names[off:off+n] of the lister's scratch.
type dirent struct {
	// key is the name's first 8 bytes, big-endian, zero-padded: comparing
	// keys orders names by their first 8 bytes, and names never hold a
	// NUL, so equal keys of names shorter than 8 bytes mean equal names.
	// Sorting a listing then mostly compares integers, not bytes.
	key    uint64
	off, n int32
	// kind is the entry's type as the listing gives it (d_type).
	kind listedKind
}

// nameKey returns the sort key of a listed name (see dirent.key).
func nameKey[T string | []byte](name T) uint64 {
	var k [8]byte
	copy(k[:], name)
	return binary.BigEndian.Uint64(k[:])
}

// listedKind is an entry's type as a directory listing gives it: a hint,
// confirmed by the fstat of what is then opened.
type listedKind uint8

const (
	listedOther listedKind = iota // anything else, or not known (DT_UNKNOWN)
	listedFile
	listedDir
)

// kindOf turns a listing's type bits into a listedKind.
func kindOf(m fs.FileMode) listedKind {
	switch {
	case m.IsRegular():
		return listedFile
	case m.IsDir():
		return listedDir
	}
	return listedOther
}

func newScratch() *scratch {
	return &scratch{buf: make([]byte, bufSize), h: sha256.New()}
}

// add appends a listed name to the scratch.
func (sc *scratch) add(name []byte, kind listedKind) { addName(sc, name, kind) }

// addName is add for a name held as a string or as bytes.
func addName[T string | []byte](sc *scratch, name T, kind listedKind) {
	sc.ents = append(sc.ents, dirent{key: nameKey(name), off: int32(len(sc.names)), n: int32(len(name)), kind: kind})
	sc.names = append(sc.names, name...)
}

// name returns a listed name's bytes.
func (sc *scratch) name(de dirent) []byte { return sc.names[de.off : de.off+de.n] }

// sortListing puts the listing in byte order of the names and drops a
// name listed twice (a rename racing with the listing): entries are then
// recorded in the order the manifest wants them, subtrees need only be
// slotted in (setOrder), and the prior is searched in step (priorCursor).
func (sc *scratch) sortListing() {
	slices.SortFunc(sc.ents, func(a, b dirent) int {
		if a.key != b.key {
			return cmp.Compare(a.key, b.key)
		}
		return bytes.Compare(sc.name(a), sc.name(b))
	})
	sc.ents = slices.CompactFunc(sc.ents, func(a, b dirent) bool {
		return a.key == b.key && bytes.Equal(sc.name(a), sc.name(b))
	})
}

func (w *walker) work() {
	sc := newScratch()
	sc.stop = &w.stopped
	sc.xattr = w.xattr
	for {
		j, ok := w.next()
		if !ok {
			return
		}
		switch {
		case w.stopped.Load():
			w.abandon(j)
			w.done()
			continue
		case j.file != nil:
			w.hashBig(j, sc)
		default:
			w.walkDir(j, sc)
		}
		j.dir.release()
		w.done()
	}
}

// walkDir opens, lists and records a subdirectory.
func (w *walker) walkDir(j job, sc *scratch) {
	d, err := j.dir.d.openSub(j.name)
	if err != nil {
		if j.unstatted {
			w.listedLate(j, err)
			return
		}
		// The directory was recorded by its parent; note the problem there.
		j.self.Err = "cannot open directory: " + describe(err)
		return
	}
	// Record what was opened (a directory swapped for another between the
	// parent's lstat and this open is described as listed).
	if err := d.stat(j.self); err != nil {
		j.self.Err = "cannot open directory: " + describe(err)
		d.close()
		return
	}
	// j.was is nil unless the prior is Listed: then the directory still has
	// the names and the extended attributes the prior records of it when
	// it did not change.
	same := w.unchanged(j.was, j.self)
	if same && w.knownXattrs(j.was) {
		j.self.Xattr = j.was.Xattr
	} else if w.xattr {
		d.xattrs(j.self, sc)
	}
	ref := &dirRef{d: d}
	ref.refs.Store(1)
	if same {
		sc.listPrior(priorUnder(j.prior, j.rel+"/"), len(j.rel)+1)
	} else if err := d.list(sc); err != nil {
		j.self.Err = "cannot list directory: " + describe(err)
	}
	w.listDir(j, ref, sc)
	ref.release()
}

// listedLate records a directory its listing named (d_type) but that could
// not be opened, as the listing's lstat would have: its metadata from lstat
// and why it could not be walked (permission denied, mostly). One that
// vanished is recorded as vanished (type unknown). One that is no longer a
// directory (swapped for a symlink or a file since the listing) is still
// the directory that could not be opened, as when the listing had
// lstat'ed it before the swap, but with its metadata unknown: the open's
// error makes it unreadable, which no allowlist silences.
func (w *walker) listedLate(j job, openErr error) {
	e := j.self
	if err := j.dir.d.lstat(j.name, e); err != nil {
		e.Type, e.Err = Unknown, describe(err)
		return
	}
	if e.Type != Dir {
		*e = Entry{Path: e.Path, Type: Dir, UID: -1, GID: -1}
	}
	e.Err = "cannot open directory: " + describe(openErr)
}

// hashBig hashes one large file queued as its own job.
func (w *walker) hashBig(j job, sc *scratch) {
	sc.live = &w.bytes
	w.hashEntry(j.dir.d, j.name, j.file, sc, -1)
	sc.live = nil
	w.entries.Add(1)
}

// listDir records the entries d's listing (in sc) names into j.node,
// hashing small regular files on the way and queuing subdirectories and big
// files as jobs (each holding a reference to d).
func (w *walker) listDir(j job, ref *dirRef, sc *scratch) {
	d := ref.d
	n := j.node
	sc.sortListing()
	n.entries, n.base = w.alloc(sc, len(sc.ents)) // never grown: jobs point into it
	prefix := ""
	if j.rel != "" {
		prefix = j.rel + "/"
	}
	prior := priorCursor{prior: priorUnder(j.prior, prefix), plen: len(prefix)}
	paths := newPathBlock(sc, prefix)
	var recorded, hashed int64
	var subJobs []job
	for _, de := range sc.ents {
		if w.stopped.Load() {
			if w.opt.Partial && j.self.Err == "" {
				j.self.Err = "listing cut short: " + w.stopCause()
			}
			break
		}
		rel, name := paths.add(prefix, sc.name(de))
		if w.opt.Exclude != nil && w.opt.Exclude(rel) {
			continue
		}
		n.entries = append(n.entries, Entry{Path: rel, UID: -1, GID: -1})
		i := len(n.entries) - 1
		e := &n.entries[i]
		deferred, unstatted := false, false
		var was *Entry
		if de.kind == listedFile && w.cutoff == 0 {
			// Open, fstat and hash: no separate lstat needed.
			var nb int64
			deferred, nb = w.hashEntry(d, name, e, sc, bigFile)
			hashed += nb
		} else if de.kind == listedDir {
			// Its job opens it and records its metadata from fstat; only
			// a directory that cannot be opened is lstat'ed (listedLate).
			e.Type, unstatted = Dir, true
			if w.listings {
				was = prior.find(rel[len(prefix):])
			}
		} else if err := d.lstat(name, e); err != nil {
			if e.Type == "" {
				e.Type = Unknown
				if de.kind == listedFile {
					e.Type = File
				}
			}
			e.Err = describe(err)
		} else if e.Type == File && !w.reuse(e, &prior, sc) {
			var nb int64
			deferred, nb = w.hashEntry(d, name, e, sc, bigFile)
			hashed += nb
		} else if e.Type == Symlink && !w.reuseLink(e, &prior) {
			w.readlink(d, name, e)
		}
		if deferred {
			w.push(job{dir: ref.hold(), name: name, file: e})
			continue
		}
		recorded++
		if e.Type == Dir && e.Err == "" {
			kid := &node{}
			n.subs = append(n.subs, sub{idx: int32(i), node: kid})
			// Its prior entries sort after the names searched so far.
			subJobs = append(subJobs, job{dir: ref.hold(), name: name, rel: rel, node: kid, self: e, unstatted: unstatted,
				was: was, prior: prior.prior[prior.at:]})
		}
	}
	// The order is set before the subdirectories' jobs start: setOrder
	// reads their entries' paths, which a job may rewrite (listedLate).
	n.setOrder(len(prefix))
	for _, sj := range subJobs {
		w.push(sj)
	}
	w.total.Add(int64(len(n.entries)))
	w.entries.Add(recorded)
	w.bytes.Add(hashed)
}

// priorUnder returns the entries of p (the prior entries below the parent
// directory) whose paths start with prefix (all of them for the root): the
// only ones reuse needs to search.
func priorUnder(p []Entry, prefix string) []Entry {
	if prefix == "" || len(p) == 0 {
		return p
	}
	lo := sort.Search(len(p), func(i int) bool { return p[i].Path >= prefix })
	hi := lo + sort.Search(len(p)-lo, func(i int) bool { return !strings.HasPrefix(p[lo+i].Path, prefix) })
	return p[lo:hi]
}

// priorCursor finds a directory's files in the prior entries below it.
// Every path there starts with the directory's prefix (plen bytes), so only
// the rest is compared; and the listing is searched in name order, so each
// search starts where the last one ended (at): the next name is most often
// the next prior entry, or past a subtree that galloping skips in a few
// steps.
type priorCursor struct {
	prior []Entry
	plen  int
	at    int
}

// find returns the prior entry named name, or nil; name must not sort
// before the names found before.
func (c *priorCursor) find(name string) *Entry {
	p := c.prior
	// Gallop: every entry before lo sorts before name; widen the step
	// until an entry at hi does not, then search between.
	lo, hi, step := c.at, c.at, 1
	for hi < len(p) && p[hi].Path[c.plen:] < name {
		lo = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, len(p))
	i := lo + sort.Search(hi-lo, func(k int) bool { return p[lo+k].Path[c.plen:] >= name })
	c.at = i
	if i < len(p) && p[i].Path[c.plen:] == name {
		return &p[i]
	}
	return nil
}

// reuse copies the prior hash into e when the file provably did not change.
func (w *walker) reuse(e *Entry, prior *priorCursor, sc *scratch) bool {
	if w.cutoff == 0 || e.Ino == 0 {
		return false
	}
	w.mappedKnown(sc)
	if w.mapped[devIno{e.Dev, e.Ino}] {
		return false
	}
	p := prior.find(e.Path[prior.plen:])
	if !w.unchanged(p, e) || p.SHA256 == "" || !w.knownXattrs(p) {
		return false
	}
	e.SHA256 = p.SHA256
	// Setting an attribute changes ctime too: the prior's record of them
	// still holds.
	e.Xattr = p.Xattr
	return true
}

// knownXattrs reports whether the prior entry p records extended
// attributes whenever this walk records them. One that does not (a hash
// cache of format 0x03 or older, an attribute list that could not be read)
// is no record to reuse: the after-snapshot would read the attributes,
// and the diff compares none against an unknown side, so an attribute the
// script set would go unseen.
func (w *walker) knownXattrs(p *Entry) bool {
	return !w.xattr || p.Xattr != ""
}

// unchanged reports whether the prior entry p records what e's stat says,
// of the same type, with a ctime older than the cutoff: what was recorded
// from it then (a hash, a symlink's target, a directory's names, extended
// attributes) still holds, since changing any of it sets the ctime to now.
func (w *walker) unchanged(p, e *Entry) bool {
	return w.cutoff != 0 && p != nil && p.Err == "" && e.Ino != 0 && p.Type == e.Type &&
		p.Dev == e.Dev && p.Ino == e.Ino && p.Size == e.Size && p.MTime == e.MTime && p.CTime == e.CTime &&
		p.CTime < w.cutoff
}

// reuseLink copies the prior target into e, a symlink, when it is the
// same symlink: a symlink's target cannot be rewritten in place, and one
// made since the prior has a newer ctime.
func (w *walker) reuseLink(e *Entry, prior *priorCursor) bool {
	p := prior.find(e.Path[prior.plen:])
	if !w.unchanged(p, e) || p.Target == "" {
		return false
	}
	e.Target = p.Target
	return true
}

// listPrior fills the listing with the names of the prior entries directly
// below a directory (under: its prior entries, whose paths all start with
// its prefix of plen bytes), in name order, with their types.
func (sc *scratch) listPrior(under []Entry, plen int) {
	sc.names, sc.ents = sc.names[:0], sc.ents[:0]
	for i := 0; i < len(under); {
		name := under[i].Path[plen:]
		if k := strings.IndexByte(name, '/'); k >= 0 {
			// The subtree of a name listed before: skip all of it (its
			// paths share a prefix, so they are contiguous).
			pre := under[i].Path[:plen+k+1]
			i += sort.Search(len(under)-i, func(x int) bool { return !strings.HasPrefix(under[i+x].Path, pre) })
			continue
		}
		kind := listedOther
		switch under[i].Type {
		case File:
			kind = listedFile
		case Dir:
			kind = listedDir
		}
		addName(sc, name, kind)
		i++
	}
}

// hashEntry opens name (never following a symlink, never blocking), checks
// it is still the regular file that was listed, fills e's metadata from fstat
// and hashes it. A file larger than maxSize (when maxSize >= 0) is not read:
// hashEntry returns true so the caller queues it as a job of its own.
func (w *walker) hashEntry(d dirHandle, name zname, e *Entry, sc *scratch, maxSize int64) (deferred bool, n int64) {
	var keep func(e *Entry, data []byte)
	if w.opt.KeepMax > 0 {
		keep = w.opt.Keep
	}
	n, err := d.hashFile(name, e, sc, maxSize, w.opt.KeepMax, keep)
	switch {
	case err == nil:
	case errors.Is(err, errStopped):
		e.SHA256 = ""
		e.Err = "not hashed: " + w.stopCause()
	case errors.Is(err, errTooBig):
		return true, n
	case errors.Is(err, errNotRegular):
		// Swapped for something else mid-walk: record what it is now.
		if lerr := d.lstat(name, e); lerr != nil {
			e.Err = describe(lerr)
		} else if e.Type == Symlink {
			w.readlink(d, name, e)
		} else if e.Type == File {
			e.Err = "changed during the walk"
		}
	default:
		if e.Type == "" {
			e.Type = File
		}
		e.Err = "cannot read: " + describe(err)
	}
	return false, n
}

func (w *walker) readlink(d dirHandle, name zname, e *Entry) {
	if tgt, err := d.readlink(name); err != nil {
		e.Err = describe(err)
	} else {
		e.Target = tgt
	}
}

var (
	errNotRegular = errors.New("not a regular file")
	errTooBig     = errors.New("deferred")
)

// describe turns a per-entry error into a short, one-line message.
func describe(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "vanished during the walk"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return oneline.Reason(err)
}
