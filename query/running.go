package query

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/svc-data/svc/query/sqlquote"
	"github.com/svc-data/svc/query/statement"
)

// running tracks the queries this node runs, so that POST /v1/query/cancel can stop
// one within its owner's scope.
type running struct {
	mu sync.Mutex
	qs map[string]*runningQuery
}

type runningQuery struct {
	org      uuid.UUID
	cluster  uuid.UUID
	database string
	cancel   context.CancelFunc
}

// start registers a query id for the duration of a query; an id already running is
// refused, so one caller cannot take over another's id.
func (r *running) start(id string, q *runningQuery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.qs == nil {
		r.qs = map[string]*runningQuery{}
	}
	if _, busy := r.qs[id]; busy {
		return &Error{Status: 409, Code: "query_id_in_use", Message: fmt.Sprintf("a query with id %q is already running", id),
			Hint: "use a fresh query_id, or omit it to get a generated one"}
	}
	r.qs[id] = q
	return nil
}

func (r *running) done(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.qs, id)
}

// Cancel stops a running query of the same organization and database scope.
func (r *Runner) Cancel(ctx context.Context, org, cluster uuid.UUID, database, queryID string) error {
	if queryID == "" {
		return &Error{Status: 400, Code: "invalid_query_id", Message: "query_id is required"}
	}
	r.running.mu.Lock()
	q, ok := r.running.qs[queryID]
	r.running.mu.Unlock()
	if !ok || q.org != org || q.cluster != cluster || q.database != database {
		// Another tenant's query looks exactly like a finished one.
		return &Error{Status: 404, Code: "query_not_found", Message: fmt.Sprintf("no running query %q in database %q", queryID, database),
			Hint: "the query may have finished already"}
	}
	q.cancel()
	// Closing the request stops an embedded engine's query; a ClickHouse server needs
	// the KILL as well.
	if eng, err := r.engines.QueryEngine(cluster); err == nil {
		if rows, err := eng.Stream(ctx, "KILL QUERY WHERE query_id = "+sqlquote.String(queryID)+" ASYNC", Options{}); err == nil {
			for rows.Next() {
			}
			rows.Close()
		}
	}
	return nil
}

// Track registers a query id running outside Run (log searches) in the same registry,
// so POST /v1/query/cancel finds it; done unregisters it.
func (r *Runner) Track(queryID string, org, cluster uuid.UUID, database string, cancel context.CancelFunc) (done func(), err error) {
	if err := r.running.start(queryID, &runningQuery{org: org, cluster: cluster, database: database, cancel: cancel}); err != nil {
		return nil, err
	}
	return func() { r.running.done(queryID) }, nil
}

// EngineError translates an engine failure of a cluster into the API's error, with
// engine names mapped back to logical ones.
func (r *Runner) EngineError(err error, cluster uuid.UUID) error {
	return engineError(err, statement.Env{Catalog: catalogView{m: r.model, cluster: cluster}})
}
