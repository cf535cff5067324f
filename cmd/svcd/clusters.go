package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/svc-data/svc/workflows"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/clickhouse/chclient"
	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/clusters"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/metrics"
	"github.com/svc-data/svc/query/promstore"
	"github.com/svc-data/svc/query/requestlog"
	"github.com/svc-data/svc/query/tables"
)

// node runs this machine's part of every cluster: a reconciler brings each cluster's
// engine, schema, topics, consumer and `default` database to what the control plane
// says (the cluster's phase), on every node, each step idempotent, with backoff. What to
// do is decided by projections/clusters (PlanReconcile, Idle, WakesOnIngest, Decide);
// the node carries it out on the engines, topics and consumers.
type node struct {
	a        *app
	cfg      *Config
	cat      *catalog.Service
	model    *catalog.Model
	engines  *engines
	mgr      *tables.Manager
	producer *kafka.Producer
	kafka    kafka.Conn
	log      *slog.Logger
	ops      *ops
	ctx      context.Context // the service's lifetime
	secret   []byte          // the service secret (serviceSecret): keys ingest dedup tokens
	// idleMinute is how long one minute of idle timeout lasts (Config.ClusterIdleMinute).
	idleMinute time.Duration

	mu      sync.Mutex
	locks   map[uuid.UUID]*sync.Mutex
	runs    map[uuid.UUID]*clusterRun
	retry   map[uuid.UUID]*clusters.Backoff
	lastUse map[uuid.UUID]time.Time
	queries map[uuid.UUID]*[2]int64 // reads and writes not yet sampled
	kick    chan struct{}
	stop    context.CancelFunc
	done    chan struct{}

	// inflight counts the queries this node runs per cluster (autoscale.go).
	inflight func(uuid.UUID) int
	// wakeChecked is when wakeOnIngest last looked at each idle-stopped cluster.
	wakeChecked map[uuid.UUID]time.Time
}

// clusterRun is what this node runs for a cluster besides its engine.
type clusterRun struct {
	cons       *pipeline.Consumer
	gr         *kafka.GroupReader
	stopResort context.CancelFunc
	resortDone chan struct{}
	landed     int64 // rows landed when idleness was last checked
	// limits the engine was started with; a resize restarts it with new ones.
	limits engineLimits
	// What the engine process got, read back from it after start.
	cpu      float64
	memory   int64
	measured bool
}

func newNode(n *node) *node {
	n.locks, n.runs, n.retry, n.lastUse = map[uuid.UUID]*sync.Mutex{}, map[uuid.UUID]*clusterRun{}, map[uuid.UUID]*clusters.Backoff{}, map[uuid.UUID]time.Time{}
	n.kick = make(chan struct{}, 1)
	n.queries = map[uuid.UUID]*[2]int64{}
	n.idleMinute = n.cfg.ClusterIdleMinute
	return n
}

// Start reconciles every cluster once (a failing cluster is recorded and retried, it
// does not stop the node), then keeps reconciling in the background.
func (n *node) Start() {
	n.reconcileAll(n.ctx)
	ctx, stop := context.WithCancel(context.WithoutCancel(n.ctx))
	n.stop, n.done = stop, make(chan struct{})
	sampled, scaled := make(chan struct{}), make(chan struct{})
	go func() { defer close(sampled); n.sampleMetrics(ctx) }()
	go func() { defer close(scaled); n.autoscale(ctx) }()
	go func() {
		defer close(n.done)
		defer func() { <-sampled; <-scaled }()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-n.kick:
			}
			n.reconcileAll(ctx)
		}
	}()
}

// Shutdown stops the reconciler, then every cluster's consumer (engines stop after, with
// the engine registry).
func (n *node) Shutdown(ctx context.Context) error {
	if n.stop != nil {
		n.stop()
		<-n.done
	}
	n.mu.Lock()
	runs := n.runs
	n.runs = map[uuid.UUID]*clusterRun{}
	n.mu.Unlock()
	var errs []error
	for id, r := range runs {
		n.flushQueries(ctx, id)
		errs = append(errs, r.shutdown(ctx))
	}
	return errors.Join(errs...)
}

func (n *node) lock(id uuid.UUID) *sync.Mutex {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.locks[id]
	if l == nil {
		l = &sync.Mutex{}
		n.locks[id] = l
	}
	return l
}

func (n *node) reconcileAll(ctx context.Context) {
	seen := map[uuid.UUID]bool{}
	for _, c := range n.model.AllClusters() {
		seen[c.ID] = true
		n.reconcile(ctx, c.ID, false)
	}
	// Clusters deleted by another node: stop what runs here and remove local data.
	n.mu.Lock()
	var gone []uuid.UUID
	for id := range n.runs {
		if !seen[id] {
			gone = append(gone, id)
		}
	}
	n.mu.Unlock()
	for _, id := range gone {
		n.reconcile(ctx, id, false)
	}
}

// ReconcileCluster implements edge.ClusterRunner: bring this node's part of the cluster
// to its phase now, ignoring backoff, and wait for that.
func (n *node) ReconcileCluster(ctx context.Context, id uuid.UUID) error {
	n.reconcile(ctx, id, true)
	select {
	case n.kick <- struct{}{}: // other clusters and the idle check follow soon
	default:
	}
	return nil
}

func (n *node) reconcile(ctx context.Context, id uuid.UUID, now bool) {
	l := n.lock(id)
	l.Lock()
	defer l.Unlock()
	c, exists := n.model.Cluster(id)
	if !exists {
		c = nil
	}
	n.mu.Lock()
	run, running := n.runs[id]
	n.mu.Unlock()
	local := clusters.Local{Running: running}
	if running {
		local.Limits = run.limits
	}
	p := clusters.PlanReconcile(c, local, now || n.due(id))
	log := n.log.With("cluster", id)
	if p.Stop {
		n.stopLocal(ctx, id, run)
		switch {
		case p.Resized:
			log.Info("cluster resized; engine restarting with the new limits", "cpu_cores", c.Size.CPUCores)
		case c != nil:
			log.Info("cluster stopped on this node")
		}
	}
	if p.Remove {
		_ = os.RemoveAll(n.clusterDir(id))
	}
	if p.Start {
		run, err := n.startLocal(ctx, c)
		if err != nil {
			n.failed(id)
			log.Error("cluster did not start; retrying with backoff", "err", err)
			if clusters.RecordsFailure(c) {
				if _, err2 := n.cat.ClusterFailed(ctx, id, firstLine(err)); err2 != nil && !errors.Is(err2, catalog.ErrConflict) {
					log.Error("record failed cluster", "err", err2)
				}
			}
			return
		}
		n.mu.Lock()
		n.runs[id] = run
		delete(n.retry, id)
		n.lastUse[id] = time.Now()
		n.mu.Unlock()
		log.Info("cluster running")
	}
	switch p.Then {
	case clusters.ThenRecordStarted:
		if _, err := n.cat.ClusterStarted(ctx, id); err != nil && !errors.Is(err, catalog.ErrConflict) {
			log.Error("record started cluster", "err", err)
		}
	case clusters.ThenCheckIdle:
		n.checkIdle(ctx, c)
	case clusters.ThenRecordStopped:
		if _, err := n.cat.ClusterStopped(ctx, id); err != nil && !errors.Is(err, catalog.ErrConflict) {
			log.Error("record stopped cluster", "err", err)
		}
	case clusters.ThenDelete:
		if err := n.deleteCluster(ctx, c); err != nil {
			log.Error("delete cluster; retrying", "err", err)
		}
	case clusters.ThenCheckWake:
		n.wakeOnIngest(ctx, c)
	}
}

func (n *node) due(id uuid.UUID) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.retry[id].Due(time.Now())
}

func (n *node) failed(id uuid.UUID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.retry[id] = n.retry[id].Failed(time.Now())
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	s = strings.TrimSuffix(strings.TrimSpace(s), "; log tail:")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

func (n *node) clusterDir(id uuid.UUID) string {
	return filepath.Join(n.cfg.DataDir, "clusters", id.String())
}

// startLocal brings up a cluster on this node: engine, schema, topics, `default`
// database and consumer. Every step is idempotent, so a retry after a failure at any
// step completes the cluster; what a failed attempt started besides the engine is stopped.
func (n *node) startLocal(ctx context.Context, c *catalog.Cluster) (*clusterRun, error) {
	cluster := c.ID
	eng, err := n.engines.start(ctx, cluster, clusters.LimitsFor(c))
	if err != nil {
		return nil, err
	}
	if err := pipeline.EnsureSchema(ctx, eng); err != nil {
		return nil, err
	}
	if err := requestlog.Schema(ctx, eng); err != nil {
		return nil, fmt.Errorf("create request log: %w", err)
	}
	if err := workflows.LogSchema(ctx, eng); err != nil {
		return nil, fmt.Errorf("create workflow log: %w", err)
	}
	if err := metrics.Schema(ctx, eng); err != nil {
		return nil, fmt.Errorf("create metrics table: %w", err)
	}
	if err := n.mgr.Reconcile(ctx, cluster); err != nil {
		return nil, err
	}
	if _, ok := n.model.Database(cluster, catalog.DefaultDatabase); !ok {
		if _, err := n.mgr.CreateDatabase(ctx, c.OrgID, cluster, catalog.DefaultDatabase, nil); err != nil && !errors.Is(err, catalog.ErrExists) {
			return nil, fmt.Errorf("create the default database: %w", err)
		}
	}
	ingest, dead := pipeline.IngestTopic(cluster), pipeline.DeadTopic(cluster)
	if err := kafka.EnsureTopics(ctx, n.kafka, int32(n.cfg.IngestPartitions), ingest, dead); err != nil {
		return nil, err
	}
	log := n.log.With("cluster", cluster)
	cons, err := pipeline.NewConsumer(pipeline.ConsumerConfig{
		MaxRows: n.cfg.BatchMaxRows, Linger: n.cfg.BatchLinger, Logger: log,
		Dead: n.producer, DeadTopic: func(string) string { return dead }, TokenKey: n.secret,
		PrometheusDDL: promstore.DDL, Cluster: cluster, Homes: n.mgr,
	}, eng, n.mgr)
	if err != nil {
		return nil, err
	}
	run := &clusterRun{cons: cons, limits: clusters.LimitsFor(c)}
	gr, err := kafka.NewGroupReader(kafka.GroupConfig{Conn: n.kafka, Group: pipeline.ConsumerGroup(cluster),
		Topics: []string{ingest}, Logger: log}, cons)
	if err != nil {
		return nil, errors.Join(err, run.shutdown(ctx))
	}
	if err := gr.Start(ctx); err != nil {
		return nil, errors.Join(err, run.shutdown(ctx))
	}
	run.gr = gr
	rctx, stopResort := context.WithCancel(context.WithoutCancel(n.ctx))
	run.stopResort, run.resortDone = stopResort, make(chan struct{})
	go func() {
		defer close(run.resortDone)
		n.mgr.RunResorter(rctx, cluster, kafka.PlanInspector{Conn: n.kafka, Group: pipeline.ConsumerGroup}, 5*time.Second, log)
	}()
	n.ops.add(cluster, cons)
	run.cpu, run.memory, run.measured = measure(ctx, eng)
	return run, nil
}

// shutdown drains: the group reader stops fetching and lets the consumer flush and
// commit, then the consumer stops. Rows not yet landed stay in Kafka.
func (r *clusterRun) shutdown(ctx context.Context) error {
	var errs []error
	if r.stopResort != nil {
		r.stopResort()
		<-r.resortDone
	}
	if r.gr != nil {
		errs = append(errs, r.gr.Shutdown(ctx))
	}
	errs = append(errs, r.cons.Shutdown(ctx))
	return errors.Join(errs...)
}

// stopLocal drains the cluster's consumer, then stops its engine.
func (n *node) stopLocal(ctx context.Context, id uuid.UUID, run *clusterRun) {
	n.flushQueries(ctx, id)
	n.mu.Lock()
	delete(n.runs, id)
	n.mu.Unlock()
	n.ops.remove(id)
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := run.shutdown(sctx); err != nil {
		n.log.Error("drain cluster consumer", "cluster", id, "err", err)
	}
	if err := n.engines.stop(sctx, id); err != nil {
		n.log.Error("stop cluster engine", "cluster", id, "err", err)
	}
}

// deleteCluster removes a deleting cluster's databases, keys, data and topics, then
// records it deleted (which frees its name). Every step may run again.
func (n *node) deleteCluster(ctx context.Context, c *catalog.Cluster) error {
	if n.cfg.ClickHouseURL != "" || n.onS3(c) {
		// A shared server keeps the data, and so does a customer's bucket: drop the
		// cluster's databases through the engine, which deletes their objects.
		eng, err := n.engines.start(ctx, c.ID, clusters.LimitsFor(c))
		if err != nil {
			return err
		}
		for _, d := range n.model.Databases(c.ID) {
			if err := eng.Exec(ctx, "DROP DATABASE IF EXISTS `"+strings.ReplaceAll(d.Engine, "`", "``")+"` SYNC"); err != nil {
				return err
			}
		}
		if err := n.engines.stop(ctx, c.ID); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(n.clusterDir(c.ID)); err != nil {
		return err
	}
	if err := kafka.DeleteTopicsAndGroup(ctx, n.kafka, pipeline.ConsumerGroup(c.ID), pipeline.IngestTopic(c.ID), pipeline.DeadTopic(c.ID)); err != nil {
		return err
	}
	for _, k := range n.model.APIKeys(c.ID) {
		if err := n.cat.DeleteAPIKey(ctx, k.ID); err != nil && !errors.Is(err, catalog.ErrNotFound) {
			return err
		}
	}
	for _, d := range n.model.Databases(c.ID) {
		if d.Name == catalog.DefaultDatabase || d.Name == catalog.SystemDatabase {
			continue // protected; they go with the cluster
		}
		if err := n.cat.DeleteDatabase(ctx, c.ID, d.Name); err != nil && !errors.Is(err, catalog.ErrNotFound) {
			return err
		}
	}
	return n.cat.ClusterDeleteDone(ctx, c.ID)
}

// onS3 reports whether any of the cluster's databases keeps data in a customer bucket.
func (n *node) onS3(c *catalog.Cluster) bool {
	if c.S3 != nil {
		return true
	}
	for _, d := range n.model.Databases(c.ID) {
		if d.S3 != nil {
			return true
		}
	}
	return false
}

// checkIdle stops a ready cluster nobody queried and nothing was ingested into for its
// idle timeout. Queries wake it (QueryEngine).
func (n *node) checkIdle(ctx context.Context, c *catalog.Cluster) {
	n.mu.Lock()
	run := n.runs[c.ID]
	if run != nil {
		if rows, _, _, _, _ := run.cons.Stats().Totals(); rows != run.landed {
			run.landed = rows
			n.lastUse[c.ID] = time.Now()
		}
	}
	last := n.lastUse[c.ID]
	n.mu.Unlock()
	if !clusters.Idle(c, last, time.Now(), n.idleMinute) {
		return
	}
	n.log.Info("cluster idle; stopping it", "cluster", c.ID, "idle_timeout_minutes", c.IdleTimeoutMinutes)
	if _, err := n.cat.StopCluster(ctx, c.ID, true); err != nil {
		n.log.Error("stop idle cluster", "cluster", c.ID, "err", err)
		return
	}
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

func (n *node) touch(id uuid.UUID) {
	n.mu.Lock()
	n.lastUse[id] = time.Now()
	n.mu.Unlock()
}

// wakeTimeout bounds how long a query waits for an idle cluster to resume.
const wakeTimeout = 2 * time.Minute

// QueryEngine implements query.Engines: a stopped cluster answers 503 with the way to
// resume it; one the idle timeout stopped is resumed by the query, which waits for it.
func (n *node) QueryEngine(cluster uuid.UUID) (query.Engine, error) {
	n.touch(cluster)
	c, ok := n.model.Cluster(cluster)
	if ok && !c.Running() {
		if !clusters.Wakeable(c) {
			return nil, &query.Error{Status: 503, Code: "cluster_stopped",
				Message: fmt.Sprintf("cluster %q is %s; queries need a running cluster (ingestion is still accepted and lands on resume)", c.Name, c.PhaseName()),
				Hint:    fmt.Sprintf("resume it: POST /v1/clusters/%s/resume", c.ID)}
		}
		ctx, cancel := context.WithTimeout(n.ctx, wakeTimeout)
		defer cancel()
		n.log.Info("query wakes idle cluster", "cluster", cluster)
		if _, err := n.cat.ResumeCluster(ctx, cluster); err != nil {
			return nil, &query.Error{Status: 503, Code: "cluster_waking", Message: "the idle cluster could not be resumed: " + err.Error(), Hint: "retry shortly"}
		}
		n.reconcile(ctx, cluster, true)
		n.touch(cluster)
	}
	e, err := n.engines.QueryEngine(cluster)
	if err != nil && ok && c.Running() {
		// Its engine is restarting (a resize): wait for the reconciler that holds it.
		l := n.lock(cluster)
		l.Lock()
		l.Unlock()
		return n.engines.QueryEngine(cluster)
	}
	return e, err
}

// stop closes a cluster's client and stops its embedded engine.
func (e *engines) stop(ctx context.Context, cluster uuid.UUID) error {
	e.mu.Lock()
	c, p := e.clients[cluster], e.procs[cluster]
	delete(e.clients, cluster)
	delete(e.procs, cluster)
	e.mu.Unlock()
	var errs []error
	if c != nil {
		errs = append(errs, c.Close())
	}
	if p != nil {
		errs = append(errs, p.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

func (o *ops) remove(cluster uuid.UUID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.consumers, cluster)
}

// SharedEngine implements query.Engines.
func (n *node) SharedEngine(cluster uuid.UUID) bool { return n.engines.SharedEngine(cluster) }

// engineLimits are a cluster size mapped onto the engine process (clusters.LimitsFor).
type engineLimits = clusters.EngineLimits

// measure reads back what the engine process got: its max_threads and its
// max_server_memory_usage.
func measure(ctx context.Context, eng *chclient.Client) (cpu float64, memory int64, ok bool) {
	rows, err := eng.QueryStrings(ctx, "SELECT concat(toString(getSetting('max_threads')), ' ', "+
		"(SELECT toString(value) FROM system.server_settings WHERE name = 'max_server_memory_usage'))")
	if err != nil || len(rows) != 1 {
		return 0, 0, false
	}
	threads, mem, found := strings.Cut(rows[0], " ")
	threads = strings.TrimSuffix(strings.TrimPrefix(threads, "'auto("), ")'")
	t, err1 := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(threads, "auto("), ")"))
	m, err2 := strconv.ParseInt(mem, 10, 64)
	if !found || err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return float64(t), m, true
}

// Resources implements edge.ClusterRunner.
func (n *node) Resources(id uuid.UUID) (float64, int64, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	r := n.runs[id]
	if r == nil || !r.measured {
		return 0, 0, false
	}
	return r.cpu, r.memory, true
}

// CountQuery implements query.QueryCounter.
func (n *node) CountQuery(cluster uuid.UUID, write bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	q := n.queries[cluster]
	if q == nil {
		q = &[2]int64{}
		n.queries[cluster] = q
	}
	if write {
		q[1]++
	} else {
		q[0]++
	}
}

// takeQueries returns and resets the counts since the last sample.
func (n *node) takeQueries(cluster uuid.UUID) (reads, writes int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if q := n.queries[cluster]; q != nil {
		reads, writes = q[0], q[1]
		*q = [2]int64{}
	}
	return reads, writes
}
