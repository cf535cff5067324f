package edge

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// maxSavedSearches is how many searches a list returns at most.
const maxSavedSearches = 200

type searchCreator struct {
	ID       string `json:"id"`
	Username string `json:"username"`
}

// savedSearchView is the complete record; list entries leave out the search text.
type savedSearchView struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	Description   string        `json:"description"`
	SPL           *string       `json:"spl,omitempty"`
	Earliest      string        `json:"earliest"`
	Latest        string        `json:"latest"`
	Database      string        `json:"database"`
	Visualization string        `json:"visualization"`
	SpanMinutes   *int          `json:"span_minutes"`
	KeepResults   bool          `json:"keep_results"`
	Visibility    string        `json:"visibility"`
	CreatedBy     searchCreator `json:"created_by"`
	CreatedAt     time.Time     `json:"created_at"`
	UpdatedAt     time.Time     `json:"updated_at"`
	Revision      int           `json:"revision"`
}

func (s *Server) viewSearch(ss *catalog.SavedSearch, full bool) savedSearchView {
	v := savedSearchView{ID: ss.ID.String(), Name: ss.Name, Description: ss.Description, Earliest: ss.Earliest, Latest: ss.Latest,
		Database: ss.Database, Visualization: ss.Visualization, SpanMinutes: ss.SpanMinutes, KeepResults: ss.KeepResults,
		Visibility: ss.Visibility, CreatedBy: searchCreator{ID: ss.CreatedBy.String()}, CreatedAt: ss.CreatedAt,
		UpdatedAt: ss.UpdatedAt, Revision: ss.Revision}
	if u, ok := s.deps.Catalog.User(ss.CreatedBy); ok {
		v.CreatedBy.Username = u.Username
	}
	if full {
		spl := ss.SPL
		v.SPL = &spl
	}
	return v
}

// searchScope checks the caller may use saved searches: a user of the organization,
// with organization and cluster named on every request.
func (s *Server) searchScope(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := userOnly(p, "use saved searches, which belong to users"); err != nil {
		return err
	}
	args := ctx.QueryArgs()
	if !args.Has("organization") || !args.Has("cluster") {
		return apiErr(400, "missing_scope", "saved searches need the organization and cluster query parameters",
			"add ?organization=<name>&cluster=<name>")
	}
	return needCluster(p)
}

func (s *Server) visible(p *Principal, ss *catalog.SavedSearch) bool {
	return ss.OrgID == p.OrgID && ss.ClusterID == p.ClusterID && (ss.Visibility == catalog.VisibilityShared || ss.CreatedBy == p.User.ID)
}

// visibleSearch checks the caller's scope and resolves the {id} parameter to a search
// the caller may see.
func (s *Server) visibleSearch(ctx *fasthttp.RequestCtx, p *Principal) (*catalog.SavedSearch, error) {
	if err := s.searchScope(ctx, p); err != nil {
		return nil, err
	}
	return s.searchParam(ctx, p)
}

func (s *Server) searchParam(ctx *fasthttp.RequestCtx, p *Principal) (*catalog.SavedSearch, error) {
	id, err := uuid.Parse(stringParam(ctx, "id"))
	ss, ok := s.deps.Catalog.SavedSearch(id)
	if err != nil || !ok || !s.visible(p, ss) {
		return nil, apiErr(404, "saved_search_not_found", "no such saved search", "")
	}
	return ss, nil
}

type searchRequest struct {
	Name          *string         `json:"name"`
	Description   *string         `json:"description"`
	SPL           *string         `json:"spl"`
	Earliest      *string         `json:"earliest"`
	Latest        *string         `json:"latest"`
	Database      *string         `json:"database"`
	Visualization *string         `json:"visualization"`
	SpanMinutes   json.RawMessage `json:"span_minutes"`
	KeepResults   *bool           `json:"keep_results"`
	Visibility    *string         `json:"visibility"`
}

// apply copies the sent fields onto ss, validating each.
func (s *Server) apply(p *Principal, req searchRequest, ss *catalog.SavedSearch) error {
	bad := func(field, msg string) error {
		return &APIError{Status: 400, Code: "invalid_" + field, Field: field, Message: msg}
	}
	if req.Name != nil {
		ss.Name = strings.TrimSpace(*req.Name)
	}
	if ss.Name == "" || len(ss.Name) > 256 {
		return bad("name", "name must be 1 to 256 characters")
	}
	if req.Description != nil {
		ss.Description = strings.TrimSpace(*req.Description)
	}
	if len(ss.Description) > 4000 {
		return bad("description", "description must be at most 4,000 characters")
	}
	if req.SPL != nil {
		ss.SPL = *req.SPL
	}
	if strings.TrimSpace(ss.SPL) == "" || len(ss.SPL) > 100_000 {
		return bad("spl", "spl must be a search of 1 to 100,000 characters")
	}
	if req.Earliest != nil {
		ss.Earliest = *req.Earliest
	}
	if req.Latest != nil {
		ss.Latest = *req.Latest
	}
	if ss.Earliest == "" {
		ss.Earliest = "-24h"
	}
	if ss.Latest == "" {
		ss.Latest = "now"
	}
	if s.deps.Search != nil {
		if err := s.deps.Search.Validate(ss.SPL, ss.Earliest, ss.Latest); err != nil {
			return err
		}
	}
	if req.Database != nil {
		ss.Database = *req.Database
	}
	if ss.Database == "" {
		ss.Database = catalog.DefaultDatabase
	}
	if _, ok := s.deps.Catalog.Database(p.ClusterID, ss.Database); !ok {
		return bad("database", "database "+quoteName(ss.Database)+" does not exist")
	}
	if req.Visualization != nil {
		ss.Visualization = *req.Visualization
	}
	if ss.Visualization == "" {
		ss.Visualization = "table"
	}
	if ss.Visualization != "table" && ss.Visualization != "chart" {
		return bad("visualization", "visualization must be table or chart")
	}
	if len(req.SpanMinutes) > 0 {
		if string(req.SpanMinutes) == "null" {
			ss.SpanMinutes = nil
		} else {
			var n int
			if err := json.Unmarshal(req.SpanMinutes, &n); err != nil || n < 1 || n > 31*24*60 {
				return bad("span_minutes", "span_minutes must be a whole number of minutes from 1 to 44,640 (31 days), or null")
			}
			ss.SpanMinutes = &n
		}
	}
	if req.KeepResults != nil {
		ss.KeepResults = *req.KeepResults
	}
	if req.Visibility != nil {
		ss.Visibility = *req.Visibility
	}
	if ss.Visibility == "" {
		ss.Visibility = catalog.VisibilityPrivate
	}
	if ss.Visibility != catalog.VisibilityPrivate && ss.Visibility != catalog.VisibilityShared {
		return bad("visibility", "visibility must be private or shared")
	}
	return nil
}

func (s *Server) createSearch(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := s.searchScope(ctx, p); err != nil {
		return err
	}
	var req searchRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	ss := catalog.SavedSearch{OrgID: p.OrgID, ClusterID: p.ClusterID, CreatedBy: p.User.ID}
	if err := s.apply(p, req, &ss); err != nil {
		return err
	}
	out, err := s.deps.Commands.SaveSearch(s.work(), ss)
	if err != nil {
		return err
	}
	writeJSON(ctx, 201, s.viewSearch(out, true))
	return nil
}

func (s *Server) listSearches(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := s.searchScope(ctx, p); err != nil {
		return err
	}
	args := ctx.QueryArgs()
	text := strings.ToLower(string(args.Peek("search")))
	by := string(args.Peek("created_by"))
	db := string(args.Peek("database"))
	vis := string(args.Peek("visibility"))
	if vis != "" && vis != catalog.VisibilityPrivate && vis != catalog.VisibilityShared {
		return &APIError{Status: 400, Code: "invalid_visibility", Field: "visibility", Message: "visibility must be private or shared"}
	}
	out := []savedSearchView{}
	truncated := false
	for _, ss := range s.deps.Catalog.SavedSearches(p.OrgID, p.ClusterID) {
		if !s.visible(p, ss) || (db != "" && ss.Database != db) || (vis != "" && ss.Visibility != vis) {
			continue
		}
		if by != "" {
			u, _ := s.deps.Catalog.User(ss.CreatedBy)
			match := (by == "me" && ss.CreatedBy == p.User.ID) || by == ss.CreatedBy.String() || (u != nil && strings.EqualFold(u.Username, by))
			if !match {
				continue
			}
		}
		if text != "" && !strings.Contains(strings.ToLower(ss.Name+"\n"+ss.Description+"\n"+ss.SPL), text) {
			continue
		}
		if len(out) == maxSavedSearches {
			truncated = true
			break
		}
		out = append(out, s.viewSearch(ss, false))
	}
	writeJSON(ctx, 200, map[string]any{"searches": out, "truncated": truncated})
	return nil
}

func (s *Server) getSearch(ctx *fasthttp.RequestCtx, p *Principal) error {
	ss, err := s.visibleSearch(ctx, p)
	if err != nil {
		return err
	}
	writeJSON(ctx, 200, s.viewSearch(ss, true))
	return nil
}

// mayChange: the creator, or an organization administrator for a shared search.
func mayChange(p *Principal, ss *catalog.SavedSearch) bool {
	return ss.CreatedBy == p.User.ID || (ss.Visibility == catalog.VisibilityShared && p.OrgRole == catalog.RoleAdmin)
}

func (s *Server) updateSearch(ctx *fasthttp.RequestCtx, p *Principal) error {
	ss, err := s.visibleSearch(ctx, p)
	if err != nil {
		return err
	}
	if !mayChange(p, ss) {
		return forbidden("change another user's saved search")
	}
	var req searchRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	next := *ss
	if err := s.apply(p, req, &next); err != nil {
		return err
	}
	out, err := s.deps.Commands.SaveSearch(s.work(), next)
	if err != nil {
		return err
	}
	writeJSON(ctx, 200, s.viewSearch(out, true))
	return nil
}

func (s *Server) deleteSearch(ctx *fasthttp.RequestCtx, p *Principal) error {
	ss, err := s.visibleSearch(ctx, p)
	if err != nil {
		return err
	}
	if !mayChange(p, ss) {
		return forbidden("delete another user's saved search")
	}
	if err := s.deps.Commands.DeleteSearch(s.work(), ss.ID); err != nil {
		return err
	}
	ctx.SetStatusCode(204)
	return nil
}
