package edge

import (
	"encoding/json"
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/spl"
)

// splSearch runs POST /v1/spl/search: a read-only search of the selected database's
// logsearch_events table. Readable keys and organization members may search;
// custom-role keys may not, since searches read whole events past column grants.
func (s *Server) splSearch(ctx *fasthttp.RequestCtx, p *Principal) {
	if !p.can(actQuery) || p.CustomRole() {
		writeError(ctx, forbidden("search (a readable key or an organization member is needed)"))
		return
	}
	db, err := s.database(ctx, p)
	if err != nil {
		writeError(ctx, err)
		return
	}
	var req spl.Request
	if err := readJSON(ctx, &req); err != nil {
		writeError(ctx, err)
		return
	}
	if req.SPL == "" {
		writeError(ctx, requiredField("invalid_spl", "spl"))
		return
	}
	if req.QueryID == "" {
		req.QueryID = string(ctx.QueryArgs().Peek("query_id"))
	}
	if err := query.CheckQueryID(req.QueryID); err != nil {
		writeError(ctx, err)
		return
	}
	resp, err := s.deps.Searcher.Search(s.work(), p.OrgID, p.ClusterID, db.Name, req)
	if err != nil {
		if errors.Is(err, spl.ErrInternal) {
			writeError(ctx, &APIError{Status: 500, Code: "internal_error", Message: "the search could not be compiled", Hint: "please report this search", Internal: err})
			return
		}
		writeError(ctx, err)
		return
	}
	body, err := json.Marshal(resp)
	if err != nil {
		writeError(ctx, err)
		return
	}
	ctx.Response.Header.Set("X-Engine-Query-Id", resp.QueryID)
	ctx.SetStatusCode(200)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

// splCapabilities serves the static manifest of the search language; no credentials.
func (s *Server) splCapabilities(ctx *fasthttp.RequestCtx) {
	writeJSON(ctx, 200, spl.Capabilities())
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
