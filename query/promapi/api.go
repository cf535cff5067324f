// Package promapi serves the Prometheus app's query API (/prometheus/api/v1/query,
// query_range, series, labels, label values, metadata, status/buildinfo,
// query_exemplars) with the upstream Prometheus HTTP API code and PromQL engine over the
// promstore tables (query/promread), so that parameters, JSON and error types are
// Prometheus's own.
package promapi

import (
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/route"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/notifications"
	v1 "github.com/prometheus/prometheus/web/api/v1"

	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/promread"
)

// Prefix is where the API is served.
const Prefix = "/prometheus/api/v1"

// Config bounds queries.
type Config struct {
	// Timeout bounds a query's evaluation (a request's timeout parameter may only
	// shorten it); 0 is 2 minutes, Prometheus's default.
	Timeout time.Duration
	// MaxSamples bounds the samples a query holds in memory at once; 0 is 50,000,000,
	// Prometheus's default. It also bounds the samples one selection loads from the engine.
	MaxSamples int
	// LookbackDelta is the default lookback; 0 is 5 minutes.
	LookbackDelta time.Duration
	// MaxSteps bounds a query's evaluation steps, subqueries' included (EvalSteps),
	// checked on the parsed query before it runs; 0 is DefaultMaxSteps.
	MaxSteps int64
	// MaxConcurrent bounds the requests served at once on the node, MaxConcurrentPerOrg
	// those of one organization; a request waits up to ConcurrencyWait for a slot, then is
	// refused (503, unavailable). 0 is the Default of each.
	MaxConcurrent       int
	MaxConcurrentPerOrg int
	ConcurrencyWait     time.Duration
	// QueryBytes bounds the bytes of series and samples one query loads from the engine,
	// OrgBytes those of one organization's queries running at once (422, cost_limit);
	// 0 is DefaultQueryBytes and DefaultOrgBytes.
	QueryBytes int64
	OrgBytes   int64
	Logger     *slog.Logger
	// NoPushdown evaluates every function in the upstream engine over raw samples
	// instead of pushing rate, delta and last_over_time down to the engine on the step
	// grid (NewPushdownEngine).
	NoPushdown bool
}

// Defaults of Config's limits.
const (
	// DefaultMaxSteps is a thousand range queries at Prometheus's 11,000-point cap;
	// count_over_time(x[10000d:1s]) (864 million) is far past it, x[1d:1s] (86,400) or
	// a 1,000-step range query over x[1h:10s] (360,000) far below.
	DefaultMaxSteps = 11_000_000
	// DefaultMaxConcurrent is Prometheus's default (--query.max-concurrency).
	DefaultMaxConcurrent       = 20
	DefaultMaxConcurrentPerOrg = 4
	DefaultConcurrencyWait     = 5 * time.Second
	DefaultQueryBytes          = 512 << 20
	DefaultOrgBytes            = 1 << 30
)

// API is the query API over every tenant's tables; each request names its target.
type API struct {
	cfg     Config
	engines query.Engines
	engine  *promql.Engine
	router  *route.Router
	gate    *gate
}

// New builds the API on the clusters' engines.
func New(cfg Config, engines query.Engines) *API {
	a := build(cfg, storageOf{promread.ContextQueryable()}, promread.ContextExemplars())
	a.engines = engines
	return a
}

// NewOver builds the API over one storage, whatever the request's target: the same
// code over the upstream in-memory storage is what the tests compare answers with.
func NewOver(cfg Config, q storage.SampleAndChunkQueryable, eq storage.ExemplarQueryable) *API {
	return build(cfg, q, eq)
}

func build(cfg Config, q storage.SampleAndChunkQueryable, eq storage.ExemplarQueryable) *API {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.MaxSamples <= 0 {
		cfg.MaxSamples = 50_000_000
	}
	if cfg.LookbackDelta <= 0 {
		cfg.LookbackDelta = 5 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.MaxConcurrentPerOrg <= 0 {
		cfg.MaxConcurrentPerOrg = DefaultMaxConcurrentPerOrg
	}
	if cfg.ConcurrencyWait <= 0 {
		cfg.ConcurrencyWait = DefaultConcurrencyWait
	}
	if cfg.QueryBytes <= 0 {
		cfg.QueryBytes = DefaultQueryBytes
	}
	if cfg.OrgBytes <= 0 {
		cfg.OrgBytes = DefaultOrgBytes
	}
	defaultStep := func(int64) int64 { return time.Minute.Milliseconds() }
	p := parser.NewParser(parser.Options{EnableExperimentalFunctions: true})
	opts := promql.EngineOpts{
		Logger:                   cfg.Logger,
		MaxSamples:               cfg.MaxSamples,
		Timeout:                  cfg.Timeout,
		LookbackDelta:            cfg.LookbackDelta,
		EnableAtModifier:         true,
		EnableNegativeOffset:     true,
		EnableDelayedNameRemoval: true,
		NoStepSubqueryIntervalFn: defaultStep,
		Parser:                   p,
	}
	var engine *promql.Engine
	var qe promql.QueryEngine
	if cfg.NoPushdown {
		engine = promql.NewEngine(opts)
		qe = engine
	} else {
		qe, engine = NewPushdownEngine(opts)
	}
	a := &API{cfg: cfg, engine: engine, gate: newGate(cfg.MaxConcurrentPerOrg, cfg.MaxConcurrent, cfg.OrgBytes, cfg.ConcurrencyWait)}
	reg := prometheus.NewRegistry()
	api := v1.NewAPI(StepLimited(qe, p, cfg.MaxSteps, defaultStep), q, nil, eq,
		nil, nil, nil,
		func() config.Config { return config.DefaultConfig },
		map[string]string{},
		v1.GlobalURLOptions{ListenAddress: "", Host: "", Scheme: "http"},
		func(f http.HandlerFunc) http.HandlerFunc { return f },
		nil, "", false, false, 0,
		cfg.Logger,
		nil, 0, 1, 1<<20,
		false, nil,
		func() (v1.RuntimeInfo, error) { return v1.RuntimeInfo{}, nil },
		buildInfo(),
		func() []notifications.Notification { return nil }, nil,
		reg, reg, nil,
		false, nil, false, false, false,
		cfg.LookbackDelta, false, false, nil, nil,
		v1.OpenAPIOptions{}, p, false, cfg.Timeout,
	)
	a.router = route.New()
	api.Register(a.router.WithPrefix(Prefix))
	return a
}

// Close stops the engine.
func (a *API) Close() error { return a.engine.Close() }

// Request is one query request's tenant: the cluster and engine database it reads.
type Request struct {
	// Org is the caller's organization, whose concurrent queries and bytes are bounded.
	Org      uuid.UUID
	Cluster  uuid.UUID
	Database string // the engine database of the logical database
	// QueryID prefixes the engine statements' query ids.
	QueryID string
}

// Serve answers one request of the API (r's path under Prefix) for tenant req.
func (a *API) Serve(w http.ResponseWriter, r *http.Request, req Request) {
	var eng query.Engine
	if a.engines != nil {
		var err error
		if eng, err = a.engines.QueryEngine(req.Cluster); err != nil {
			writeError(w, http.StatusServiceUnavailable, "unavailable", "the cluster's engine is not available: "+err.Error())
			return
		}
	}
	leave, orgBudget, err := a.gate.enter(r.Context(), req.Org)
	if err != nil {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		return
	}
	defer leave()
	if a.engines == nil {
		if strings.TrimPrefix(r.URL.Path, Prefix) == "/metadata" {
			// The in-memory storage keeps no metadata.
			writeJSON(w, http.StatusOK, envelope{Status: "success", Data: map[string][]promread.Metadata{}})
			return
		}
		a.router.ServeHTTP(w, r)
		return
	}
	budget := promread.NewBudget("query", a.cfg.QueryBytes, orgBudget)
	defer budget.Release()
	t := promread.Target{Engine: eng, Database: req.Database, QueryID: req.QueryID, MaxSamples: a.cfg.MaxSamples, Budget: budget}
	r = r.WithContext(promread.WithTarget(r.Context(), t))
	if strings.TrimPrefix(r.URL.Path, Prefix) == "/metadata" {
		a.metadata(w, r, t)
		return
	}
	a.router.ServeHTTP(w, r)
}

// buildInfo is the Prometheus version whose API and engine this serves (Prometheus 3.x is
// module version v0.3xx.y: 3.xx.y), read from the binary's build information.
func buildInfo() *v1.PrometheusVersion {
	v := &v1.PrometheusVersion{Version: "3.0.0", Branch: "svc"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.GoVersion = strings.TrimPrefix(bi.GoVersion, "go")
		for _, d := range bi.Deps {
			if d.Path == "github.com/prometheus/prometheus" {
				v.Version = upstreamVersion(d.Version)
				v.Revision = d.Version
			}
		}
	}
	return v
}

// upstreamVersion maps module version v0.316.0 to 3.16.0.
func upstreamVersion(mod string) string {
	s := strings.TrimPrefix(mod, "v0.")
	parts := strings.SplitN(s, ".", 2)
	if len(parts) != 2 || len(parts[0]) != 3 {
		return "3.0.0"
	}
	minor := strings.TrimLeft(parts[0][1:], "0")
	if minor == "" {
		minor = "0"
	}
	return parts[0][:1] + "." + minor + "." + parts[1]
}

// storageOf adds the chunk queries the API's remote-read handler asks for (never
// served here) to a Queryable.
type storageOf struct{ *promread.Queryable }

func (storageOf) ChunkQuerier(int64, int64) (storage.ChunkQuerier, error) {
	return nil, errors.New("chunk queries are not served")
}
