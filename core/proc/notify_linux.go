package proc

import (
	"bytes"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/diffgate/diffgate/internal/fspath"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// The supervisor's side of seccomp user notification (seccomp_unotify(2)):
// the script's thread carries notifyFilter, whose listener the supervisor
// holds. A watched system call stops the calling thread until the
// supervisor answers; the supervisor reads what the call names (a path, a
// socket address) from the stopped process, decides, and answers:
//
//   - "continue" (the kernel carries the call out, and Landlock refuses
//     what it refuses: the supervisor only records that it will, because
//     the thread could change the path in its memory after it was read,
//     so letting the kernel decide is the only safe way);
//   - an error, for what Landlock cannot express: a write through a path
//     inside the workspace that must stay read-only (.git/hooks, a hard
//     link to a file outside), or a change of a file's mode, owner, times
//     or attributes outside the writable roots. Refusing on what was read
//     is safe (a refusal lets nothing through); the race only lets a
//     determined script turn an allowed call into a refused one's target,
//     which is why these refusals are recorded as best effort;
//   - the call's result, for a call the supervisor carries out itself on
//     the script's behalf with what it read (connect and addressed sends:
//     the socket is fetched with pidfd_getfd, so no later change of the
//     script's memory can redirect it), or a stand-in socket (ADDFD).

// Layout of the kernel's structures (include/uapi/linux/seccomp.h); the
// ioctl numbers encode their sizes (80, 24 and 24 bytes).
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	PID   uint32
	Flags uint32
	Data  seccompData
}

type seccompResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

type seccompAddfd struct {
	ID         uint64
	Flags      uint32
	Srcfd      uint32
	Newfd      uint32
	NewfdFlags uint32
}

// watchPolicy is what the watcher decides by. Paths are absolute and
// resolved in the supervisor's mount namespace (the script's).
type watchPolicy struct {
	// dirs are the writable directories; files the writable files
	// (device nodes): written to, never removed or changed in mode.
	dirs, files []string
	// deny are the paths the script may not read.
	deny []string
	// readOnly are paths inside the writable directories that stay
	// read-only (.git/hooks, .git/config); their ancestors may not be
	// renamed or removed either (that would put another in their place).
	readOnly []string
	// inodes are files inside the workspace that are hard links to a file
	// outside it: no name of theirs may be written through.
	inodes map[devIno]bool
	// noNet: the network is off (AF_INET/AF_INET6 get stand-ins).
	noNet bool
	// proxy, with the network off, is the gate's proxy as the script
	// names it; a stand-in's connect to it is connected to proxyUnix.
	proxy     netip.AddrPort
	proxyUnix string
	// What the kernel enforces (see watcher.outside): Landlock's write
	// rules, its read rules with every secret store hidden, the
	// read-only mounts.
	landlockWrites, landlockReads, mounts bool
}

type devIno struct{ dev, ino uint64 }

// watcher serves the notifications of one run.
type watcher struct {
	fd       int
	arch     *arch.Info
	pol      watchPolicy
	addfd    bool // stand-in sockets can be injected (SECCOMP_ADDFD_FLAG_SEND)
	handlers map[int32]handler
	names    map[int32]string
	rec      *recorder
	fakes    sync.Map // socket inode (uint64) -> family (int)
	dgrams   sync.Map // socket inode (uint64) of a stand-in for a datagram socket -> true
}

type handler func(w *watcher, n *seccompNotif, op string)

// newWatcher prepares a watcher for listener fd; it serves once start is
// called.
func newWatcher(fd int, a *arch.Info, pol watchPolicy, rec *recorder) *watcher {
	w := &watcher{fd: fd, arch: a, pol: pol, rec: rec, handlers: map[int32]handler{}, names: map[int32]string{}}
	set := func(h handler, names ...[]string) {
		for _, n := range known(a, names...) {
			nr := int32(a.SyscallNames[n] | a.SeccompMask)
			w.handlers[nr], w.names[nr] = h, n
		}
	}
	set((*watcher).onOpen, openNames)
	set((*watcher).onCreate, createNames)
	set((*watcher).onRemove, removeNames)
	set((*watcher).onMeta, metaNames)
	set((*watcher).onNet, []string{"connect", "sendto", "sendmsg", "sendmmsg", "bind", "setsockopt"})
	set((*watcher).onSocket, []string{"socket"})
	w.addfd = probeAddfd(fd)
	return w
}

// probeAddfd tells whether the kernel can inject a file descriptor and
// answer in one step (Linux 5.14): asking it to for a notification that
// does not exist fails with ENOENT only when it can.
func probeAddfd(fd int) bool {
	a := seccompAddfd{ID: 0, Flags: unix.SECCOMP_ADDFD_FLAG_SEND, Srcfd: uint32(fd)}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&a)))
	return errno == unix.ENOENT
}

// start serves notifications until the process exits (the listener
// lives as long as the supervisor: the forking thread, which carries the
// filter too, never exits).
//
// One receiver, on an OS thread of its own, answers each notification
// where it received it (calls that may block, a connect or a send, go on
// in goroutines of their own: onNet). A second receiver made each
// notification wake both (the kernel's wait queue of a listener is not
// exclusive) and cost the Go scheduler a hand-off of the other's P; and
// with one, the kernel can hand the CPU straight from the stopped caller
// to the receiver and back (syncWakeUp).
func (w *watcher) start() {
	syncWakeUp(w.fd)
	go w.serve()
}

// syncWakeUp asks the kernel (Linux 6.6) to wake the receiver, and the
// caller once answered, on the CPU of the one that wakes it
// (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP): the two take turns, so this saves
// an interprocessor wake-up each way. Only the scheduling changes: an
// older kernel refuses it (EINVAL) and goes on as before.
func syncWakeUp(fd int) {
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
}

func (w *watcher) serve() {
	runtime.LockOSThread() // never unlocked: the receiver's own thread
	var n seccompNotif
	for {
		n = seccompNotif{} // the kernel wants it zeroed
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(w.fd), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n)))
		switch errno {
		case 0:
		case unix.EINTR, unix.ENOENT: // ENOENT: the caller died meanwhile
			continue
		default:
			return
		}
		w.handle(&n)
	}
}

// handle answers one notification.
func (w *watcher) handle(n *seccompNotif) {
	if foreignABI(w.arch, &n.Data) {
		// Refused whatever it is (see foreignAction): its numbers
		// are not the native ones the handlers know.
		abi, tgt := foreignName(&n.Data)
		w.rec.add(int(n.PID), kindABI, tgt, abi)
		w.fail(n.ID, unix.ENOSYS)
		return
	}
	h := w.handlers[n.Data.Nr]
	if h == nil {
		w.cont(n.ID)
		return
	}
	h(w, n, w.names[n.Data.Nr])
}

// respond sends an answer; a caller that died meanwhile makes it fail
// with ENOENT, which is nothing to act on.
func (w *watcher) respond(r *seccompResp) {
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(w.fd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(r)))
}

// cont lets the kernel carry the call out.
func (w *watcher) cont(id uint64) {
	w.respond(&seccompResp{ID: id, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE})
}

// fail answers with an error.
func (w *watcher) fail(id uint64, e unix.Errno) {
	w.respond(&seccompResp{ID: id, Error: -int32(e)})
}

// ret answers with a result, or with the error err.
func (w *watcher) ret(id uint64, val int64, err error) {
	if err != nil {
		e, ok := err.(unix.Errno)
		if !ok {
			e = unix.EIO
		}
		w.fail(id, e)
		return
	}
	w.respond(&seccompResp{ID: id, Val: val})
}

// valid reports whether notification id is still pending: its caller is
// still stopped in it, so what was read from its pid is its own.
func (w *watcher) valid(id uint64) bool {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(w.fd), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	return errno == 0
}

// readMem reads n bytes at addr from task tid's memory. The error is
// EFAULT when they are not all mapped, EPERM when the task's memory cannot
// be read at all (a process that made itself not dumpable), ESRCH when it
// is gone.
func readMem(tid int, addr uint64, n int) ([]byte, unix.Errno) {
	if addr == 0 || n <= 0 {
		return nil, unix.EFAULT
	}
	buf := make([]byte, n)
	got, e := readMemInto(tid, addr, buf)
	if e != 0 {
		if e != unix.EFAULT {
			return nil, e
		}
		return buf[:got], e
	}
	return buf, 0
}

// readMemInto reads len(buf) bytes at addr from task tid's memory into
// buf, and returns how many it read: all of them, or fewer with EFAULT
// (the rest is not mapped), or with another error (see readMem).
func readMemInto(tid int, addr uint64, buf []byte) (int, unix.Errno) {
	got := 0
	for got < len(buf) {
		local := [1]unix.Iovec{{Base: &buf[got], Len: uint64(len(buf) - got)}}
		remote := [1]unix.RemoteIovec{{Base: uintptr(addr) + uintptr(got), Len: len(buf) - got}}
		k, err := unix.ProcessVMReadv(tid, local[:], remote[:], 0)
		if e, ok := err.(unix.Errno); ok && e != unix.EFAULT {
			return got, e
		}
		if err != nil || k <= 0 {
			return got, unix.EFAULT
		}
		got += k
	}
	return got, 0
}

// pathMax is the kernel's PATH_MAX, the NUL included.
const pathMax = 4096

// pathBufs holds buffers for readString: one per call would be a page to
// allocate and clear for every file the script opens.
var pathBufs = sync.Pool{New: func() any { return new([pathMax]byte) }}

// readString reads a NUL-terminated string (at most PATH_MAX bytes) at
// addr from task tid, at most a page at a time (a read across into an
// unmapped page fails as a whole), the first time only shortPath bytes
// (most paths are short: a page each costs the copy). A string longer
// than PATH_MAX is ENAMETOOLONG, as the kernel has it.
func readString(tid int, addr uint64) (string, unix.Errno) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	const shortPath = 256
	buf := pathBufs.Get().(*[pathMax]byte)
	defer pathBufs.Put(buf)
	got := 0
	for got < pathMax {
		chunk := min(4096-int((addr+uint64(got))%4096), pathMax-got)
		if got == 0 {
			chunk = min(chunk, shortPath)
		}
		k, e := readMemInto(tid, addr+uint64(got), buf[got:got+chunk])
		if i := bytes.IndexByte(buf[got:got+k], 0); i >= 0 {
			return string(buf[:got+i]), 0
		}
		if e != 0 {
			return "", e
		}
		got += k
	}
	return "", unix.ENAMETOOLONG
}

// refuse answers a call the watcher must see to allow but could not read:
// with the error the kernel would give a bad address, or, for a process
// whose memory cannot be read, EACCES and a record (it is not observable,
// so what it asked for is refused).
func (w *watcher) refuse(n *seccompNotif, e unix.Errno, kind, op string) {
	switch e {
	case unix.EPERM:
		w.rec.add(int(n.PID), kind, "(not observable: the process cannot be read)", op)
		w.fail(n.ID, unix.EACCES)
	case unix.ESRCH:
	default:
		w.fail(n.ID, e)
	}
}

// target is a file a call names, resolved as the kernel will resolve it.
type target struct {
	path   string // absolute, in the supervisor's (the script's) mount namespace
	exists bool
	id     devIno // of an existing target
	mode   uint32 // its type (S_IFMT bits)
	ok     bool   // false: it could not be resolved; err says why
	err    unix.Errno
	// denied: the supervisor was refused the way (EACCES, EPERM) and path
	// is the path as the call named it, made absolute (see resolve).
	denied bool
}

func failed(err error) target {
	e, ok := err.(unix.Errno)
	if !ok || e == 0 {
		e = unix.EACCES
	}
	return target{err: e}
}

// resolve resolves path relative to dirfd of task tid (AT_FDCWD: its
// working directory), following a final symlink when follow is set. A
// target that does not exist resolves to its parent's path plus its name.
// An empty path with emptyPath names dirfd itself.
func resolve(tid int, dirfd int32, path string, follow, emptyPath bool) target {
	return resolveAs(tid, dirfd, path, follow, emptyPath, true)
}

// resolveName is resolve for a call that only reads its target: an
// existing target's id and mode are left out (one system call less).
func resolveName(tid int, dirfd int32, path string, follow bool) target {
	return resolveAs(tid, dirfd, path, follow, false, false)
}

// resolveAs is resolve; stat asks for an existing target's id and mode.
func resolveAs(tid int, dirfd int32, path string, follow, emptyPath, stat bool) target {
	task := "/proc/" + strconv.Itoa(tid)
	if path == "" {
		if !emptyPath || dirfd == unix.AT_FDCWD {
			return target{err: unix.ENOENT}
		}
		return fdTarget(tid, int(dirfd))
	}
	path = taskPath(task, path)
	base, named, err := openBase(task, dirfd, path)
	if err != nil {
		return failed(err)
	}
	if base != unix.AT_FDCWD {
		defer unix.Close(base)
	}
	t, err := openExisting(base, path, follow, stat)
	switch {
	case err == nil:
		return t
	case err != unix.ENOENT:
		return refusedTarget(err, named)
	}
	return missingTarget(base, path, named)
}

// taskPath is path as task (/proc/TID) names it: /proc/self and
// /proc/thread-self would name the supervisor here.
func taskPath(task, path string) string {
	for _, self := range []string{"/proc/self", "/proc/thread-self"} {
		if path == self || strings.HasPrefix(path, self+"/") {
			path = task + path[len(self):]
		}
	}
	return path
}

// openBase opens the directory a relative path of task starts from
// (dirfd, or its working directory) and returns it with path made
// absolute (named); for an absolute path it is AT_FDCWD.
func openBase(task string, dirfd int32, path string) (base int, named string, err error) {
	if strings.HasPrefix(path, "/") {
		return unix.AT_FDCWD, path, nil
	}
	dir := task + "/cwd"
	if dirfd != unix.AT_FDCWD {
		dir = task + "/fd/" + strconv.Itoa(int(dirfd))
	}
	b, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOENT && dirfd != unix.AT_FDCWD {
			err = unix.EBADF
		}
		return unix.AT_FDCWD, "", err
	}
	return b, filepath.Join(fdPath(b), path), nil
}

// openExisting resolves path from base to a file that exists; stat asks
// for its id and mode.
func openExisting(base int, path string, follow, stat bool) (target, error) {
	flags := uint64(unix.O_PATH | unix.O_CLOEXEC)
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, p, err := openPath(base, path, flags)
	if err != nil {
		return target{}, err
	}
	defer unix.Close(fd)
	t := target{path: p, exists: true}
	var st unix.Stat_t
	if stat && unix.Fstat(fd, &st) == nil {
		t.id, t.mode = devIno{uint64(st.Dev), st.Ino}, st.Mode&unix.S_IFMT
	}
	t.ok = t.path != ""
	if !t.ok {
		t.err = unix.ENOENT
	}
	return t, nil
}

// openPath opens path from base (openat2 with flags) and returns the
// descriptor with the path it reached ("" when it has none: fdPath).
//
// An absolute path is walked first without following any symlink
// (RESOLVE_NO_SYMLINKS, which also refuses /proc's magic links): where
// that walk succeeds, the file it reached is the path made clean
// (filepath.Clean) — without a symlink on the way, ".." can only go to
// the parent of the name before it, across mount points too —, and the
// supervisor need not read it back from /proc (one system call less for
// most of what a script opens). A walk that failed for lack of the name
// failed before any symlink: the error is the kernel's. Any other
// failure (ELOOP: a symlink on the way) walks again, following them.
func openPath(base int, path string, flags uint64) (fd int, p string, err error) {
	if base == unix.AT_FDCWD && strings.HasPrefix(path, "/") {
		fd, err = unix.Openat2(base, path, &unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_NO_SYMLINKS})
		switch err {
		case nil:
			return fd, filepath.Clean(path), nil
		case unix.ENOENT:
			return -1, "", err
		}
	}
	fd, err = unix.Openat2(base, path, &unix.OpenHow{Flags: flags})
	if err != nil {
		return -1, "", err
	}
	return fd, fdPath(fd), nil
}

// refusedTarget is a way the supervisor could not go. It has at least the
// script's access: a way it is refused (a magic link of /proc/PID, root
// or cwd, of a process out of reach, a directory it may not search) is
// refused to the script, under the path the call named.
func refusedTarget(err error, named string) target {
	t := failed(err)
	if t.err == unix.EACCES || t.err == unix.EPERM {
		t.denied, t.path = true, named
	}
	return t
}

// missingTarget resolves a path from base that does not exist to its
// parent's path plus its name.
func missingTarget(base int, path, named string) target {
	dir, name, ok := splitParent(path)
	if !ok {
		return target{err: unix.ENOENT}
	}
	pfd, p, err := openPath(base, dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return refusedTarget(err, named)
	}
	defer unix.Close(pfd)
	if p == "" {
		return target{err: unix.ENOENT}
	}
	return target{path: filepath.Join(p, name), ok: true}
}

// splitParent splits a path into its parent directory ("." for none) and
// its last name; false when the last name is none, "." or "..".
func splitParent(path string) (dir, name string, ok bool) {
	dir, name = filepath.Split(strings.TrimRight(path, "/"))
	if name == "" || name == "." || name == ".." {
		return "", "", false
	}
	if dir == "" {
		dir = "."
	}
	return dir, name, true
}

// fdTarget is the file behind descriptor fd of task tid. A descriptor of
// something that is not in the file system (a pipe, a socket) gives a
// target that is not ok with err 0. A deleted file keeps its last path
// (and its inode: it may still have a name outside).
func fdTarget(tid, fd int) target {
	link := "/proc/" + strconv.Itoa(tid) + "/fd/" + strconv.Itoa(fd)
	p, err := os.Readlink(link)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Err == unix.ENOENT {
			return target{err: unix.EBADF}
		}
		return failed(unwrapErrno(err))
	}
	if !strings.HasPrefix(p, "/") {
		return target{}
	}
	t := target{path: strings.TrimSuffix(p, " (deleted)"), exists: true, ok: true}
	var st unix.Stat_t
	if unix.Stat(link, &st) == nil {
		t.id, t.mode = devIno{uint64(st.Dev), st.Ino}, st.Mode&unix.S_IFMT
	}
	return t
}

func unwrapErrno(err error) error {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return err
}

// fdPath is the path of a descriptor of ours ("" when it has none).
func fdPath(fd int) string {
	var link [32]byte
	var buf [pathMax]byte
	n, err := unix.Readlink(string(strconv.AppendInt(append(link[:0], "/proc/self/fd/"...), int64(fd), 10)), buf[:])
	if err != nil || n >= len(buf) || n == 0 || buf[0] != '/' || bytes.HasSuffix(buf[:n], []byte(" (deleted)")) {
		return ""
	}
	p := string(buf[:n])
	if outerRoot != "" && strings.HasPrefix(p, outerRoot+"/") {
		p = p[len(outerRoot):]
	}
	return p
}

// outerRoot is the gate's root directory as the supervisor reads it when
// that is not "/": under a chroot, a file the script reaches through the
// gate's /proc/PID/root or /proc/PID/cwd lies in the gate's mount
// namespace, outside the supervisor's root, and its path reads back with
// the chroot's own path in front (d_path stops at the namespace's root).
// Set once by setOuterRoot before the supervisor starts its goroutines.
var outerRoot string

// setOuterRoot records the root of process gate as this process sees it.
func setOuterRoot(gate int) {
	r, err := os.Readlink("/proc/" + strconv.Itoa(gate) + "/root")
	if err == nil && strings.HasPrefix(r, "/") && r != "/" {
		outerRoot = filepath.Clean(r)
	}
}

// within reports whether p is one of roots or below one.
func within(p string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return fspath.Within(p, r) })
}

// holds reports whether p is an ancestor of (or is) one of paths.
func holds(p string, paths []string) bool {
	return slices.ContainsFunc(paths, func(q string) bool { return fspath.Within(q, p) })
}

// tgid returns the process (thread group) of task tid, or tid.
func tgid(tid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err == nil {
		if i := bytes.Index(b, []byte("\nTgid:\t")); i >= 0 {
			rest := b[i+7:]
			if j := bytes.IndexByte(rest, '\n'); j >= 0 {
				if n, err := strconv.Atoi(string(rest[:j])); err == nil {
					return n
				}
			}
		}
	}
	return tid
}

// recorder keeps the distinct blocked actions of a run, ranked and bounded
// (blockedSet), counts repeats, and streams each new one to the gate as it
// happens (so that a script that then kills its supervisor does not take
// them with it).
type recorder struct {
	mu      sync.Mutex
	set     *blockedSet
	send    func(Blocked) // nil until the gate has the start message
	pending []Blocked
	held    map[uint64]heldAction
}

func newRecorder() *recorder { return &recorder{set: newBlockedSet()} }

// add records one blocked action of task tid.
func (r *recorder) add(tid int, kind, tgt, op string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := Blocked{Kind: kind, Target: tgt, Op: op, Count: 1}
	if !r.set.has(kind, tgt) { // a repeat needs no process details
		b.PID = tgid(tid)
		b.Cmd = cmdline(b.PID)
	}
	if !r.set.add(b) {
		return
	}
	if r.send == nil {
		r.pending = append(r.pending, b)
		return
	}
	r.send(b)
}

// stream starts streaming with send, first what was recorded before.
func (r *recorder) stream(send func(Blocked)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.send = send
	for _, b := range r.pending {
		send(b)
	}
	r.pending = nil
}

// result returns what was kept, ranked, and how many were dropped, by kind,
// the held actions no later call named included.
func (r *recorder) result() ([]Blocked, map[string]int) {
	r.mu.Lock()
	held := r.held
	r.held = nil
	r.mu.Unlock()
	for _, h := range held {
		r.add(h.tid, h.kind, h.tgt, h.op)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.set.list()
}

// heldAction is a blocked action recorded only if no later call names it
// better (a stand-in's connect to port 53, until its query is sent).
type heldAction struct {
	tid           int
	kind, tgt, op string
}

// hold keeps an action under key until release or the run's end (result
// records it then).
func (r *recorder) hold(key uint64, tid int, kind, tgt, op string) {
	r.mu.Lock()
	if len(r.held) >= maxBlockedPerKind {
		// Bounded: past it, recorded at once.
		r.mu.Unlock()
		r.add(tid, kind, tgt, op)
		return
	}
	defer r.mu.Unlock()
	if r.held == nil {
		r.held = map[uint64]heldAction{}
	}
	r.held[key] = heldAction{tid, kind, tgt, op}
}

// release forgets the action held under key and reports whether there
// was one.
func (r *recorder) release(key uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.held[key]
	delete(r.held, key)
	return ok
}

// holds reports whether an action is held under key.
func (r *recorder) holds(key uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.held[key]
	return ok
}
