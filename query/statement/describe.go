package statement

import (
	"sort"
	"strconv"
	"strings"

	"github.com/svc-data/svc/query/pathtype"
	"github.com/svc-data/svc/query/sqlquote"
)

// Tables describe their columns (docs/typing.md): DESCRIBE TABLE t and system.columns
// list doc, the whole document, and every path of the table's schema with the type a
// reference to it reads as. A key limited to some columns by its grants sees only the
// paths under them, and no doc.

// TableLister is implemented by catalogs that can list a database's tables; with it,
// system.columns lists paths.
type TableLister interface {
	TableNames(db string) []string
}

// PathColumn is one column of a table's description.
type PathColumn struct {
	Name string
	Type string
}

// DescribeColumns returns the columns of a table as its description lists them: doc,
// then every path in name order, with the type a reference reads as; the paths in the
// elements of an array of objects are listed as items[].sku. allowed, when not
// nil, limits the list to paths under those top-level keys and leaves doc out.
func DescribeColumns(paths map[string][]string, allowed map[string]bool) []PathColumn {
	var out []PathColumn
	if allowed == nil {
		out = append(out, PathColumn{Name: docColumn, Type: "JSON"})
	}
	names := make([]string, 0, len(paths))
	for p := range paths {
		top, _, _ := strings.Cut(p, ".")
		if allowed == nil || allowed[strings.TrimSuffix(top, "[]")] { // items[].sku is under items
			names = append(names, p)
		}
	}
	sort.Strings(names)
	for _, p := range names {
		out = append(out, PathColumn{Name: p, Type: ReadType(paths[p])})
	}
	return out
}

// ReadType is the type a reference to a path with these types seen reads as.
func ReadType(seen []string) string {
	r := pathtype.Decide(seen)
	switch {
	case !r.Typed():
		return "Dynamic"
	case strings.HasPrefix(r.Type, "Array(") || strings.HasPrefix(r.Type, "Nullable("):
		return r.Type
	}
	return "Nullable(" + r.Type + ")"
}

// grantedColumns returns the top-level keys of db.table the principal may read, nil
// when it may read the whole document.
func (a *analyzer) grantedColumns(db, table string) map[string]bool {
	p := a.env.Principal
	if !p.byGrants() {
		return nil
	}
	allowed := map[string]bool{}
	for _, role := range p.Roles {
		for _, g := range a.access.Grants(role) {
			if !g.covers(PrivSelect, db, table) {
				continue
			}
			if len(g.Columns) == 0 {
				return nil
			}
			for _, c := range g.Columns {
				allowed[c] = true
			}
		}
	}
	return allowed
}

// describePaths answers DESCRIBE TABLE of one of our tables with a path schema.
func (a *analyzer) describePaths(isTable bool) (*Statement, bool, *Error) {
	if !isTable || len(a.reads) != 1 || a.reads[0].system {
		return nil, false, nil
	}
	ref := a.reads[0].ref
	paths := a.tablePaths(ref.Database, ref.Table)
	if paths == nil {
		return nil, false, nil
	}
	cols := DescribeColumns(paths, a.grantedColumns(ref.Database, ref.Table))
	items := make([]string, len(cols))
	for i, c := range cols {
		items[i] = "(" + sqlquote.String(c.Name) + ", " + sqlquote.String(c.Type) + ")"
	}
	sql := "SELECT tupleElement(c, 1) AS name, tupleElement(c, 2) AS type, '' AS default_type, '' AS default_expression," +
		" '' AS comment, '' AS codec_expression, '' AS ttl_expression FROM (SELECT arrayJoin([" + strings.Join(items, ", ") + "]) AS c)"
	if len(cols) == 0 {
		sql = "SELECT '' AS name, '' AS type, '' AS default_type, '' AS default_expression, '' AS comment," +
			" '' AS codec_expression, '' AS ttl_expression WHERE 0"
	}
	st, err := a.readStatement(KindDescribe, sql, false)
	return st, true, err
}

// pathColumnsView is system.columns built from the catalog: for every table the
// caller may see, doc and its paths (limited by column grants). ok is false when the
// catalog cannot list tables.
func (a *analyzer) pathColumnsView() (string, bool) {
	lister, ok := a.env.Catalog.(TableLister)
	if !ok {
		return "", false
	}
	var rows []string
	for _, d := range a.orgDatabases() {
		for _, t := range lister.TableNames(d.Name) {
			allowed := a.grantedColumns(d.Name, t)
			if allowed != nil && len(allowed) == 0 && !a.grantsAny(d.Name, t) {
				continue
			}
			paths := a.tablePaths(d.Name, t)
			for i, c := range DescribeColumns(paths, allowed) {
				rows = append(rows, "("+sqlquote.String(d.Name)+", "+sqlquote.String(t)+", "+sqlquote.String(c.Name)+", "+
					sqlquote.String(c.Type)+", "+strconv.Itoa(i+1)+")")
			}
		}
	}
	if len(rows) == 0 {
		return "(SELECT '' AS database, '' AS `table`, '' AS name, '' AS type, toUInt64(0) AS position, '' AS comment WHERE 0)", true
	}
	return "(SELECT tupleElement(c, 1) AS database, tupleElement(c, 2) AS `table`, tupleElement(c, 3) AS name," +
		" tupleElement(c, 4) AS type, toUInt64(tupleElement(c, 5)) AS position, '' AS comment" +
		" FROM (SELECT arrayJoin([" + strings.Join(rows, ", ") + "]) AS c))", true
}

// grantsAny reports whether the principal holds any SELECT grant on db.table.
func (a *analyzer) grantsAny(db, table string) bool {
	p := a.env.Principal
	if !p.byGrants() {
		return p.canRead()
	}
	for _, role := range p.Roles {
		for _, g := range a.access.Grants(role) {
			if g.covers(PrivSelect, db, table) {
				return true
			}
		}
	}
	return false
}
