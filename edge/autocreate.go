package edge

import (
	"errors"
	"fmt"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// tableForInsert resolves the {table} of an insert. A table that does not exist is
// created, with an automatic sorting key, for principals whose permission lets them
// insert (admin, read_write and write_only keys, members): producers expect the first
// event to create the table. Custom-role keys insert only into existing tables (SPEC,
// "no table auto-creation") and get 404. Concurrent first inserts create the table once:
// the catalog appends its creation at the database stream's expected version, so one
// request wins and the others read the table it created.
func (s *Server) tableForInsert(ctx *fasthttp.RequestCtx, p *Principal, db *catalog.Database) (*catalog.Table, error) {
	name, _ := ctx.UserValue("table").(string)
	return s.tableNamedForInsert(p, db, name)
}

// tableNamedForInsert is tableForInsert for a table named by the caller (OTLP/gRPC).
func (s *Server) tableNamedForInsert(p *Principal, db *catalog.Database, name string) (*catalog.Table, error) {
	t, ok := s.deps.Catalog.Table(p.ClusterID, db.Name, name)
	if ok {
		return t, nil
	}
	if p.CustomRole() || !p.can(actInsert) {
		return nil, apiErr(404, "table_not_found", fmt.Sprintf("table %q does not exist in database %q", name, db.Name),
			"create it with POST /v1/tables")
	}
	t, cerr := s.deps.Tables.CreateTable(s.work(), p.OrgID, p.ClusterID, db.Name, name, "", "")
	if cerr == nil {
		return t, nil
	}
	if errors.Is(cerr, catalog.ErrExists) {
		// Another request (or node) won: its event is in the store, and this node's read
		// model applies it shortly.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if t, ok := s.deps.Catalog.Table(p.ClusterID, db.Name, name); ok {
				return t, nil
			}
			if time.Now().After(deadline) {
				return nil, &APIError{Status: 503, Code: "table_not_ready", RetryAfter: 1,
					Message: fmt.Sprintf("table %q was just created by another request and is not visible here yet", name),
					Hint:    "retry after the Retry-After delay"}
			}
		}
	}
	return nil, tableError(cerr)
}
