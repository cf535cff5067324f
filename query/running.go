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
// one within its owner's scope. Queries are keyed by cluster, organization, database
// and the caller's id (runKey), so the same id in another scope is another query.
type running struct {
	mu sync.Mutex
	qs map[string]context.CancelFunc
}

// start registers a query for its duration; an id already running in the same scope
// is refused.
func (r *running) start(key, id string, cancel context.CancelFunc) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.qs == nil {
		r.qs = map[string]context.CancelFunc{}
	}
	if _, busy := r.qs[key]; busy {
		return &Error{Status: 409, Code: "query_id_in_use", Message: fmt.Sprintf("a query with id %q is already running", id),
			Hint: "use a fresh query_id, or omit it to get a generated one"}
	}
	r.qs[key] = cancel
	return nil
}

func (r *running) done(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.qs, key)
}

// Cancel stops a running query of the same organization and database scope.
func (r *Runner) Cancel(ctx context.Context, org, cluster uuid.UUID, database, queryID string) error {
	if queryID == "" {
		return &Error{Status: 400, Code: "invalid_query_id", Field: "query_id", Message: "query_id is required"}
	}
	if err := CheckQueryID(queryID); err != nil {
		return err
	}
	r.running.mu.Lock()
	cancel, ok := r.running.qs[runKey(cluster, org, database, queryID)]
	r.running.mu.Unlock()
	if !ok {
		// Another tenant's query looks exactly like a finished one.
		return &Error{Status: 404, Code: "query_not_found", Message: fmt.Sprintf("no running query %q in database %q", queryID, database),
			Hint: "the query may have finished already"}
	}
	cancel()
	// Closing the request stops an embedded engine's query; a ClickHouse server needs
	// the KILL as well.
	if eng, err := r.engines.QueryEngine(cluster); err == nil {
		kill := "KILL QUERY WHERE query_id = " + sqlquote.String(EngineQueryID(org, database, queryID)) + " ASYNC"
		if rows, err := eng.Stream(ctx, kill, Options{}); err == nil {
			for rows.Next() {
			}
			rows.Close()
		}
	}
	return nil
}

// Track registers a query id running outside Run (log searches) in the same registry,
// so POST /v1/query/cancel finds it. It returns the id to run the query with on the
// engine, and done, which unregisters it.
func (r *Runner) Track(queryID string, org, cluster uuid.UUID, database string, cancel context.CancelFunc) (engineID string, done func(), err error) {
	if err := CheckQueryID(queryID); err != nil {
		return "", nil, err
	}
	key := runKey(cluster, org, database, queryID)
	if err := r.running.start(key, queryID, cancel); err != nil {
		return "", nil, err
	}
	return EngineQueryID(org, database, queryID), func() { r.running.done(key) }, nil
}

// EngineError translates an engine failure of a cluster into the API's error, with
// engine names mapped back to logical ones.
func (r *Runner) EngineError(err error, cluster uuid.UUID) error {
	return engineError(err, statement.Env{Catalog: catalogView{m: r.model, cluster: cluster}})
}

// MayInsert reports whether p may insert rows into db.table of a cluster: the INSERT
// grant of statement.MayInsert over the cluster's roles.
func (r *Runner) MayInsert(cluster uuid.UUID, p statement.Principal, db, table string) bool {
	return statement.MayInsert(p, accessView{m: r.model, cluster: cluster}, db, table)
}

// MayReadWhole is statement.MayReadWhole in a cluster.
func (r *Runner) MayReadWhole(cluster uuid.UUID, p statement.Principal, db, table string) bool {
	return statement.MayReadWhole(p, accessView{m: r.model, cluster: cluster}, db, table)
}

// Running is how many queries this node runs on a cluster's engine now (query API and
// log searches): a load signal for autoscaling.
func (r *Runner) Running(cluster uuid.UUID) int {
	prefix := cluster.String() + "/"
	r.running.mu.Lock()
	defer r.running.mu.Unlock()
	n := 0
	for k := range r.running.qs {
		if len(k) > len(prefix) && k[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}
