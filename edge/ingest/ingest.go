// Package ingest holds the edge's insert handlers, one file per input format: plain JSON
// rows, transforms and Firehose (json.go), Splunk HEC (hec.go), OTLP over HTTP (otlp.go),
// Prometheus remote write (promwrite.go) and URL imports (urlimport.go), with the one
// table-for-insert path (tables.go). The edge authenticates through Auth and registers
// the handlers on its router; errors are returned and written once by the edge's wrapper.
package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/apierr"
	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/tables"
)

// Caller is who an insert acts as, as the edge resolved it (*edge.Principal).
type Caller interface {
	Org() uuid.UUID
	Cluster() uuid.UUID
	// CanInsert applies the permission matrix's insert action.
	CanInsert() bool
	// CustomRole reports a key with database roles: it inserts only into existing tables.
	CustomRole() bool
}

// Auth is the edge's authentication and authorization as the insert handlers use it.
// Each method that resolves a caller records it for the request log.
type Auth interface {
	// Authenticate resolves the request's Authorization header.
	Authenticate(ctx *fasthttp.RequestCtx) (Caller, error)
	// Token resolves a credential a protocol carries its own way (HEC, Firehose).
	Token(ctx *fasthttp.RequestCtx, token string) (Caller, error)
	// Bearer is the credential of an Authorization header value ("Bearer <token>").
	Bearer(header []byte) []byte
	Database(ctx *fasthttp.RequestCtx, c Caller) (*catalog.Database, error)
	SelectedTable(ctx *fasthttp.RequestCtx, c Caller) (*catalog.Database, *catalog.Table, error)
	MayInsert(c Caller, database, table string) bool
	RequireApp(c Caller, app string) error
}

// Deps are the handlers' dependencies.
type Deps struct {
	Auth    Auth
	Catalog interface {
		Table(cluster uuid.UUID, database, name string) (*catalog.Table, bool)
	}
	Tables interface {
		CreateTable(ctx context.Context, org, cluster uuid.UUID, database, name, key, columnType string, retention *string) (*catalog.Table, error)
	}
	Commands interface {
		Sync(ctx context.Context) error
	}
	Ingest interface {
		Accept(ctx context.Context, a pipeline.Accepted) error
	}
	Query interface {
		ImportURL(ctx context.Context, in query.Import) (query.ImportResult, error)
	}
}

// Config is what the handlers read of the edge's configuration.
type Config struct {
	MaxConcurrentIngest int
	IngestWait          time.Duration
	IngestTimeout       time.Duration
	URLImportAllow      []string
}

// Handlers serves the insert routes.
type Handlers struct {
	cfg      Config
	deps     Deps
	inflight chan struct{} // tokens bounding concurrent inserts
	life     context.Context
}

// New returns the handlers; life is the context of requests' downstream work.
func New(life context.Context, cfg Config, deps Deps) *Handlers {
	return &Handlers{cfg: cfg, deps: deps, inflight: make(chan struct{}, cfg.MaxConcurrentIngest), life: life}
}

func (h *Handlers) work() context.Context { return h.life }

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		apierr.Write(ctx, fmt.Errorf("encode response: %w", err))
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

// TableError maps a table manager's error to the API's.
func TableError(err error) error {
	if errors.Is(err, tables.ErrKeyUnusable) {
		return &apierr.Error{Status: 400, Code: "engine_error", Field: "sorting_key", Message: err.Error(),
			Hint: "the engine refused this sorting key; check for repeated or non-comparable expressions"}
	}
	return err
}

// IdempotencyHeader reads a request's Idempotency-Key: absent is no key, and present but
// empty is refused (the document's minLength 1) rather than read as absent, on every route
// that takes it (inserts, OTLP, workflow runs).
func IdempotencyHeader(ctx *fasthttp.RequestCtx) (string, error) {
	key := ctx.Request.Header.Peek("Idempotency-Key")
	if key != nil && len(key) == 0 {
		return "", &apierr.Error{Status: 400, Code: "invalid_idempotency_key", Field: "Idempotency-Key",
			Message: "Idempotency-Key is empty; send 1 to 128 visible ASCII characters or omit it"}
	}
	return string(key), validIdempotencyKey(string(key))
}

// validIdempotencyKey enforces 1 to 128 visible ASCII characters without spaces.
func validIdempotencyKey(k string) error {
	if k == "" {
		return nil
	}
	if len(k) > 128 {
		return &apierr.Error{Status: 400, Code: "invalid_idempotency_key", Field: "Idempotency-Key",
			Message: "Idempotency-Key is longer than 128 characters"}
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] > '~' {
			return &apierr.Error{Status: 400, Code: "invalid_idempotency_key", Field: "Idempotency-Key",
				Message: "Idempotency-Key must be visible ASCII characters without spaces"}
		}
	}
	return nil
}
