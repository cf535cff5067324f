package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chclient"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/requestlog"
	"github.com/svc-data/svc/query/tables"
)

type catalogID = uuid.UUID

// engines holds each cluster's engine: an embedded chengine process supervised here, or
// the ClickHouse server SVC_CLICKHOUSE_URL names.
type engines struct {
	cfg *Config
	log *slog.Logger
	// secret derives each embedded engine's password (enginePassword).
	secret []byte

	// storageEnv gives a cluster's engine where it fetches its object-storage credentials
	// (s3store.EngineCredentials.EngineEnv); nil without storage credentials.
	storageEnv func(cluster uuid.UUID) []string

	mu      sync.Mutex
	clients map[uuid.UUID]*chclient.Client
	procs   map[uuid.UUID]*clickhouse.Process
}

func newEngines(cfg *Config, log *slog.Logger, secret []byte) *engines {
	return &engines{cfg: cfg, log: log, secret: secret, clients: map[uuid.UUID]*chclient.Client{}, procs: map[uuid.UUID]*clickhouse.Process{}}
}

// processConfig is how a cluster's embedded engine process runs: its size's limits, with
// the operator's --engine-memory as a cap over every size.
func (e *engines) processConfig(cluster uuid.UUID, lim engineLimits) clickhouse.ProcessConfig {
	memory := lim.Memory
	if cap := e.cfg.engineMemoryBytes; cap > 0 && (memory == 0 || memory > cap) {
		memory = cap
	}
	return clickhouse.ProcessConfig{
		Password:   enginePassword(e.secret, cluster),
		Binary:     e.cfg.EngineBin,
		Lib:        e.cfg.ChdbLib,
		DataDir:    filepath.Join(e.cfg.DataDir, "clusters", cluster.String(), "engine"),
		Listen:     "127.0.0.1:0",
		Pool:       lim.PoolOr(e.cfg.EnginePool),
		MaxMemory:  memory,
		MaxThreads: lim.Threads,
		// The engine of a killed svcd finishes its statements (up to 30 s) before it
		// lets the directory go; a restarted svcd waits for it rather than failing.
		WaitForPath: 90 * time.Second,
		// An engine that dies is started again on the same address; consumers retry
		// meanwhile and lose nothing.
		Restart: true,
		Env:     e.envOf(cluster),
		Logger:  e.log.With("cluster", cluster),
	}
}

func (e *engines) envOf(cluster uuid.UUID) []string {
	if e.storageEnv == nil {
		return nil
	}
	return e.storageEnv(cluster)
}

// start brings up a cluster's engine and returns its client once it answers.
func (e *engines) start(ctx context.Context, cluster uuid.UUID, lim engineLimits) (*chclient.Client, error) {
	e.mu.Lock()
	c, ok := e.clients[cluster]
	old := e.procs[cluster]
	delete(e.procs, cluster)
	e.mu.Unlock()
	if ok {
		return c, nil
	}
	if old != nil { // started by an attempt that failed later
		_ = old.Shutdown(ctx)
	}
	url, password := e.cfg.ClickHouseURL, ""
	if url == "" {
		password = enginePassword(e.secret, cluster)
		p, err := clickhouse.NewProcess(e.processConfig(cluster, lim))
		if err != nil {
			return nil, err
		}
		if err := p.Start(ctx); err != nil {
			return nil, fmt.Errorf("start engine of cluster %s: %w", cluster, err)
		}
		e.mu.Lock()
		e.procs[cluster] = p
		e.mu.Unlock()
		url = p.URL()
	}
	c, err := chclient.Open(chclient.Config{URL: url, MaxConns: 32, Password: password})
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		if err = c.Ping(pctx); err == nil {
			break
		}
		select {
		case <-pctx.Done():
			return nil, fmt.Errorf("engine of cluster %s at %s does not answer: %w", cluster, url, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	e.mu.Lock()
	e.clients[cluster] = c
	e.mu.Unlock()
	return c, nil
}

var errNoEngine = errors.New("the cluster's engine is not running")

func (e *engines) client(cluster uuid.UUID) (*chclient.Client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.clients[cluster]
	if !ok {
		return nil, fmt.Errorf("%w: cluster %s", errNoEngine, cluster)
	}
	return c, nil
}

// Engine implements tables.Engines.
func (e *engines) Engine(cluster uuid.UUID) (tables.Engine, error) { return e.client(cluster) }

// QueryEngine returns a cluster's engine for the query API.
func (e *engines) QueryEngine(cluster uuid.UUID) (query.Engine, error) { return e.client(cluster) }

// SharedEngine: with SVC_CLICKHOUSE_URL every cluster uses that one server; embedded
// engines serve one cluster each.
func (e *engines) SharedEngine(uuid.UUID) bool { return e.cfg.ClickHouseURL != "" }

// Shutdown closes clients and stops embedded engines.
func (e *engines) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	for _, c := range e.clients {
		errs = append(errs, c.Close())
	}
	for _, p := range e.procs {
		errs = append(errs, p.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// logEngines adapts the registry to the request log's port.
type logEngines struct{ e *engines }

func (l logEngines) Engine(cluster uuid.UUID) (requestlog.Engine, error) { return l.e.client(cluster) }

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
