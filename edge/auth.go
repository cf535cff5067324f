package edge

import (
	"bytes"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// Principal is who a request acts as.
type Principal struct {
	// Key is set for API-key requests.
	Key       *catalog.APIKey
	OrgID     uuid.UUID
	ClusterID uuid.UUID
}

// Permission returns a permission-based key's permission, "" otherwise.
func (p *Principal) Permission() string {
	if p.Key != nil {
		return p.Key.Permission
	}
	return ""
}

// CustomRole reports whether the principal is a key with database roles.
func (p *Principal) CustomRole() bool {
	return p.Key != nil && p.Key.Permission == "" && len(p.Key.Roles) > 0
}

// Actions of the permission matrix (SPEC: Authentication).
type action int

const (
	actListDatabases action = iota
	actInsert
	actQuery
	actDeleteTable
	actManageDatabases
	actManageKeys
	actManageTables // create table, change sorting key: admin
)

// can applies the permission matrix to permission-based keys. Custom-role keys are
// limited to reads through the query API, query cancellation and inserts into existing
// tables, each further limited by their roles' grants.
func (p *Principal) can(a action) bool {
	switch p.Permission() {
	case catalog.PermAdmin:
		return true
	case catalog.PermReadWrite:
		return a == actListDatabases || a == actInsert || a == actQuery
	case catalog.PermWriteOnly:
		return a == actInsert
	case catalog.PermReadOnly:
		return a == actListDatabases || a == actQuery
	}
	if p.CustomRole() {
		return a == actInsert || a == actQuery
	}
	return false
}

var (
	errUnauthenticated = apiErr(401, "unauthenticated", "missing or invalid credentials",
		"send Authorization: Bearer <API key>")
	errExpired = apiErr(401, "unauthenticated", "the API key has expired",
		"expiry cannot be changed; create a replacement key")
)

func forbidden(what string) *APIError {
	return apiErr(403, "forbidden", "this key may not "+what, "use a key with the needed permission")
}

// authenticate resolves the bearer token of a request.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx) (*Principal, error) {
	token := bearer(ctx.Request.Header.Peek("Authorization"))
	if len(token) == 0 {
		return nil, errUnauthenticated
	}
	return s.principalForToken(string(token))
}

func (s *Server) principalForToken(token string) (*Principal, error) {
	k, ok := s.deps.Catalog.APIKeyByHash(catalog.HashToken(token))
	if !ok {
		return nil, errUnauthenticated
	}
	// Expiry is checked on every request against the clock, so a key cached anywhere
	// stops working at its expiry instant.
	if k.Expired(time.Now()) {
		return nil, errExpired
	}
	return &Principal{Key: k, OrgID: k.OrgID, ClusterID: k.ClusterID}, nil
}

func bearer(h []byte) []byte {
	const prefix = "bearer "
	if len(h) > len(prefix) && bytes.EqualFold(h[:len(prefix)], []byte(prefix)) {
		return bytes.TrimSpace(h[len(prefix):])
	}
	return nil
}

// database resolves the database a data-plane request selects: query parameter
// `database`, header `x-service-database`, else the key's stored default.
func (s *Server) database(ctx *fasthttp.RequestCtx, p *Principal) (*catalog.Database, error) {
	name := string(ctx.QueryArgs().Peek("database"))
	if name == "" {
		name = string(ctx.Request.Header.Peek("x-service-database"))
	}
	if name == "" && p.Key != nil {
		name = p.Key.DefaultDatabase
	}
	if name == "" {
		name = catalog.DefaultDatabase
	}
	d, ok := s.deps.Catalog.Database(p.ClusterID, name)
	if !ok {
		return nil, apiErr(404, "database_not_found", "database "+quoteName(name)+" does not exist",
			"list databases with GET /v1/databases")
	}
	return d, nil
}

func quoteName(s string) string { return "\"" + s + "\"" }
