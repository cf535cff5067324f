package edge

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// keyView is an API key as the API shows it; Token only in the creation response.
type keyView struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	Permission      string     `json:"permission,omitempty"`
	DatabaseRoles   []string   `json:"database_roles,omitempty"`
	ExpiresAt       *time.Time `json:"expires_at"`
	Expired         bool       `json:"expired"`
	CreatedAt       time.Time  `json:"created_at"`
	DefaultDatabase string     `json:"default_database"`
	TokenHint       string     `json:"token_hint"`
	Organization    string     `json:"organization"`
	Cluster         string     `json:"cluster"`
	Token           string     `json:"token,omitempty"`
}

func (s *Server) viewKey(k *catalog.APIKey) keyView {
	v := keyView{ID: k.ID.String(), Name: k.Name, Permission: k.Permission, DatabaseRoles: k.Roles,
		ExpiresAt: k.ExpiresAt, Expired: k.Expired(time.Now()), CreatedAt: k.CreatedAt,
		DefaultDatabase: k.DefaultDatabase, TokenHint: k.TokenHint}
	if o, ok := s.deps.Catalog.Organization(k.OrgID); ok {
		v.Organization = o.Name
	}
	if c, ok := s.deps.Catalog.Cluster(k.ClusterID); ok {
		v.Cluster = c.Name
	}
	return v
}

func (s *Server) listKeys(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actListKeys) || p.CustomRole() {
		return forbidden("list API keys")
	}
	if err := needCluster(p); err != nil {
		return err
	}
	out := []keyView{}
	for _, k := range s.deps.Catalog.APIKeys(p.ClusterID) {
		out = append(out, s.viewKey(k))
	}
	writeJSON(ctx, 200, map[string]any{"keys": out})
	return nil
}

type createKeyRequest struct {
	Name          *string         `json:"name"`
	Permission    *string         `json:"permission"`
	DatabaseRoles []string        `json:"database_roles"`
	ExpiresAt     json.RawMessage `json:"expires_at"`
}

func (s *Server) createKey(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actManageKeys) || p.CustomRole() {
		return forbidden("create API keys")
	}
	if err := needCluster(p); err != nil {
		return err
	}
	var req createKeyRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	if req.Name == nil || strings.TrimSpace(*req.Name) == "" {
		return requiredField("invalid_name", "name")
	}
	expires, err := parseExpiry(req.ExpiresAt)
	if err != nil {
		return err
	}
	// The database selected on this request becomes the key's stored default.
	if err := checkDatabaseSelection(ctx); err != nil {
		return err
	}
	db := selectedDatabase(ctx)
	if db == "" {
		db = catalog.DefaultDatabase
	}
	if _, ok := s.deps.Catalog.Database(p.ClusterID, db); !ok {
		return apiErr(404, "database_not_found", "database "+quoteName(db)+" does not exist", "")
	}
	nk := catalog.NewAPIKey{OrgID: p.OrgID, ClusterID: p.ClusterID, Name: *req.Name, Roles: req.DatabaseRoles,
		DefaultDatabase: db, ExpiresAt: expires}
	if req.Permission != nil {
		nk.Permission = *req.Permission
		if nk.Permission == "" {
			return &APIError{Status: 400, Code: "invalid_permission", Field: "permission",
				Message: "permission is empty; use admin, read_write, write_only or read_only"}
		}
	}
	if req.DatabaseRoles != nil && len(req.DatabaseRoles) == 0 {
		return &APIError{Status: 400, Code: "invalid_database_roles", Field: "database_roles",
			Message: "database_roles needs 1 to 32 role names"}
	}
	k, token, err := s.deps.Commands.CreateAPIKey(s.work(), nk)
	if err != nil {
		return err
	}
	v := s.viewKey(k)
	v.Token = token
	writeJSON(ctx, 200, v)
	return nil
}

// parseExpiry accepts null, absent, or a future RFC 3339 time with a time zone.
func parseExpiry(raw json.RawMessage) (*time.Time, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	bad := func(msg string) error {
		return &APIError{Status: 400, Code: "invalid_expires_at", Field: "expires_at", Message: msg,
			Hint: "use an RFC 3339 time with a time zone in the future, e.g. 2030-01-02T15:04:05Z, or null"}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, bad("expires_at must be a string or null")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, bad(fmt.Sprintf("expires_at %q is not an RFC 3339 time with a time zone", s))
	}
	if !t.After(time.Now()) {
		return nil, bad(fmt.Sprintf("expires_at %q is not in the future", s))
	}
	t = t.UTC()
	return &t, nil
}

func (s *Server) deleteKey(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actManageKeys) || p.CustomRole() {
		return forbidden("delete API keys")
	}
	if err := needCluster(p); err != nil {
		return err
	}
	ref := stringParam(ctx, "key")
	var k *catalog.APIKey
	if id, err := uuid.Parse(ref); err == nil {
		k, _ = s.deps.Catalog.APIKey(id)
	} else {
		k, _ = s.deps.Catalog.APIKeyByHash(catalog.HashToken(ref))
	}
	if k == nil || k.ClusterID != p.ClusterID {
		return apiErr(404, "key_not_found", "no such API key in this cluster", "list keys with GET /v1/keys")
	}
	if err := s.deps.Commands.DeleteAPIKey(s.work(), k.ID); err != nil {
		return err
	}
	writeJSON(ctx, 200, map[string]any{"deleted": true, "id": k.ID.String()})
	return nil
}
