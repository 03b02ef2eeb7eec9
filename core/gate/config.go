// Package gate runs one script through the filesystem gate: validate inputs,
// snapshot the workspace, run the script under supervision, deal with
// leftover processes, snapshot again, diff, apply the allowlist and decide.
package gate

import (
	"net/netip"
	"time"

	"github.com/rs/zerolog"

	"github.com/diffgate/diffgate/core/contain"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/core/stage"
	"github.com/diffgate/diffgate/core/watch"
	"github.com/diffgate/diffgate/internal/fspath"
)

// Phase names a step of a gated run.
type Phase string

// Phases in order.
const (
	Validate  Phase = "validate"
	Before    Phase = "before-snapshot"
	Execute   Phase = "run"
	Leftovers Phase = "leftovers"
	After     Phase = "after-snapshot"
	Compare   Phase = "diff"
	Policy    Phase = "policy"
	Verdict   Phase = "verdict"
)

// Phases lists the phases in the order they run.
var Phases = []Phase{Validate, Before, Execute, Leftovers, After, Compare, Policy, Verdict}

// Progress is a progress event of a run.
type Progress struct {
	// Phase is the step under way.
	Phase Phase
	// Entries and Bytes count what the current snapshot has done so far.
	Entries, Bytes int64
	// Elapsed is the time since the run started.
	Elapsed time.Duration
}

// Config describes one gated run.
type Config struct {
	// Workspace is the directory the script runs in and the gate watches.
	Workspace string
	// Root is Workspace resolved once (core/pipeline's Preflight); the
	// zero Dir, or one resolved from another path, has the gate resolve
	// Workspace itself.
	Root fspath.Dir
	// Script is the script to run; Args follow it.
	Script string
	Args   []string
	// Allow holds the allowlist entries (policy syntax).
	Allow []string
	// Timeout bounds the script's run; 0 means none.
	Timeout time.Duration
	// KeepText is the largest file whose content is kept (in memory, outside
	// the workspace) for text diffs (default 256 KiB); KeepBudget bounds the
	// total kept (default 64 MiB), of which files that are not source-like
	// (in a vendor or cache tree, or over 64 KiB) take at most a quarter:
	// the source files a reviewer reads are kept first.
	KeepText, KeepBudget int64
	// DiffBudget bounds the text diffs of the report together (default 64
	// MiB), spent on violations first: a change past it has the DiffNote
	// "budget".
	DiffBudget int64
	// OutputKeep is how much of each output stream's head and tail the
	// report keeps (default 64 KiB each).
	OutputKeep int
	// Prior is an earlier manifest of the same workspace whose hashes may be
	// reused for files whose inode, size, mtime and ctime are unchanged.
	Prior *snapshot.Manifest
	// Stored, if set, looks up content by SHA-256 in a store kept outside the
	// workspace (the history): it supplies before-contents for text diffs of
	// files whose hash was reused and so were not read this run.
	Stored func(sha256 string) ([]byte, bool)
	// Granularity is the filesystem timestamp granularity the snapshots
	// assume for hash reuse (snapshot.Options.Granularity; 0: 2 s).
	Granularity time.Duration
	// Rehash disables hash reuse.
	Rehash bool
	// LockWait is how long the run waits for another run on the same
	// workspace (or one containing it, or inside it) to finish; 0: it fails
	// at once with a setup error naming the other run's pid.
	LockWait time.Duration
	// Progress receives progress events; may be called from several goroutines.
	Progress func(Progress)
	// Output receives the script's output as it comes; may be called from
	// several goroutines.
	Output func(s proc.Stream, p []byte)
	// Log receives structured logs; the zero Logger discards them.
	Log zerolog.Logger
	// Stage, when set, stages the run (core/stage): the script runs against
	// the stage (an overlay of the workspace, or a copy, which the gate
	// fills after the before-snapshot), the workspace stays untouched, and
	// the after-phase reads the stage instead of walking the workspace. It
	// must be a fresh stage of Workspace (stage.New, with the mechanism
	// stage.Probe chose). Result.After is then the before-snapshot: the
	// workspace as the run leaves it.
	Stage *stage.Stage
	// Shape is the workspace's shape as its latest full walk found it
	// (stage.Shape). With an overlay Stage and a Shape whose Delta holds,
	// the run takes no before-snapshot: the workspace is the before-state
	// and the upper layer the changes (stage.CheckDelta says where that
	// cannot stand in for a walk); Prior is then not used and Result.After
	// is nil (there is no new hash cache to store).
	Shape *stage.Shape
	// Contain is the run's containment policy (core/contain); the zero
	// value (Mode "") runs the script uncontained, as Mode "off" does.
	Contain contain.Policy
	// Watch lists paths outside the workspace to watch besides the default
	// set (core/watch): stat only, before and after the script, a change
	// there failing the run. A relative path is taken from the current
	// directory, a leading "~/" from the home directory. A path that exists
	// but cannot be stat'ed is a setup error; a missing one is watched.
	Watch []string
	// NoDefaultWatch leaves the default set (watch.Defaults: shell startup
	// files, ~/.ssh/authorized_keys, the crontab, autostart entries,
	// systemd user units, ...) out; Watch still applies.
	NoDefaultWatch bool
	// NetHosts maps host names to addresses in place of the resolver for
	// the proxy of --net-allow (a test hook: local servers under made-up
	// names; only a name mapped here may reach a loopback address, and
	// only when an exact entry allows it).
	NetHosts map[string][]netip.Addr
	// WatchEnv is what the default set depends on (home, user name, ...);
	// nil means watch.CurrentEnv().
	WatchEnv *watch.Env
}

// Result is the outcome of a gated run.
type Result struct {
	// Report is the verdict, reasons, process outcome and changes.
	Report *report.Report
	// After is the workspace's manifest after the script (the before
	// manifest is released once compared: on a large tree it is most of the
	// run's memory; the changes carry copies of their before entries).
	After *snapshot.Manifest
	// ScriptText is the script's content as it was run (bounded).
	ScriptText []byte
	// Contents returns a kept copy of content by SHA-256: before-contents of
	// small files (kept during the before-snapshot) and after-contents of
	// changed files. ok is false when the content was not kept.
	Contents func(sha256 string) (data []byte, ok bool)
	// Kept yields every kept content (small text files read this run,
	// before and after) with its SHA-256, for a store that keeps them for
	// the next run's text diffs.
	Kept func(yield func(sha256 string, data []byte) bool)
	// OverBudget yields the SHA-256 of every small text content the run
	// read but did not keep because KeepBudget was spent, so a store can
	// tell a later run why it has no copy (diff.NoteKeepBudget).
	OverBudget func(yield func(sha256 string) bool)
	// StageCost is what staging cost a staged run (nil for a direct run).
	StageCost *StageCost
	// Shape is the workspace's shape (stage.Shape) when the run walked the
	// whole workspace before its script and staged it, so the script could
	// not change it: nil otherwise.
	Shape *stage.Shape
	// Delta says the run took no before-snapshot (Config.Shape).
	Delta bool
}

// StageCost is what staging cost a run: preparing the stage (the copy of
// the workspace, for a copy stage) and reading the script's changes back.
type StageCost struct {
	Prepare, Read time.Duration
	// Copy says what the copy stage's copy held (zero for an overlay).
	Copy stage.CopyStats
}
