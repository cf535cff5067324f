package statement

import (
	"slices"
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

// fromWork is what FROM leaves for after the level's sources are known:
// ARRAY JOIN lists and JOIN constraints, which may reference any source.
type fromWork struct {
	arrayJoins  []*ch.ColumnExprList
	constraints []ch.Expr
	// hasDoc: a source is one of our tables or carries its documents.
	hasDoc bool
}

// from resolves every table source of a FROM clause. Every source the
// engine will read is produced here, from an allow-list: the organization's
// tables (by engine name, wrapped by row policies), curated system views,
// harmless table functions, subqueries and inlined CTEs.
func (a *analyzer) from(f *ch.FromClause, sc *scope) (*fromWork, *Error) {
	fw := &fromWork{}
	if f == nil {
		return fw, nil
	}
	if err := a.joinExpr(f.Expr, sc, fw); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, src := range sc.sources {
		if src.name == "" {
			continue
		}
		if seen[src.name] {
			return nil, badRequest(CodeAmbiguous, int(f.Pos()), "give each table an alias: FROM t AS a JOIN t AS b",
				"two sources are named %s", src.name)
		}
		seen[src.name] = true
	}
	return fw, nil
}

func (a *analyzer) joinExpr(e ch.Expr, sc *scope, fw *fromWork) *Error {
	switch n := e.(type) {
	case *ch.JoinTableExpr:
		return a.joinTable(n, sc, fw)
	case *ch.JoinExpr:
		if slices.ContainsFunc(n.Modifiers, func(m string) bool { return strings.EqualFold(m, "ARRAY") }) {
			list, ok := n.Left.(*ch.ColumnExprList)
			if !ok {
				return unsupportedNode(n.Left)
			}
			fw.arrayJoins = append(fw.arrayJoins, list)
		} else {
			if err := a.joinExpr(n.Left, sc, fw); err != nil {
				return err
			}
			if n.Constraints != nil {
				fw.constraints = append(fw.constraints, n.Constraints)
			}
		}
		if n.Right != nil {
			return a.joinExpr(n.Right, sc, fw)
		}
		return nil
	}
	return unsupportedNode(e)
}

func (a *analyzer) joinTable(jt *ch.JoinTableExpr, sc *scope, fw *fromWork) *Error {
	te := jt.Table
	if te == nil || te.Alias != nil {
		return unsupportedNode(jt)
	}
	expr := te.Expr
	var alias *ch.Ident
	if ae, ok := expr.(*ch.AliasExpr); ok {
		id, ok := ae.Alias.(*ch.Ident)
		if !ok {
			return unsupportedNode(ae.Alias)
		}
		if err := checkName(id.Name, int(id.Pos())); err != nil {
			return err
		}
		if id.Name == docColumn {
			return badRequest(CodeReservedName, int(id.Pos()), "choose another alias", "%q is reserved", docColumn)
		}
		if id.QuoteType == ch.Unquoted && isKeyword(id.Name) {
			// FROM t PASTE JOIN u reads PASTE as an alias in the parser.
			return badRequest(CodeUnsupportedSyntax, int(id.Pos()), "quote the alias with backticks if it is meant as one",
				"%s is a keyword, not an alias", id.Name)
		}
		alias, expr = id, ae.Expr
	}
	var src *source
	var node ch.Expr
	var err *Error
	switch t := expr.(type) {
	case *ch.TableIdentifier:
		src, node, err = a.tableIdentifier(t, alias, jt, sc, fw)
	case *ch.TableFunctionExpr:
		src, node, err = a.tableFunction(t, alias)
	case *ch.SubQuery:
		src, node, err = a.fromSubquery(t.Select, alias, sc)
	case *ch.SelectQuery:
		src, node, err = a.fromSubquery(t, alias, sc)
	default:
		return unsupportedNode(expr)
	}
	if err != nil {
		return err
	}
	if src.kind != srcTable && (jt.SampleRatio != nil || jt.HasFinal || te.HasFinal) {
		return badRequest(CodeUnsupportedSyntax, int(jt.Pos()), "", "FINAL and SAMPLE apply to tables only")
	}
	te.Expr = node
	sc.sources = append(sc.sources, src)
	fw.hasDoc = fw.hasDoc || src.hasDoc()
	return nil
}

// tableIdentifier resolves [db.]name: a CTE, one of our tables, or a system
// view.
func (a *analyzer) tableIdentifier(t *ch.TableIdentifier, alias *ch.Ident, jt *ch.JoinTableExpr, sc *scope, fw *fromWork) (*source, ch.Expr, *Error) {
	pos := int(t.Pos())
	if t.Table == nil {
		return nil, nil, unsupportedNode(t)
	}
	name := t.Table.Name
	if err := checkName(name, pos); err != nil {
		return nil, nil, err
	}
	db := a.env.Database
	if t.Database != nil {
		db = t.Database.Name
		if err := checkName(db, pos); err != nil {
			return nil, nil, err
		}
	} else if c := sc.ctes[name]; c != nil {
		src := subquerySource(c.outputs, alias, name)
		return src, &tableNode{text: "(" + c.text + ")", alias: src.name}, nil
	}
	if db == systemDatabase {
		return a.systemTable(name, alias, pos)
	}
	return a.orgTable(db, name, alias, jt, pos, fw)
}

// orgTable resolves one of the organization's tables to its engine name,
// wrapping it in its row policies for custom-role keys.
func (a *analyzer) orgTable(db, name string, alias *ch.Ident, jt *ch.JoinTableExpr, pos int, fw *fromWork) (*source, ch.Expr, *Error) {
	engineDB, err := a.engineDatabase(db, pos)
	if err != nil {
		return nil, nil, err
	}
	if !isLogicalName(name) {
		return nil, nil, notFound(CodeUnknownTable, pos, "", "table %s.%s does not exist", db, name)
	}
	if _, ok := a.env.Catalog.Table(db, name); !ok {
		return nil, nil, notFound(CodeUnknownTable, pos, "", "table %s.%s does not exist", db, name)
	}
	ref := TableRef{Database: db, Table: name, EngineDatabase: engineDB, EngineTable: name}
	r := a.read(ref, false, pos)
	src := &source{kind: srcTable, name: name, db: db, table: name, read: r, paths: a.tablePaths(db, name)}
	if alias != nil {
		src.name, src.aliased = alias.Name, true
	}
	text := quoteTable(engineDB, name)
	filter, err := a.policyFilter(db, name, pos)
	if err != nil {
		return nil, nil, err
	}
	if filter != "" {
		// The policy filter is evaluated inside a subquery that sees only
		// the table: no alias, join or outer expression of the statement
		// can change what it reads.
		var b strings.Builder
		b.WriteString("(SELECT doc FROM ")
		b.WriteString(text)
		if jt.Table.HasFinal || jt.HasFinal {
			b.WriteString(" FINAL")
		}
		if jt.SampleRatio != nil {
			b.WriteByte(' ')
			b.WriteString(render(jt.SampleRatio))
		}
		b.WriteString(" WHERE ")
		b.WriteString(filter)
		b.WriteByte(')')
		text = b.String()
		jt.Table.HasFinal, jt.HasFinal, jt.SampleRatio = false, false, nil
	}
	return src, &tableNode{text: text, alias: src.name}, nil
}

// engineDatabase maps a logical database of the organization to its engine
// name. Any other name (another organization's engine database, _svc,
// information_schema, ...) does not exist for the caller.
func (a *analyzer) engineDatabase(db string, pos int) (string, *Error) {
	engineDB, ok := a.env.Catalog.Database(db)
	if !ok || !isLogicalName(db) {
		return "", notFound(CodeUnknownDatabase, pos, "list your databases with GET /v1/databases", "database %s does not exist", db)
	}
	if !isEngineDatabase(engineDB) {
		return "", badRequest(CodeInternal, pos, "", "database %s has no valid engine name", db)
	}
	return engineDB, nil
}

func quoteTable(db, table string) string {
	return quoteName(db, false) + "." + quoteName(table, isKeyword(table))
}

func (a *analyzer) fromSubquery(q *ch.SelectQuery, alias *ch.Ident, sc *scope) (*source, ch.Expr, *Error) {
	if q == nil {
		return nil, nil, badRequest(CodeUnsupportedSyntax, -1, "", "empty subquery")
	}
	// A FROM subquery cannot see the sources of its own level.
	sel, outs, err := a.query(q, sc.parent, sc.ctes, sc.with)
	if err != nil {
		return nil, nil, err
	}
	src := subquerySource(outs, alias, "")
	text := "(" + render(sel) + ")"
	return src, &tableNode{text: text, alias: src.name}, nil
}

func subquerySource(outs []output, alias *ch.Ident, name string) *source {
	src := &source{kind: srcSubquery, name: name, columns: map[string]bool{}}
	if alias != nil {
		src.name, src.aliased = alias.Name, true
	}
	docs := 0
	for _, o := range outs {
		src.columns[o.name] = true
		if o.elem != nil {
			if src.elems == nil {
				src.elems = map[string]*elemSchema{}
			}
			src.elems[o.name] = o.elem
		}
		if o.doc {
			docs++
			src.paths = o.paths
		}
	}
	src.docCarrier = docs == 1
	return src
}

// fromExprs walks ARRAY JOIN lists and JOIN constraints once every source of
// the level is known.
func (a *analyzer) fromExprs(fw *fromWork, sc *scope) *Error {
	for _, list := range fw.arrayJoins {
		for i, it := range list.Items {
			ce, ok := it.(*ch.ColumnExpr)
			if !ok {
				ce = &ch.ColumnExpr{Expr: it}
				list.Items[i] = ce
			}
			orig := render(ce.Expr)
			before := a.pathRewrites
			var err *Error
			if ce.Expr, err = a.expr(ce.Expr, sc); err != nil {
				return err
			}
			es := a.objectArray(ce.Expr)
			if es != nil {
				// ARRAY JOIN items AS it: it.sku is the path sku of the elements.
				name := orig
				if ce.Alias != nil {
					name = ce.Alias.Name
				}
				sc.elems[name] = es
			}
			if ce.Alias == nil && a.pathRewrites != before {
				// ARRAY JOIN tags: later references to tags mean the element,
				// so keep that name as the alias of the rewritten path.
				id := &ch.Ident{Name: orig, QuoteType: ch.BackTicks}
				if err := a.addAlias(id, sc); err != nil {
					return err
				}
				ce.Alias = id
			}
		}
	}
	for _, c := range fw.constraints {
		switch n := c.(type) {
		case *ch.OnClause:
			if err := a.exprList(n.On, sc); err != nil {
				return err
			}
		case *ch.UsingClause:
			for _, src := range sc.sources {
				if src.hasDoc() {
					return badRequest(CodeUnsupportedSyntax, int(n.Pos()), "join with ON a.key = b.key",
						"USING names engine columns; the paths of a document are not columns")
				}
			}
			for _, it := range n.Using.Items {
				if ce, ok := it.(*ch.ColumnExpr); ok && ce.Alias == nil {
					it = ce.Expr
				}
				id, ok := it.(*ch.Ident)
				if !ok {
					return unsupportedNode(it)
				}
				if err := checkName(id.Name, int(id.Pos())); err != nil {
					return err
				}
				normalizeIdent(id)
			}
		default:
			return unsupportedNode(c)
		}
	}
	return nil
}

// isKeyword reports names that must be quoted as table names because the
// engine would read them as keywords.
func isKeyword(name string) bool {
	switch strings.ToUpper(name) {
	case "ALL", "AND", "ANY", "ARRAY", "AS", "ASC", "BETWEEN", "BY", "CASE", "CROSS", "DESC",
		"DISTINCT", "ELSE", "END", "EXCEPT", "FINAL", "FORMAT", "FROM", "FULL", "GLOBAL", "GROUP",
		"HAVING", "IN", "INNER", "INTERSECT", "INTERVAL", "INTO", "IS", "JOIN", "LEFT", "LIKE",
		"LIMIT", "NOT", "NULL", "OFFSET", "ON", "OR", "ORDER", "OUTER", "OVER", "PREWHERE",
		"RIGHT", "SAMPLE", "SELECT", "SETTINGS", "TABLE", "THEN", "TO", "UNION", "USING",
		"WHEN", "WHERE", "WINDOW", "WITH", "QUALIFY", "PASTE", "SEMI", "ANTI", "ASOF":
		return true
	}
	return false
}
