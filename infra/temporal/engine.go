package temporal

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/svc-data/svc/workflows"
)

// EngineConfig says where the Temporal frontend is and how the worker runs.
type EngineConfig struct {
	Addr      string
	Namespace string
	// TLS, when set, is the mutual-TLS configuration for an operator's frontend
	// (TLSFiles.Config). The embedded dev server speaks plaintext only.
	TLS *tls.Config
	// TaskQueue is the queue every svcd node's worker polls; Temporal hands each
	// execution to one of them. Default "svc-workflows".
	TaskQueue string
	// Retention, when set, is applied to the namespace (the embedded server keeps runs
	// briefly: about 25 KB of SQLite per run).
	Retention time.Duration
	// EvaluationTimeout bounds one evaluation (its SQL and its sinks). Default 1 h.
	EvaluationTimeout time.Duration
	// Concurrency bounds evaluations running at once on this node. Default 64.
	Concurrency int
	Logger      *slog.Logger
}

func (c *EngineConfig) validate() {
	if c.Namespace == "" {
		c.Namespace = "svc"
	}
	if c.TaskQueue == "" {
		c.TaskQueue = "svc-workflows"
	}
	if c.EvaluationTimeout == 0 {
		c.EvaluationTimeout = time.Hour
	}
	if c.Concurrency == 0 {
		c.Concurrency = 64
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Engine implements workflows.Engine over a Temporal namespace, and runs this node's
// worker.
type Engine struct {
	cfg EngineConfig
	cl  client.Client
	w   worker.Worker
	ev  workflows.Evaluator
}

var _ workflows.Engine = (*Engine)(nil)

// evaluateName is the Temporal workflow type of one evaluation.
const evaluateName = "svc.evaluate"

// Dial makes a client of the frontend. It connects lazily, so an unreachable server
// shows up as ErrUnavailable on calls, not here, and svcd starts regardless.
func Dial(ctx context.Context, cfg EngineConfig) (*Engine, error) {
	cfg.validate()
	cl, err := client.NewLazyClient(client.Options{HostPort: cfg.Addr, Namespace: cfg.Namespace,
		Logger: slogAdapter{cfg.Logger}, ConnectionOptions: client.ConnectionOptions{TLS: cfg.TLS}})
	if err != nil {
		return nil, fmt.Errorf("%w: dial temporal at %s: %v", workflows.ErrUnavailable, cfg.Addr, err)
	}
	e := &Engine{cfg: cfg, cl: cl}
	if cfg.Retention > 0 {
		_, err := cl.WorkflowService().UpdateNamespace(ctx, &workflowservice.UpdateNamespaceRequest{Namespace: cfg.Namespace,
			Config: &namespaceConfig{WorkflowExecutionRetentionTtl: durationpb.New(cfg.Retention)}})
		if err != nil {
			cfg.Logger.Warn("could not set the workflow namespace's retention", "retention", cfg.Retention, "err", err)
		}
	}
	return e, nil
}

// StartWorker registers the evaluation and polls the task queue; ev runs each one.
func (e *Engine) StartWorker(ev workflows.Evaluator) error {
	e.ev = ev
	e.w = worker.New(e.cl, e.cfg.TaskQueue, worker.Options{
		MaxConcurrentLocalActivityExecutionSize: e.cfg.Concurrency,
		MaxConcurrentWorkflowTaskExecutionSize:  e.cfg.Concurrency,
	})
	e.w.RegisterWorkflowWithOptions(e.evaluate, workflow.RegisterOptions{Name: evaluateName})
	return e.w.Start()
}

// Shutdown stops the worker and closes the client. Safe twice.
func (e *Engine) Shutdown(context.Context) error {
	if e.w != nil {
		e.w.Stop()
		e.w = nil
	}
	if e.cl != nil {
		e.cl.Close()
		e.cl = nil
	}
	return nil
}

// Ping checks the frontend answers.
func (e *Engine) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := e.cl.WorkflowService().DescribeNamespace(ctx, describeNamespace(e.cfg.Namespace))
	return classify(err)
}

// Execution ids: the schedule of workflow W is "<queue>.W"; its executions are
// "<queue>.W.s-<time>" (Temporal appends the nominal time to the action's id) and
// manual ones "<queue>.W.m-<key>". The task queue in every id keeps deployments that
// share one Temporal namespace apart (the reconciler touches only its own schedules).
func (e *Engine) base(wf uuid.UUID) string       { return e.cfg.TaskQueue + "." + wf.String() }
func (e *Engine) prefix(wf uuid.UUID) string     { return e.base(wf) + "." }
func (e *Engine) scheduleID(wf uuid.UUID) string { return e.base(wf) }

type evalInput struct {
	WorkflowID uuid.UUID `json:"workflow_id"`
}

type execArgs struct {
	WorkflowID  uuid.UUID `json:"workflow_id"`
	ExecutionID string    `json:"execution_id"`
	RunID       string    `json:"run_id"`
	StartedAt   time.Time `json:"started_at"`
}

// evaluate is the whole Temporal workflow: one local activity, so an evaluation costs
// a handful of history events and no activity task round trip.
func (e *Engine) evaluate(ctx workflow.Context, in evalInput) error {
	info := workflow.GetInfo(ctx)
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: e.cfg.EvaluationTimeout,
		// An evaluation records its own SQL and sink failures and returns nil; what
		// fails here is the service itself (the log unreachable), retried a little.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	x := execArgs{WorkflowID: in.WorkflowID, ExecutionID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
		StartedAt: info.WorkflowStartTime}
	return workflow.ExecuteLocalActivity(lctx, e.activity, x).Get(lctx, nil)
}

func (e *Engine) activity(ctx context.Context, x execArgs) error {
	source, scheduled := sourceOf(e.prefix(x.WorkflowID), x.ExecutionID)
	return e.ev.Evaluate(ctx, workflows.Execution{WorkflowID: x.WorkflowID, RunID: x.RunID, Source: source,
		ScheduledAt: scheduled, StartedAt: x.StartedAt, Attempt: int(activity.GetInfo(ctx).Attempt)})
}

// sourceOf tells a scheduled execution from a manual one by its id, and reads the
// schedule's nominal time from it.
func sourceOf(prefix, id string) (string, time.Time) {
	rest, ok := strings.CutPrefix(id, prefix+"s-")
	if !ok {
		return workflows.SourceManual, time.Time{}
	}
	t, _ := time.Parse(time.RFC3339, rest)
	return workflows.SourceScheduled, t
}

// StartRun implements workflows.Engine.
func (e *Engine) StartRun(ctx context.Context, wf uuid.UUID, key string) (string, error) {
	if key == "" {
		key = uuid.NewString()
	}
	id := e.prefix(wf) + "m-" + key
	run, err := e.cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: e.cfg.TaskQueue,
		// A running execution of this id is returned as is; a closed one is refused,
		// and then found below: the key recovers the same run either way.
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowRunTimeout:       e.cfg.EvaluationTimeout + time.Minute,
	}, evaluateName, evalInput{WorkflowID: wf})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		if started.RunId != "" {
			return started.RunId, nil
		}
		d, derr := e.cl.DescribeWorkflowExecution(ctx, id, "")
		if derr != nil {
			return "", classify(derr)
		}
		return d.GetWorkflowExecutionInfo().GetExecution().GetRunId(), nil
	}
	if err != nil {
		return "", classify(err)
	}
	return run.GetRunID(), nil
}

// find locates a run of wf by its run id through the visibility store (eventually
// consistent: a run started a moment ago may not be found yet).
func (e *Engine) find(ctx context.Context, wf uuid.UUID, runID string) (string, error) {
	if _, err := uuid.Parse(runID); err != nil {
		return "", workflows.ErrRunNotFound // Temporal's run ids are UUIDs
	}
	res, err := e.cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.cfg.Namespace, PageSize: 1,
		Query: fmt.Sprintf("WorkflowId STARTS_WITH '%s' AND RunId = '%s'", e.prefix(wf), runID)})
	if err != nil {
		return "", classify(err)
	}
	if len(res.Executions) == 0 {
		return "", workflows.ErrRunNotFound
	}
	return res.Executions[0].GetExecution().GetWorkflowId(), nil
}

// DescribeRun implements workflows.Engine.
func (e *Engine) DescribeRun(ctx context.Context, wf uuid.UUID, runID string) (workflows.Run, error) {
	id, err := e.find(ctx, wf, runID)
	if err != nil {
		return workflows.Run{}, err
	}
	d, err := e.cl.DescribeWorkflowExecution(ctx, id, runID)
	if err != nil {
		return workflows.Run{}, classify(err)
	}
	i := d.GetWorkflowExecutionInfo()
	return e.toRun(wf, i.GetExecution().GetWorkflowId(), i.GetExecution().GetRunId(), i.GetStatus(), i.GetStartTime().AsTime(),
		i.GetCloseTime()), nil
}

// CancelRun implements workflows.Engine.
func (e *Engine) CancelRun(ctx context.Context, wf uuid.UUID, runID string) error {
	run, err := e.DescribeRun(ctx, wf, runID)
	if err != nil {
		return err
	}
	switch run.Status {
	case workflows.StatusCanceled:
		return nil
	case workflows.StatusRunning, workflows.StatusPaused:
		id, err := e.find(ctx, wf, runID)
		if err != nil {
			return err
		}
		err = e.cl.CancelWorkflow(ctx, id, runID)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			// It closed between the describe and the cancel: answer for how it ended.
			if again, derr := e.DescribeRun(ctx, wf, runID); derr == nil && again.Status == workflows.StatusCanceled {
				return nil
			}
			return workflows.ErrRunFinished
		}
		return classify(err)
	}
	return workflows.ErrRunFinished
}

// ListRuns implements workflows.Engine.
func (e *Engine) ListRuns(ctx context.Context, wf uuid.UUID, limit int, page []byte) ([]workflows.Run, []byte, error) {
	res, err := e.cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.cfg.Namespace,
		PageSize: int32(limit), NextPageToken: page, Query: fmt.Sprintf("WorkflowId STARTS_WITH '%s'", e.prefix(wf))})
	if err != nil {
		var inv *serviceerror.InvalidArgument
		if len(page) > 0 && errors.As(err, &inv) {
			return nil, nil, workflows.ErrBadCursor
		}
		return nil, nil, classify(err)
	}
	runs := make([]workflows.Run, 0, len(res.Executions))
	for _, x := range res.Executions {
		runs = append(runs, e.toRun(wf, x.GetExecution().GetWorkflowId(), x.GetExecution().GetRunId(), x.GetStatus(),
			x.GetStartTime().AsTime(), x.GetCloseTime()))
	}
	if len(res.NextPageToken) == 0 {
		return runs, nil, nil
	}
	return runs, res.NextPageToken, nil
}

type closeTime interface {
	AsTime() time.Time
	IsValid() bool
}

func (e *Engine) toRun(wf uuid.UUID, id, runID string, st enumspb.WorkflowExecutionStatus, start time.Time, closed closeTime) workflows.Run {
	source, _ := sourceOf(e.prefix(wf), id)
	r := workflows.Run{ID: runID, WorkflowID: wf, Source: source, Status: status(st), StartedAt: start.UTC()}
	if closed != nil && closed.IsValid() && r.Status != workflows.StatusRunning {
		t := closed.AsTime().UTC()
		r.FinishedAt = &t
	}
	return r
}

func status(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return workflows.StatusCompleted
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return workflows.StatusFailed
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return workflows.StatusCanceled
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return workflows.StatusTerminated
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return workflows.StatusContinuedAsNew
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return workflows.StatusTimedOut
	case enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED:
		return workflows.StatusPaused
	}
	return workflows.StatusRunning
}

func (e *Engine) action(wf uuid.UUID) *client.ScheduleWorkflowAction {
	return &client.ScheduleWorkflowAction{ID: e.prefix(wf) + "s", Workflow: evaluateName, Args: []any{evalInput{WorkflowID: wf}},
		TaskQueue: e.cfg.TaskQueue, WorkflowRunTimeout: e.cfg.EvaluationTimeout + time.Minute}
}

// catchup lets an evaluation missed while the engine was down run late, once (the
// overlap policy skips the rest); Temporal's minimum is 10 s.
const catchup = 10 * time.Second

// UpsertSchedule implements workflows.Engine. It changes nothing when the schedule
// already fires every interval in the wanted state, so a periodic resync is cheap.
func (e *Engine) UpsertSchedule(ctx context.Context, wf uuid.UUID, want workflows.Schedule) error {
	overlap := enumspb.SCHEDULE_OVERLAP_POLICY_SKIP
	if want.Overlap {
		overlap = enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL
	}
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: want.Every, Offset: want.Offset}}}
	sc := e.cl.ScheduleClient()
	h := sc.GetHandle(ctx, e.scheduleID(wf))
	d, err := h.Describe(ctx)
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		_, err = sc.Create(ctx, client.ScheduleOptions{ID: e.scheduleID(wf), Spec: spec, Action: e.action(wf),
			Overlap: overlap, CatchupWindow: catchup, Paused: want.Paused})
		if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
			return e.UpsertSchedule(ctx, wf, want)
		}
		return classify(err)
	case err != nil:
		return classify(err)
	}
	s := d.Schedule
	if s.Spec != nil && len(s.Spec.Intervals) == 1 && s.Spec.Intervals[0].Every == want.Every && s.Spec.Intervals[0].Offset == want.Offset &&
		s.State != nil && s.State.Paused == want.Paused && len(s.Spec.Calendars) == 0 && len(s.Spec.CronExpressions) == 0 &&
		s.Policy != nil && s.Policy.Overlap == overlap {
		return nil
	}
	return classify(h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
		s := in.Description.Schedule
		s.Spec = &spec
		s.Action = e.action(wf)
		s.Policy = &client.SchedulePolicies{Overlap: overlap, CatchupWindow: catchup}
		if s.State == nil {
			s.State = &client.ScheduleState{}
		}
		s.State.Paused = want.Paused
		return &client.ScheduleUpdate{Schedule: &s}, nil
	}}))
}

// DeleteSchedule implements workflows.Engine.
func (e *Engine) DeleteSchedule(ctx context.Context, wf uuid.UUID) error {
	err := e.cl.ScheduleClient().GetHandle(ctx, e.scheduleID(wf)).Delete(ctx)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	return classify(err)
}

// Schedules implements workflows.Engine.
func (e *Engine) Schedules(ctx context.Context) ([]uuid.UUID, error) {
	it, err := e.cl.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 1000})
	if err != nil {
		return nil, classify(err)
	}
	var out []uuid.UUID
	for it.HasNext() {
		s, err := it.Next()
		if err != nil {
			return nil, classify(err)
		}
		if rest, ok := strings.CutPrefix(s.ID, e.cfg.TaskQueue+"."); ok {
			if id, err := uuid.Parse(rest); err == nil {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// classify maps Temporal's errors onto the port's.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var nf *serviceerror.NotFound
	var nsnf *serviceerror.NamespaceNotFound
	switch {
	case errors.As(err, &nsnf):
		return fmt.Errorf("%w: %v", workflows.ErrUnavailable, err)
	case errors.As(err, &nf):
		return fmt.Errorf("%w: %v", workflows.ErrRunNotFound, err)
	case errors.Is(err, context.Canceled):
		return err
	}
	var inv *serviceerror.InvalidArgument
	if errors.As(err, &inv) {
		return err
	}
	return fmt.Errorf("%w: %v", workflows.ErrUnavailable, err)
}

// slogAdapter sends the SDK's logs to slog at one level lower: the SDK logs every
// poll hiccup as a warning.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Debug(msg string, kv ...any) {}
func (a slogAdapter) Info(msg string, kv ...any)  { a.l.Debug(msg, kv...) }
func (a slogAdapter) Warn(msg string, kv ...any)  { a.l.Info(msg, kv...) }
func (a slogAdapter) Error(msg string, kv ...any) { a.l.Warn(msg, kv...) }

var _ sdklog.Logger = slogAdapter{}

// quietLogger drops the SDK's logs (readiness probes).
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
