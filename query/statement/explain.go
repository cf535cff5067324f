package statement

import (
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"

	"github.com/svc-data/svc/query/sqlquote"
)

// EXPLAIN, DESCRIBE and SHOW CREATE TABLE. The parser library knows only a few EXPLAIN kinds
// (not plain EXPLAIN or EXPLAIN PLAN) and DESCRIBE of a table name only, so
// the header is read here and the query or table by the parser.

const explainHint = "EXPLAIN [AST | SYNTAX | QUERY TREE | PLAN | PIPELINE | ESTIMATE] [setting = value, ...] SELECT ..."

func (a *analyzer) explain(t *tokens) (*Statement, *Error) {
	if !a.env.Principal.canRead() {
		return nil, forbidden(CodeForbidden, -1, "use a key with read permission", "%s cannot read", a.env.Principal)
	}
	t.next() // EXPLAIN
	kind := ""
	switch {
	case t.accept("QUERY", "TREE"):
		kind = "QUERY TREE"
	case t.accept("AST"), t.accept("SYNTAX"), t.accept("PLAN"), t.accept("PIPELINE"), t.accept("ESTIMATE"):
		kind = strings.ToUpper(t.toks[t.i-1].text)
	case t.peek().is("TABLE") || t.peek().is("INSERT") || t.peek().is("CREATE") || t.peek().is("ALTER"):
		return nil, badRequest(CodeUnsupportedStatement, t.peek().pos, explainHint, "only queries can be explained")
	}
	var settings []string
	for t.peek().kind == tokIdent && t.peekN(1).isOp("=") {
		name, _, err := plainName(t, "an EXPLAIN setting", explainHint)
		if err != nil {
			return nil, err
		}
		t.next() // =
		v := t.next()
		if v.kind != tokNumber && !(v.kind == tokIdent && (v.is("true") || v.is("false"))) {
			return nil, badRequest(CodeSyntax, v.pos, explainHint, "EXPLAIN setting %s takes a number", name)
		}
		settings = append(settings, name+" = "+strings.ToLower(v.text))
		if !t.acceptOp(",") {
			break
		}
	}
	start := t.peek().pos
	if !(t.peek().is("SELECT") || t.peek().is("WITH") || t.peek().isOp("(")) {
		return nil, badRequest(CodeUnsupportedStatement, start, explainHint, "only queries can be explained")
	}
	q, err := parseOneQuery(a.sql, start, len(a.sql), "")
	if err != nil {
		return nil, withParseHint(err, a.sql)
	}
	sel, err := a.readQuery(q)
	if err != nil {
		return nil, err
	}
	if len(a.policies) > 0 {
		// The plan and the rewritten query would show the filters of the
		// row policies to a reader they restrict.
		return nil, forbidden(CodeForbidden, start, "run the query itself", "EXPLAIN is not available for reads filtered by row policies")
	}
	query := render(sel)
	if err := a.verify(query); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("EXPLAIN")
	if kind != "" {
		b.WriteString(" " + kind)
	}
	if len(settings) > 0 {
		b.WriteString(" " + strings.Join(settings, ", "))
	}
	b.WriteString(" " + query)
	return a.readStatement(KindExplain, b.String(), true)
}

const describeHint = "DESCRIBE [TABLE] events, DESCRIBE (SELECT ...), DESCRIBE system.tables"

// oneSource reads what follows a statement's header (DESCRIBE [TABLE], SHOW CREATE
// [TABLE]): one table, table function or subquery, parsed as the FROM of a SELECT, with
// nothing else. what names the statement in errors.
func (a *analyzer) oneSource(t *tokens, what, hint string) (*ch.SelectQuery, *ch.JoinTableExpr, int, *Error) {
	if !a.env.Principal.canRead() {
		return nil, nil, 0, forbidden(CodeForbidden, -1, "use a key with read permission", "%s cannot read", a.env.Principal)
	}
	start := t.peek().pos
	end := endOfStatement(t.toks)
	if start >= end {
		return nil, nil, 0, badRequest(CodeSyntax, start, hint, "%s needs a table", what)
	}
	q, err := parseOneQuery(a.sql, start, end, "SELECT * FROM")
	if err != nil {
		err.Hint = hint
		return nil, nil, 0, err
	}
	jt, ok := q.From.Expr.(*ch.JoinTableExpr)
	if !ok || len(q.SelectItems) != 1 || q.Where != nil || q.Prewhere != nil || q.GroupBy != nil || q.Having != nil ||
		q.OrderBy != nil || q.Limit != nil || q.LimitBy != nil || q.Settings != nil || q.Format != nil || q.With != nil ||
		q.UnionAll != nil || q.UnionDistinct != nil || q.Except != nil || q.Intersect != nil || q.Window != nil ||
		jt.SampleRatio != nil || jt.HasFinal || jt.Table.HasFinal {
		return nil, nil, 0, badRequest(CodeUnsupportedSyntax, start, hint, "%s takes one table, table function or subquery", what)
	}
	return q, jt, start, nil
}

func (a *analyzer) describe(t *tokens) (*Statement, *Error) {
	t.next() // DESCRIBE | DESC
	t.accept("TABLE")
	q, jt, start, err := a.oneSource(t, "DESCRIBE", describeHint)
	if err != nil {
		return nil, err
	}
	if _, aliased := jt.Table.Expr.(*ch.AliasExpr); aliased {
		return nil, badRequest(CodeUnsupportedSyntax, start, describeHint, "DESCRIBE takes no alias")
	}
	// Row policies still apply: describing a subquery evaluates its scalar
	// subqueries, whose values can show in types (FixedString(n)).
	_, isTable := jt.Table.Expr.(*ch.TableIdentifier)
	sc := newScope(nil, nil, nil)
	if _, err := a.from(q.From, sc); err != nil {
		return nil, err
	}
	if err := a.authorizeReads(); err != nil {
		return nil, err
	}
	if st, ok, err := a.describePaths(isTable); ok {
		return st, err
	}
	node, ok := jt.Table.Expr.(*tableNode)
	if !ok {
		return nil, unsupportedNode(jt.Table.Expr)
	}
	if err := a.verify("SELECT * FROM " + node.text); err != nil {
		return nil, err
	}
	return a.readStatement(KindDescribe, "DESCRIBE TABLE "+node.text, true)
}

const showCreateHint = "SHOW CREATE TABLE events, SHOW CREATE TABLE analytics.daily"

// showCreate answers SHOW CREATE [TABLE] t, as ClickHouse does, with one row whose
// column statement is the table's definition in logical names: its one column doc, the
// engine users create (ReplicatedRawMergeTree), its sorting key, and its retention as
// the TTL clause (DESIGN.md, Retention). It is built from the catalog, like
// DESCRIBE; GET /v1/tables/{table} shows whether the engine's TTL matches it.
func (a *analyzer) showCreate(t *tokens) (*Statement, *Error) {
	t.next() // SHOW
	t.next() // CREATE
	t.accept("TABLE")
	q, jt, start, err := a.oneSource(t, "SHOW CREATE TABLE", showCreateHint)
	if err != nil {
		return nil, err
	}
	if _, isTable := jt.Table.Expr.(*ch.TableIdentifier); !isTable {
		return nil, badRequest(CodeUnsupportedSyntax, start, showCreateHint, "SHOW CREATE TABLE takes one table")
	}
	sc := newScope(nil, nil, nil)
	if _, err := a.from(q.From, sc); err != nil {
		return nil, err
	}
	if err := a.authorizeReads(); err != nil {
		return nil, err
	}
	if len(a.reads) != 1 || a.reads[0].system {
		return nil, badRequest(CodeUnsupportedSyntax, start, showCreateHint, "SHOW CREATE TABLE shows the tables of your databases")
	}
	ref := a.reads[0].ref
	tab, _ := a.env.Catalog.Table(ref.Database, ref.Table)
	text := "CREATE TABLE " + sqlquote.Ident(ref.Database) + "." + sqlquote.Ident(ref.Table) + "\n(\n    `doc` JSON\n)\nENGINE = ReplicatedRawMergeTree"
	if tab.SortingKey != "" {
		text += "\nORDER BY (" + tab.SortingKey + ")"
	}
	if tab.TTL != "" {
		text += "\nTTL " + tab.TTL
	}
	return a.readStatement(KindDescribe, "SELECT "+sqlquote.String(text)+" AS statement", false)
}

// withParseHint adds a hint for the common query forms the parser library
// does not support, recognized on tokens after the parse failed.
func withParseHint(err *Error, sql string) *Error {
	if err.Hint != "" {
		return err
	}
	toks, terr := tokenize(sql)
	if terr != nil {
		return err
	}
	for i, t := range toks {
		next := toks[min(i+1, len(toks)-1)]
		switch {
		case t.is("NULLS") && (next.is("FIRST") || next.is("LAST")):
			err.Hint = "NULLS FIRST/LAST is not supported; order by isNull(x) first, e.g. ORDER BY isNull(x), x DESC"
		case t.is("UNION") && !next.is("ALL") && !next.is("DISTINCT"):
			err.Hint = "write UNION ALL or UNION DISTINCT"
		case t.is("EXCEPT") && next.is("SELECT"):
			err.Hint = "EXCEPT between queries is not supported; use NOT IN (SELECT ...)"
		case t.is("QUALIFY"):
			err.Hint = "QUALIFY is not supported; filter in an outer query: SELECT * FROM (SELECT ..., row_number() OVER (...) AS rn) WHERE rn = 1"
		case t.is("COLLATE"):
			err.Hint = "COLLATE is not supported"
		case t.isOp(".") && (next.isOp(":") || next.isOp("^")):
			err.Hint = "typed JSON subcolumns (.:Type, .^path) are not supported; cast the path: CAST(user.id AS Int64) or user.id::Int64"
		case t.is("INTO") && next.is("OUTFILE"):
			err.Hint = "INTO OUTFILE is not supported; the result is returned in the response"
		case t.is("FETCH") && (next.is("FIRST") || next.is("NEXT")):
			err.Hint = "write LIMIT n OFFSET m"
		case t.is("INTERVAL") && next.kind == tokString:
			err.Hint = "write INTERVAL 1 DAY instead of INTERVAL '1 day'"
		case (t.is("DATE") || t.is("TIMESTAMP")) && next.kind == tokString:
			err.Hint = "write toDate('2024-01-01') or toDateTime('2024-01-01 00:00:00')"
		case t.is("GLOBAL") && !next.is("IN") && !next.is("NOT") && !next.is("JOIN"):
			err.Hint = "GLOBAL is not needed; drop it"
		case i == 0 && t.isOp("("):
			err.Hint = "write the query without surrounding parentheses"
		}
		if err.Hint != "" {
			return err
		}
	}
	return err
}
