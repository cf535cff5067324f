package clusters

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
)

// world is the fakes of every port of a Runtime, sharing one control plane: the
// commands change the clusters the way the catalog's do.
type world struct {
	mu       sync.Mutex
	clusters map[uuid.UUID]*catalog.Cluster
	calls    []string // commands recorded, in order

	engines   map[uuid.UUID]EngineLimits // running engines and their limits
	starts    int
	startErr  error
	load      int
	landed    map[uuid.UUID]int64
	waiting   map[uuid.UUID]int64
	consumers map[uuid.UUID]bool
	removed   []uuid.UUID
	deleted   []uuid.UUID
	flushed   []uuid.UUID
	samples   []Resources
}

func newWorld() *world {
	return &world{clusters: map[uuid.UUID]*catalog.Cluster{}, engines: map[uuid.UUID]EngineLimits{},
		landed: map[uuid.UUID]int64{}, waiting: map[uuid.UUID]int64{}, consumers: map[uuid.UUID]bool{}}
}

func (w *world) add(phase string, cores, lo, hi float64, idle int) *catalog.Cluster {
	z := func(c float64) catalog.ClusterSize { return catalog.ClusterSize{CPUCores: c, MemoryGiB: 4 * c} }
	c := &catalog.Cluster{ID: uuid.New(), Name: "c", Phase: phase, Size: z(cores), MinSize: z(lo), MaxSize: z(hi), IdleTimeoutMinutes: idle}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.clusters[c.ID] = c
	return c
}

func (w *world) phase(id uuid.UUID) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.clusters[id]
	return c.Phase, c.IdleStopped
}

func (w *world) set(id uuid.UUID, f func(*catalog.Cluster)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := *w.clusters[id]
	f(&c)
	w.clusters[id] = &c
}

func (w *world) record(call string, id uuid.UUID, f func(*catalog.Cluster)) (*catalog.Cluster, error) {
	w.mu.Lock()
	w.calls = append(w.calls, call)
	w.mu.Unlock()
	w.set(id, f)
	c, _ := w.Cluster(id)
	return c, nil
}

func (w *world) Cluster(id uuid.UUID) (*catalog.Cluster, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.clusters[id]
	return c, ok
}

func (w *world) AllClusters() []*catalog.Cluster {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*catalog.Cluster
	for _, c := range w.clusters {
		out = append(out, c)
	}
	return out
}

type commands struct{ *world }

func (w commands) ClusterStarted(_ context.Context, id uuid.UUID) (*catalog.Cluster, error) {
	return w.record("started", id, func(c *catalog.Cluster) { c.Phase, c.Message = catalog.PhaseReady, "" })
}
func (w commands) ClusterFailed(_ context.Context, id uuid.UUID, m string) (*catalog.Cluster, error) {
	return w.record("failed: "+m, id, func(c *catalog.Cluster) { c.Phase, c.Message = catalog.PhaseFailed, m })
}
func (w commands) ClusterStopped(_ context.Context, id uuid.UUID) (*catalog.Cluster, error) {
	return w.record("stopped", id, func(c *catalog.Cluster) { c.Phase = catalog.PhaseStopped })
}
func (w commands) StopCluster(_ context.Context, id uuid.UUID, idle bool) (*catalog.Cluster, error) {
	return w.record("stop", id, func(c *catalog.Cluster) { c.Phase, c.IdleStopped = catalog.PhaseStopping, idle })
}
func (w commands) ResumeCluster(_ context.Context, id uuid.UUID) (*catalog.Cluster, error) {
	return w.record("resume", id, func(c *catalog.Cluster) { c.Phase, c.IdleStopped = catalog.PhaseResuming, false })
}
func (w commands) RecordClusterUse(_ context.Context, id uuid.UUID, at time.Time) error {
	_, err := w.record("use", id, func(c *catalog.Cluster) {
		if at.After(c.LastUsedAt) {
			c.LastUsedAt = at
		}
	})
	return err
}

func (w commands) ResizeCluster(_ context.Context, id uuid.UUID, _, to catalog.ClusterSize, reason string) error {
	_, err := w.record("resize: "+reason, id, func(c *catalog.Cluster) { c.Size = to })
	return err
}

type engines struct{ *world }

func (w engines) Start(_ context.Context, c *catalog.Cluster, l EngineLimits) (Resources, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.starts++
	if w.startErr != nil {
		return Resources{}, w.startErr
	}
	w.engines[c.ID] = l
	return Resources{CPU: float64(l.Threads), Memory: l.Memory, Measured: true}, nil
}
func (w engines) Stop(_ context.Context, id uuid.UUID) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.engines, id)
	return nil
}
func (w engines) Load(_ context.Context, c *catalog.Cluster) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.engines[c.ID]; !ok {
		return 0, ErrRestarting
	}
	return w.load, nil
}

type consumers struct{ *world }

type consumer struct {
	w  *world
	id uuid.UUID
}

func (w consumers) Start(_ context.Context, c *catalog.Cluster) (Consumer, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.consumers[c.ID] = true
	w.landed[c.ID] = 0 // a new consumer has landed nothing yet
	return consumer{w.world, c.ID}, nil
}
func (w consumers) Waiting(_ context.Context, id uuid.UUID) (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.waiting[id], nil
}
func (c consumer) Landed() int64 {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.w.landed[c.id]
}
func (c consumer) Shutdown(context.Context) error {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	delete(c.w.consumers, c.id)
	return nil
}

type teardown struct{ *world }

func (w teardown) RemoveLocal(id uuid.UUID) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.removed = append(w.removed, id)
	return nil
}
func (w teardown) Delete(_ context.Context, c *catalog.Cluster) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deleted = append(w.deleted, c.ID)
	delete(w.clusters, c.ID)
	return nil
}

type usage struct{ *world }

func (w usage) Sample(_ context.Context, _ *catalog.Cluster, r Resources, _ int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples = append(w.samples, r)
	return nil
}
func (w usage) Flush(_ context.Context, id uuid.UUID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushed = append(w.flushed, id)
}

// clock is a time the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// runtime is a Runtime over w's fakes and a clock the test moves; it is not started,
// the test drives its rounds.
func runtime(w *world) (*Runtime, *clock) {
	r := New(context.Background(), Config{Clusters: w, Commands: commands{w}, Engines: engines{w},
		Consumers: consumers{w}, Teardown: teardown{w}, Usage: usage{w}, IdleMinute: time.Minute})
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r.now = clk.now
	return r, clk
}

func (w *world) running(id uuid.UUID) (EngineLimits, bool, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l, eng := w.engines[id]
	return l, eng, w.consumers[id]
}

func wantPhase(t *testing.T, w *world, id uuid.UUID, phase string) {
	t.Helper()
	if got, _ := w.phase(id); got != phase {
		t.Fatalf("phase %s, want %s (commands %v)", got, phase, w.calls)
	}
}

// TestRuntimeBringsUpStopsAndDeletes: a provisioning cluster gets its engine (with its
// size's limits) and consumer and is recorded started; a stop drains the consumer, stores
// the usage not yet sampled, stops the engine and is recorded; a delete tears it down;
// a cluster gone leaves no local data.
func TestRuntimeBringsUpStopsAndDeletes(t *testing.T) {
	w := newWorld()
	c := w.add(catalog.PhaseProvisioning, 2, 1, 8, 0)
	r, _ := runtime(w)
	r.ReconcileAll(context.Background())
	wantPhase(t, w, c.ID, catalog.PhaseReady)
	if l, eng, cons := w.running(c.ID); !eng || !cons || l != LimitsFor(c) {
		t.Fatalf("engine %v (limits %+v), consumer %v: want both, with %+v", eng, l, cons, LimitsFor(c))
	}
	if cpu, mem, ok := r.Resources(c.ID); !ok || cpu != 2 || mem != 8<<30 {
		t.Fatalf("Resources = %v, %v, %v", cpu, mem, ok)
	}

	w.set(c.ID, func(c *catalog.Cluster) { c.Phase = catalog.PhaseStopping })
	r.ReconcileAll(context.Background())
	wantPhase(t, w, c.ID, catalog.PhaseStopped)
	if _, eng, cons := w.running(c.ID); eng || cons || len(w.flushed) != 1 {
		t.Fatalf("after stop: engine %v, consumer %v, flushed %v", eng, cons, w.flushed)
	}

	w.set(c.ID, func(c *catalog.Cluster) { c.Phase = catalog.PhaseDeleting })
	r.ReconcileAll(context.Background())
	if len(w.deleted) != 1 || w.deleted[0] != c.ID {
		t.Fatalf("deleted %v, want the cluster", w.deleted)
	}

	// Deleted by another node while running here: stopped and its local data removed.
	d := w.add(catalog.PhaseProvisioning, 1, 1, 8, 0)
	r.ReconcileAll(context.Background())
	w.mu.Lock()
	delete(w.clusters, d.ID)
	w.mu.Unlock()
	r.ReconcileAll(context.Background())
	if _, eng, cons := w.running(d.ID); eng || cons || len(w.removed) != 1 || w.removed[0] != d.ID {
		t.Fatalf("gone cluster: engine %v, consumer %v, removed %v", eng, cons, w.removed)
	}
}

// TestRuntimeFailedStartBacksOff: a start that fails records the phase failed with the
// first line of the reason, is not retried before its backoff is over, and is retried
// after; an explicit reconcile ignores the backoff.
func TestRuntimeFailedStartBacksOff(t *testing.T) {
	w := newWorld()
	c := w.add(catalog.PhaseProvisioning, 1, 1, 8, 0)
	r, clk := runtime(w)
	w.startErr = errors.New("engine exited\nlog tail: ...")
	r.ReconcileAll(context.Background())
	wantPhase(t, w, c.ID, catalog.PhaseFailed)
	if got, _ := w.Cluster(c.ID); got.Message != "engine exited" {
		t.Fatalf("message %q, want the first line", got.Message)
	}
	r.ReconcileAll(context.Background())
	if w.starts != 1 {
		t.Fatalf("%d starts: retried before the backoff was over", w.starts)
	}
	clk.add(time.Second + 1)
	r.ReconcileAll(context.Background())
	if w.starts != 2 {
		t.Fatalf("%d starts: want a retry after the backoff", w.starts)
	}
	w.startErr = nil
	r.Reconcile(context.Background(), c.ID) // the backoff is now 2s; asked now, it runs
	wantPhase(t, w, c.ID, catalog.PhaseReady)
}

// TestRuntimeIdleStopAndWake: a ready cluster with nothing landed and no query for its
// timeout is stopped as idle; ingestion waiting in its topic wakes it, and so does a
// query; a cluster an administrator stopped is not woken by either.
// TestRuntimeIdleCountsUseOnAnotherNode: two nodes over one control plane; a cluster
// queried through b only is not idle to a, which sees no use of its own; once nobody
// uses it, a stops it after the timeout. b records its use at most every quarter of the
// timeout.
func TestRuntimeIdleCountsUseOnAnotherNode(t *testing.T) {
	w := newWorld()
	c := w.add(catalog.PhaseProvisioning, 1, 1, 8, 15)
	a, clk := runtime(w)
	b, _ := runtime(w)
	b.now = clk.now
	ctx := context.Background()
	a.ReconcileAll(ctx)
	b.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseReady)
	for range 16 { // 32 minutes of queries through b, every 2 minutes
		clk.add(2 * time.Minute)
		b.Touch(c.ID)
		b.ReconcileAll(ctx)
		a.ReconcileAll(ctx)
		wantPhase(t, w, c.ID, catalog.PhaseReady)
	}
	uses := 0
	for _, call := range w.calls {
		if call == "use" {
			uses++
		}
	}
	if uses < 8 || uses > 10 { // every 4 minutes (the quarter, 3.75, at the queries' pace), and at the start
		t.Fatalf("b recorded its use %d times in 32 minutes: %v", uses, w.calls)
	}
	clk.add(14 * time.Minute)
	a.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseReady)
	clk.add(2 * time.Minute)
	a.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseStopping)
}

func TestRuntimeIdleStopAndWake(t *testing.T) {
	w := newWorld()
	c := w.add(catalog.PhaseProvisioning, 1, 1, 8, 15)
	r, clk := runtime(w)
	ctx := context.Background()
	r.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseReady)

	clk.add(14 * time.Minute)
	w.mu.Lock()
	w.landed[c.ID] = 10 // rows landed: a use
	w.mu.Unlock()
	r.ReconcileAll(ctx)
	clk.add(14 * time.Minute)
	r.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseReady) // 28 minutes after the start, 14 after the rows
	r.Touch(c.ID)                             // a query: a use
	clk.add(14 * time.Minute)
	r.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseReady)
	clk.add(time.Minute)
	r.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseStopping)
	r.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseStopped)
	if _, idle := w.phase(c.ID); !idle {
		t.Fatal("not recorded as stopped by the idle timeout")
	}

	// Nothing waiting: it stays stopped. Records waiting: the next check (after the
	// throttle) resumes it, and the reconciler starts it again.
	r.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseStopped)
	w.mu.Lock()
	w.waiting[c.ID] = 3
	w.mu.Unlock()
	r.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseStopped) // checked less than WakeCheckEvery ago
	clk.add(WakeCheckEvery)
	r.ReconcileAll(ctx)
	r.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseReady)
	if _, eng, cons := w.running(c.ID); !eng || !cons {
		t.Fatal("woken cluster not running here")
	}

	// Idle again; a query wakes it and finds it running when ForQuery returns.
	w.mu.Lock()
	w.waiting[c.ID] = 0
	w.mu.Unlock()
	clk.add(16 * time.Minute)
	r.ReconcileAll(ctx)
	r.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseStopped)
	if err := r.ForQuery(c.ID); err != nil {
		t.Fatal(err)
	}
	if _, eng, _ := w.running(c.ID); !eng {
		t.Fatal("ForQuery returned before the engine ran")
	}

	// Stopped by an administrator: neither a query nor ingestion wakes it.
	w.set(c.ID, func(c *catalog.Cluster) { c.Phase = catalog.PhaseStopping })
	r.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseStopped)
	var stopped *StoppedError
	if err := r.ForQuery(c.ID); !errors.As(err, &stopped) {
		t.Fatalf("ForQuery = %v, want a *StoppedError", err)
	}
	w.mu.Lock()
	w.waiting[c.ID] = 3
	w.mu.Unlock()
	clk.add(WakeCheckEvery)
	r.ReconcileAll(ctx)
	wantPhase(t, w, c.ID, catalog.PhaseStopped)
}

// TestRuntimeAutoscales: a saturated cluster is resized one size up after UpChecks
// checks, and the reconciler restarts its engine with the new size's limits.
func TestRuntimeAutoscales(t *testing.T) {
	w := newWorld()
	c := w.add(catalog.PhaseProvisioning, 1, 1, 2, 0)
	r, _ := runtime(w)
	ctx := context.Background()
	r.ReconcileAll(ctx)
	w.load = 1
	states := map[uuid.UUID]*ScaleState{}
	for range UpChecks {
		r.CheckLoads(ctx, states)
	}
	got, _ := w.Cluster(c.ID)
	if got.Size.CPUCores != 2 {
		t.Fatalf("size %v cores after %d saturated checks (commands %v), want 2", got.Size.CPUCores, UpChecks, w.calls)
	}
	r.ReconcileAll(ctx)
	if l, eng, cons := w.running(c.ID); !eng || !cons || l != LimitsFor(got) {
		t.Fatalf("after resize: engine %v with %+v, consumer %v; want %+v", eng, l, cons, LimitsFor(got))
	}
	// At the upper bound: more load moves nothing.
	for range 2 * UpChecks {
		r.CheckLoads(ctx, states)
	}
	if got, _ := w.Cluster(c.ID); got.Size.CPUCores != 2 {
		t.Fatalf("moved past max_size to %v cores", got.Size.CPUCores)
	}
}
