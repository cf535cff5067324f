package edge

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/apierr"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/statement"
)

// Principal is who a request acts as: an API key, or a user through a session token or
// an OAuth access token. For users, the organization and cluster come from the request's
// `organization` and `cluster` parameters (zero when not given).
type Principal struct {
	Key     *catalog.APIKey
	User    *catalog.User
	Session *catalog.Session

	OrgID     uuid.UUID
	ClusterID uuid.UUID
	// OrgRole is a user's membership role in OrgID ("" for keys).
	OrgRole string
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

// IsUser reports whether the principal is a user (session or OAuth token).
func (p *Principal) IsUser() bool { return p.User != nil }

// Actions of the permission matrix, which statement.Principal.Allows applies.
const (
	actListDatabases   = statement.ActListDatabases
	actInsert          = statement.ActInsert
	actQuery           = statement.ActQuery
	actDeleteTable     = statement.ActDeleteTable
	actManageDatabases = statement.ActManageDatabases
	actManageKeys      = statement.ActManageKeys
	actManageTables    = statement.ActManageTables
	actListKeys        = statement.ActListKeys
)

// can applies the permission matrix (statement.Principal.Allows). A user acts only in
// an organization it is a member of.
func (p *Principal) can(a statement.Action) bool {
	if p.User != nil && p.OrgRole == "" {
		return false
	}
	return statementPrincipal(p).Allows(a)
}

var (
	errUnauthenticated = apiErr(401, "unauthenticated", "missing or invalid credentials",
		"send Authorization: Bearer <API key, session token or OAuth access token>")
	errExpired = apiErr(401, "unauthenticated", "the API key has expired",
		"expiry cannot be changed; create a replacement key")
	errSessionExpired = apiErr(401, "unauthenticated", "the session or access token has expired", "log in again")
)

func forbidden(what string) *APIError { return apierr.Forbidden(what) }

// authenticate resolves the bearer token of a request and, for users, the organization
// and cluster the request names.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx) (*Principal, error) {
	token := bearer(ctx.Request.Header.Peek("Authorization"))
	if len(token) == 0 {
		return nil, errUnauthenticated
	}
	p, err := s.principalForToken(string(token))
	if err != nil {
		return nil, err
	}
	if err := s.resolveScope(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Server) principalForToken(token string) (*Principal, error) {
	now := time.Now()
	switch {
	case strings.HasPrefix(token, catalog.SessionTokenPrefix), strings.HasPrefix(token, catalog.OAuthTokenPrefix):
		sess, ok := s.deps.Catalog.SessionByHash(catalog.HashToken(token))
		if !ok {
			return nil, errUnauthenticated
		}
		if sess.Expired(now) {
			return nil, errSessionExpired
		}
		if sess.Kind == catalog.KindOAuth && !hasScope(sess.Scope, "full_access") {
			return nil, apiErr(403, "insufficient_scope", "this access token lacks the full_access scope",
				"log in again requesting scope full_access")
		}
		u, ok := s.deps.Catalog.User(sess.UserID)
		if !ok {
			return nil, errUnauthenticated
		}
		return &Principal{User: u, Session: sess}, nil
	}
	k, ok := s.deps.Catalog.APIKeyByHash(catalog.HashToken(token))
	if !ok {
		return nil, errUnauthenticated
	}
	// Expiry is checked on every request against the clock, so a key cached anywhere
	// stops working at its expiry instant.
	if k.Expired(now) {
		return nil, errExpired
	}
	return &Principal{Key: k, OrgID: k.OrgID, ClusterID: k.ClusterID}, nil
}

func hasScope(scopes, want string) bool {
	for _, s := range strings.Fields(scopes) {
		if s == want {
			return true
		}
	}
	return false
}

// resolveScope applies the `organization` and `cluster` parameters. For a key they must
// name its own bound organization and cluster; for a user they select one of the user's
// organizations (or the only one) and one of its clusters (or the only one).
func (s *Server) resolveScope(ctx *fasthttp.RequestCtx, p *Principal) error {
	orgName := string(ctx.QueryArgs().Peek("organization"))
	clusterName := string(ctx.QueryArgs().Peek("cluster"))
	// A parameter given empty names nothing: refuse it rather than read it as absent.
	for _, name := range []string{"organization", "cluster"} {
		if ctx.QueryArgs().Has(name) && len(ctx.QueryArgs().Peek(name)) == 0 {
			return &APIError{Status: 400, Code: "invalid_" + name, Field: name, Message: "the " + name + " parameter is empty",
				Hint: "name one, or omit the parameter"}
		}
	}
	m := s.deps.Catalog
	if p.Key != nil {
		if orgName != "" {
			if o, ok := m.Organization(p.Key.OrgID); !ok || !strings.EqualFold(o.Name, orgName) {
				return apiErr(403, "organization_mismatch", fmt.Sprintf("this key does not belong to organization %q", orgName),
					"omit the organization parameter or name the key's own organization")
			}
		}
		if clusterName != "" {
			if c, ok := m.Cluster(p.Key.ClusterID); !ok || !strings.EqualFold(c.Name, clusterName) {
				return apiErr(403, "cluster_mismatch", fmt.Sprintf("this key is not bound to cluster %q", clusterName),
					"omit the cluster parameter or name the key's own cluster")
			}
		}
		return nil
	}
	orgs := m.UserOrganizations(p.User.ID)
	var org *catalog.Organization
	switch {
	case orgName != "":
		for _, o := range orgs {
			if strings.EqualFold(o.Name, orgName) {
				org = o
			}
		}
		if org == nil {
			return apiErr(404, "organization_not_found", fmt.Sprintf("no organization %q among yours", orgName),
				"list yours with GET /v1/organizations")
		}
	case len(orgs) == 1:
		org = orgs[0]
	default:
		// The organization the user joined first: accepting an invitation elsewhere
		// does not break requests that name none. Endpoints that need the parameter
		// still say so (needOrganization).
		home, ok := m.HomeOrganization(p.User.ID)
		if !ok {
			return nil
		}
		org = home
	}
	p.OrgID = org.ID
	if ms, ok := m.Membership(org.ID, p.User.ID); ok {
		p.OrgRole = ms.Role
	}
	clusters := m.Clusters(org.ID)
	switch {
	case clusterName != "":
		for _, c := range clusters {
			if strings.EqualFold(c.Name, clusterName) {
				p.ClusterID = c.ID
			}
		}
		if p.ClusterID == uuid.Nil {
			return apiErr(404, "cluster_not_found", fmt.Sprintf("no cluster %q in organization %q", clusterName, org.Name),
				"list clusters with GET /v1/clusters?organization="+org.Name)
		}
	case len(clusters) == 1:
		p.ClusterID = clusters[0].ID
	}
	return nil
}

// needOrganization fails user requests to cluster endpoints that do not name an
// organization: the spec requires the parameter even where the user has only one.
func needOrganization(ctx *fasthttp.RequestCtx, p *Principal) error {
	if ctx.QueryArgs().Has("organization") && p.OrgID != uuid.Nil {
		return nil
	}
	return apiErr(400, "missing_organization", "the organization query parameter is required", "add ?organization=<name>")
}

// needCluster fails requests whose principal has no cluster in scope.
func needCluster(p *Principal) error {
	if p.ClusterID != uuid.Nil {
		return nil
	}
	if p.OrgID == uuid.Nil {
		return apiErr(400, "missing_organization", "the organization query parameter is required with user credentials",
			"add ?organization=<name>&cluster=<name>")
	}
	return apiErr(400, "missing_cluster", "the cluster query parameter is required with user credentials",
		"add &cluster=<name>")
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
	if err := needCluster(p); err != nil {
		return nil, err
	}
	if err := checkDatabaseSelection(ctx); err != nil {
		return nil, err
	}
	return s.databaseNamed(p, selectedDatabase(ctx))
}

// checkDatabaseSelection refuses a database selection that names nothing or no name.
func checkDatabaseSelection(ctx *fasthttp.RequestCtx) error {
	// A database given empty names nothing: refuse it rather than read it as absent.
	if ctx.QueryArgs().Has("database") && len(ctx.QueryArgs().Peek("database")) == 0 {
		return &APIError{Status: 400, Code: "invalid_database", Field: "database", Message: "the database parameter is empty",
			Hint: "name one, or omit the parameter"}
	}
	// A header given is checked even when the query parameter wins: one that is empty or
	// not a name's syntax (the document's Name) is refused, not silently ignored.
	for _, v := range ctx.Request.Header.PeekAll("x-service-database") {
		if len(v) == 0 {
			return &APIError{Status: 400, Code: "invalid_database", Field: "x-service-database",
				Message: "the x-service-database header is empty", Hint: "name a database, or omit the header"}
		}
		if !nameSyntax(v) {
			return &APIError{Status: 400, Code: "invalid_database", Field: "x-service-database",
				Message: "the x-service-database header is not a database name",
				Hint:    "1 to 64 letters, digits and underscores, not starting with a digit"}
		}
	}
	return nil
}

// nameSyntax reports whether b matches the document's Name schema: 1 to 64 ASCII letters,
// digits and underscores, not starting with a digit.
func nameSyntax(b []byte) bool {
	if len(b) == 0 || len(b) > 64 || (b[0] >= '0' && b[0] <= '9') {
		return false
	}
	for _, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// databaseNamed resolves a database by name, "" selecting the key's stored default.
func (s *Server) databaseNamed(p *Principal, name string) (*catalog.Database, error) {
	if err := needCluster(p); err != nil {
		return nil, err
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

// selectedDatabase is the database a request names, "" when it names none.
func selectedDatabase(ctx *fasthttp.RequestCtx) string {
	if name := string(ctx.QueryArgs().Peek("database")); name != "" {
		return name
	}
	return string(ctx.Request.Header.Peek("x-service-database"))
}

func quoteName(s string) string { return "\"" + s + "\"" }
