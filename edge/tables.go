package edge

import (
	"context"
	"fmt"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/ingest"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/tables"
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
	// Retention is what the engine enforces, read back from the TTL of the table's
	// current generation (null: rows kept forever, or no rows yet); RetentionSetting
	// is what the table was given; RetentionStatus and RetentionProblem say whether
	// every generation enforces the setting (tables.ReadRetention).
	Retention        *string `json:"retention"`
	RetentionSetting *string `json:"retention_setting"`
	RetentionTTL     *string `json:"retention_ttl"`
	RetentionStatus  string  `json:"retention_status"`
	RetentionProblem string  `json:"retention_problem,omitempty"`
}

// withRetention fills v's retention fields from what the engine has.
func withRetention(v tableView, st tables.RetentionState) tableView {
	v.Retention, v.RetentionSetting, v.RetentionTTL = nonEmpty(st.Engine), nonEmpty(st.Setting), nonEmpty(st.TTL)
	v.RetentionStatus, v.RetentionProblem = st.Status, st.Problem
	return v
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// viewTables shows tables with their retention read back from the engine.
func (s *Server) viewTables(p *Principal, ts ...*catalog.Table) []tableView {
	ctx, cancel := context.WithTimeout(s.work(), retentionReadTimeout)
	defer cancel()
	states := s.deps.Tables.ReadRetention(ctx, p.ClusterID, ts)
	out := make([]tableView, 0, len(ts))
	for _, t := range ts {
		out = append(out, withRetention(viewTable(t), states[t.ID]))
	}
	return out
}

// retentionReadTimeout bounds the engine read of a table view: a table is shown with
// status unknown rather than waiting on an engine that does not answer.
const retentionReadTimeout = 5 * time.Second

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
	writeJSON(ctx, 200, map[string]any{"tables": s.viewTables(p, s.deps.Catalog.Tables(p.ClusterID, db.Name)...)})
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
	v := s.viewTables(p, t)[0]
	v.Columns = s.tableColumns(t)
	writeJSON(ctx, 200, v)
	return nil
}

type createTableRequest struct {
	Name       *string `json:"name"`
	SortingKey *string `json:"sorting_key"`
	// Retention: a duration ("30d") or a TTL expression over a time path; "" keeps
	// rows forever; absent takes the database's default (on create) or changes nothing.
	Retention *string `json:"retention"`
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
	t, err := s.deps.Tables.CreateTable(s.work(), p.OrgID, p.ClusterID, db.Name, *req.Name, key, "", req.Retention)
	if err != nil {
		return tableError(err)
	}
	writeJSON(ctx, 200, s.viewTables(p, t)[0])
	return nil
}

func (s *Server) patchTable(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actManageTables) {
		return forbidden("change tables' sorting keys or retention (admin permission required)")
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
	if req.Retention != nil {
		var err error
		if t, err = s.deps.Tables.ChangeRetention(s.work(), p.ClusterID, db.Name, t.Name, *req.Retention); err != nil {
			return tableError(err)
		}
	}
	writeJSON(ctx, 200, s.viewTables(p, t)[0])
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
