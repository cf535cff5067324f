// Command svcd is the service: HTTP edge, ingest pipeline, query API and control plane,
// with embedded engines, broker and event store by default.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/svc-data/svc/edge"
	"github.com/svc-data/svc/infra/eventstore/boltstore"
	"github.com/svc-data/svc/infra/eventstore/esdb"
	"github.com/svc-data/svc/infra/eventstore/pgstore"
	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/infra/s3store"
	"github.com/svc-data/svc/infra/temporal"
	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/es"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/promapi"
	"github.com/svc-data/svc/query/requestlog"
	"github.com/svc-data/svc/query/splsearch"
	"github.com/svc-data/svc/query/tables"
	"github.com/svc-data/svc/workflows"
	"github.com/svc-data/svc/workflows/alerts"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == temporal.NetnsCommand {
		// Hidden: the embedded Temporal's forwarder, in a network namespace of its own.
		err := temporal.RunNetns(os.Args[2:])
		if err != nil {
			fmt.Fprintln(os.Stderr, "svcd "+temporal.NetnsCommand+":", err)
		}
		os.Exit(temporal.NetnsExit(err))
	}
	// Everything svcd writes, and every engine and broker it starts, is private to its
	// user: directories 0700, files 0600 (the engines' data holds every tenant's rows).
	syscall.Umask(0o077)
	cfg, err := loadConfig(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "svcd:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	if cfg.memoryLimitBytes > 0 {
		// A soft limit: the collector works harder near it rather than let garbage
		// grow the heap past it (the query limits bound what is live).
		debug.SetMemoryLimit(cfg.memoryLimitBytes)
		log.Info("memory limit", "bytes", cfg.memoryLimitBytes)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("svcd stopped", "err", err)
		os.Exit(1)
	}
}

// component is anything started and stopped with the service.
type component interface {
	Shutdown(ctx context.Context) error
}

// app holds what run started, to stop it in reverse order.
type app struct {
	log     *slog.Logger
	mu      sync.Mutex
	stopped []component
}

func (a *app) started(c component) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopped = append(a.stopped, c)
}

func (a *app) shutdown(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for i := len(a.stopped) - 1; i >= 0; i-- {
		if err := a.stopped[i].Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

type shutdownFunc func(ctx context.Context) error

func (f shutdownFunc) Shutdown(ctx context.Context) error { return f(ctx) }

func run(ctx context.Context, cfg *Config, log *slog.Logger) (err error) {
	a := &app{log: log}
	defer func() {
		log.Info("shutting down")
		err = errors.Join(err, a.shutdown(60*time.Second))
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}
	secret, err := serviceSecret(cfg)
	if err != nil {
		return err
	}
	if cfg.PprofAddr != "" {
		stop, err := servePprof(cfg.PprofAddr, log)
		if err != nil {
			return err
		}
		a.started(shutdownFunc(stop))
	}

	// Control plane.
	store, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	a.started(shutdownFunc(func(context.Context) error { return store.Close() }))
	model := catalog.NewModel()
	proj := catalog.NewProjector(store, model, time.Second, log)
	if _, err := proj.CatchUp(ctx); err != nil {
		return fmt.Errorf("rebuild read models: %w", err)
	}
	cat := catalog.NewService(store, model, proj)
	cat.DeviceCodeTTL = cfg.DeviceCodeTTL
	boot, err := cat.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: cfg.BootstrapOrg, Token: cfg.BootstrapAPIKey,
		AdminUser: cfg.BootstrapUser, AdminPassword: cfg.BootstrapPassword})
	if err != nil {
		return err
	}
	// Clusters made before apps existed get their apps stream (DESIGN.md, Apps).
	if err := cat.AdoptApps(ctx); err != nil {
		return err
	}
	if boot.Token != "" {
		if err := announceBootstrap(cfg, boot, log); err != nil {
			return err
		}
	}
	projCtx, stopProj := context.WithCancel(context.WithoutCancel(ctx))
	projDone := make(chan struct{})
	go func() { defer close(projDone); proj.Run(projCtx) }()
	a.started(shutdownFunc(func(ctx context.Context) error {
		stopProj()
		select {
		case <-projDone:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("projector: %w", ctx.Err())
		}
	}))

	// Log.
	conn, err := cfg.kafkaConn()
	if err != nil {
		return err
	}
	if len(conn.Seeds) == 0 {
		b, err := kafka.NewBroker(kafka.BrokerConfig{LibsDir: cfg.KafkaLibs, DataDir: filepath.Join(cfg.DataDir, "kafka"), Logger: log})
		if err != nil {
			return err
		}
		if err := b.Start(ctx); err != nil {
			return err
		}
		a.started(b)
		conn = b.Conn()
	}
	producer, err := kafka.NewProducer(kafka.ProducerConfig{Conn: conn, Logger: log})
	if err != nil {
		return err
	}
	a.started(shutdownFunc(func(context.Context) error { producer.Close(); return nil }))

	// Engines, one per cluster, and the table manager over them.
	engines := newEngines(cfg, log, secret)
	a.started(engines)
	mgr := tables.NewManager(cat, engines)
	// Customer object storage (S3): the service's own credentials, from the environment or
	// a file. Engines fetch the assumed role's session credentials (or, without a role and
	// with the operator's opt-in, the service's federated ones, scoped to the cluster's
	// buckets and paths) from a loopback endpoint: never in SQL or their environment.
	storage, err := s3store.FromEnv()
	if err != nil {
		return err
	}
	if storage.Configured() {
		creds, err := s3store.NewEngineCredentials(storage, func(cluster catalogID) s3store.Role {
			arn, ext, locs := mgr.StorageIdentity(cluster)
			r := s3store.Role{ARN: arn, ExternalID: ext}
			for _, l := range locs {
				r.Locations = append(r.Locations, s3store.Location{Bucket: l.Bucket, Path: l.Path})
			}
			return r
		}, log)
		if err != nil {
			return err
		}
		// It serves as long as the process: engines may fetch credentials while they stop.
		engines.storageEnv = creds.EngineEnv
	}
	mgr.SetStorage(storagePort{storage})
	observe := &ops{Observer: kafka.Observer{Conn: conn}}
	reqlog := requestlog.New(logEngines{engines}, 10_000, log)
	n := newNode(&node{a: a, cfg: cfg, cat: cat, model: model, engines: engines, mgr: mgr, producer: producer, kafka: conn,
		log: log, ops: observe, ctx: ctx, secret: secret})
	n.Start()
	a.started(n)
	logCtx, stopLog := context.WithCancel(context.WithoutCancel(ctx))
	logDone := make(chan struct{})
	go func() { defer close(logDone); reqlog.Run(logCtx, time.Second) }()
	a.started(shutdownFunc(func(context.Context) error { stopLog(); <-logDone; return nil }))

	runner := query.NewRunner(model, cat, mgr, n)
	promAPI := promapi.New(promapi.Config{Logger: log, Timeout: cfg.PromQLTimeout, MaxSamples: cfg.PromQLMaxSamples,
		MaxSteps: cfg.PromQLMaxSteps, MaxConcurrent: cfg.PromQLMaxConcurrent, MaxConcurrentPerOrg: cfg.PromQLMaxConcurrentPerOrg,
		ConcurrencyWait: cfg.PromQLQueueWait, QueryBytes: cfg.PromQLQueryBytes, OrgBytes: cfg.PromQLOrgBytes,
		NoPushdown: !cfg.PromQLPushdown}, n)
	a.started(shutdownFunc(func(context.Context) error { return promAPI.Close() }))
	n.SetInflight(runner.Running)
	searcher := splsearch.New(model, n, runner)
	wf, al, err := startWorkflows(ctx, a, cfg, model, cat, runner, mgr, engines, promInstant{promAPI, model}, searcher, log)
	if err != nil {
		return err
	}
	srv, err := edge.NewServer(edge.Config{Addr: cfg.HTTPAddr, PublicURL: cfg.PublicURL, TrustedProxies: cfg.TrustedProxies, MetricsToken: cfg.MetricsToken, URLImportAllow: cfg.URLImportAllow,
		DefaultIdleTimeoutMinutes: cfg.ClusterIdleTimeout, Logger: log,
		MaxConcurrentIngest: cfg.MaxConcurrentIngest, IngestWait: cfg.IngestWait, GRPCStreams: cfg.GRPCStreams}, edge.Deps{
		Catalog:    model,
		Commands:   cat,
		Tables:     mgr,
		Ingest:     pipeline.NewIngestor(producer),
		Query:      runner,
		Searcher:   searcher,
		Ops:        observe,
		RequestLog: reqlog,
		Clusters:   n,
		Search:     edge.SPLValidator,
		Workflows:  wf,
		Alerts:     al,
		Prometheus: promAPI,
	})
	if err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		return err
	}
	a.started(srv)
	log.Info("svcd ready", "http", srv.Addr(), "data", cfg.DataDir, "kafka", conn.Seeds)
	<-ctx.Done()
	return nil
}

// openStore opens the store SVC_EVENTSTORE_URL names by its scheme (postgres:// or
// postgresql:// for PostgreSQL, any other for EventStoreDB), else the embedded bbolt file.
func openStore(ctx context.Context, cfg *Config, log *slog.Logger) (es.Store, error) {
	if cfg.EventStoreURL != "" {
		if isPostgresURL(cfg.EventStoreURL) {
			return pgstore.Open(ctx, cfg.EventStoreURL, pgstore.WithLogger(log))
		}
		return esdb.Open(ctx, cfg.EventStoreURL, esdb.WithLogger(log))
	}
	return boltstore.Open(filepath.Join(cfg.DataDir, "events.db"))
}

// isPostgresURL tells a PostgreSQL connection URL by its parsed scheme.
func isPostgresURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	return scheme == "postgres" || scheme == "postgresql"
}

// announceBootstrap prints generated credentials once and keeps them in the data
// directory with mode 0600: the admin key in admin.key, the admin password in
// admin.password.
func announceBootstrap(cfg *Config, b *catalog.Bootstrap, log *slog.Logger) error {
	keyPath := filepath.Join(cfg.DataDir, "admin.key")
	if cfg.BootstrapAPIKey == "" {
		if err := os.WriteFile(keyPath, []byte(b.Token+"\n"), 0o600); err != nil {
			return fmt.Errorf("write admin key: %w", err)
		}
		fmt.Fprintf(os.Stderr, "\n  Admin API key (shown once, also saved to %s):\n\n    %s\n", keyPath, b.Token)
	}
	if b.Password != "" {
		pwPath := filepath.Join(cfg.DataDir, "admin.password")
		if err := os.WriteFile(pwPath, []byte(b.Password+"\n"), 0o600); err != nil {
			return fmt.Errorf("write admin password: %w", err)
		}
		fmt.Fprintf(os.Stderr, "\n  Admin user %q, password (shown once, also saved to %s):\n\n    %s\n\n", b.AdminUser.Username, pwPath, b.Password)
	}
	log.Info("bootstrap created", "organization", b.Organization.Name, "cluster", b.Cluster.Name, "admin_user", b.AdminUser.Username)
	return nil
}

// The edge owns the interfaces of its dependencies; these are the types that satisfy them.
var (
	_ edge.CatalogModel    = (*catalog.Model)(nil)
	_ edge.CatalogCommands = (*catalog.Service)(nil)
	_ edge.TableManager    = (*tables.Manager)(nil)
	_ edge.RequestLog      = (*requestlog.Log)(nil)
	_ edge.WorkflowService = (*workflows.Service)(nil)
	_ edge.AlertService    = (*alerts.Service)(nil)
)
