// Package report holds the outcome of one gated run (the model every view and
// export share) and writes it as JSON (schema diffgate.report/v1), Markdown
// and self-contained HTML.
package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/snapshot"
	"github.com/diffgate/diffgate/internal/count"
	"github.com/diffgate/diffgate/internal/quote"
)

// Schema is the version tag of the JSON report.
const Schema = "diffgate.report/v1"

// Verdicts.
const (
	Pass = "pass"
	Fail = "fail"
)

// Report is the outcome of one gated run, exactly the contract's JSON fields.
type Report struct {
	Schema    string   `json:"schema"`
	Verdict   string   `json:"verdict"`
	Reasons   []string `json:"reasons"`
	Workspace string   `json:"workspace"`
	Script    Script   `json:"script"`
	Allowlist []string `json:"allowlist"`
	// AllowlistApproved names the approved version Allowlist came from
	// (--allowlist-from-history; an extension).
	AllowlistApproved *ApprovedAllowlist `json:"allowlist_approved,omitempty"`
	StartedAt         time.Time          `json:"started_at"`
	FinishedAt        time.Time          `json:"finished_at"`
	Process           Process            `json:"process"`
	Changes           []diff.Change      `json:"changes"`
	// Unreadable lists the entries the gate could not fully read before or
	// after the run (an extension): each fails the gate.
	Unreadable []diff.Unknown `json:"unreadable,omitempty"`
	// Containment says how the script was contained; nil for a report
	// made before containment existed (an extension).
	Containment *Containment `json:"containment,omitempty"`
	// Blocked lists the actions containment prevented, when they could be
	// observed (Containment.Observed; an extension): each fails the gate.
	Blocked []Blocked `json:"blocked,omitempty"`
	// Watch says which paths outside the workspace were watched (stat
	// only, before and after the run), and what could not be (an
	// extension); nil when nothing was watched (--no-watch, older reports).
	Watch *Watch `json:"watch,omitempty"`
	// Outside lists the changes found in the watched paths (an extension):
	// each fails the gate, and no allowlist entry allows one.
	Outside []Outside `json:"outside,omitempty"`
	// Network lists the requests a contained script made through the
	// gate's proxy (--net-allow; an extension), in the order they came;
	// NetworkDropped counts those beyond the list's bound. A refused one
	// is a blocked action too (Blocked, kind "net").
	Network        []NetRequest `json:"network,omitempty"`
	NetworkDropped int          `json:"network_dropped,omitempty"`
	// WorkspaceB64 carries the raw bytes of a Workspace that is not valid
	// UTF-8 (base64); WriteJSON sets it and Parse reads it (an extension).
	WorkspaceB64 string `json:"workspace_b64,omitempty"`
	// Stage is set for a staged run (diffgate run --stage): how it was
	// staged and what became of the stage (an extension).
	Stage *Stage `json:"stage,omitempty"`
	// Review is a reviewer's draft allowlist, decision, note and the verdict
	// the draft gives (an extension): apart from Allowlist and Verdict,
	// which are the run's own.
	Review *Review `json:"review,omitempty"`
}

// Stage states, as in the report's stage object.
const (
	StagePending          = "pending"
	StageApplied          = "applied"
	StagePartiallyApplied = "partially-applied"
	StageDiscarded        = "discarded"
	StageExpired          = "expired"
)

// Stage is a staged run's stage: its mechanism ("overlay" or "copy") and
// state (StagePending, ...). ID names the stage directory (core/stage); it
// is kept by the history, not written into the report.
type Stage struct {
	Mechanism string `json:"mechanism"`
	State     string `json:"state"`
	// Requested is the mechanism asked for (run --stage-mechanism): auto
	// (the probe picked Mechanism), overlay or copy. An extension, in the
	// report a run writes; a run reopened from the history has none.
	Requested string `json:"requested,omitempty"`
	// Cost is what staging cost the run (an extension; a run reopened from
	// the history has none).
	Cost *StageCost `json:"cost,omitempty"`
	// RunAt is the path a copy stage's script ran at when it could not run
	// at the workspace's own (no mount namespace to bind the copy there):
	// absolute paths the script wrote (a venv's shebangs) name it.
	RunAt string `json:"run_at,omitempty"`
	ID    string `json:"-"`
}

// StageCost is what staging cost a run: preparing the stage (the copy of a
// copy stage) and reading the script's changes back from it.
type StageCost struct {
	PrepareMS   float64 `json:"prepare_ms"`
	ReadMS      float64 `json:"read_ms"`
	CopiedFiles int     `json:"copied_files,omitempty"`
	CopiedBytes int64   `json:"copied_bytes,omitempty"`
}

// Summary says in one line how the run was staged, where its changes are
// and, when known, what staging cost.
func (s *Stage) Summary() string {
	line := "staged (" + s.Mechanism + "), " + s.State
	if s.State == StagePending {
		line += ": nothing is in the workspace until the run is applied"
	}
	if c := s.Cost; c != nil {
		line += fmt.Sprintf("; prepared in %.1f ms", c.PrepareMS)
		if c.CopiedFiles > 0 {
			line += fmt.Sprintf(" (copied %s, %s)", count.Of(c.CopiedFiles, "file"), Size(c.CopiedBytes))
		}
		line += fmt.Sprintf(", read back in %.1f ms", c.ReadMS)
	}
	if n := s.RunAtNote(); n != "" {
		line += "; " + n
	}
	return line
}

// RunAtNote says where a copy stage's script ran when it could not run at
// the workspace's path ("" when it did).
func (s *Stage) RunAtNote() string {
	if s == nil || s.RunAt == "" {
		return ""
	}
	return "the script ran at " + quote.Path(s.RunAt) + ", not at the workspace's path: absolute paths it wrote name the stage"
}

// ApprovedAllowlist is an approved allowlist version a run used.
type ApprovedAllowlist struct {
	Version int `json:"version"`
	// ApprovedAt and Note are the approval's (unset in a report read back
	// from the history, which keeps the version only).
	ApprovedAt *time.Time `json:"approved_at,omitempty"`
	Note       string     `json:"note,omitempty"`
	// ApprovedBy is who approved the version: a user name, or on a team
	// store the database role (an extension).
	ApprovedBy string `json:"approved_by,omitempty"`
}

// Line is the stderr line naming the version:
// "allowlist: version 3, approved 2026-12-02T01:02:03Z (note)".
func (a *ApprovedAllowlist) Line() string {
	line := fmt.Sprintf("allowlist: version %d", a.Version)
	if a.ApprovedAt != nil {
		line += ", approved " + a.ApprovedAt.UTC().Format(time.RFC3339)
	}
	if a.ApprovedBy != "" {
		line += " by " + a.ApprovedBy
	}
	if a.Note != "" {
		line += " (" + a.Note + ")"
	}
	return quote.Text(line)
}

// Script identifies what was run.
type Script struct {
	Path   string   `json:"path"`
	SHA256 string   `json:"sha256"`
	Args   []string `json:"args"`
	// Command is the program that ran, when it is not Path itself: an
	// interpreter such as /usr/bin/bash whose script file (Path) is among
	// the Args (an extension).
	Command string `json:"command,omitempty"`
	// PathB64, CommandB64 and ArgsB64 carry the raw bytes (base64) of a
	// path, command or argument list that is not valid UTF-8 (ArgsB64: every
	// argument, when any is invalid); WriteJSON sets them and Parse reads
	// them (extensions).
	PathB64    string   `json:"path_b64,omitempty"`
	CommandB64 string   `json:"command_b64,omitempty"`
	ArgsB64    []string `json:"args_b64,omitempty"`
	// Inline is set when the script is the interpreter's inline code
	// (sh -c CODE): SHA256 and the kept text are the code's (an extension).
	Inline bool `json:"inline,omitempty"`
}

// maxScriptLine bounds Script.Line.
const maxScriptLine = 200

// Line names the script in one line, for the history list, the Markdown
// and the app's banner: its path, or for inline code the command line that
// ran it, sh -c 'CODE' (the interpreter's base name, its inline option and
// the code in single quotes, white space runs as one space), cut to 200
// characters with "…".
func (s *Script) Line() string {
	if !s.Inline {
		return s.Path
	}
	code, flag := "", ""
	for i, a := range s.Args {
		if (a == "-c" || a == "-e") && i+1 < len(s.Args) {
			flag, code = a, s.Args[i+1]
			break
		}
	}
	if flag == "" {
		return s.Path
	}
	code = strings.Join(strings.Fields(code), " ")
	line := filepath.Base(s.Path) + " " + flag + " '" + strings.ReplaceAll(code, "'", `'\''`) + "'"
	if utf8.RuneCountInString(line) > maxScriptLine {
		r := []rune(line)
		line = string(r[:maxScriptLine-1]) + "…"
	}
	return line
}

// Process is what became of the script's process tree.
type Process struct {
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal"`
	TimedOut bool   `json:"timed_out"`
	// Timeout is the limit the run had, as a Go duration ("" for none; an extension).
	Timeout string `json:"timeout,omitempty"`
	// Cancelled is set when the reviewer cancelled the run (an extension).
	Cancelled bool       `json:"cancelled,omitempty"`
	Leftovers []Leftover `json:"leftovers"`
	// Supervisor is "killed", "stopped" or "failed" when the supervisor did
	// not see the run to its end, most likely because the script killed or
	// stopped it (the gate then killed the tree itself); "" otherwise (an
	// extension).
	Supervisor string `json:"supervisor,omitempty"`
	StdoutTail string `json:"stdout_tail"`
	StderrTail string `json:"stderr_tail"`
	// StdoutHead and StderrHead hold the start of long output (extensions).
	StdoutHead string `json:"stdout_head,omitempty"`
	StderrHead string `json:"stderr_head,omitempty"`
}

// Leftover is a process still alive after the script's main process exited.
type Leftover struct {
	PID int    `json:"pid"`
	Cmd string `json:"cmd"`
}

// Containment says how the script was contained (an extension; see the
// contract's "Containment" section): what was requested, what was
// enforced layer by layer, and why a layer is missing.
type Containment struct {
	// Mode is the --contain value: "auto", "on" or "off".
	Mode string `json:"mode"`
	// Contained is true when every requested layer was enforced.
	Contained bool `json:"contained"`
	// LandlockABI is the kernel's Landlock ABI version (0: none or not probed).
	LandlockABI int `json:"landlock_abi"`
	// Layers lists each layer: env, filesystem, secrets, network, signals.
	Layers []Layer `json:"layers"`
	// Observed says whether blocked actions were observed (and listed in
	// Blocked); Why gives the reason when they were not.
	Observed bool   `json:"observed"`
	Why      string `json:"why,omitempty"`
	// BlockedDropped counts the distinct blocked actions beyond the
	// bound of the Blocked list (an extension).
	BlockedDropped int `json:"blocked_dropped,omitempty"`
	// BlockedDroppedKinds counts BlockedDropped by kind (an extension): the
	// list keeps each kind's highest-ranked actions (a secret store's
	// read, a write in the home directory), never burying one under
	// another kind's flood.
	BlockedDroppedKinds map[string]int `json:"blocked_dropped_by_kind,omitempty"`
	// Grants lists what the run was granted beyond the default
	// containment: --writable, --net, --env, --deny-read, a profile's
	// cache and settings, the stage (an extension).
	Grants []Grant `json:"grants,omitempty"`
	// DroppedEnv names the variables of the gate's environment the script
	// did not get (names only, never values; an extension).
	DroppedEnv []string `json:"env_dropped,omitempty"`
}

// Grant is one thing a run was granted beyond the default containment.
type Grant struct {
	// Kind (the contract's names): "writable", "net" (Target "all" for
	// --net, or a host of --net-allow), "env", "deny_read", "cache",
	// "hosts" (a profile's), "stage_mechanism".
	Kind string `json:"kind"`
	// Target is the path, host, variable (NAME, or NAME=VALUE for a
	// profile's setting; never the value of an --env) or mechanism.
	Target string `json:"target"`
	// By names what asked for it: a flag ("--writable") or a profile
	// ("preset:node").
	By string `json:"by"`
}

// GrantsLine is the grants in one line for the summary and the banner:
// "granted: cache GOCACHE=…; writable /x" ("" when none).
func (c *Containment) GrantsLine() string {
	if c == nil || len(c.Grants) == 0 {
		return ""
	}
	parts := make([]string, 0, len(c.Grants))
	for _, g := range c.Grants {
		switch g.Kind {
		case "net", "hosts":
			if g.Target == "all" {
				parts = append(parts, "network (everything)")
			} else {
				parts = append(parts, "network to "+g.Target)
			}
		case "stage_mechanism":
			parts = append(parts, "stage "+g.Target)
		case "deny_read":
			parts = append(parts, "deny-read "+g.Target)
		default:
			parts = append(parts, g.Kind+" "+g.Target)
		}
	}
	return "granted: " + strings.Join(parts, "; ")
}

// Layer is one layer of containment.
type Layer struct {
	Name      string `json:"name"`
	Requested bool   `json:"requested"`
	Enforced  bool   `json:"enforced"`
	// How says how it was enforced; Why why it was not.
	How string `json:"how,omitempty"`
	Why string `json:"why,omitempty"`
}

// Blocked is one action containment prevented, as the supervisor saw it
// (seccomp user notification) or the kernel reported it.
type Blocked struct {
	// Kind is what was attempted: "read" (a secret store), "write",
	// "create", "delete", "rename", "metadata" (chmod, chown, utime,
	// xattr), "net" (a connect, send or bind; Target is ADDR:PORT, or
	// the socket's path), "fork" or "memory" (a limit reached),
	// "syscall-abi" (a system call of a foreign ABI, i386 or x32; Target
	// is the ABI, the call and its number: "i386 socket (359)").
	Kind string `json:"kind"`
	// Target is the absolute path, the address, or the limit.
	Target string `json:"target"`
	// PID and Cmd are the process that tried it (the first one).
	PID int    `json:"pid"`
	Cmd string `json:"cmd"`
	// Op names the system call or mechanism ("openat", "connect",
	// "pids.max"); Count says how many times the same kind and target
	// were blocked (an extension; at least 1).
	Op    string `json:"op,omitempty"`
	Count int    `json:"count,omitempty"`
	// TargetB64 carries the raw bytes of a Target that is not valid UTF-8
	// (base64); WriteJSON sets it and Parse reads it.
	TargetB64 string `json:"target_b64,omitempty"`
}

// Line renders b as the CLI's "BLOCKED KIND TARGET" line, with
// " (N times)" when the same action was blocked more than once; the target
// is quoted as a path is.
func (b *Blocked) Line() string {
	line := "BLOCKED " + quote.Text(b.Kind) + " " + quote.Path(b.Target)
	if b.Count > 1 {
		line += fmt.Sprintf(" (%d times)", b.Count)
	}
	return line
}

// Watch is what the gate watched outside the workspace: each path (a file,
// a directory walked to a bound, or a path that does not exist yet),
// stat-only, before and after the run.
type Watch struct {
	Paths []WatchedPath `json:"paths"`
	// Entries counts the entries recorded before the run, in all paths.
	Entries int `json:"entries"`
	// Unwatchable lists what the gate could not stat (or list), before
	// and after the run alike, and why: what it hides is not known. A path
	// that became unwatchable during the run is a change (Outside).
	Unwatchable []Unwatchable `json:"unwatchable,omitempty"`
}

// WatchedPath is one path of the watch.
type WatchedPath struct {
	// Path is absolute.
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
	// Default is set for a path of the default set (not named by --watch).
	Default bool `json:"default,omitempty"`
	// Via names the symlink this path is the target of: a watched symlink's
	// target is watched too.
	Via string `json:"via,omitempty"`
	// For names a path that could not be stat'ed and whose directory this
	// is: the directory is stat'ed only (its times change when an entry is
	// added to it, removed or renamed).
	For string `json:"for,omitempty"`
	// Entries counts what was recorded at and below it before the run (0:
	// it does not exist).
	Entries int `json:"entries"`
	// Cut names the bound that cut the walk of a directory ("10000
	// entries", "depth 8"): what lies beyond it was not watched.
	Cut string `json:"cut,omitempty"`
	// Skipped says why the path was not watched ("inside the workspace:
	// the diff covers it").
	Skipped string `json:"skipped,omitempty"`
}

// Unwatchable is a path the gate could not stat or list.
type Unwatchable struct {
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
	Reason  string `json:"reason"`
}

// Outside is a change found in a watched path outside the workspace: the
// path (absolute), its kind (added, removed or changed) and, for a
// change, what changed, from stat alone (its content is never read).
type Outside struct {
	Path    string    `json:"path"`
	PathB64 string    `json:"path_b64,omitempty"`
	Kind    diff.Kind `json:"kind"`
	// Aspects are Outside* words: what differs between Before and After.
	Aspects []string        `json:"aspects"`
	Before  *snapshot.Entry `json:"before,omitempty"`
	After   *snapshot.Entry `json:"after,omitempty"`
}

// What a change outside the workspace changed (Outside.Aspects).
const (
	OutsideType   = "type"
	OutsideMode   = "mode"
	OutsideOwner  = "owner"
	OutsideTarget = "target"
	OutsideSize   = "size"
	OutsideMTime  = "mtime"
	OutsideCTime  = "ctime"
	OutsideInode  = "inode"
	OutsideLinks  = "links"
	OutsideDevice = "device"
	// OutsideStat: the path could be stat'ed on one side only (the entry
	// of the other side carries the error).
	OutsideStat = "stat"
)

// Has reports whether o has aspect a.
func (o *Outside) Has(a string) bool { return slices.Contains(o.Aspects, a) }

// NotObservable is the line every format shows for a run whose
// containment was requested but whose blocked actions could not be
// observed: "blocked actions not observable: REASON" ("" otherwise).
func (c *Containment) NotObservable() string {
	if c == nil || c.Mode == "" || c.Mode == "off" || c.Observed {
		return ""
	}
	const prefix = "blocked actions not observable"
	why := strings.TrimSpace(c.Why)
	switch {
	case strings.HasPrefix(why, prefix):
		return why
	case why == "":
		return prefix + ": no reason given"
	}
	return prefix + ": " + why
}

// Missing returns the layers that were requested but not enforced.
func (c *Containment) Missing() []Layer {
	var out []Layer
	for _, l := range c.Layers {
		if l.Requested && !l.Enforced {
			out = append(out, l)
		}
	}
	return out
}

// Summary is the containment in one line: "contained: landlock v7,
// seccomp net-off, env allow list", or, for a run that was not fully
// contained, "NOT CONTAINED: LAYER (why), ..." ("" for nil).
func (c *Containment) Summary() string {
	if c == nil {
		return ""
	}
	if c.Mode == "off" {
		return "NOT CONTAINED: --contain=off"
	}
	if miss := c.Missing(); len(miss) > 0 {
		parts := make([]string, len(miss))
		for i, l := range miss {
			parts[i] = l.Name + " (" + l.Why + ")"
		}
		return "NOT CONTAINED: " + strings.Join(parts, ", ")
	}
	parts := []string{fmt.Sprintf("landlock v%d", c.LandlockABI)}
	for _, l := range c.Layers {
		switch {
		case l.Name != "network" || !l.Requested:
		case strings.HasPrefix(l.How, "seccomp"):
			parts = append(parts, "seccomp net-off")
		default:
			parts = append(parts, "network off (TCP only)")
		}
	}
	return "contained: " + strings.Join(append(parts, "env allow list"), ", ")
}

// NetRequest is one request through the gate's proxy: a plain HTTP
// request (Method is its method) or a CONNECT tunnel (HTTPS). BytesOut and
// BytesIn count what went to the server and came back (a plain request's
// bodies, everything through a tunnel). Addr is the address the name
// resolved to (the one checked and dialled). Reason says why a request
// was refused (Allowed false), or why an allowed one failed.
type NetRequest struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Method   string `json:"method"`
	BytesOut int64  `json:"bytes_out"`
	BytesIn  int64  `json:"bytes_in"`
	Allowed  bool   `json:"allowed"`
	Reason   string `json:"reason"`
	PID      int    `json:"pid"`
	Cmd      string `json:"cmd"`
	Addr     string `json:"addr,omitempty"`
}

// Target is the request's HOST:PORT.
func (n *NetRequest) Target() string {
	h := n.Host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return fmt.Sprintf("%s:%d", h, n.Port)
}

// NetworkSummary says in one line what went through the proxy: "network:
// 14 requests to registry.npmjs.org, 1 refused: 203.0.113.7"; "" when
// nothing did.
func (r *Report) NetworkSummary() string {
	n := len(r.Network) + r.NetworkDropped
	if n == 0 {
		return ""
	}
	var hosts, refused []string
	seen := map[string]bool{}
	nRefused := 0
	for i := range r.Network {
		q := &r.Network[i]
		key := q.Host
		if !q.Allowed {
			nRefused++
			key = "!" + key
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if q.Allowed {
			hosts = append(hosts, quote.Text(q.Host))
		} else {
			refused = append(refused, quote.Text(q.Host))
		}
	}
	list := func(hs []string) string {
		if len(hs) > 5 {
			return strings.Join(hs[:5], ", ") + fmt.Sprintf(" and %d more", len(hs)-5)
		}
		return strings.Join(hs, ", ")
	}
	line := "network: " + count.Of(n, "request")
	if len(hosts) > 0 {
		line += " to " + list(hosts)
	}
	if nRefused > 0 {
		line += fmt.Sprintf(", %d refused: %s", nRefused, list(refused))
	}
	return line
}
