package statement

import (
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

const createTableHint = "CREATE TABLE [IF NOT EXISTS] events ENGINE = ReplicatedRawMergeTree ORDER BY (user.id, toDate(ts))"

func (a *analyzer) create(t *tokens) (*Statement, *Error) {
	t.next() // CREATE
	orReplace := t.peek().is("OR") && t.peekN(1).is("REPLACE")
	k := 0
	if orReplace {
		k = 2
	}
	switch w := t.peekN(k); {
	case w.is("TABLE"):
		if orReplace {
			return nil, badRequest(CodeCreateTable, w.pos, createTableHint, "CREATE OR REPLACE TABLE is not supported")
		}
		return a.createTable()
	case w.is("ROLE"):
		return a.createRole()
	case w.is("ROW") && t.peekN(k+1).is("POLICY"), w.is("POLICY"):
		return a.createRowPolicy(t)
	case w.is("WORKLOAD"), w.is("RESOURCE"):
		return a.createScheduling(t)
	case w.is("SETTINGS") && t.peekN(k+1).is("PROFILE"), w.is("PROFILE"):
		return a.createProfile(t)
	case w.is("TEMPORARY"), w.is("VIEW"), w.is("MATERIALIZED"), w.is("LIVE"), w.is("WINDOW"), w.is("DICTIONARY"):
		return nil, badRequest(CodeUnsupportedStatement, w.pos, createTableHint, "CREATE %s is not supported", strings.ToUpper(w.text))
	case w.is("DATABASE"):
		return nil, badRequest(CodeUnsupportedStatement, w.pos, "create databases with POST /v1/databases", "CREATE DATABASE is not supported")
	}
	return nil, badRequest(CodeUnsupportedStatement, t.peek().pos, supportedHint, "unsupported CREATE statement")
}

func (a *analyzer) drop(t *tokens) (*Statement, *Error) {
	t.next() // DROP
	switch w := t.peek(); {
	case w.is("ROLE"):
		return a.dropRole()
	case w.is("ROW") && t.peekN(1).is("POLICY"), w.is("POLICY"):
		return a.dropRowPolicy(t)
	case w.is("WORKLOAD"), w.is("RESOURCE"):
		return a.dropScheduling(t)
	case w.is("SETTINGS") && t.peekN(1).is("PROFILE"), w.is("PROFILE"):
		return a.dropProfile(t)
	case w.is("TABLE"):
		return nil, badRequest(CodeUnsupportedStatement, w.pos, "delete tables with DELETE /v1/tables/{table}", "DROP TABLE is not supported")
	case w.is("DATABASE"):
		return nil, badRequest(CodeUnsupportedStatement, w.pos, "delete databases with DELETE /v1/databases/{database}", "DROP DATABASE is not supported")
	}
	return nil, badRequest(CodeUnsupportedStatement, t.peek().pos, supportedHint, "unsupported DROP statement")
}

// requireAdmin refuses callers that may not change the organization's
// schema or access control.
func (a *analyzer) requireAdmin(what string) *Error {
	if !a.env.Principal.isAdmin() {
		return forbidden(CodeForbidden, -1, "use an admin key or an organization administrator's session",
			"%s requires admin permission (%s)", what, a.env.Principal)
	}
	return nil
}

// createTable handles CREATE TABLE [IF NOT EXISTS] name ENGINE =
// ReplicatedRawMergeTree [ORDER BY (...)], parsed by the parser library.
func (a *analyzer) createTable() (*Statement, *Error) {
	stmts, err := parseStatements(a.sql, 0)
	if err != nil {
		err.Code, err.Hint = CodeCreateTable, createTableHint
		return nil, err
	}
	ct, ok := stmts[0].(*ch.CreateTable)
	if len(stmts) != 1 || !ok {
		return nil, badRequest(CodeCreateTable, 0, createTableHint, "unsupported CREATE TABLE statement")
	}
	if err := a.requireAdmin("CREATE TABLE"); err != nil {
		return nil, err
	}
	db, table, err := a.ddlTarget(ct.Name)
	if err != nil {
		return nil, err
	}
	hint := "CREATE TABLE " + quoteName(table, false) + " ENGINE = ReplicatedRawMergeTree ORDER BY (...)"
	refuse := func(pos ch.Pos, what string) (*Statement, *Error) {
		return nil, badRequest(CodeCreateTable, int(pos), hint, "%s is not supported: tables store JSON documents in ENGINE = ReplicatedRawMergeTree", what)
	}
	switch {
	case ct.OrReplace:
		return refuse(ct.Pos(), "OR REPLACE")
	case ct.HasTemporary:
		return refuse(ct.Pos(), "TEMPORARY")
	case ct.UUID != nil:
		return refuse(ct.UUID.Pos(), "UUID")
	case ct.OnCluster != nil:
		return refuse(ct.OnCluster.Pos(), "ON CLUSTER")
	case ct.TableSchema != nil && len(ct.TableSchema.Columns) > 0:
		return refuse(ct.TableSchema.Pos(), "a column list")
	case ct.TableSchema != nil:
		return refuse(ct.TableSchema.Pos(), "CREATE TABLE ... AS")
	case ct.SubQuery != nil:
		return refuse(ct.SubQuery.Pos(), "AS SELECT")
	case ct.TableFunction != nil:
		return refuse(ct.TableFunction.Pos(), "a table function")
	case ct.Comment != nil:
		return refuse(ct.Comment.Pos(), "COMMENT")
	case ct.Engine == nil:
		return refuse(ct.Pos(), "a table without ENGINE")
	}
	e := ct.Engine
	switch {
	case e.Name != "ReplicatedRawMergeTree":
		return refuse(e.Pos(), "ENGINE = "+e.Name)
	case e.Params != nil && e.Params.Items != nil && len(e.Params.Items.Items) > 0:
		return refuse(e.Params.Pos(), "an engine argument")
	case e.PrimaryKey != nil:
		return refuse(e.PrimaryKey.Pos(), "PRIMARY KEY")
	case e.PartitionBy != nil:
		return refuse(e.PartitionBy.Pos(), "PARTITION BY")
	case e.SampleBy != nil:
		return refuse(e.SampleBy.Pos(), "SAMPLE BY")
	case e.TTL != nil:
		return refuse(e.TTL.Pos(), "TTL")
	case e.Settings != nil:
		return refuse(e.Settings.Pos(), "SETTINGS")
	}
	key := ""
	if e.OrderBy != nil {
		var exprs []ch.Expr
		for _, it := range e.OrderBy.Items {
			oe, ok := it.(*ch.OrderExpr)
			if !ok || oe.Direction != ch.OrderDirectionNone || oe.Fill != nil || oe.Alias != nil {
				return refuse(it.Pos(), "a sorting direction")
			}
			exprs = append(exprs, oe.Expr)
		}
		if key, err = a.sortingKey(exprs, int(e.OrderBy.Pos()), true); err != nil {
			return nil, err
		}
	}
	if _, exists := a.env.Catalog.Table(db, table); exists && !ct.IfNotExists {
		return nil, conflict(CodeTableExists, int(ct.Name.Pos()), "use CREATE TABLE IF NOT EXISTS", "table %s.%s already exists", db, table)
	}
	return &Statement{
		Kind:        KindCreateTable,
		Command:     &CreateTable{Database: db, Table: table, SortingKey: key, IfNotExists: ct.IfNotExists},
		EmptyResult: true,
	}, nil
}

// ddlTarget resolves the [db.]table of a schema statement: a valid logical
// table name in one of the organization's databases.
func (a *analyzer) ddlTarget(id *ch.TableIdentifier) (string, string, *Error) {
	if id == nil || id.Table == nil {
		return "", "", badRequest(CodeSyntax, -1, "", "missing table name")
	}
	db := a.env.Database
	if id.Database != nil {
		db = id.Database.Name
	}
	return a.checkDDLTarget(db, id.Table.Name, int(id.Pos()))
}

func (a *analyzer) checkDDLTarget(db, table string, pos int) (string, string, *Error) {
	if db == systemDatabase {
		return "", "", badRequest(CodeUnsupportedStatement, pos, "select one of your databases", "the system database is read-only")
	}
	if _, err := a.engineDatabase(db, pos); err != nil {
		return "", "", err
	}
	if !isLogicalName(table) {
		return "", "", badRequest(CodeInvalidName, pos, "table names are 1 to 64 letters, digits and underscores, without \"__\"",
			"invalid table name %q", table)
	}
	return db, table, nil
}

// sortingKey validates the expressions of a sorting key and renders the
// logical key text (paths as the user wrote them; the sorting-key machinery
// compiles them). tupleOK allows ORDER BY (a, b) and ORDER BY tuple().
func (a *analyzer) sortingKey(exprs []ch.Expr, pos int, tupleOK bool) (string, *Error) {
	if tupleOK && len(exprs) == 1 {
		switch e := exprs[0].(type) {
		case *ch.ParamExprList:
			if e.ColumnArgList == nil && e.Items != nil {
				exprs = unwrapColumnExprs(e.Items.Items)
			}
		case *ch.FunctionExpr:
			if strings.EqualFold(e.Name.Name, "tuple") && e.Params != nil && e.Params.ColumnArgList == nil {
				exprs = unwrapColumnExprs(e.Params.Items.Items)
			}
		}
	}
	texts := make([]string, 0, len(exprs))
	for _, e := range exprs {
		if ce, ok := e.(*ch.ColumnExpr); ok && ce.Alias != nil {
			return "", badRequest(CodeSortingKey, int(e.Pos()), "", "aliases are not allowed in a sorting key")
		}
		if err := checkScalar(e); err != nil {
			err.Code = CodeSortingKey
			return "", err
		}
		if err := checkTupleElements(e); err != nil {
			return "", err
		}
		texts = append(texts, render(e))
		if _, err := a.rewriteForTable(e, "t"); err != nil {
			return "", err
		}
	}
	return strings.Join(texts, ", "), nil
}

// checkTupleElements refuses x.N where the text would not read back as the same
// expression: N must be an unsigned integer and x not a number (0 .1 would render as
// the number 0.1, 0 .+0 as 0. + 0).
func checkTupleElements(e ch.Expr) *Error {
	var bad *Error
	ch.Walk(e, func(node ch.Expr) bool {
		n, ok := node.(*ch.IndexOperation)
		if bad != nil || !ok || n.Operation != ch.TokenKindDot {
			return bad == nil
		}
		idx, isNum := n.Index.(*ch.NumberLiteral)
		_, onNumber := n.Object.(*ch.NumberLiteral)
		if onNumber || !isNum || idx.Literal == "" || strings.Trim(idx.Literal, "0123456789") != "" {
			bad = badRequest(CodeSortingKey, int(n.Pos()), "tupleElement(t, 1)",
				"a tuple element is read from a tuple column with a positive integer index")
		}
		return bad == nil
	})
	return bad
}

func unwrapColumnExprs(items []ch.Expr) []ch.Expr {
	out := make([]ch.Expr, len(items))
	for i, it := range items {
		if ce, ok := it.(*ch.ColumnExpr); ok && ce.Alias == nil {
			it = ce.Expr
		}
		out[i] = it
	}
	return out
}

// alter handles ALTER TABLE [db.]t MODIFY ORDER BY (...), which the parser
// library does not know: the header is read here, the key expressions by the
// parser.
func (a *analyzer) alter(t *tokens) (*Statement, *Error) {
	const hint = "ALTER TABLE events MODIFY ORDER BY (user.id, toDate(ts))"
	t.next() // ALTER
	if w := t.peek(); !w.is("TABLE") {
		return nil, badRequest(CodeUnsupportedStatement, w.pos, supportedHint,
			"ALTER %s is not supported; replace the definition with CREATE ... OR REPLACE", strings.ToUpper(w.text))
	}
	if err := t.expect(hint, "TABLE"); err != nil {
		err.Code = CodeUnsupportedStatement
		return nil, err
	}
	db, table, pos, err := a.tableName(t, hint)
	if err != nil {
		return nil, err
	}
	if t.peek().is("ON") && t.peekN(1).is("CLUSTER") {
		return nil, badRequest(CodeUnsupportedSyntax, t.peek().pos, hint, "ON CLUSTER is not supported; sorting keys apply to the whole cluster")
	}
	if !t.accept("MODIFY", "ORDER", "BY") {
		return nil, badRequest(CodeUnsupportedStatement, t.peek().pos, hint, "only ALTER TABLE ... MODIFY ORDER BY is supported")
	}
	start := t.peek().pos
	end := endOfStatement(t.toks)
	if start >= end {
		return nil, badRequest(CodeSortingKey, start, hint, "the sorting key is empty")
	}
	if err := a.requireAdmin("ALTER TABLE"); err != nil {
		return nil, err
	}
	exprs, err := parseExprList(a.sql, start, end)
	if err != nil {
		err.Hint = hint
		return nil, err
	}
	key, err := a.sortingKey(exprs, start, true)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return nil, badRequest(CodeSortingKey, start, hint, "a sorting key cannot be removed once set")
	}
	db, table, err = a.checkDDLTarget(db, table, pos)
	if err != nil {
		return nil, err
	}
	if _, ok := a.env.Catalog.Table(db, table); !ok {
		return nil, notFound(CodeUnknownTable, pos, "", "table %s.%s does not exist", db, table)
	}
	return &Statement{
		Kind:        KindAlterSortingKey,
		Command:     &AlterSortingKey{Database: db, Table: table, SortingKey: key},
		EmptyResult: true,
	}, nil
}

// tableName reads [db.]table from the token stream; db defaults to the
// selected database.
func (a *analyzer) tableName(t *tokens, hint string) (db, table string, pos int, err *Error) {
	first := t.next()
	if first.kind != tokIdent {
		return "", "", first.pos, badRequest(CodeSyntax, first.pos, hint, "expected a table name, got %s", first.describe())
	}
	if e := checkName(first.text, first.pos); e != nil {
		return "", "", first.pos, e
	}
	db, table = a.env.Database, first.text
	if t.acceptOp(".") {
		second := t.next()
		if second.kind != tokIdent {
			return "", "", second.pos, badRequest(CodeSyntax, second.pos, hint, "expected a table name, got %s", second.describe())
		}
		if e := checkName(second.text, second.pos); e != nil {
			return "", "", second.pos, e
		}
		db, table = first.text, second.text
	}
	return db, table, first.pos, nil
}
