package ingest

import (
	"errors"
	"fmt"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/apierr"
	"github.com/svc-data/svc/projections/catalog"
)

// tableForInsert resolves the {table} of an insert (TableNamedForInsert), made as the
// request's newTableKey value says when it does not exist (the automatic key and plain
// JSON without one).
func (h *Handlers) tableForInsert(ctx *fasthttp.RequestCtx, p Caller, db *catalog.Database) (*catalog.Table, error) {
	name, _ := ctx.UserValue("table").(string)
	spec, _ := ctx.UserValue(newTableKey).(NewTable)
	return h.TableNamedForInsert(p, db, name, spec)
}

// newTableKey is the request value holding how a route's first insert makes its table
// (OTLP exports: OTLPNewTable).
const newTableKey = "new_table"

// NewTable is how TableNamedForInsert creates a table: empty fields choose the automatic
// sorting key and the default column type.
type NewTable struct{ SortingKey, ColumnType string }

// TableNamedForInsert is the one table-for-insert path, for every insert route (plain
// JSON and transforms, OTLP over HTTP and gRPC, HEC). A table that does not exist is
// created as spec says for principals whose permission lets them insert (admin,
// read_write and write_only keys, members): producers expect the first event to create
// the table. Custom-role keys insert only into existing tables (SPEC, "no table
// auto-creation") and get 404. Concurrent first inserts create the table once: the
// catalog appends its creation at the database stream's expected version, so one
// request wins, and the others catch this node's catalog up to the event store
// (Commands.Sync) and read the table it created.
func (h *Handlers) TableNamedForInsert(p Caller, db *catalog.Database, name string, spec NewTable) (*catalog.Table, error) {
	t, ok := h.deps.Catalog.Table(p.Cluster(), db.Name, name)
	if ok {
		return t, nil
	}
	if p.CustomRole() || !p.CanInsert() {
		return nil, apierr.New(404, "table_not_found", fmt.Sprintf("table %q does not exist in database %q", name, db.Name),
			"create it with POST /v1/tables")
	}
	t, err := h.deps.Tables.CreateTable(h.work(), p.Org(), p.Cluster(), db.Name, name, spec.SortingKey, spec.ColumnType, nil)
	if !errors.Is(err, catalog.ErrExists) {
		if err != nil {
			return nil, TableError(err)
		}
		return t, nil
	}
	// Another request (or node) won: its event is in the store.
	if err := h.deps.Commands.Sync(h.work()); err != nil {
		return nil, err
	}
	if t, ok := h.deps.Catalog.Table(p.Cluster(), db.Name, name); ok {
		return t, nil
	}
	return nil, &apierr.Error{Status: 503, Code: "table_not_ready", RetryAfter: 1,
		Message: fmt.Sprintf("table %q was just created by another request and is not visible here yet", name),
		Hint:    "retry after the Retry-After delay"}
}
