package query

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/svc-data/svc/query/sqlquote"
	"github.com/svc-data/svc/query/statement"
)

// Import is a URL import into a table.
type Import struct {
	// OrgID and Database scope the query id (EngineQueryID).
	OrgID     uuid.UUID
	Database  string
	ClusterID uuid.UUID
	TableID   uuid.UUID
	URL       string
	// QueryID names the engine query; a retry with the same id is deduplicated.
	QueryID string
}

// ImportResult is what a URL import did.
type ImportResult struct {
	QueryID string
	// Inserted is the engine's count of rows written, nil when it gave none.
	Inserted *uint64
}

// ImportURL has the engine read newline-delimited JSON objects (or a JSON array of
// them) from a URL straight into a table's current generation. The edge has already
// checked the address against the import policy.
func (r *Runner) ImportURL(ctx context.Context, imp Import) (ImportResult, error) {
	if err := CheckQueryID(imp.QueryID); err != nil {
		return ImportResult{}, err
	}
	if imp.QueryID == "" {
		imp.QueryID = uuid.NewString()
	}
	res := ImportResult{QueryID: imp.QueryID}
	engineID := EngineQueryID(imp.OrgID, imp.Database, imp.QueryID)
	t, ok := r.model.TableByID(imp.TableID)
	if !ok {
		return res, &Error{Status: 404, Code: "table_not_found", Message: "the table no longer exists"}
	}
	eng, err := r.engines.QueryEngine(imp.ClusterID)
	if err != nil {
		return res, engineUnavailable(err)
	}
	src := fmt.Sprintf("url(%s, 'JSONAsObject', %s)", sqlquote.String(imp.URL), sqlquote.String("doc "+t.ColumnType))
	env := statement.Env{Catalog: catalogView{m: r.model, cluster: imp.ClusterID}}
	// A table without rows yet gets its first generation typed from the URL's first rows.
	var sample [][]byte
	if t.KeyPending() {
		if sample, err = sampleDocs(ctx, eng, "SELECT toJSONString(doc) FROM "+src+" LIMIT 1000", engineID); err != nil {
			return res, engineError(err, env)
		}
	}
	target, ok, err := r.tables.Target(ctx, t.ID, sample)
	if err != nil {
		return res, err
	}
	if !ok {
		return res, &Error{Status: 404, Code: "table_not_found", Message: "the table no longer exists"}
	}
	stmt := fmt.Sprintf("INSERT INTO %s.%s SELECT doc FROM %s", sqlquote.Ident(target.Database), sqlquote.Ident(target.Table), src)
	settings := map[string]string{
		// The query id makes a retried import land once.
		"insert_deduplication_token":      "url/" + imp.QueryID,
		"type_json_skip_duplicated_paths": "1",
	}
	rows, err := eng.Stream(ctx, stmt, Options{QueryID: engineID, Settings: settings})
	if err != nil {
		return res, engineError(err, env)
	}
	for rows.Next() {
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return res, engineError(err, env)
	}
	if sum := rows.Summary(); sum.Known {
		n := sum.WrittenRows
		res.Inserted = &n
	}
	// The import's paths go to the table's schema; a retry with the same query id
	// inserts nothing (deduplication token) and records them again.
	if err := r.recordStoredPaths(ctx, eng, t.ID, target.Database, target.Table, imp.QueryID); err != nil {
		return res, engineError(err, env)
	}
	return res, nil
}
