package edge

import (
	"bufio"
	"context"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/statement"
)

// QueryRunner runs SQL requests.
type QueryRunner interface {
	Run(ctx context.Context, req query.Request) (query.Response, error)
	ImportURL(ctx context.Context, imp query.Import) (query.ImportResult, error)
}

type queryBody struct {
	SQL    *string `json:"sql"`
	Format string  `json:"format"`
}

// statementPrincipal tells the analysis who is asking.
func statementPrincipal(p *Principal) statement.Principal {
	switch {
	case p.User != nil:
		return statement.Member(p.OrgRole == "admin")
	case p.CustomRole():
		return statement.KeyWithRoles(p.Key.Roles...)
	}
	return statement.KeyWithPermission(statement.Permission(p.Permission()))
}

func (s *Server) query(ctx *fasthttp.RequestCtx, p *Principal) {
	if !p.can(actQuery) && p.Permission() != "write_only" {
		writeError(ctx, forbidden("run queries"))
		return
	}
	db, err := s.database(ctx, p)
	if err != nil {
		writeError(ctx, err)
		return
	}
	var body queryBody
	if err := readJSON(ctx, &body); err != nil {
		writeError(ctx, err)
		return
	}
	if body.SQL == nil || *body.SQL == "" {
		writeError(ctx, &APIError{Status: 400, Code: "invalid_sql", Field: "sql", Message: "field \"sql\" is required"})
		return
	}
	req := query.Request{OrgID: p.OrgID, ClusterID: p.ClusterID, Principal: statementPrincipal(p), Database: db.Name,
		SQL: *body.SQL, Format: body.Format, QueryID: string(ctx.QueryArgs().Peek("query_id"))}
	if p.Key != nil && p.CustomRole() {
		req.KeyID = p.Key.ID
	}
	res, err := s.deps.Query.Run(ctx, req)
	if err != nil {
		writeError(ctx, err)
		return
	}
	ctx.Response.Header.Set("X-Engine-Query-Id", res.QueryID())
	ctx.SetContentType(res.ContentType())
	ctx.SetStatusCode(200)
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		if err := res.WriteTo(w); err != nil {
			s.cfg.Logger.Warn("query result stream ended with an error", "query_id", res.QueryID(), "err", err)
		}
	})
}
