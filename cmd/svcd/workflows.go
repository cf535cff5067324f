package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/temporal"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/egress"
	"github.com/svc-data/svc/query/tables"
	"github.com/svc-data/svc/workflows"
	"github.com/svc-data/svc/workflows/alerts"
)

// startWorkflows brings up the workflow service: the embedded Temporal server unless
// SVC_TEMPORAL_ADDR names one, the client, this node's worker and the schedule
// reconciler. Without an engine (SVC_WORKFLOWS=off, or no Temporal binary) the service
// answers 503.
func startWorkflows(ctx context.Context, a *app, cfg *Config, model *catalog.Model, cat *catalog.Service, runner *query.Runner,
	mgr *tables.Manager, engines *engines, prom alerts.PromQuerier, search alerts.Searcher, log *slog.Logger) (*workflows.Service, *alerts.Service, error) {
	log = log.With("component", "workflows")
	sealer, err := workflows.NewSealer(cfg.SecretKey, cfg.DataDir)
	if err != nil {
		return nil, nil, err
	}
	acfg := alerts.Config{Egress: egress.Policy{Allow: cfg.URLImportAllow}, Logger: log.With("component", "alerts")}
	wcfg := workflows.Config{Egress: egress.Policy{Allow: cfg.URLImportAllow}, HoldAfterSinks: cfg.WorkflowHoldAfterSinks, Logger: log}
	sinks := tableSink{model: model, mgr: mgr, engines: engines}
	logs := workflowLogEngines{engines, model}
	if cfg.Workflows == "off" {
		log.Info("workflows are disabled (SVC_WORKFLOWS=off)")
		return workflows.New(wcfg, model, cat, nil, runner, sinks, logs, sealer), alerts.New(acfg, model, cat, nil, runner, prom, search, sealer), nil
	}
	addr, retention := cfg.TemporalAddr, time.Duration(0)
	tlsCfg, err := cfg.TemporalTLS.Config()
	if err != nil {
		return nil, nil, err
	}
	if tlsCfg != nil && addr == "" {
		return nil, nil, errors.New("SVC_TEMPORAL_TLS_* apply to an operator's Temporal (SVC_TEMPORAL_ADDR); the embedded dev server speaks plaintext only")
	}
	if addr == "" {
		if cfg.TemporalBin == "" {
			log.Warn("workflows are disabled: no Temporal (set SVC_TEMPORAL_ADDR, or SVC_TEMPORAL_BIN for the embedded server; `go tool task up` does)")
			return workflows.New(wcfg, model, cat, nil, runner, sinks, logs, sealer), alerts.New(acfg, model, cat, nil, runner, prom, search, sealer), nil
		}
		// svcd itself, re-executed, runs the server in a network namespace of its own,
		// reached through a unix socket in the 0700 data directory (issue 23).
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, err
		}
		srv, err := temporal.NewServer(temporal.ServerConfig{Binary: cfg.TemporalBin, DataDir: filepath.Join(cfg.DataDir, "temporal"),
			Namespace: cfg.TemporalNamespace, Forwarder: []string{exe, temporal.NetnsCommand}, Logger: log})
		if err != nil {
			return nil, nil, err
		}
		if err := srv.Start(ctx); err != nil {
			return nil, nil, err
		}
		a.started(srv)
		addr, retention = srv.Addr(), cfg.TemporalRetention
	}
	eng, err := temporal.Dial(ctx, temporal.EngineConfig{Addr: addr, TLS: tlsCfg, Namespace: cfg.TemporalNamespace, TaskQueue: cfg.TemporalTaskQueue, Retention: retention, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	a.started(eng)
	// Alerts are evaluated on a task queue of their own, so their schedules and the
	// workflows' never meet (each reconciler lists and deletes only its queue's).
	queue := cfg.TemporalTaskQueue
	if queue == "" {
		queue = "svc-workflows"
	}
	aeng, err := temporal.Dial(ctx, temporal.EngineConfig{Addr: addr, TLS: tlsCfg, Namespace: cfg.TemporalNamespace, TaskQueue: queue + "-alerts", Logger: log})
	if err != nil {
		return nil, nil, err
	}
	a.started(aeng)
	svc := workflows.New(wcfg, model, cat, eng, runner, sinks, logs, sealer)
	asvc := alerts.New(acfg, model, cat, aeng, runner, prom, search, sealer)
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The engine may be unreachable at start (an external cluster restarting): the
		// API answers 503 meanwhile, and the worker starts once it answers.
		for {
			err := eng.StartWorker(svc)
			if err == nil {
				break
			}
			log.Warn("workflow worker cannot start yet; retrying", "err", err)
			select {
			case <-wctx.Done():
				return
			case <-time.After(2 * time.Second):
			}
		}
		for {
			err := aeng.StartWorker(asvc)
			if err == nil {
				break
			}
			log.Warn("alert worker cannot start yet; retrying", "err", err)
			select {
			case <-wctx.Done():
				return
			case <-time.After(2 * time.Second):
			}
		}
		// Both reconcilers end before done closes: the engines' clients close after it.
		alertsDone := make(chan struct{})
		go func() { defer close(alertsDone); asvc.RunReconciler(wctx) }()
		svc.RunReconciler(wctx)
		<-alertsDone
	}()
	a.started(shutdownFunc(func(context.Context) error { stop(); <-done; return nil }))
	return svc, asvc, nil
}

// tableSink writes a workflow's rows into a logical table's current generation (the
// first one typed from these rows when the table has none yet).
type tableSink struct {
	model   *catalog.Model
	mgr     *tables.Manager
	engines *engines
}

func (t tableSink) InsertDocs(ctx context.Context, cluster uuid.UUID, database, table, token string, ndjson []byte) error {
	tb, ok := t.model.Table(cluster, database, table)
	if !ok {
		return fmt.Errorf("table %s.%s does not exist", database, table)
	}
	var sample [][]byte
	for line := range bytes.SplitSeq(ndjson, []byte("\n")) {
		if len(line) > 0 && len(sample) < 1000 {
			sample = append(sample, line)
		}
	}
	target, ok, err := t.mgr.Target(ctx, tb.ID, sample)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("table %s.%s does not exist", database, table)
	}
	c, err := t.engines.client(cluster)
	if err != nil {
		return err
	}
	return c.InsertRows(ctx, target.Database, target.Table, target.ColumnType, token, ndjson)
}

// workflowLogEngines adapts the registry to the run log's port.
// A cluster that is not running answers clusterStoppedErr (503 with the resume hint); the
// read does not wake an idle-stopped one.
type workflowLogEngines struct {
	e     *engines
	model *catalog.Model
}

func (l workflowLogEngines) Engine(cluster uuid.UUID) (workflows.LogEngine, error) {
	e, err := l.e.client(cluster)
	if err != nil {
		if c, ok := l.model.Cluster(cluster); ok && !c.Running() {
			return nil, clusterStoppedErr(c)
		}
		return nil, err
	}
	return e, nil
}
