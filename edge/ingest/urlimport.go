package ingest

import (
	"context"
	"fmt"
	"net/url"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/apierr"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/egress"
)

// URL imports let the engine fetch a URL itself, so the address is checked against the
// service's one egress policy (query/egress): public http(s) addresses only, unless the
// operator allows more with SVC_URL_IMPORT_ALLOW.

// allowImport checks raw against the policy.
func (h *Handlers) allowImport(ctx context.Context, raw string) (*url.URL, error) {
	u, err := egress.Policy{Allow: h.cfg.URLImportAllow}.Check(ctx, raw)
	if err != nil {
		return nil, &apierr.Error{Status: 400, Code: "url_refused", Field: "url", Message: err.Error(),
			Hint: "URL imports reach public http(s) addresses; an operator can allow more with SVC_URL_IMPORT_ALLOW"}
	}
	return u, nil
}

// urlImport runs the engine's native URL import into a table; the request stays open
// until it finishes.
func (h *Handlers) urlImport(ctx *fasthttp.RequestCtx, p Caller) error {
	if !p.CanInsert() {
		return apierr.Forbidden("insert rows")
	}
	db, t, err := h.deps.Auth.SelectedTable(ctx, p)
	if err != nil {
		return err
	}
	if !h.deps.Auth.MayInsert(p, db.Name, t.Name) {
		return apierr.New(403, "forbidden", fmt.Sprintf("no role of this key holds INSERT on %s.%s", db.Name, t.Name), "")
	}
	u, err := h.allowImport(h.work(), string(ctx.QueryArgs().Peek("url")))
	if err != nil {
		return err
	}
	queryID := string(ctx.QueryArgs().Peek("query_id"))
	res, err := h.deps.Query.ImportURL(h.work(), query.Import{OrgID: p.Org(), Database: db.Name, ClusterID: p.Cluster(), TableID: t.ID, URL: u.String(), QueryID: queryID})
	if res.QueryID != "" {
		ctx.Response.Header.Set("X-Engine-Query-Id", res.QueryID)
	}
	if err != nil {
		return err
	}
	writeJSON(ctx, 200, map[string]any{"inserted": res.Inserted})
	return nil
}
