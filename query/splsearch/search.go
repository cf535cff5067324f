// Package splsearch runs log searches for the API: the search language's statements on
// the cluster's engine, cancellable like SQL queries.
package splsearch

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/spl"
	"github.com/svc-data/svc/query/sqlquote"
	"github.com/svc-data/svc/query/tables"
)

// SearchTable is the table the log-search language reads, in the selected database.
const SearchTable = tables.LogSearchTable

// Searcher runs log searches.
type Searcher struct {
	model   *catalog.Model
	engines query.Engines
	runner  *query.Runner
}

// New returns a searcher whose query ids share the runner's registry.
func New(model *catalog.Model, engines query.Engines, runner *query.Runner) *Searcher {
	return &Searcher{model: model, engines: engines, runner: runner}
}

// Search runs a log search in a database. Its query id is registered like a SQL
// query's, so POST /v1/query/cancel stops it.
func (r *Searcher) Search(ctx context.Context, org, cluster uuid.UUID, database string, req spl.Request) (*spl.Response, error) {
	t, ok := r.model.Table(cluster, database, SearchTable)
	if !ok {
		return nil, &query.Error{Status: 404, Code: "no_search_table", Message: "database " + database + " has no " + SearchTable + " table yet",
			Hint: "send events to /services/collector/event (the HTTP Event Collector endpoint) first"}
	}
	eng, err := r.engines.QueryEngine(cluster)
	if err != nil {
		return nil, &query.Error{Status: 503, Code: "engine_unavailable", Message: err.Error()}
	}
	if req.QueryID == "" {
		req.QueryID = uuid.NewString()
	}
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	userID := req.QueryID
	engineID, done, err := r.runner.Track(userID, org, cluster, database, cancel)
	if err != nil {
		return nil, err
	}
	defer done()
	req.QueryID = engineID
	req.Table = sqlquote.Ident(t.Engine) + "." + sqlquote.Ident(SearchTable)
	req.Paths = query.TypedPaths(r.model, t)
	resp, err := spl.Search(qctx, searchEngine{eng}, req)
	// A cancel decides the answer even when every statement came back: the engine may end
	// a killed statement's stream as though it were complete, with part of its result.
	if qctx.Err() != nil && ctx.Err() == nil {
		return nil, &query.Error{Status: 499, Code: "canceled", Message: "the search was canceled"}
	}
	if err == nil {
		// The caller sees its own id, never the engine's scoped one.
		resp.QueryID = userID
		return resp, nil
	}
	if es, ok := spl.AsErrors(err); ok {
		return nil, &query.Error{Status: 400, Code: es.Code(), Message: es.Error(), Hint: es.Hint()}
	}
	if errors.Is(err, spl.ErrInternal) {
		return nil, err
	}
	return nil, r.runner.EngineError(err, cluster)
}

// searchEngine runs the search language's statements on the engine.
type searchEngine struct{ eng query.Engine }

func (e searchEngine) Query(ctx context.Context, sql, queryID string) (*spl.Result, error) {
	rows, err := e.eng.Stream(ctx, sql, query.Options{QueryID: queryID})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	res := &spl.Result{}
	for _, c := range rows.Columns() {
		res.Columns = append(res.Columns, spl.Column{Name: c.Name, Type: c.Type})
	}
	if res.Rows, err = query.ReadAll(rows); err != nil {
		return nil, err
	}
	s := rows.Summary()
	res.Stats = spl.QueryStats{RowsRead: s.RowsRead, BytesRead: s.BytesRead}
	return res, nil
}
