package workflows

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
)

// Engine is what the workflow domain needs of an execution engine: Temporal, behind
// infra/temporal. One schedule per workflow; one execution per evaluation.
type Engine interface {
	// StartRun starts a manual execution of wf. A non-empty key names the execution, so
	// a repeated key recovers the same run while the engine retains it.
	StartRun(ctx context.Context, wf uuid.UUID, key string) (runID string, err error)
	// CancelRun requests cancellation of a run of wf: nil when the run is running (the
	// request is accepted) or already canceled; ErrRunFinished when it ended otherwise;
	// ErrRunNotFound when wf has no such run.
	CancelRun(ctx context.Context, wf uuid.UUID, runID string) error
	// DescribeRun returns one run of wf, or ErrRunNotFound.
	DescribeRun(ctx context.Context, wf uuid.UUID, runID string) (Run, error)
	// ListRuns pages through wf's runs, active ones first by start time descending, then
	// finished ones by finish time descending. A nil next page token means the end.
	ListRuns(ctx context.Context, wf uuid.UUID, limit int, page []byte) (runs []Run, next []byte, err error)
	// UpsertSchedule makes wf's schedule what s says.
	UpsertSchedule(ctx context.Context, wf uuid.UUID, s Schedule) error
	// DeleteSchedule removes wf's schedule; removing none is not an error.
	DeleteSchedule(ctx context.Context, wf uuid.UUID) error
	// Schedules lists the workflows that have a schedule.
	Schedules(ctx context.Context) ([]uuid.UUID, error)
}

// Evaluator is what the engine's worker calls, once per execution (again when the
// engine retries it after a worker died).
type Evaluator interface {
	Evaluate(ctx context.Context, x Execution) error
}

// Execution is one evaluation the engine asks for.
type Execution struct {
	WorkflowID uuid.UUID
	RunID      string
	Source     string
	// ScheduledAt is the schedule's nominal time (zero for manual runs); StartedAt is
	// when the engine started the execution.
	ScheduledAt time.Time
	StartedAt   time.Time
	Attempt     int
}

// Schedule is when a schedule fires: every Every, at the multiples of Every since the
// epoch (shifted by Offset, 0 <= Offset < Every), unless Paused. An execution still
// running at the next time makes the schedule skip it, unless Overlap lets both run.
type Schedule struct {
	Every, Offset time.Duration
	Paused        bool
	Overlap       bool
}

// Run sources and statuses, as the API spells them.
const (
	SourceManual    = "manual"
	SourceScheduled = "scheduled"

	StatusRunning        = "running"
	StatusCompleted      = "completed"
	StatusFailed         = "failed"
	StatusCanceled       = "canceled"
	StatusTerminated     = "terminated"
	StatusContinuedAsNew = "continued_as_new"
	StatusTimedOut       = "timed_out"
	StatusPaused         = "paused"
)

// Run is one execution of a workflow.
type Run struct {
	ID         string     `json:"id"`
	WorkflowID uuid.UUID  `json:"workflow_id"`
	Source     string     `json:"source"`
	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// Errors of the engine port.
var (
	// ErrRunNotFound means the workflow has no such run (or the engine has not listed it
	// yet, or has expired it).
	ErrRunNotFound = errors.New("run not found")
	// ErrRunFinished means the run ended other than canceled, so it cannot be canceled.
	ErrRunFinished = errors.New("run already finished")
	// ErrUnavailable means the execution engine did not answer or confirm.
	ErrUnavailable = errors.New("workflow execution service unavailable")
	// ErrBadCursor means a page token the engine refused.
	ErrBadCursor = errors.New("invalid cursor")
)
