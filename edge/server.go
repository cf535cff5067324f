package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
	"google.golang.org/grpc"

	"github.com/svc-data/svc/edge/apierr"
	"github.com/svc-data/svc/edge/ingest"
	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/projections/catalog"
)

// Config is the HTTP server's configuration.
type Config struct {
	Addr string
	// MaxBodyBytes bounds a request body as received (compressed or not).
	MaxBodyBytes int
	// MaxConcurrentIngest bounds inserts in flight; more wait up to IngestWait, then get
	// 503 with Retry-After.
	MaxConcurrentIngest int
	IngestWait          time.Duration
	// GRPCStreams bounds the OTLP/gRPC exports in flight on one connection and for one
	// key (each holds up to MaxOTLPMessage of message in memory).
	GRPCStreams int
	// IngestTimeout bounds the wait for the log's acknowledgment of a small request;
	// a request waits a second longer per MiB of rows (ackTimeout).
	IngestTimeout time.Duration
	// PublicURL is the address users reach the service at (for links such as the device
	// approval page); empty uses the listen address, never a request's Host header,
	// which the requester chooses.
	PublicURL string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For and X-Forwarded-Proto
	// are believed (edge/clientaddr.go); empty believes no one.
	TrustedProxies []netip.Prefix
	// MetricsToken, when set, is the bearer token GET /metrics requires. Unset, /metrics
	// is served only when Addr is a loopback address.
	MetricsToken string
	// URLImportAllow lists networks (CIDR) and host names URL imports may reach beyond
	// the public internet, e.g. "10.1.0.0/16,files.internal".
	URLImportAllow []string
	// DefaultIdleTimeoutMinutes is a new cluster's idle timeout when its request names
	// none: 0 (never idle) or 15 to 43,200.
	DefaultIdleTimeoutMinutes int
	Logger                    *slog.Logger
}

// Validate fills defaults.
func (c *Config) Validate() error {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:8080"
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = ingest.MaxOTLPBody + 1<<20 // OTLP/HTTP: 100 MiB, and a clear 413 past it
	}
	if c.MaxConcurrentIngest <= 0 {
		c.MaxConcurrentIngest = 256
	}
	if c.GRPCStreams <= 0 {
		c.GRPCStreams = 8
	}
	if c.IngestWait <= 0 {
		c.IngestWait = 2 * time.Second
	}
	if c.IngestTimeout <= 0 {
		c.IngestTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Deps are the domain services the edge calls.
type Deps struct {
	Catalog  CatalogModel
	Commands CatalogCommands
	Tables   TableManager
	Ingest   Acceptor
	Query    QueryRunner
	Ops      Ops
	// RequestLog records API requests; nil records nothing.
	RequestLog RequestLog
	Clusters   ClusterRunner
	// Search validates saved searches; Searcher runs log searches.
	Search   SearchService
	Searcher Searcher
	// Workflows is the workflow API's domain; a disabled one answers 503.
	Workflows WorkflowService
	// Alerts is the alert API's domain; a disabled one answers 503.
	Alerts AlertService
	// Prometheus is the Prometheus app's query API; nil answers 503.
	Prometheus PromQuery
}

// Acceptor writes an insert's accepted rows to the log, returning once the log
// acknowledged them (pipeline.Ingestor).
type Acceptor interface {
	Accept(ctx context.Context, a pipeline.Accepted) error
}

// SearchService is the log-search language as the edge needs it.
type SearchService interface {
	// Validate checks a search text and its time window; its errors answer 400.
	Validate(spl, earliest, latest string) error
}

// Server is the HTTP front door.
type Server struct {
	cfg   Config
	deps  Deps
	srv   *fasthttp.Server
	ln    net.Listener
	grpc  *grpc.Server
	split *splitListener
	// ingest serves the insert routes (edge/ingest).
	ingest *ingest.Handlers
	// grpcKeys bounds OTLP/gRPC streams per key; grpcMessages counts messages received.
	grpcKeys     keyStreams
	grpcMessages atomic.Int64
	wg           sync.WaitGroup
	polls        pollState
	stopped      bool
	mu           sync.Mutex
	// life is the context of requests' downstream work; see work.
	life    context.Context
	endLife context.CancelFunc
	// routes is the router; the console's /ui/api calls it again with the /v1 path.
	routes fasthttp.RequestHandler
	// logins limits password sign-ins (checkPassword).
	logins *loginLimiter
}

// work returns the context.Context for a request's downstream calls (event store,
// engine, log). *fasthttp.RequestCtx implements context.Context, but fasthttp recycles it
// once the handler returns, while net/http (under clickhouse-go) still calls Value and
// Done on a parent context from its own goroutines afterwards: a data race, found by
// running svcd built with -race under the end-to-end tests. This context carries no
// values and ends when the server has shut down, and RequestCtx's own cancellation only
// ever came with the shutdown too. Work that outlives the handler (streamed results,
// ingest acknowledgments) still makes its own context.
func (s *Server) work() context.Context { return s.life }

// NewServer validates cfg and builds the routes.
func NewServer(cfg Config, deps Deps) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, deps: deps, logins: newLoginLimiter()}
	s.grpcKeys.max = cfg.GRPCStreams
	s.life, s.endLife = context.WithCancel(context.Background())
	s.ingest = ingest.New(s.life, ingest.Config{MaxConcurrentIngest: cfg.MaxConcurrentIngest, IngestWait: cfg.IngestWait,
		IngestTimeout: cfg.IngestTimeout, URLImportAllow: cfg.URLImportAllow},
		ingest.Deps{Auth: ingestAuth{s}, Catalog: deps.Catalog, Tables: deps.Tables, Commands: deps.Commands, Ingest: deps.Ingest, Query: deps.Query})
	r := router.New()
	r.SaveMatchedRoutePath = true
	r.GET("/v1/logs", s.withKey(s.listLogs))
	r.GET("/health", respond(s.health))
	r.GET("/v1/openapi.json", respond(s.openAPI))
	r.POST("/v1/auth/login", respond(s.login))
	r.POST("/v1/auth/logout", s.withKey(s.logout))
	r.GET("/v1/me", s.withKey(s.me))
	r.POST("/v1/users", s.withKey(s.createUser))
	r.GET("/v1/organizations", s.withKey(s.listOrganizations))
	r.POST("/v1/organizations", s.withKey(s.createOrganization))
	r.GET("/v1/organizations/{org}", s.withKey(s.getOrganization))
	r.PATCH("/v1/organizations/{org}", s.withKey(s.renameOrganization))
	r.DELETE("/v1/organizations/{org}", s.withKey(s.deleteOrganization))
	r.GET("/v1/organizations/{org}/members", s.withKey(s.listMembers))
	r.PATCH("/v1/organizations/{org}/members/{user}", s.withKey(s.setMember))
	r.DELETE("/v1/organizations/{org}/members/{user}", s.withKey(s.removeMember))
	// Membership with consent (edge/invitations.go).
	r.POST("/v1/organizations/{org}/invitations", s.withKey(s.inviteMember))
	r.GET("/v1/organizations/{org}/invitations", s.withKey(s.listOrgInvitations))
	r.DELETE("/v1/organizations/{org}/invitations/{id}", s.withKey(s.revokeInvitation))
	r.GET("/v1/invitations", s.withKey(s.myInvitations))
	r.POST("/v1/invitations/{id}/accept", s.withKey(s.answerInvitation(true)))
	r.POST("/v1/invitations/{id}/decline", s.withKey(s.answerInvitation(false)))
	r.GET("/v1/clusters", s.withKey(s.listClusters))
	r.POST("/v1/clusters", s.withKey(s.createCluster))
	r.GET("/v1/clusters/sizes", s.withKey(s.clusterSizes))
	r.GET("/v1/clusters/{cluster_id}", s.withKey(s.getCluster))
	r.PATCH("/v1/clusters/{cluster_id}", s.withKey(s.patchCluster))
	r.DELETE("/v1/clusters/{cluster_id}", s.withKey(s.deleteCluster))
	r.POST("/v1/clusters/{cluster_id}/stop", s.withKey(s.stopCluster))
	r.POST("/v1/clusters/{cluster_id}/resume", s.withKey(s.resumeCluster))
	r.GET("/v1/metrics", s.withKey(s.getMetrics))
	r.GET("/v1/clusters/metrics", s.withKey(s.clusterMetricsByName))
	r.GET("/v1/clusters/{cluster_id}/metrics", s.withKey(s.clusterMetricsByID))
	r.POST("/v1/clusters/verify-s3-access", s.withKey(s.verifyS3Access))
	r.GET("/v1/connectors/{connector_id}", s.withKey(s.getConnector))
	r.GET("/v1/keys", s.withKey(s.listKeys))
	r.POST("/v1/keys", s.withKey(s.createKey))
	r.DELETE("/v1/keys/{key}", s.withKey(s.deleteKey))
	r.GET("/v1/databases", s.withKey(s.listDatabases))
	r.POST("/v1/databases", s.withKey(s.createDatabase))
	r.PATCH("/v1/databases/{database}", s.withKey(s.patchDatabase))
	r.DELETE("/v1/databases/{database}", s.withKey(s.deleteDatabase))
	r.POST("/services/collector/event", respond(s.ingest.HECEvents))
	r.POST("/services/collector", respond(s.ingest.HECEvents))
	r.POST("/services/collector/event/1.0", respond(s.ingest.HECEvents))
	r.POST("/services/collector/raw", respond(s.ingest.HECRaw))
	r.POST("/services/collector/raw/1.0", respond(s.ingest.HECRaw))
	r.GET("/services/collector/health", respond(s.ingest.HECHealth))
	r.GET("/services/collector/health/1.0", respond(s.ingest.HECHealth))
	r.GET("/v1/apps/logsearch/searches", s.withKey(s.Gated(catalog.AppLogsearch, s.listSearches)))
	r.POST("/v1/apps/logsearch/searches", s.withKey(s.Gated(catalog.AppLogsearch, s.createSearch)))
	r.GET("/v1/apps/logsearch/searches/{id}", s.withKey(s.Gated(catalog.AppLogsearch, s.getSearch)))
	r.PATCH("/v1/apps/logsearch/searches/{id}", s.withKey(s.Gated(catalog.AppLogsearch, s.updateSearch)))
	r.DELETE("/v1/apps/logsearch/searches/{id}", s.withKey(s.Gated(catalog.AppLogsearch, s.deleteSearch)))
	r.POST("/v1/oauth/device/code", respond(s.deviceCode))
	r.POST("/v1/oauth/token", respond(s.token))
	r.GET("/device", respond(s.devicePageGet))
	r.POST("/device/login", respond(s.deviceLogin))
	r.POST("/device", respond(s.deviceDecide))
	r.GET("/v1/tables", s.withKey(s.listTables))
	r.POST("/v1/tables", s.withKey(s.createTable))
	r.GET("/v1/tables/{table}", s.withKey(s.describeTable))
	r.PATCH("/v1/tables/{table}", s.withKey(s.patchTable))
	r.DELETE("/v1/tables/{table}", s.withKey(s.deleteTable))
	r.POST("/v1/tables/{table}", respond(s.ingest.Insert))
	r.GET("/v1/tables/{table}/freshness", s.withKey(s.freshness))
	r.GET("/v1/tables/{table}/dead_letters", s.withKey(s.deadLetters))
	r.GET("/metrics", respond(s.metrics))
	r.POST("/v1/query", s.withKey(s.query))
	r.POST("/v1/query/cancel", s.withKey(s.cancelQuery))
	r.POST("/v1/spl/search", s.withKey(s.Gated(catalog.AppLogsearch, s.splSearch)))
	r.GET("/v1/spl/capabilities", respond(s.splCapabilities))
	// Apps (apps.go) and the OpenTelemetry app's native OTLP/HTTP (otlp.go).
	r.GET("/v1/apps", s.withKey(s.listApps))
	r.PUT("/v1/apps/{app_id}", s.withKey(s.installApp))
	r.PATCH("/v1/apps/{app_id}", s.withKey(s.patchApp))
	r.DELETE("/v1/apps/{app_id}", s.withKey(s.uninstallApp))
	r.POST("/otlp/v1/traces", s.withKey(s.Gated(catalog.AppOpenTelemetry, keyedIngest(s.ingest.OTLP("traces")))))
	r.POST("/otlp/v1/logs", s.withKey(s.Gated(catalog.AppOpenTelemetry, keyedIngest(s.ingest.OTLP("logs")))))
	r.POST("/otlp/v1/metrics", s.withKey(s.Gated(catalog.AppOpenTelemetry, keyedIngest(s.ingest.OTLP("metrics")))))
	// The Prometheus app's query API (promql.go), with the methods Prometheus serves each with.
	r.GET("/prometheus/api/v1/query", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.POST("/prometheus/api/v1/query", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.GET("/prometheus/api/v1/query_range", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.POST("/prometheus/api/v1/query_range", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.GET("/prometheus/api/v1/series", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.POST("/prometheus/api/v1/series", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.GET("/prometheus/api/v1/labels", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.POST("/prometheus/api/v1/labels", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.GET("/prometheus/api/v1/label/{name}/values", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.GET("/prometheus/api/v1/metadata", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.GET("/prometheus/api/v1/status/buildinfo", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.GET("/prometheus/api/v1/query_exemplars", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	r.GET("/prometheus/api/v1/rules", s.withKey(s.Gated(catalog.AppPrometheus, s.promRules)))
	r.GET("/prometheus/api/v1/alerts", s.withKey(s.Gated(catalog.AppPrometheus, s.promRules)))
	r.POST("/prometheus/api/v1/query_exemplars", s.withKey(s.Gated(catalog.AppPrometheus, s.promQuery)))
	// The Prometheus app's remote write (promwrite.go).
	r.POST("/prometheus/api/v1/write", s.withKey(s.Gated(catalog.AppPrometheus, keyedIngest(s.ingest.PromWrite))))
	r.GET("/ui/", respond(s.consolePage))
	r.GET("/ui/assets/{file}", respond(s.consoleAsset))
	r.POST("/ui/login", respond(s.consoleLogin))
	r.GET("/ui/session", respond(s.consoleSession))
	r.POST("/ui/logout", respond(s.consoleLogout))
	r.ANY("/ui/api/{path:*}", respond(s.consoleAPI))
	r.GET("/v1/workflows", s.withKey(s.listWorkflows))
	r.POST("/v1/workflows", s.withKey(s.createWorkflow))
	r.GET("/v1/workflows/{workflow_id}", s.withKey(s.getWorkflow))
	r.PATCH("/v1/workflows/{workflow_id}", s.withKey(s.patchWorkflow))
	r.DELETE("/v1/workflows/{workflow_id}", s.withKey(s.deleteWorkflow))
	r.POST("/v1/workflows/{workflow_id}/runs", s.withKey(s.startWorkflowRun))
	r.GET("/v1/workflows/{workflow_id}/runs", s.withKey(s.listWorkflowRuns))
	r.POST("/v1/workflows/{workflow_id}/runs/{run_id}/cancel", s.withKey(s.cancelWorkflowRun))
	r.GET("/v1/workflows/{workflow_id}/logs", s.withKey(s.workflowLogs))
	r.GET("/v1/workflows/{workflow_id}/metrics", s.withKey(s.workflowMetrics))
	r.GET("/v1/alerts", s.withKey(s.listAlerts))
	r.POST("/v1/alerts", s.withKey(s.createAlert))
	r.GET("/v1/alerts/{alert_id}", s.withKey(s.getAlert))
	r.PATCH("/v1/alerts/{alert_id}", s.withKey(s.patchAlert))
	r.DELETE("/v1/alerts/{alert_id}", s.withKey(s.deleteAlert))
	r.POST("/v1/alerts/{alert_id}/silence", s.withKey(s.silenceAlert))
	r.GET("/v1/alerts/{alert_id}/history", s.withKey(s.alertHistory))
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		writeError(ctx, apiErr(404, "route_not_found", fmt.Sprintf("no route %s %s", ctx.Method(), ctx.Path()),
			"see /v1/openapi.json for the API"))
	}
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		writeError(ctx, apiErr(405, "method_not_allowed", fmt.Sprintf("%s is not allowed on %s", ctx.Method(), ctx.Path()), ""))
	}
	s.routes = staticRoutesFirst(r)
	s.srv = &fasthttp.Server{
		Handler:               s.logged(s.routes),
		Name:                  "svc",
		MaxRequestBodySize:    cfg.MaxBodyBytes,
		ReadTimeout:           5 * time.Minute,
		WriteTimeout:          5 * time.Minute,
		IdleTimeout:           2 * time.Minute,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		StreamRequestBody:     false,
		CloseOnShutdown:       true,
		// Malformed requests must not copy their bytes (bearer tokens) into the log.
		SecureErrorLogMessage: true,
		Logger:                serverLogger{log: cfg.Logger},
		ErrorHandler:          parseError,
	}
	return s, nil
}

// Addr returns the bound address once started.
func (s *Server) Addr() string {
	if s.ln == nil {
		return s.cfg.Addr
	}
	return s.ln.Addr().String()
}

// Start listens and serves in the background.
func (s *Server) Start(context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
	// One address for HTTP/1.x (fasthttp) and OTLP/gRPC (grpc.go).
	split := newSplitListener(ln)
	s.split = split
	s.grpc = s.newGRPCServer()
	s.wg.Go(func() {
		if err := s.srv.Serve(split.http); err != nil {
			s.cfg.Logger.Error("http server stopped", "err", err)
		}
	})
	s.wg.Go(func() { _ = s.grpc.Serve(split.grpc) })
	s.cfg.Logger.Info("http server listening", "addr", ln.Addr().String())
	return nil
}

// Shutdown stops accepting requests and waits for those in flight until ctx ends. Safe
// without Start and twice.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped || s.ln == nil {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	s.mu.Unlock()
	stopped := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(stopped) }()
	err := s.srv.ShutdownWithContext(ctx)
	select {
	case <-stopped:
	case <-ctx.Done():
		s.grpc.Stop()
	}
	s.split.close()
	s.endLife()
	s.wg.Wait()
	return err
}

// singleHeaders carry a credential or choose what a request acts on. Given twice, each
// reader (a handler's Peek, a proxy in front) may take a different one, so a request (or
// an OTLP/gRPC stream's metadata) that repeats one is refused, by repeatedHeader, before
// anything reads it.
var singleHeaders = []string{"Authorization", "X-Cloud-Firehose-Access-Key", "X-Amz-Firehose-Access-Key",
	"X-Amz-Firehose-Request-Id", "Idempotency-Key", "X-Service-Database",
	"X-Service-Traces-Table", "X-Service-Logs-Table", "X-Service-Metrics-Table"}

// repeatedHeader refuses a request that gives one of singleHeaders more than once; count
// returns how many times a header (case-insensitive) was given.
func repeatedHeader(count func(header string) int) error {
	for _, h := range singleHeaders {
		if count(h) > 1 {
			code := "duplicate_header"
			if h == "Authorization" {
				code = "duplicate_authorization"
			}
			return &APIError{Status: 400, Code: code, Field: h, Message: "the request has more than one " + h + " header",
				Hint: "send exactly one"}
		}
	}
	return nil
}

// logged gives every request an id and logs failures.
func (s *Server) logged(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		start := time.Now()
		trace, id := traceIDs(ctx)
		ctx.SetUserValue(requestIDKey, id)
		ctx.Response.Header.Set("X-Request-Id", id)
		defer s.recordRequest(ctx, start, trace, id)
		if err := repeatedHeader(func(h string) int { return len(ctx.Request.Header.PeekAll(h)) }); err != nil {
			writeError(ctx, err)
			return
		}
		// A bug in one handler must cost one request, not the process and every
		// request in flight with it.
		defer func() {
			if r := recover(); r != nil {
				s.cfg.Logger.Error("handler panicked", "request_id", id, "method", string(ctx.Method()),
					"path", string(ctx.Path()), "panic", r, "stack", string(debug.Stack()))
				writeError(ctx, apiErr(500, "internal_error", "the request failed inside the service", ""))
			}
		}()
		next(ctx)
		if code := ctx.Response.StatusCode(); code >= 500 {
			// The answer said only that it failed (publicError); the detail is here.
			detail, _ := ctx.UserValue(internalErrorKey).(string)
			s.cfg.Logger.Warn("request failed", "request_id", id, "method", string(ctx.Method()),
				"path", string(ctx.Path()), "status", code, "duration", time.Since(start), "error", redactServerLog(detail))
		}
	}
}

const requestIDKey = apierr.RequestIDKey

// handler serves a request: it writes the answer on success and returns the error
// otherwise, which respond writes (writeError) once, for every route. A handler never
// writes an error itself.
type handler func(ctx *fasthttp.RequestCtx) error

// keyHandler is a handler for an authenticated request (withKey).
type keyHandler func(ctx *fasthttp.RequestCtx, p *Principal) error

// respond makes a fasthttp handler of h: the one place a handler's error is answered.
func respond(h handler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if err := h(ctx); err != nil {
			writeError(ctx, err)
		}
	}
}

// withKey authenticates before calling h.
func (s *Server) withKey(h keyHandler) fasthttp.RequestHandler {
	return respond(s.keyed(h))
}

// keyed authenticates before calling h.
func (s *Server) keyed(h keyHandler) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		p, err := s.authenticate(ctx)
		if err != nil {
			return err
		}
		ctx.SetUserValue(principalKey, p)
		return h(ctx, p)
	}
}

func (s *Server) health(ctx *fasthttp.RequestCtx) error {
	writeJSON(ctx, 200, map[string]string{"status": "ok"})
	return nil
}

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(ctx, fmt.Errorf("encode response: %w", err))
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

// readJSON decodes a request body into v. Unknown fields are ignored, as clients of a
// newer API version may send them.
func readJSON(ctx *fasthttp.RequestCtx, v any) error {
	body := ctx.PostBody()
	if len(body) == 0 {
		return apiErr(400, "invalid_body", "the request body is empty; send a JSON object", "")
	}
	// A body of null would decode as an empty object and a scalar or array as a type error
	// with no field: both are answered as the body, not as a field named "".
	if isJSONNull(body) {
		return apiErr(400, "invalid_body", "the request body must be a JSON object, not null", "")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return apiErr(400, "invalid_json", fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se), "")
		case errors.As(err, &te) && te.Field == "":
			return apiErr(400, "invalid_body", fmt.Sprintf("the request body must be a JSON object, not %s", te.Value), "")
		case errors.As(err, &te):
			return &APIError{Status: 400, Code: "invalid_" + codeWord(te.Field), Field: te.Field,
				Message: fmt.Sprintf("field %q must be %s, not %s", te.Field, te.Type, te.Value)}
		}
		return apiErr(400, "invalid_json", err.Error(), "")
	}
	return nil
}
