package edge

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/ingest"
	"github.com/svc-data/svc/projections/catalog"
)

// The insert handlers live in edge/ingest; this file is the edge's side of their ports:
// a *Principal is their ingest.Caller and ingestAuth their ingest.Auth.

// Org is the principal's organization (ingest.Caller).
func (p *Principal) Org() uuid.UUID { return p.OrgID }

// Cluster is the principal's cluster (ingest.Caller).
func (p *Principal) Cluster() uuid.UUID { return p.ClusterID }

// CanInsert applies the permission matrix's insert action (ingest.Caller).
func (p *Principal) CanInsert() bool { return p.can(actInsert) }

// ingestAuth is the server's authentication and authorization as edge/ingest uses it.
type ingestAuth struct{ s *Server }

func (a ingestAuth) Authenticate(ctx *fasthttp.RequestCtx) (ingest.Caller, error) {
	p, err := a.s.authenticate(ctx)
	if err != nil {
		return nil, err
	}
	ctx.SetUserValue(principalKey, p)
	return p, nil
}

func (a ingestAuth) Token(ctx *fasthttp.RequestCtx, token string) (ingest.Caller, error) {
	p, err := a.s.principalForToken(token)
	if err == nil {
		err = a.s.resolveScope(ctx, p)
	}
	if err != nil {
		return nil, err
	}
	ctx.SetUserValue(principalKey, p)
	return p, nil
}

func (a ingestAuth) Bearer(h []byte) []byte { return bearer(h) }

func (a ingestAuth) Database(ctx *fasthttp.RequestCtx, c ingest.Caller) (*catalog.Database, error) {
	return a.s.database(ctx, c.(*Principal))
}

func (a ingestAuth) SelectedTable(ctx *fasthttp.RequestCtx, c ingest.Caller) (*catalog.Database, *catalog.Table, error) {
	return a.s.selectedTable(ctx, c.(*Principal))
}

func (a ingestAuth) MayInsert(c ingest.Caller, db, table string) bool {
	return a.s.mayInsert(c.(*Principal), db, table)
}

func (a ingestAuth) RequireApp(c ingest.Caller, app string) error {
	return a.s.requireApp(c.(*Principal), app)
}

// keyedIngest adapts an ingest handler of an authenticated request to withKey.
func keyedIngest(h func(*fasthttp.RequestCtx, ingest.Caller) error) keyHandler {
	return func(ctx *fasthttp.RequestCtx, p *Principal) error { return h(ctx, p) }
}
