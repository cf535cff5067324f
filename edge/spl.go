package edge

import (
	"encoding/json"
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/spl"
)

// maySearch is the one rule of who runs log searches: readable keys and organization
// members; not custom-role keys, since searches read whole events past column grants.
// Its routes are also gated on the log-search app (Gated, or requireApp).
func maySearch(p *Principal) error {
	if !p.can(actQuery) || p.CustomRole() {
		return forbidden("search (a readable key or an organization member is needed)")
	}
	return nil
}

// splSearch runs POST /v1/spl/search: a read-only search of the selected database's
// logsearch_events table, for those maySearch lets.
func (s *Server) splSearch(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := maySearch(p); err != nil {
		return err
	}
	db, err := s.database(ctx, p)
	if err != nil {
		return err
	}
	var req spl.Request
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	if req.SPL == "" {
		return requiredField("invalid_spl", "spl")
	}
	if req.QueryID == "" {
		req.QueryID = string(ctx.QueryArgs().Peek("query_id"))
	}
	if err := query.CheckQueryID(req.QueryID); err != nil {
		return err
	}
	resp, err := s.deps.Searcher.Search(s.work(), p.OrgID, p.ClusterID, db.Name, req)
	if err != nil {
		if errors.Is(err, spl.ErrInternal) {
			return &APIError{Status: 500, Code: "internal_error", Message: "the search could not be compiled", Hint: "please report this search", Internal: err}
		}
		return err
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	ctx.Response.Header.Set("X-Engine-Query-Id", resp.QueryID)
	ctx.SetStatusCode(200)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
	return nil
}

// splCapabilities serves the static manifest of the search language; no credentials.
func (s *Server) splCapabilities(ctx *fasthttp.RequestCtx) error {
	writeJSON(ctx, 200, spl.Capabilities())
	return nil
}

// splValidator adapts the language to saved-search validation.
type splValidator struct{}

func (splValidator) Validate(text, earliest, latest string) error {
	err := spl.Validate(text, earliest, latest)
	if es, ok := spl.AsErrors(err); ok {
		return &APIError{Status: 400, Code: es.Code(), Field: "spl", Message: es.Error(), Hint: es.Hint()}
	}
	return err
}

// SPLValidator validates saved searches with the search language.
var SPLValidator SearchService = splValidator{}
