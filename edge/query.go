package edge

import (
	"bufio"
	"context"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// QueryRequest is a SQL request on behalf of a principal.
type QueryRequest struct {
	OrgID      uuid.UUID
	ClusterID  uuid.UUID
	Permission string   // "" for custom-role keys and user sessions
	Roles      []string // custom-role keys
	Database   *catalog.Database
	SQL        string
	Format     string
	QueryID    string
}

// QueryResponse streams a result.
type QueryResponse interface {
	QueryID() string
	ContentType() string
	// WriteTo writes the whole result, streaming rows as the engine produces them.
	WriteTo(w *bufio.Writer) error
}

// QueryRunner runs SQL requests.
type QueryRunner interface {
	Run(ctx context.Context, req QueryRequest) (QueryResponse, error)
}

type queryBody struct {
	SQL    *string `json:"sql"`
	Format string  `json:"format"`
}

func (s *Server) query(ctx *fasthttp.RequestCtx, p *Principal) {
	if !p.can(actQuery) {
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
	req := QueryRequest{OrgID: p.OrgID, ClusterID: p.ClusterID, Permission: p.Permission(), Database: db,
		SQL: *body.SQL, Format: body.Format, QueryID: string(ctx.QueryArgs().Peek("query_id"))}
	if p.Key != nil {
		req.Roles = p.Key.Roles
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
			s.cfg.Logger.Warn("query result stream failed", "query_id", res.QueryID(), "err", err)
		}
	})
}
