package statement

import (
	"sort"
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"

	"github.com/svc-data/svc/query/sqlquote"
)

const systemDatabase = "system"

// System tables are visible read-only through curated views. A view either
// passes a harmless table through, or replaces a catalog table with a
// subquery that keeps only the organization's objects (for custom-role keys:
// only the tables its roles may read), hides engine internals (generations,
// paths, engine database names) and maps engine names back to logical ones,
// so `SELECT name FROM system.tables` reads like the tenant's own catalog.
// Everything else is refused: processes and query_log show other tenants'
// statements, users/roles/grants/quotas/settings_profiles/row_policies show
// engine access entities, clusters/macros/disks/settings show the server, and
// dictionaries/models/zookeeper reach outside the tenant.
type systemView struct {
	columns []string // nil: not listed (unknown to name resolution)
	build   func(a *analyzer) string
}

var systemViews = map[string]systemView{
	"databases": {columns: []string{"name", "engine", "comment"}, build: (*analyzer).databasesView},
	"tables": {columns: []string{"database", "name", "engine", "total_rows", "total_bytes", "metadata_modification_time"},
		build: (*analyzer).tablesView},
	"columns": {columns: []string{"database", "table", "name", "type", "position", "comment"}, build: (*analyzer).columnsView},
	"parts": {columns: []string{"database", "table", "generation", "partition", "name", "part_type", "active", "marks", "rows",
		"bytes_on_disk", "data_compressed_bytes", "data_uncompressed_bytes", "modification_time", "level"},
		build: (*analyzer).partsView},
	// Workload scheduling is inspected here (CREATE/DROP WORKLOAD and RESOURCE).
	"workloads": passThrough("workloads", "name", "parent", "create_query"),
	"resources": passThrough("resources", "name", "read_disks", "write_disks", "unit", "create_query"),
	"scheduler": passThrough("scheduler"),
	// Constant tables and reference data.
	"one":                            passThrough("one", "dummy"),
	"numbers":                        passThrough("numbers", "number"),
	"numbers_mt":                     passThrough("numbers_mt", "number"),
	"zeros":                          passThrough("zeros", "zero"),
	"zeros_mt":                       passThrough("zeros_mt", "zero"),
	"functions":                      passThrough("functions"),
	"table_functions":                passThrough("table_functions"),
	"aggregate_function_combinators": passThrough("aggregate_function_combinators"),
	"data_type_families":             passThrough("data_type_families"),
	"formats":                        passThrough("formats"),
	"time_zones":                     passThrough("time_zones"),
	"collations":                     passThrough("collations"),
	"keywords":                       passThrough("keywords"),
}

func passThrough(name string, columns ...string) systemView {
	return systemView{columns: columns, build: func(*analyzer) string { return "system." + name }}
}

func readableSystemTables() string {
	names := make([]string, 0, len(systemViews))
	for n := range systemViews {
		names = append(names, n)
	}
	sort.Strings(names)
	return "readable system tables: " + strings.Join(names, ", ")
}

func (a *analyzer) systemTable(name string, alias *ch.Ident, pos int) (*source, ch.Expr, *Error) {
	v, ok := systemViews[name]
	if !ok {
		return nil, nil, forbidden(CodeSystemTable, pos, readableSystemTables(), "system.%s is not readable", name)
	}
	a.read(TableRef{Database: systemDatabase, Table: name, EngineDatabase: systemDatabase, EngineTable: name}, true, pos)
	src := &source{kind: srcSystem, name: name, table: name, columns: map[string]bool{}}
	if alias != nil {
		src.name, src.aliased = alias.Name, true
	}
	for _, c := range v.columns {
		src.columns[c] = true
	}
	src.anyColumns = v.columns == nil
	return src, &tableNode{text: v.build(a), alias: src.name}, nil
}

// orgDatabases returns the organization's databases with engine names that
// pass the shape check, sorted by logical name.
func (a *analyzer) orgDatabases() []Database {
	var out []Database
	for _, d := range a.env.Catalog.Databases() {
		if isLogicalName(d.Name) && isEngineDatabase(d.Engine) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// mapDatabase renders the expression mapping engine database names in col
// back to logical names.
func (a *analyzer) mapDatabase(col string) string {
	dbs := a.orgDatabases()
	eng := make([]string, len(dbs))
	log := make([]string, len(dbs))
	for i, d := range dbs {
		eng[i], log[i] = sqlquote.String(d.Engine), sqlquote.String(d.Name)
	}
	return "transform(" + col + ", [" + strings.Join(eng, ", ") + "], [" + strings.Join(log, ", ") + "], '')"
}

// visible renders the condition that keeps rows of the caller's own objects:
// the organization's engine databases, and for custom-role keys only the
// databases and tables its roles hold SELECT on. tableExpr may be empty for
// database-level views.
func (a *analyzer) visible(dbExpr, tableExpr string) string {
	dbs := a.orgDatabases()
	engineOf := map[string]string{}
	var all []string
	for _, d := range dbs {
		engineOf[d.Name] = d.Engine
		all = append(all, sqlquote.String(d.Engine))
	}
	if len(all) == 0 {
		return "0"
	}
	p := a.env.Principal
	if !p.byGrants() {
		return dbExpr + " IN (" + strings.Join(all, ", ") + ")"
	}
	wholeDB := map[string]bool{}
	pairs := map[string]bool{}
	for _, role := range p.Roles {
		for _, g := range a.access.Grants(role) {
			if g.Privileges&PrivSelect == 0 {
				continue
			}
			switch {
			case g.Database == "*":
				return dbExpr + " IN (" + strings.Join(all, ", ") + ")"
			case engineOf[g.Database] == "":
				continue
			case g.Table == "*" || tableExpr == "":
				wholeDB[sqlquote.String(engineOf[g.Database])] = true
			default:
				pairs["("+sqlquote.String(engineOf[g.Database])+", "+sqlquote.String(g.Table)+")"] = true
			}
		}
	}
	var conds []string
	if len(wholeDB) > 0 {
		conds = append(conds, dbExpr+" IN ("+strings.Join(sortedKeys(wholeDB), ", ")+")")
	}
	if len(pairs) > 0 {
		conds = append(conds, "("+dbExpr+", "+tableExpr+") IN ("+strings.Join(sortedKeys(pairs), ", ")+")")
	}
	if len(conds) == 0 {
		return "0"
	}
	return "(" + strings.Join(conds, " OR ") + ")"
}

func (a *analyzer) databasesView() string {
	return "(SELECT " + a.mapDatabase("e_name") + " AS name, e_engine AS engine, e_comment AS comment" +
		" FROM (SELECT name AS e_name, engine AS e_engine, comment AS e_comment FROM system.databases" +
		" WHERE " + a.visible("name", "") + "))"
}

// policyFiltered renders the condition that holds for the tables whose reads
// by the caller pass row policies, or "" when there are none. Their sizes are
// shown as NULL: a row count would tell how many rows the policies hide.
func (a *analyzer) policyFiltered(dbExpr, tableExpr string) string {
	p := a.env.Principal
	if !p.byGrants() {
		return ""
	}
	engineOf := map[string]string{}
	for _, d := range a.orgDatabases() {
		engineOf[d.Name] = d.Engine
	}
	pairs := map[string]bool{}
	for _, pol := range a.access.RowPolicies() {
		if engineOf[pol.Database] == "" || !p.holdsAny(pol.Roles) {
			continue
		}
		pairs["("+sqlquote.String(engineOf[pol.Database])+", "+sqlquote.String(pol.Table)+")"] = true
	}
	if len(pairs) == 0 {
		return ""
	}
	return "(" + dbExpr + ", " + tableExpr + ") IN (" + strings.Join(sortedKeys(pairs), ", ") + ")"
}

// unlessFiltered renders expr, or NULL where the row-policy condition holds.
func unlessFiltered(filtered, expr string) string {
	if filtered == "" {
		return expr
	}
	return "if(" + filtered + ", NULL, " + expr + ")"
}

// tablesView shows logical tables: the Merge read view t and its generations
// t__g<n> become one row t whose sizes are the generations' sums.
func (a *analyzer) tablesView() string {
	base := "splitByString('__', name)[1]"
	filtered := a.policyFiltered("e_db", "e_table")
	return "(SELECT " + a.mapDatabase("e_db") + " AS database, e_table AS name, 'ReplicatedRawMergeTree' AS engine, " +
		unlessFiltered(filtered, "sumIf(e_rows, e_gen)") + " AS total_rows, " + unlessFiltered(filtered, "sumIf(e_bytes, e_gen)") + " AS total_bytes," +
		" max(e_mtime) AS metadata_modification_time" +
		" FROM (SELECT database AS e_db, " + base + " AS e_table, name != " + base + " AS e_gen," +
		" ifNull(total_rows, 0) AS e_rows, ifNull(total_bytes, 0) AS e_bytes, metadata_modification_time AS e_mtime" +
		" FROM system.tables WHERE " + a.visible("database", base) + ")" +
		" GROUP BY e_db, e_table)"
}

// columnsView shows the columns of the read views (every table has one
// column, doc JSON), not of generations.
func (a *analyzer) columnsView() string {
	if view, ok := a.pathColumnsView(); ok {
		return view
	}
	return "(SELECT " + a.mapDatabase("e_db") + " AS database, e_table AS `table`, e_name AS name, e_type AS type," +
		" e_position AS position, e_comment AS comment" +
		" FROM (SELECT database AS e_db, table AS e_table, name AS e_name, type AS e_type, position AS e_position," +
		" comment AS e_comment FROM system.columns WHERE countSubstrings(table, '__') = 0 AND " +
		a.visible("database", "table") + "))"
}

// partsView shows the parts of the generations under their logical table,
// with the generation number.
func (a *analyzer) partsView() string {
	base := "splitByString('__', table)[1]"
	// Parts of a policy-filtered table are not listed at all: their names and times
	// tell the table's insert history.
	hiddenParts := ""
	if hidden := a.policyFiltered("database", base); hidden != "" {
		hiddenParts = " AND NOT (" + hidden + ")"
	}
	sizes := []string{"marks", "rows", "bytes_on_disk", "data_compressed_bytes", "data_uncompressed_bytes"}
	outer, inner := make([]string, len(sizes)), make([]string, len(sizes))
	for i, c := range sizes {
		outer[i] = "e_" + c + " AS " + c
		inner[i] = c + " AS e_" + c
	}
	return "(SELECT " + a.mapDatabase("e_db") + " AS database, splitByString('__', e_table)[1] AS `table`," +
		" toUInt32OrZero(substring(splitByString('__', e_table)[2], 2)) AS generation, partition, name, part_type," +
		" active, " + strings.Join(outer, ", ") + ", modification_time, level" +
		" FROM (SELECT database AS e_db, table AS e_table, partition, name, part_type, active, " + strings.Join(inner, ", ") +
		", modification_time, level FROM system.parts" +
		" WHERE countSubstrings(table, '__g') = 1 AND " + a.visible("database", base) + hiddenParts + "))"
}

// tableFunctions are the table functions that read nothing outside the
// query: generated or literal data. Every other table function (url, file,
// s3, remote, cluster, mysql, merge, input, executable, ...) is refused.
var tableFunctions = map[string][]string{
	"numbers":         {"number"},
	"numbers_mt":      {"number"},
	"zeros":           {"zero"},
	"zeros_mt":        {"zero"},
	"generate_series": {"generate_series"},
	"generateseries":  {"generate_series"},
	"generaterandom":  nil,
	"values":          nil,
	"null":            nil,
	"format":          nil,
}

func (a *analyzer) tableFunction(f *ch.TableFunctionExpr, alias *ch.Ident) (*source, ch.Expr, *Error) {
	id, ok := f.Name.(*ch.Ident)
	if !ok || f.Args == nil {
		return nil, nil, unsupportedNode(f)
	}
	pos := int(f.Pos())
	if err := checkName(id.Name, pos); err != nil {
		return nil, nil, err
	}
	cols, ok := tableFunctions[strings.ToLower(id.Name)]
	if !ok {
		return nil, nil, badRequest(CodeTableFunction, pos,
			"read your tables by name; numbers, zeros, generate_series, generateRandom, values, null and format are available",
			"table function %s is not allowed", id.Name)
	}
	normalizeIdent(id)
	// Arguments are constants: walk them in a level of their own, where no
	// table is in reach.
	argScope := newScope(nil, nil, nil)
	for i, arg := range f.Args.Args {
		var err *Error
		if f.Args.Args[i], err = a.expr(arg, argScope); err != nil {
			return nil, nil, err
		}
	}
	src := &source{kind: srcFunction, name: id.Name, columns: map[string]bool{}, anyColumns: cols == nil}
	if alias != nil {
		src.name, src.aliased = alias.Name, true
	}
	for _, c := range cols {
		src.columns[c] = true
	}
	text := render(f)
	return src, &tableNode{text: text, alias: aliasName(alias)}, nil
}

func aliasName(id *ch.Ident) string {
	if id == nil {
		return ""
	}
	return id.Name
}
