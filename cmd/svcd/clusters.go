package main

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/svc-data/svc/query/requestlog"
	"github.com/svc-data/svc/query/tables"
	"github.com/svc-data/svc/workflows"
)

// node wires this machine's part of every cluster: the runtime of projections/clusters
// (reconcile, idle stop and wake, autoscaling, usage sampling) runs it through the
// adapters below, over the engine processes (engines), the ingest consumers (pipeline,
// infra/kafka) and the metrics store (query/metrics). The node answers the edge
// (edge.ClusterRunner) and the query layer (query.Engines, query.QueryCounter).
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
	rt       *clusters.Runtime

	mu      sync.Mutex
	queries map[uuid.UUID]*[2]int64 // reads and writes not yet sampled
}

func newNode(n *node) *node {
	n.queries = map[uuid.UUID]*[2]int64{}
	n.rt = clusters.New(n.ctx, clusters.Config{
		Clusters: n.model, Commands: n.cat,
		Engines: clusterEngines{n}, Consumers: clusterConsumers{n}, Teardown: clusterTeardown{n}, Usage: clusterUsage{n},
		IdleMinute: n.cfg.ClusterIdleMinute, AutoscaleInterval: n.cfg.AutoscaleInterval, MetricsInterval: n.cfg.MetricsInterval,
		Log: n.log,
	})
	return n
}

// Start reconciles every cluster once, then keeps reconciling in the background.
func (n *node) Start() { n.rt.Start() }

// Shutdown stops the reconciler, then every cluster's consumer (engines stop after, with
// the engine registry).
func (n *node) Shutdown(ctx context.Context) error { return n.rt.Shutdown(ctx) }

// ReconcileCluster implements edge.ClusterRunner: bring this node's part of the cluster
// to its phase now, ignoring backoff, and wait for that.
func (n *node) ReconcileCluster(ctx context.Context, id uuid.UUID) error {
	n.rt.Reconcile(ctx, id)
	return nil
}

// Resources implements edge.ClusterRunner.
func (n *node) Resources(id uuid.UUID) (float64, int64, bool) { return n.rt.Resources(id) }

// SetInflight gives the runtime the count of queries this node runs per cluster
// (query.Runner.Running).
func (n *node) SetInflight(f func(uuid.UUID) int) { n.rt.SetInflight(f) }

// QueryEngine implements query.Engines: a stopped cluster answers 503 with the way to
// resume it; one the idle timeout stopped is resumed by the query, which waits for it.
func (n *node) QueryEngine(cluster uuid.UUID) (query.Engine, error) {
	c, ok := n.model.Cluster(cluster)
	var stopped *clusters.StoppedError
	var waking *clusters.WakeError
	switch err := n.rt.ForQuery(cluster); {
	case errors.As(err, &stopped):
		return nil, clusterStoppedErr(stopped.Cluster)
	case errors.As(err, &waking):
		return nil, &query.Error{Status: 503, Code: "cluster_waking", Message: waking.Error(), Hint: "retry shortly"}
	}
	e, err := n.engines.QueryEngine(cluster)
	if err != nil && ok && c.Running() {
		// Its engine is restarting (a resize): wait for the reconciler that holds it.
		n.rt.AwaitReconcile(cluster)
		return n.engines.QueryEngine(cluster)
	}
	return e, err
}

// clusterStoppedErr is the answer of a data-plane read (a query, a workflow's logs or
// metrics) on a cluster that is not running: 503 cluster_stopped with the way to resume it.
func clusterStoppedErr(c *catalog.Cluster) error {
	return &query.Error{Status: 503, Code: "cluster_stopped",
		Message: fmt.Sprintf("cluster %q is %s; queries need a running cluster (ingestion is still accepted and lands on resume)", c.Name, c.PhaseName()),
		Hint:    fmt.Sprintf("resume it: POST /v1/clusters/%s/resume", c.ID)}
}

// SharedEngine implements query.Engines.
func (n *node) SharedEngine(cluster uuid.UUID) bool { return n.engines.SharedEngine(cluster) }

func (n *node) clusterDir(id uuid.UUID) string {
	return filepath.Join(n.cfg.DataDir, "clusters", id.String())
}

// clusterEngines implements clusters.Engines over the engine registry.
type clusterEngines struct{ n *node }

// Start brings up a cluster's engine with its schema, tables and `default` database.
// Every step is idempotent, so a retry after a failure at any step completes it.
func (p clusterEngines) Start(ctx context.Context, c *catalog.Cluster, lim clusters.EngineLimits) (clusters.Resources, error) {
	n, cluster := p.n, c.ID
	var none clusters.Resources
	eng, err := n.engines.start(ctx, cluster, lim)
	if err != nil {
		return none, err
	}
	if err := pipeline.EnsureSchema(ctx, eng); err != nil {
		return none, err
	}
	if err := requestlog.Schema(ctx, eng, n.cfg.RequestLogDays); err != nil {
		return none, fmt.Errorf("create request log: %w", err)
	}
	if err := workflows.LogSchema(ctx, eng, n.cfg.WorkflowLogDays); err != nil {
		return none, fmt.Errorf("create workflow log: %w", err)
	}
	if err := metrics.Schema(ctx, eng); err != nil {
		return none, fmt.Errorf("create metrics table: %w", err)
	}
	if err := n.mgr.Reconcile(ctx, cluster); err != nil {
		return none, err
	}
	if _, ok := n.model.Database(cluster, catalog.DefaultDatabase); !ok {
		if _, err := n.mgr.CreateDatabase(ctx, c.OrgID, cluster, catalog.DefaultDatabase, nil); err != nil && !errors.Is(err, catalog.ErrExists) {
			return none, fmt.Errorf("create the default database: %w", err)
		}
	}
	var r clusters.Resources
	r.CPU, r.Memory, r.Measured = measure(ctx, eng)
	return r, nil
}

// Stop closes a cluster's client and stops its engine.
func (p clusterEngines) Stop(ctx context.Context, id uuid.UUID) error {
	return p.n.engines.stop(ctx, id)
}

// Load counts the statements running on a cluster's engine: its initial queries (query
// API, consumer inserts, internal reads). An engine whose connections are all busy does
// not answer within a second: that is saturation, counted as its pool size.
func (p clusterEngines) Load(ctx context.Context, c *catalog.Cluster) (int, error) {
	eng, err := p.n.engines.client(c.ID)
	if err != nil {
		return 0, clusters.ErrRestarting
	}
	qctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	rows, err := eng.QueryStrings(qctx, "SELECT toString(count()) FROM system.processes WHERE is_initial_query AND query_id != queryID()")
	switch {
	case qctx.Err() != nil && ctx.Err() == nil:
		return clusters.LimitsFor(c).PoolOr(p.n.cfg.EnginePool), nil
	case err != nil || len(rows) != 1:
		return 0, fmt.Errorf("count running statements: %v", err)
	}
	return strconv.Atoi(rows[0])
}

// clusterConsumers implements clusters.Consumers over pipeline's consumer and Kafka.
type clusterConsumers struct{ n *node }

// clusterRun is a cluster's consumer with its group reader and resorter.
type clusterRun struct {
	id         uuid.UUID
	ops        *ops
	cons       *pipeline.Consumer
	gr         *kafka.GroupReader
	stopResort context.CancelFunc
	resortDone chan struct{}
}

// Start ensures the cluster's topics and starts its consumer, its group reader and its
// resorter; what a failed attempt started is stopped.
func (p clusterConsumers) Start(ctx context.Context, c *catalog.Cluster) (clusters.Consumer, error) {
	n, cluster := p.n, c.ID
	eng, err := n.engines.client(cluster)
	if err != nil {
		return nil, err
	}
	ingest, dead := pipeline.IngestTopic(cluster), pipeline.DeadTopic(cluster)
	if err := kafka.EnsureTopicsWith(ctx, n.kafka, kafka.TopicSpec{Partitions: int32(n.cfg.IngestPartitions),
		Replication: int16(n.cfg.KafkaReplication), MinInSync: n.cfg.KafkaMinInSync}, ingest, dead); err != nil {
		return nil, err
	}
	log := n.log.With("cluster", cluster)
	cons, err := pipeline.NewConsumer(pipeline.ConsumerConfig{
		MaxRows: n.cfg.BatchMaxRows, MaxBytes: n.cfg.BatchMaxBytes, Linger: n.cfg.BatchLinger, MaxSamples: n.cfg.BatchMaxSamples,
		MetricsLinger: n.cfg.MetricsBatchLinger, Logger: log,
		RemoteInsertTimeout: n.cfg.RemoteInsertTimeout, ParkMin: n.cfg.RemoteRetryMin,
		Dead: n.producer, DeadTopic: func(string) string { return dead }, TokenKey: n.secret,
		PrometheusDDL: n.mgr.PrometheusDDL(cluster), Cluster: cluster, Homes: n.mgr,
	}, eng, n.mgr)
	if err != nil {
		return nil, err
	}
	run := &clusterRun{id: cluster, ops: n.ops, cons: cons}
	gr, err := kafka.NewGroupReader(kafka.GroupConfig{Conn: n.kafka, Group: pipeline.ConsumerGroup(cluster),
		Topics: []string{ingest}, Logger: log, SessionTimeout: n.cfg.KafkaSessionTimeout}, cons)
	if err != nil {
		return nil, errors.Join(err, run.drain(ctx))
	}
	if err := gr.Start(ctx); err != nil {
		return nil, errors.Join(err, run.drain(ctx))
	}
	run.gr = gr
	rctx, stopResort := context.WithCancel(context.WithoutCancel(n.ctx))
	run.stopResort, run.resortDone = stopResort, make(chan struct{})
	go func() {
		defer close(run.resortDone)
		n.mgr.RunResorter(rctx, cluster, kafka.PlanInspector{Conn: n.kafka, Group: pipeline.ConsumerGroup}, 5*time.Second, log)
	}()
	n.ops.add(cluster, cons)
	return run, nil
}

// Waiting sums the cluster's consumer lag over its ingest partitions.
func (p clusterConsumers) Waiting(ctx context.Context, id uuid.UUID) (int64, error) {
	lag, err := p.n.ops.Lag(ctx, id)
	if err != nil {
		return 0, err
	}
	var waiting int64
	for _, l := range lag {
		waiting += l.Lag
	}
	return waiting, nil
}

// Landed implements clusters.Consumer.
func (r *clusterRun) Landed() int64 {
	rows, _, _, _, _ := r.cons.Stats().Totals()
	return rows
}

// Shutdown implements clusters.Consumer: the edge stops showing the consumer's
// statistics, then it drains.
func (r *clusterRun) Shutdown(ctx context.Context) error {
	r.ops.remove(r.id)
	return r.drain(ctx)
}

// drain: the group reader stops fetching and lets the consumer flush and commit, then
// the consumer stops. Rows not yet landed stay in Kafka.
func (r *clusterRun) drain(ctx context.Context) error {
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

// clusterTeardown implements clusters.Teardown.
type clusterTeardown struct{ n *node }

// RemoveLocal removes the cluster's data directory on this node.
func (t clusterTeardown) RemoveLocal(id uuid.UUID) error { return os.RemoveAll(t.n.clusterDir(id)) }

// Delete implements clusters.Teardown: it removes a deleting cluster's databases, keys, data and topics, then
// records it deleted (which frees its name). Every step may run again.
func (t clusterTeardown) Delete(ctx context.Context, c *catalog.Cluster) error {
	n := t.n
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
