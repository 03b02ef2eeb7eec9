package snapshot

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
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
	// number suited to the machine (system calls dominate, so more than cores).
	Workers int
	// Progress, if set, is called periodically and once at the end with the
	// running totals. It may be called from several goroutines.
	Progress func(Progress)
	// Prior is an earlier manifest of the same tree. A file's hash is reused
	// when its device, inode, size, mtime and ctime all match the prior entry
	// and that ctime is older than Prior.CreatedAt minus Granularity (so a
	// change made in the same clock tick as the prior hash is never missed).
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
}

// bigFile is the size above which a file is hashed as its own job, so large
// files in one directory are hashed in parallel.
const bigFile = 4 << 20

// bufSize is the read buffer per worker.
const bufSize = 256 << 10

// ErrRoot is wrapped by Take when the root cannot be walked at all.
var ErrRoot = errors.New("cannot snapshot")

// Take walks root and returns its manifest. Only a missing or unreadable root
// is an error; problems with single entries are recorded in Entry.Err.
func Take(ctx context.Context, root string, opt Options) (*Manifest, error) {
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrRoot, root, oneLine(err))
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrRoot, root, oneLine(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w %s: not a directory", ErrRoot, root)
	}
	d, err := openDir(abs)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrRoot, root, oneLine(err))
	}
	if _, err := d.list(); err != nil {
		d.close()
		return nil, fmt.Errorf("%w %s: %v", ErrRoot, root, oneLine(err))
	}
	d.close()

	w := &walker{ctx: ctx, root: abs, opt: opt, start: time.Now()}
	if opt.Prior != nil && len(opt.Prior.Entries) > 0 && !opt.Prior.Seed {
		g := opt.Granularity
		if g == 0 {
			g = 2 * time.Second
		}
		w.cutoff = opt.Prior.CreatedAt.Add(-g).UnixNano()
	}
	n := opt.Workers
	if n <= 0 {
		n = 4 * runtime.GOMAXPROCS(0)
		if n > 32 {
			n = 32
		}
	}
	w.cond = sync.NewCond(&w.mu)
	w.queue = []job{{abs: abs}}
	w.pending = 1
	results := make([][]Entry, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = w.work()
		}(i)
	}
	stopTicker := w.tick()
	wg.Wait()
	stopTicker()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	total := 0
	for _, r := range results {
		total += len(r)
	}
	m := &Manifest{Root: abs, CreatedAt: w.start, Entries: make([]Entry, 0, total)}
	for _, r := range results {
		m.Entries = append(m.Entries, r...)
	}
	m.Sort()
	return m, nil
}

// job is a directory to list, or (file set) one big file to hash.
type job struct {
	abs, rel string
	file     *Entry
}

type walker struct {
	ctx    context.Context
	root   string
	opt    Options
	start  time.Time
	cutoff int64

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []job
	pending int // jobs queued or running

	entries, bytes atomic.Int64
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
		if w.pending == 0 {
			return job{}, false
		}
		w.cond.Wait()
	}
	j := w.queue[len(w.queue)-1]
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

// hasher is one worker's reusable read buffer and SHA-256 state.
type hasher struct {
	buf []byte
	h   hash.Hash
	sum [sha256.Size]byte
}

func (w *walker) work() []Entry {
	var out []Entry
	hs := &hasher{buf: make([]byte, bufSize), h: sha256.New()}
	for {
		j, ok := w.next()
		if !ok {
			return out
		}
		if w.ctx.Err() == nil {
			if j.file != nil {
				w.hashBig(j, hs)
				w.entries.Add(1)
				out = append(out, *j.file)
			} else {
				out = w.listDir(j, hs, out)
			}
		}
		w.done()
	}
}

// hashBig hashes one large file queued as its own job.
func (w *walker) hashBig(j job, hs *hasher) {
	d, err := openDir(filepath.Dir(j.abs))
	if err != nil {
		j.file.Err = oneLine(err)
		return
	}
	defer d.close()
	w.hashEntry(d, filepath.Base(j.abs), j.file, hs, -1)
}

func (w *walker) listDir(j job, hs *hasher, out []Entry) []Entry {
	d, err := openDir(j.abs)
	if err != nil {
		// The directory itself was recorded by its parent; note the problem there.
		return append(out, Entry{Path: j.rel, Type: Dir, UID: -1, GID: -1, Err: "cannot open directory: " + oneLine(err)})
	}
	defer d.close()
	names, err := d.list()
	if err != nil {
		out = append(out, Entry{Path: j.rel, Type: Dir, UID: -1, GID: -1, Err: "cannot list directory: " + oneLine(err)})
	}
	for _, de := range names {
		if w.ctx.Err() != nil {
			return out
		}
		name := de.Name()
		rel := name
		if j.rel != "" {
			rel = j.rel + "/" + name
		}
		if w.opt.Exclude != nil && w.opt.Exclude(rel) {
			continue
		}
		e := Entry{Path: rel, UID: -1, GID: -1}
		deferred := false
		if t := de.Type(); t.IsRegular() && w.cutoff == 0 {
			// Open, fstat and hash: no separate lstat needed.
			deferred = w.hashEntry(d, name, &e, hs, bigFile)
		} else if err := d.lstat(name, &e); err != nil {
			e.Type = typeOf(t)
			e.Err = describe(err)
		} else if e.Type == File && !w.reuse(&e) {
			deferred = w.hashEntry(d, name, &e, hs, bigFile)
		} else if e.Type == Symlink {
			w.readlink(d, name, &e)
		}
		if deferred {
			w.push(job{abs: j.abs + string(filepath.Separator) + name, rel: rel, file: &e})
			continue
		}
		if e.Type == Dir && e.Err == "" {
			w.push(job{abs: j.abs + string(filepath.Separator) + name, rel: rel})
		}
		w.entries.Add(1)
		out = append(out, e)
	}
	return out
}

// reuse copies the prior hash into e when the file provably did not change.
func (w *walker) reuse(e *Entry) bool {
	if w.cutoff == 0 || e.Ino == 0 {
		return false
	}
	p := w.opt.Prior.Lookup(e.Path)
	if p == nil || p.Type != File || p.SHA256 == "" || p.Err != "" {
		return false
	}
	if p.Dev != e.Dev || p.Ino != e.Ino || p.Size != e.Size || p.MTime != e.MTime || p.CTime != e.CTime || p.CTime >= w.cutoff {
		return false
	}
	e.SHA256 = p.SHA256
	return true
}

// hashEntry opens name (never following a symlink, never blocking), checks
// it is still the regular file that was listed, fills e's metadata from fstat
// and hashes it. A file larger than maxSize (when maxSize >= 0) is not read:
// hashEntry returns true so the caller queues it as a job of its own.
func (w *walker) hashEntry(d dirHandle, name string, e *Entry, hs *hasher, maxSize int64) (deferred bool) {
	var keep func(data []byte)
	if w.opt.Keep != nil && w.opt.KeepMax > 0 {
		keep = func(data []byte) { w.opt.Keep(e, data) }
	}
	n, err := d.hashFile(name, e, hs, maxSize, w.opt.KeepMax, keep)
	w.bytes.Add(n)
	switch {
	case err == nil:
	case errors.Is(err, errTooBig):
		return true
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
		e.Err = describe(err)
	}
	return false
}

func (w *walker) readlink(d dirHandle, name string, e *Entry) {
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
	return oneLine(err)
}

func oneLine(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	s := err.Error()
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

