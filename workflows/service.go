package workflows

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/egress"
)

// Errors the API answers with a status of their own.
var (
	// ErrDisabled means the workflow service is switched off (SVC_WORKFLOWS=off).
	ErrDisabled = errors.New("the workflow service is disabled on this deployment")
)

// FieldError names the request field that is invalid (answered 400).
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Message }

func invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Querier runs SQL through the query API's layer: parse, authorize, tenant rewrite.
type Querier interface {
	Run(ctx context.Context, req query.Request) (query.Response, error)
	Cancel(ctx context.Context, org, cluster uuid.UUID, database, queryID string) error
}

// TableWriter inserts documents into a logical table, deduplicated by token: a second
// insert with the same token into the same table adds nothing.
type TableWriter interface {
	InsertDocs(ctx context.Context, cluster uuid.UUID, database, table, token string, ndjson []byte) error
}

// LogEngines gives the engine a cluster's run logs are kept in.
type LogEngines interface {
	Engine(cluster uuid.UUID) (LogEngine, error)
}

// LogEngine is what run logs need of an engine.
type LogEngine interface {
	Exec(ctx context.Context, sql string) error
	QueryStrings(ctx context.Context, sql string) ([]string, error)
}

// Config configures the workflow service.
type Config struct {
	// Egress is the address policy for HTTP sinks (the URL import's).
	Egress egress.Policy
	// HTTPAttempts bounds deliveries of one HTTP sink per evaluation. Default 4.
	HTTPAttempts int
	// HTTPBackoff is the first retry's delay, doubled each time. Default 1s.
	HTTPBackoff time.Duration
	// HTTPTimeout bounds one delivery attempt. Default 10s.
	HTTPTimeout time.Duration
	// MaxResultBytes bounds an evaluation's rows as JSON. Default 32 MiB.
	MaxResultBytes int
	// ResyncEvery is the reconciler's period. Default 30s.
	ResyncEvery time.Duration
	// HoldAfterSinks, for fault tests only, names a file an evaluation creates after its
	// sinks, then blocks until its context ends (so a test can kill the worker there).
	HoldAfterSinks string
	Logger         *slog.Logger
}

func (c *Config) validate() {
	if c.HTTPAttempts <= 0 {
		c.HTTPAttempts = 4
	}
	if c.HTTPBackoff <= 0 {
		c.HTTPBackoff = time.Second
	}
	if c.HTTPTimeout <= 0 {
		c.HTTPTimeout = 10 * time.Second
	}
	if c.MaxResultBytes <= 0 {
		c.MaxResultBytes = 32 << 20
	}
	if c.ResyncEvery <= 0 {
		c.ResyncEvery = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Service is the workflow API's domain: definitions (control-plane events), their
// schedules and runs (the engine), evaluations, sinks, run logs and metrics.
type Service struct {
	cfg    Config
	model  *catalog.Model
	cmds   *catalog.Service
	engine Engine
	query  Querier
	tables TableWriter
	logs   LogEngines
	sealer *Sealer

	mu sync.Mutex
	// synced is the revision of each workflow whose schedule the engine confirmed.
	synced map[uuid.UUID]int
	// orphans are schedules the last reconcile found without a workflow (reconciler only).
	orphans map[uuid.UUID]bool

	health Health
}

// New returns the service. A nil engine is a disabled service: every call answers
// ErrDisabled.
func New(cfg Config, model *catalog.Model, cmds *catalog.Service, engine Engine, q Querier, tw TableWriter, logs LogEngines, sealer *Sealer) *Service {
	cfg.validate()
	return &Service{cfg: cfg, model: model, cmds: cmds, engine: engine, query: q, tables: tw, logs: logs, sealer: sealer,
		synced: map[uuid.UUID]int{}}
}

// Available answers nil when the service is enabled and its engine answers (checked
// at most every 2 s).
func (s *Service) Available(ctx context.Context) error {
	if s == nil {
		return ErrDisabled
	}
	return s.health.Check(ctx, s.engine)
}

// Workflow returns a workflow of the cluster.
func (s *Service) Workflow(cluster, id uuid.UUID) (*catalog.Workflow, bool) {
	w, ok := s.model.Workflow(id)
	if !ok || w.ClusterID != cluster {
		return nil, false
	}
	return w, true
}

// Create saves a new workflow from a create request's body and schedules it.
func (s *Service) Create(ctx context.Context, org, cluster uuid.UUID, body []byte) (View, error) {
	in, err := parseBody(body, true)
	if err != nil {
		return View{}, err
	}
	w := catalog.Workflow{OrgID: org, ClusterID: cluster, Enabled: true, Sinks: []catalog.WorkflowSink{}}
	one := 1
	w.IntervalSeconds = &one
	if err := s.apply(ctx, in, &w); err != nil {
		return View{}, err
	}
	out, err := s.cmds.SaveWorkflow(ctx, w)
	if err != nil {
		return View{}, err
	}
	s.syncSchedule(ctx, out)
	return s.View(out), nil
}

// Update applies a PATCH body to w and reschedules it.
func (s *Service) Update(ctx context.Context, w *catalog.Workflow, body []byte) (View, error) {
	in, err := parseBody(body, false)
	if err != nil {
		return View{}, err
	}
	next := *w
	next.Sinks = append([]catalog.WorkflowSink(nil), w.Sinks...)
	if err := s.apply(ctx, in, &next); err != nil {
		return View{}, err
	}
	out, err := s.cmds.SaveWorkflow(ctx, next)
	if err != nil {
		return View{}, err
	}
	s.syncSchedule(ctx, out)
	return s.View(out), nil
}

// Delete removes w and its schedule; its runs stay in the engine until it expires them.
func (s *Service) Delete(ctx context.Context, w *catalog.Workflow) error {
	if err := s.cmds.DeleteWorkflow(ctx, w.ClusterID, w.ID); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.synced, w.ID)
	s.mu.Unlock()
	if err := s.engine.DeleteSchedule(ctx, w.ID); err != nil {
		// The reconciler removes schedules of deleted workflows.
		s.cfg.Logger.Warn("delete workflow schedule", "workflow_id", w.ID, "err", err)
	}
	return nil
}

// List returns the cluster's workflows.
func (s *Service) List(cluster uuid.UUID) []View {
	out := []View{}
	for _, w := range s.model.Workflows(cluster) {
		out = append(out, s.View(w))
	}
	return out
}

// wantSchedule is the schedule a definition asks for: none for manual-only.
func wantSchedule(w *catalog.Workflow) (interval time.Duration, paused, any bool) {
	if w.IntervalSeconds == nil {
		return 0, false, false
	}
	return time.Duration(*w.IntervalSeconds) * time.Second, !w.Enabled, true
}

// syncSchedule makes the engine's schedule match w; a failure leaves next_run_at null
// until the reconciler succeeds.
func (s *Service) syncSchedule(ctx context.Context, w *catalog.Workflow) {
	interval, paused, ok := wantSchedule(w)
	var err error
	if ok {
		err = s.engine.UpsertSchedule(ctx, w.ID, Schedule{Every: interval, Paused: paused})
	} else {
		err = s.engine.DeleteSchedule(ctx, w.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.synced, w.ID)
		s.cfg.Logger.Warn("sync workflow schedule", "workflow_id", w.ID, "err", err)
		return
	}
	s.synced[w.ID] = w.Revision
}

// Reconcile makes the engine's schedules match every definition: missing or changed
// schedules are written, schedules of deleted workflows removed.
func (s *Service) Reconcile(ctx context.Context) error {
	if s.engine == nil {
		return nil
	}
	all := s.model.Workflows(uuid.Nil)
	live := map[uuid.UUID]bool{}
	for _, w := range all {
		live[w.ID] = true
		s.syncSchedule(ctx, w)
	}
	ids, err := s.engine.Schedules(ctx)
	if err != nil {
		return err
	}
	// A schedule whose workflow this node does not know may belong to a workflow
	// another node created a moment ago (this read model lags a little).
	s.orphans, err = SweepOrphans(ctx, ids, s.orphans, func(id uuid.UUID) bool {
		_, exists := s.model.Workflow(id)
		return live[id] || exists
	}, s.engine.DeleteSchedule)
	return err
}

// SweepOrphans deletes the schedules among ids that known does not know and that were
// already orphans at the previous pass (prev), and returns this pass's orphans: a
// definition another node created a moment ago is not yet in this node's read model,
// so its schedule is deleted only when it is still unknown a pass later. Workflows and
// alerts reconcile their schedules with it.
func SweepOrphans(ctx context.Context, ids []uuid.UUID, prev map[uuid.UUID]bool, known func(uuid.UUID) bool,
	del func(context.Context, uuid.UUID) error) (map[uuid.UUID]bool, error) {
	orphans := map[uuid.UUID]bool{}
	for _, id := range ids {
		if known(id) {
			continue
		}
		if !prev[id] {
			orphans[id] = true
			continue
		}
		if err := del(ctx, id); err != nil {
			return prev, err
		}
	}
	return orphans, nil
}

// RunReconciler resyncs at start and then periodically until ctx ends.
func (s *Service) RunReconciler(ctx context.Context) {
	for {
		if err := s.Reconcile(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("workflow schedules resync failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.cfg.ResyncEvery):
		}
	}
}

// nextRunAt derives the next scheduled evaluation: Temporal's interval schedules fire
// at multiples of the interval since the Unix epoch. The engine keeps reporting future
// times for a paused schedule, so it is not asked.
func (s *Service) nextRunAt(w *catalog.Workflow, now time.Time) *time.Time {
	interval, paused, ok := wantSchedule(w)
	if !ok || paused {
		return nil
	}
	s.mu.Lock()
	rev, synced := s.synced[w.ID]
	s.mu.Unlock()
	if !synced || rev != w.Revision {
		return nil
	}
	next := now.Truncate(interval).Add(interval).UTC()
	return &next
}

// StartRun starts a manual run of w.
func (s *Service) StartRun(ctx context.Context, w *catalog.Workflow, key string) (Run, error) {
	id, err := s.engine.StartRun(ctx, w.ID, key)
	if err != nil {
		return Run{}, err
	}
	return Run{ID: id, WorkflowID: w.ID, Source: SourceManual}, nil
}

// CancelRun requests cancellation of a run of w.
func (s *Service) CancelRun(ctx context.Context, w *catalog.Workflow, runID string) error {
	return s.engine.CancelRun(ctx, w.ID, runID)
}
