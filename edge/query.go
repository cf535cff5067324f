package edge

import (
	"bufio"
	"bytes"
	"context"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/spl"
	"github.com/svc-data/svc/query/statement"
)

// QueryRunner runs SQL requests.
type QueryRunner interface {
	Run(ctx context.Context, req query.Request) (query.Response, error)
	ImportURL(ctx context.Context, imp query.Import) (query.ImportResult, error)
	Cancel(ctx context.Context, org, cluster uuid.UUID, database, queryID string) error
	// MayInsert is the INSERT grant (statement.MayInsert).
	MayInsert(cluster uuid.UUID, p statement.Principal, db, table string) bool
	// MayReadWhole is the whole-table SELECT grant (statement.MayReadWhole).
	MayReadWhole(cluster uuid.UUID, p statement.Principal, db, table string) bool
}

// Searcher runs log searches.
type Searcher interface {
	Search(ctx context.Context, org, cluster uuid.UUID, database string, req spl.Request) (*spl.Response, error)
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

func (s *Server) query(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actQuery) {
		return forbidden("run queries")
	}
	db, err := s.database(ctx, p)
	if err != nil {
		return err
	}
	var body queryBody
	if err := readJSON(ctx, &body); err != nil {
		return err
	}
	if body.SQL == nil || *body.SQL == "" {
		return requiredField("invalid_sql", "sql")
	}
	if len(*body.SQL) > maxStatementBytes {
		return &APIError{Status: 413, Code: "statement_too_large", Field: "sql",
			Message: "the statement is larger than 1 MiB", Hint: "load data with POST /v1/tables/{table} instead of inline SQL"}
	}
	req := query.Request{OrgID: p.OrgID, ClusterID: p.ClusterID, Principal: statementPrincipal(p), Database: db.Name,
		SQL: *body.SQL, Format: body.Format, QueryID: string(ctx.QueryArgs().Peek("query_id"))}
	if err := query.CheckQueryID(req.QueryID); err != nil {
		return err
	}
	if p.Key != nil && p.CustomRole() {
		req.KeyID = p.Key.ID
	}
	res, err := s.deps.Query.Run(s.work(), req)
	if err != nil {
		return err
	}
	ctx.Response.Header.Set("X-Engine-Query-Id", res.QueryID())
	ctx.SetContentType(res.ContentType())
	ctx.SetStatusCode(200)
	if wr, ok := res.(query.WholeResponse); ok && wr.Whole() {
		// A small result already at hand goes out as one body with its length: no stream
		// goroutine, pipe and chunks (about a tenth of svcd's CPU for SELECT 1). The bytes
		// are those the stream would carry, an in-band error included.
		var body bytes.Buffer
		w := bufio.NewWriter(&body)
		if err := res.WriteTo(w); err != nil {
			s.cfg.Logger.Warn("query result stream ended with an error", "query_id", res.QueryID(), "err", err)
		}
		ctx.SetBody(body.Bytes())
		return nil
	}
	conn := ctx.Conn()
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer cork(conn)()
		if err := res.WriteTo(w); err != nil {
			s.cfg.Logger.Warn("query result stream ended with an error", "query_id", res.QueryID(), "err", err)
		}
	})
	return nil
}

// maxStatementBytes bounds the SQL text of one request.
const maxStatementBytes = 1 << 20

type cancelBody struct {
	QueryID string `json:"query_id"`
}

// cancelQuery stops a running query of the caller's organization and selected database.
func (s *Server) cancelQuery(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actQuery) {
		return forbidden("cancel queries")
	}
	db, err := s.database(ctx, p)
	if err != nil {
		return err
	}
	var body cancelBody
	if len(ctx.PostBody()) > 0 {
		if err := readJSON(ctx, &body); err != nil {
			return err
		}
	}
	if body.QueryID == "" {
		body.QueryID = string(ctx.QueryArgs().Peek("query_id"))
	}
	if err := s.deps.Query.Cancel(s.work(), p.OrgID, p.ClusterID, db.Name, body.QueryID); err != nil {
		return err
	}
	writeJSON(ctx, 200, map[string]any{"query_id": body.QueryID, "canceled": true})
	return nil
}
