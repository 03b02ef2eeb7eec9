//go:build !js

package pipeline

import (
	"context"

	"github.com/diffgate/diffgate/core/gate"
	"github.com/diffgate/diffgate/core/proc"
	"github.com/diffgate/diffgate/core/stage"
)

// The pipeline's API for the native front ends (see api.go): the gate's,
// the process runner's and the stage's types they need.

type (
	// Config describes one gated run (Options.Config).
	Config = gate.Config
	// GateResult is a gated run's outcome (Result embeds it).
	GateResult = gate.Result
	// Progress is a progress event of a run; Phase names its step.
	Progress = gate.Progress
	Phase    = gate.Phase
	// SetupError is a problem with a run's inputs: nothing ran.
	SetupError = gate.SetupError
	// StageCost is what staging cost a run.
	StageCost = gate.StageCost
	// Stream names the script's output stream (Config.Output).
	Stream = proc.Stream
	// StageMechanism is how a run is staged (overlay or copy).
	StageMechanism = stage.Mechanism
	// Stage is a staged run's stage.
	Stage = stage.Stage
	// StageProbe is what the stage probe found.
	StageProbe = stage.ProbeResult
	// ConflictError is Apply's refusal of changes that conflict with the
	// workspace as it is now.
	ConflictError = stage.ConflictError
)

// A run's phases, in order (Phases lists them).
const (
	PhaseValidate  = gate.Validate
	PhaseBefore    = gate.Before
	PhaseExecute   = gate.Execute
	PhaseLeftovers = gate.Leftovers
	PhaseAfter     = gate.After
	PhaseCompare   = gate.Compare
	PhasePolicy    = gate.Policy
	PhaseVerdict   = gate.Verdict
)

// The script's output streams.
const (
	Stdout = proc.Stdout
	Stderr = proc.Stderr
)

// The stage mechanisms (StageAuto: the probe picks one).
const (
	StageOverlay = stage.Overlay
	StageCopy    = stage.Copy
)

// StageMaxAge is the age past which a stage expires.
const StageMaxAge = stage.MaxAge

// ErrNotExecutable is the error of a script that cannot be executed.
var ErrNotExecutable = gate.ErrNotExecutable

// Phases lists a run's phases in the order they run.
func Phases() []Phase { return gate.Phases }

// GateRun runs one gated run without the history: the default Runner.
func GateRun(ctx context.Context, cfg Config) (*GateResult, error) { return gate.Run(ctx, cfg) }

// Supervise runs the supervisor when this process was started as one (the
// gate re-executes its own binary) and exits; otherwise it returns at
// once. Every binary that runs the gate calls it first in main.
func Supervise() { proc.Supervise() }

// InGatedRun reports whether this process runs inside a gated run (a
// gated script must not write the history).
func InGatedRun() bool { return proc.InGatedRun() }

// StageBaseDir is the default directory holding the stages.
func StageBaseDir() (string, error) { return stage.BaseDir() }

// OpenStage opens the stage id below base.
func OpenStage(base, id string) (*Stage, error) { return stage.Open(base, id) }

// ProbeStage probes which stage mechanism works below base.
func ProbeStage(ctx context.Context, base string) StageProbe { return stage.Probe(ctx, base) }
