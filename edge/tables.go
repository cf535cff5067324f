package edge

import (
	"fmt"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/ingest"
	"github.com/svc-data/svc/projections/catalog"
)

// tableView is a table as the API shows it.
type tableView struct {
	Name       string    `json:"name"`
	Database   string    `json:"database"`
	SortingKey string    `json:"sorting_key"`
	ID         string    `json:"id"`
	CreatedAt  time.Time `json:"created_at"`
	// PhysicalSortingKey is the engine key of the generation new rows go to (paths typed
	// from the data), null until the first rows arrive.
	PhysicalSortingKey *string `json:"physical_sorting_key"`
	// AutomaticSortingKey is the key an automatic table (sorting_key "") chose from its
	// data for new rows, null until the first rows arrive or when the key is explicit.
	AutomaticSortingKey *string `json:"automatic_sorting_key"`
	// Generations are the table's physical tables, oldest first: rows are inserted into
	// the last; older ones are re-sorted into its key in the background.
	Generations []generationView `json:"generations"`
	// Columns (GET /v1/tables/{table} only): doc and every path with its type.
	Columns []columnView `json:"columns,omitempty"`
}

type generationView struct {
	Number             int    `json:"number"`
	PhysicalSortingKey string `json:"physical_sorting_key"`
}

func viewTable(t *catalog.Table) tableView {
	v := tableView{Name: t.Name, Database: t.Database, SortingKey: t.SortingKey, ID: t.ID.String(),
		CreatedAt: t.CreatedAt, Generations: []generationView{}}
	for _, g := range t.Generations {
		v.Generations = append(v.Generations, generationView{Number: g.N, PhysicalSortingKey: g.PhysicalKey})
	}
	if g, ok := t.Current(); ok {
		k := g.PhysicalKey
		v.PhysicalSortingKey = &k
		if t.SortingKey == "" {
			chosen := g.ChosenKey
			v.AutomaticSortingKey = &chosen
		}
	}
	return v
}

// selectedTable resolves the selected database and the {table} path parameter; it
// fails when either does not exist.
func (s *Server) selectedTable(ctx *fasthttp.RequestCtx, p *Principal) (*catalog.Database, *catalog.Table, error) {
	db, err := s.database(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.tableParam(ctx, p, db)
	if err != nil {
		return nil, nil, err
	}
	return db, t, nil
}

func (s *Server) tableParam(ctx *fasthttp.RequestCtx, p *Principal, db *catalog.Database) (*catalog.Table, error) {
	name, _ := ctx.UserValue("table").(string)
	t, ok := s.deps.Catalog.Table(p.ClusterID, db.Name, name)
	if !ok {
		return nil, apiErr(404, "table_not_found", fmt.Sprintf("table %q does not exist in database %q", name, db.Name),
			"create it with POST /v1/tables")
	}
	return t, nil
}

func (s *Server) listTables(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actQuery) || p.CustomRole() {
		return forbidden("list tables")
	}
	db, err := s.database(ctx, p)
	if err != nil {
		return err
	}
	out := []tableView{}
	for _, t := range s.deps.Catalog.Tables(p.ClusterID, db.Name) {
		out = append(out, viewTable(t))
	}
	writeJSON(ctx, 200, map[string]any{"tables": out})
	return nil
}

func (s *Server) describeTable(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actQuery) || p.CustomRole() {
		return forbidden("describe tables")
	}
	_, t, err := s.selectedTable(ctx, p)
	if err != nil {
		return err
	}
	v := viewTable(t)
	v.Columns = s.tableColumns(t)
	writeJSON(ctx, 200, v)
	return nil
}

type createTableRequest struct {
	Name       *string `json:"name"`
	SortingKey *string `json:"sorting_key"`
}

func (s *Server) createTable(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actManageTables) {
		return forbidden("create tables (admin permission required)")
	}
	db, err := s.database(ctx, p)
	if err != nil {
		return err
	}
	var req createTableRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	if req.Name == nil {
		return requiredField("invalid_name", "name")
	}
	key := ""
	if req.SortingKey != nil {
		key = *req.SortingKey
	}
	t, err := s.deps.Tables.CreateTable(s.work(), p.OrgID, p.ClusterID, db.Name, *req.Name, key, "")
	if err != nil {
		return tableError(err)
	}
	writeJSON(ctx, 200, viewTable(t))
	return nil
}

func (s *Server) patchTable(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actManageTables) {
		return forbidden("change sorting keys (admin permission required)")
	}
	db, t, err := s.selectedTable(ctx, p)
	if err != nil {
		return err
	}
	var req createTableRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	if req.Name != nil && *req.Name != t.Name {
		return &APIError{Status: 400, Code: "invalid_name", Field: "name", Message: "tables cannot be renamed"}
	}
	if req.SortingKey != nil {
		var err error
		if t, err = s.deps.Tables.ChangeSortingKey(s.work(), p.ClusterID, db.Name, t.Name, *req.SortingKey); err != nil {
			return tableError(err)
		}
	}
	writeJSON(ctx, 200, viewTable(t))
	return nil
}

func (s *Server) deleteTable(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actDeleteTable) {
		return forbidden("delete tables (admin permission required)")
	}
	db, t, err := s.selectedTable(ctx, p)
	if err != nil {
		return err
	}
	if err := s.deps.Tables.DropTable(s.work(), p.ClusterID, db.Name, t.Name); err != nil {
		return tableError(err)
	}
	writeJSON(ctx, 200, map[string]any{"deleted": true, "name": t.Name})
	return nil
}

func tableError(err error) error { return ingest.TableError(err) }

// mayInsert is the INSERT grant of statement.MayInsert for a request's principal.
func (s *Server) mayInsert(p *Principal, db, table string) bool {
	return p.can(actInsert) && s.deps.Query.MayInsert(p.ClusterID, statementPrincipal(p), db, table)
}
