package clusters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
)

// Config is what a Runtime runs with: its ports and its knobs.
type Config struct {
	Clusters  Clusters
	Commands  Commands
	Engines   Engines
	Consumers Consumers
	Teardown  Teardown
	Usage     Usage
	// IdleMinute is how long one minute of idle timeout lasts (a minute; tests shorten it).
	IdleMinute time.Duration
	// AutoscaleInterval and MetricsInterval space the autoscale checks and the usage
	// samples; 0 runs neither loop.
	AutoscaleInterval, MetricsInterval time.Duration
	Log                                *slog.Logger
}

// Runtime runs this node's part of every cluster: a reconciler brings each cluster's
// engine, schema, topics, consumer and `default` database to what the control plane
// says (the cluster's phase), on every node, each step idempotent, with backoff; beside
// it, the idle rule stops clusters nobody uses, ingestion and queries wake them, the
// autoscale rule resizes them, and their usage is sampled.
type Runtime struct {
	cfg Config
	ctx context.Context // the service's lifetime
	now func() time.Time

	mu          sync.Mutex
	locks       map[uuid.UUID]*sync.Mutex
	runs        map[uuid.UUID]*run
	retry       map[uuid.UUID]*Backoff
	lastUse     map[uuid.UUID]time.Time
	shared      map[uuid.UUID]sharedUse // the use last recorded for the other nodes, and when
	wakeChecked map[uuid.UUID]time.Time
	// inflight counts the queries this node runs per cluster.
	inflight func(uuid.UUID) int
	kick     chan struct{}
	stop     context.CancelFunc
	done     chan struct{}
}

// run is what this node runs for a cluster besides its engine.
type run struct {
	cons Consumer
	// limits the engine was started with; a resize restarts it with new ones.
	limits EngineLimits
	res    Resources
	landed int64 // rows landed when idleness was last checked
}

// New makes a runtime that lives as long as ctx; Start runs it.
func New(ctx context.Context, cfg Config) *Runtime {
	if cfg.IdleMinute <= 0 {
		cfg.IdleMinute = time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Runtime{cfg: cfg, ctx: ctx, now: time.Now,
		locks: map[uuid.UUID]*sync.Mutex{}, runs: map[uuid.UUID]*run{}, retry: map[uuid.UUID]*Backoff{},
		lastUse: map[uuid.UUID]time.Time{}, shared: map[uuid.UUID]sharedUse{}, wakeChecked: map[uuid.UUID]time.Time{}, kick: make(chan struct{}, 1)}
}

// Start reconciles every cluster once (a failing cluster is recorded and retried, it
// does not stop the node), then keeps reconciling in the background, with the
// autoscale checks and the usage samples beside.
func (r *Runtime) Start() {
	r.ReconcileAll(r.ctx)
	ctx, stop := context.WithCancel(context.WithoutCancel(r.ctx))
	r.stop, r.done = stop, make(chan struct{})
	var loops sync.WaitGroup
	if d := r.cfg.MetricsInterval; d > 0 {
		loops.Go(func() { r.every(ctx, d, r.SampleAll) })
	}
	if d := r.cfg.AutoscaleInterval; d > 0 {
		loops.Go(func() { r.autoscale(ctx, d) })
	}
	go func() {
		defer close(r.done)
		defer loops.Wait()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-r.kick:
			}
			r.ReconcileAll(ctx)
		}
	}()
}

func (r *Runtime) every(ctx context.Context, d time.Duration, f func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f(ctx)
	}
}

// Shutdown stops the reconciler, then every cluster's consumer (engines stop after,
// with their registry).
func (r *Runtime) Shutdown(ctx context.Context) error {
	if r.stop != nil {
		r.stop()
		<-r.done
	}
	r.mu.Lock()
	runs := r.runs
	r.runs = map[uuid.UUID]*run{}
	r.mu.Unlock()
	var errs []error
	for id, run := range runs {
		r.cfg.Usage.Flush(ctx, id)
		errs = append(errs, run.cons.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

func (r *Runtime) lock(id uuid.UUID) *sync.Mutex {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.locks[id]
	if l == nil {
		l = &sync.Mutex{}
		r.locks[id] = l
	}
	return l
}

func (r *Runtime) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// ReconcileAll reconciles every cluster, and stops what runs here for clusters deleted
// meanwhile (by another node).
func (r *Runtime) ReconcileAll(ctx context.Context) {
	seen := map[uuid.UUID]bool{}
	for _, c := range r.cfg.Clusters.AllClusters() {
		seen[c.ID] = true
		r.reconcile(ctx, c.ID, false)
	}
	r.mu.Lock()
	var gone []uuid.UUID
	for id := range r.runs {
		if !seen[id] {
			gone = append(gone, id)
		}
	}
	r.mu.Unlock()
	for _, id := range gone {
		r.reconcile(ctx, id, false)
	}
}

// Reconcile brings this node's part of the cluster to its phase now, ignoring backoff,
// and returns when it did; the other clusters and the idle check follow soon.
func (r *Runtime) Reconcile(ctx context.Context, id uuid.UUID) {
	r.reconcile(ctx, id, true)
	r.wake()
}

func (r *Runtime) reconcile(ctx context.Context, id uuid.UUID, now bool) {
	l := r.lock(id)
	l.Lock()
	defer l.Unlock()
	c, exists := r.cfg.Clusters.Cluster(id)
	if !exists {
		c = nil
	}
	r.mu.Lock()
	cur, running := r.runs[id]
	r.mu.Unlock()
	local := LocalRun{Running: running}
	if running {
		local.Limits = cur.limits
	}
	p := PlanReconcile(c, local, now || r.due(id))
	log := r.cfg.Log.With("cluster", id)
	if p.Stop {
		r.stopLocal(ctx, id, cur)
		switch {
		case p.Resized:
			log.Info("cluster resized; engine restarting with the new limits", "cpu_cores", c.Size.CPUCores)
		case c != nil:
			log.Info("cluster stopped on this node")
		}
	}
	if p.Remove {
		_ = r.cfg.Teardown.RemoveLocal(id)
	}
	if p.Start {
		started, err := r.startLocal(ctx, c)
		if err != nil {
			r.failed(id)
			log.Error("cluster did not start; retrying with backoff", "err", err)
			if RecordsFailure(c) {
				if _, err2 := r.cfg.Commands.ClusterFailed(ctx, id, FailureMessage(err)); err2 != nil && !errors.Is(err2, catalog.ErrConflict) {
					log.Error("record failed cluster", "err", err2)
				}
			}
			return
		}
		r.mu.Lock()
		r.runs[id] = started
		delete(r.retry, id)
		r.lastUse[id] = r.now()
		r.mu.Unlock()
		log.Info("cluster running")
	}
	switch p.Then {
	case ThenRecordStarted:
		if _, err := r.cfg.Commands.ClusterStarted(ctx, id); err != nil && !errors.Is(err, catalog.ErrConflict) {
			log.Error("record started cluster", "err", err)
		}
	case ThenCheckIdle:
		r.checkIdle(ctx, c)
	case ThenRecordStopped:
		if _, err := r.cfg.Commands.ClusterStopped(ctx, id); err != nil && !errors.Is(err, catalog.ErrConflict) {
			log.Error("record stopped cluster", "err", err)
		}
	case ThenDelete:
		if err := r.cfg.Teardown.Delete(ctx, c); err != nil {
			log.Error("delete cluster; retrying", "err", err)
		}
	case ThenCheckWake:
		r.wakeOnIngest(ctx, c)
	}
}

func (r *Runtime) due(id uuid.UUID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.retry[id].Due(r.now())
}

func (r *Runtime) failed(id uuid.UUID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retry[id] = r.retry[id].Failed(r.now())
}

// FailureMessage is the first line of why a cluster did not start, at most 300 bytes:
// the message its failed phase shows.
func FailureMessage(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	s = strings.TrimSuffix(strings.TrimSpace(s), "; log tail:")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// startLocal brings up a cluster on this node: engine, schema and `default` database,
// then topics and consumer. Every step is idempotent, so a retry after a failure at any
// step completes the cluster.
func (r *Runtime) startLocal(ctx context.Context, c *catalog.Cluster) (*run, error) {
	limits := LimitsFor(c)
	res, err := r.cfg.Engines.Start(ctx, c, limits)
	if err != nil {
		return nil, err
	}
	cons, err := r.cfg.Consumers.Start(ctx, c)
	if err != nil {
		return nil, err
	}
	return &run{cons: cons, limits: limits, res: res}, nil
}

// stopLocal stores the usage not yet sampled, drains the cluster's consumer, then stops
// its engine.
func (r *Runtime) stopLocal(ctx context.Context, id uuid.UUID, cur *run) {
	r.cfg.Usage.Flush(ctx, id)
	r.mu.Lock()
	delete(r.runs, id)
	r.mu.Unlock()
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := cur.cons.Shutdown(sctx); err != nil {
		r.cfg.Log.Error("drain cluster consumer", "cluster", id, "err", err)
	}
	if err := r.cfg.Engines.Stop(sctx, id); err != nil {
		r.cfg.Log.Error("stop cluster engine", "cluster", id, "err", err)
	}
}

// checkIdle stops a ready cluster nobody queried and nothing was ingested into for its
// idle timeout (Idle). Queries wake it (ForQuery), and so does ingestion (wakeOnIngest).
func (r *Runtime) checkIdle(ctx context.Context, c *catalog.Cluster) {
	r.mu.Lock()
	if cur := r.runs[c.ID]; cur != nil {
		if rows := cur.cons.Landed(); rows != cur.landed {
			cur.landed = rows
			r.lastUse[c.ID] = r.now()
		}
	}
	last := r.lastUse[c.ID]
	// This node's use is shared with the others (a cluster queried through one node
	// only is not idle to the others), at most every quarter of the idle timeout.
	share := c.IdleTimeoutMinutes != 0 && last.After(r.shared[c.ID].use) &&
		r.now().Sub(r.shared[c.ID].at) >= time.Duration(c.IdleTimeoutMinutes)*r.cfg.IdleMinute/4
	if share {
		r.shared[c.ID] = sharedUse{use: last, at: r.now()}
	}
	r.mu.Unlock()
	if share {
		if err := r.cfg.Commands.RecordClusterUse(ctx, c.ID, last); err != nil {
			r.cfg.Log.Warn("record cluster use", "cluster", c.ID, "err", err)
		}
	}
	if c.LastUsedAt.After(last) { // another node's
		last = c.LastUsedAt
	}
	if !Idle(c, last, r.now(), r.cfg.IdleMinute) {
		return
	}
	r.cfg.Log.Info("cluster idle; stopping it", "cluster", c.ID, "idle_timeout_minutes", c.IdleTimeoutMinutes)
	if _, err := r.cfg.Commands.StopCluster(ctx, c.ID, true); err != nil {
		r.cfg.Log.Error("stop idle cluster", "cluster", c.ID, "err", err)
		return
	}
	r.wake()
}

// sharedUse is a use of a cluster this node recorded in the control plane, and when.
type sharedUse struct{ use, at time.Time }

// Touch records a use of the cluster (a query): it postpones the idle stop.
func (r *Runtime) Touch(id uuid.UUID) {
	r.mu.Lock()
	r.lastUse[id] = r.now()
	r.mu.Unlock()
}

// wakeOnIngest resumes an idle-stopped cluster whose consumer has records waiting
// (WakesOnIngest), looking at most every WakeCheckInterval.
func (r *Runtime) wakeOnIngest(ctx context.Context, c *catalog.Cluster) {
	if !Wakeable(c) || !r.wakeCheckDue(c.ID) {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	waiting, err := r.cfg.Consumers.Waiting(lctx, c.ID)
	if err != nil {
		r.cfg.Log.Warn("check ingestion of an idle cluster", "cluster", c.ID, "err", err)
		return
	}
	if !WakesOnIngest(c, waiting) {
		return
	}
	r.cfg.Log.Info("ingestion wakes idle cluster", "cluster", c.ID, "records_waiting", waiting)
	if _, err := r.cfg.Commands.ResumeCluster(ctx, c.ID); err != nil && !errors.Is(err, catalog.ErrConflict) {
		r.cfg.Log.Error("resume idle cluster for ingestion", "cluster", c.ID, "err", err)
		return
	}
	r.wake()
}

func (r *Runtime) wakeCheckDue(id uuid.UUID) bool {
	every := WakeCheckInterval(r.cfg.IdleMinute)
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if now.Sub(r.wakeChecked[id]) < every {
		return false
	}
	r.wakeChecked[id] = now
	return true
}

// WakeTimeout bounds how long a query waits for an idle cluster to resume.
const WakeTimeout = 2 * time.Minute

// StoppedError: a query reached a cluster that is not running and that a query does
// not wake (an administrator stopped it, or it is stopping or deleting).
type StoppedError struct{ Cluster *catalog.Cluster }

func (e *StoppedError) Error() string {
	return fmt.Sprintf("cluster %q is %s", e.Cluster.Name, e.Cluster.PhaseName())
}

// WakeError: the idle cluster a query woke could not be resumed.
type WakeError struct{ Err error }

func (e *WakeError) Error() string { return "the idle cluster could not be resumed: " + e.Err.Error() }
func (e *WakeError) Unwrap() error { return e.Err }

// ForQuery readies a cluster for a query: the query is a use (Touch); a cluster the idle
// timeout stopped is resumed and started here before it returns; one stopped otherwise
// answers a *StoppedError, and a resume that fails a *WakeError.
func (r *Runtime) ForQuery(id uuid.UUID) error {
	r.Touch(id)
	c, ok := r.cfg.Clusters.Cluster(id)
	if !ok || c.Running() {
		return nil
	}
	if !Wakeable(c) {
		return &StoppedError{Cluster: c}
	}
	ctx, cancel := context.WithTimeout(r.ctx, WakeTimeout)
	defer cancel()
	r.cfg.Log.Info("query wakes idle cluster", "cluster", id)
	if _, err := r.cfg.Commands.ResumeCluster(ctx, id); err != nil {
		return &WakeError{Err: err}
	}
	r.reconcile(ctx, id, true)
	r.Touch(id)
	return nil
}

// AwaitReconcile waits for a reconcile of the cluster in progress (an engine restarting
// for a resize) to finish.
func (r *Runtime) AwaitReconcile(id uuid.UUID) {
	l := r.lock(id)
	l.Lock()
	l.Unlock()
}

// Resources is what the cluster's engine process on this node got; ok is false while
// unknown.
func (r *Runtime) Resources(id uuid.UUID) (cpuCores float64, memoryBytes int64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.runs[id]
	if cur == nil || !cur.res.Measured {
		return 0, 0, false
	}
	return cur.res.CPU, cur.res.Memory, true
}

// SetInflight gives the runtime the count of queries this node runs per cluster: a
// cluster's load is at least that.
func (r *Runtime) SetInflight(f func(uuid.UUID) int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inflight = f
}

// RunningIDs are the clusters running on this node now.
func (r *Runtime) RunningIDs() []uuid.UUID {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]uuid.UUID, 0, len(r.runs))
	for id := range r.runs {
		ids = append(ids, id)
	}
	return ids
}

// SampleAll records one usage observation of every cluster running on this node.
func (r *Runtime) SampleAll(ctx context.Context) {
	for _, id := range r.RunningIDs() {
		r.mu.Lock()
		cur := r.runs[id]
		r.mu.Unlock()
		c, ok := r.cfg.Clusters.Cluster(id)
		if cur == nil || !ok {
			continue
		}
		if err := r.cfg.Usage.Sample(ctx, c, cur.res, cur.cons.Landed()); err != nil && ctx.Err() == nil {
			r.cfg.Log.Warn("sample cluster metrics", "cluster", id, "err", err)
		}
	}
}

// autoscale runs until ctx ends, checking every cluster running on this node.
func (r *Runtime) autoscale(ctx context.Context, every time.Duration) {
	states := map[uuid.UUID]*ScaleState{}
	r.every(ctx, every, func(ctx context.Context) { r.CheckLoads(ctx, states) })
}

// CheckLoads observes every cluster running on this node once, keeping each one's
// hysteresis in states, and records the resizes the autoscale rule calls for.
func (r *Runtime) CheckLoads(ctx context.Context, states map[uuid.UUID]*ScaleState) {
	seen := map[uuid.UUID]bool{}
	for _, id := range r.RunningIDs() {
		seen[id] = true
		if states[id] == nil {
			states[id] = &ScaleState{}
		}
		if err := r.checkLoad(ctx, id, states[id]); err != nil && ctx.Err() == nil {
			r.cfg.Log.Warn("autoscale check", "cluster", id, "err", err)
		}
	}
	for id := range states {
		if !seen[id] {
			delete(states, id)
		}
	}
}

// checkLoad observes one cluster and records a resize when the rule calls for one.
func (r *Runtime) checkLoad(ctx context.Context, id uuid.UUID, st *ScaleState) error {
	c, ok := r.cfg.Clusters.Cluster(id)
	if !ok || !Autoscales(c) {
		*st = ScaleState{}
		return nil
	}
	running, err := r.load(ctx, c)
	if err != nil {
		return err
	}
	to, move := Decide(c.Size, c.MinSize, c.MaxSize, running, st)
	if !move {
		return nil
	}
	reason := ResizeReason(c.Size, to, running)
	if err := r.cfg.Commands.ResizeCluster(ctx, id, c.Size, to, reason); err != nil {
		if errors.Is(err, catalog.ErrConflict) {
			return nil // another node moved it, or it is no longer ready
		}
		return err
	}
	r.cfg.Log.Info("cluster autoscaled", "cluster", id, "from_cores", c.Size.CPUCores, "to_cores", to.CPUCores, "reason", reason)
	r.wake()
	return nil
}

// load counts the statements running on a cluster: the engine's, and at least the
// queries this node streams.
func (r *Runtime) load(ctx context.Context, c *catalog.Cluster) (int, error) {
	r.mu.Lock()
	f := r.inflight
	r.mu.Unlock()
	running := 0
	if f != nil {
		running = f(c.ID)
	}
	engine, err := r.cfg.Engines.Load(ctx, c)
	switch {
	case errors.Is(err, ErrRestarting):
		return 0, nil
	case err != nil:
		return 0, err
	}
	return max(running, engine), nil
}
