package edge

import (
	"errors"
	"fmt"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// tableForInsert resolves the {table} of an insert (tableNamedForInsert).
func (s *Server) tableForInsert(ctx *fasthttp.RequestCtx, p *Principal, db *catalog.Database) (*catalog.Table, error) {
	name, _ := ctx.UserValue("table").(string)
	return s.tableNamedForInsert(p, db, name, newTable{})
}

// newTable is how tableNamedForInsert creates a table: empty fields choose the automatic
// sorting key and the default column type.
type newTable struct{ sortingKey, columnType string }

// tableNamedForInsert is the one table-for-insert path, for every insert route (plain
// JSON and transforms, OTLP over HTTP and gRPC, HEC). A table that does not exist is
// created as spec says for principals whose permission lets them insert (admin,
// read_write and write_only keys, members): producers expect the first event to create
// the table. Custom-role keys insert only into existing tables (SPEC, "no table
// auto-creation") and get 404. Concurrent first inserts create the table once: the
// catalog appends its creation at the database stream's expected version, so one
// request wins, and the others catch this node's catalog up to the event store
// (Commands.Sync) and read the table it created.
func (s *Server) tableNamedForInsert(p *Principal, db *catalog.Database, name string, spec newTable) (*catalog.Table, error) {
	t, ok := s.deps.Catalog.Table(p.ClusterID, db.Name, name)
	if ok {
		return t, nil
	}
	if p.CustomRole() || !p.can(actInsert) {
		return nil, apiErr(404, "table_not_found", fmt.Sprintf("table %q does not exist in database %q", name, db.Name),
			"create it with POST /v1/tables")
	}
	t, err := s.deps.Tables.CreateTable(s.work(), p.OrgID, p.ClusterID, db.Name, name, spec.sortingKey, spec.columnType)
	if !errors.Is(err, catalog.ErrExists) {
		if err != nil {
			return nil, tableError(err)
		}
		return t, nil
	}
	// Another request (or node) won: its event is in the store.
	if err := s.deps.Commands.Sync(s.work()); err != nil {
		return nil, err
	}
	if t, ok := s.deps.Catalog.Table(p.ClusterID, db.Name, name); ok {
		return t, nil
	}
	return nil, &APIError{Status: 503, Code: "table_not_ready", RetryAfter: 1,
		Message: fmt.Sprintf("table %q was just created by another request and is not visible here yet", name),
		Hint:    "retry after the Retry-After delay"}
}
