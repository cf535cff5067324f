package statement

import (
	"fmt"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

// supportedHint lists the statement kinds the query API supports (POST /v1/query in
// edge/openapi.json), for refusals.
const supportedHint = "supported statements: SELECT, WITH, EXPLAIN, DESCRIBE, INSERT INTO t SELECT, " +
	"CREATE TABLE t ENGINE = ReplicatedRawMergeTree, ALTER TABLE t MODIFY ORDER BY (...), CREATE/DROP ROLE, GRANT, " +
	"CREATE/DROP ROW POLICY, CREATE/DROP WORKLOAD, CREATE/DROP RESOURCE, CREATE/DROP SETTINGS PROFILE"

// Analyze parses, classifies, authorizes and rewrites one statement of the
// query API for the caller described by env. The error, when not nil, is
// always an *Error.
func Analyze(sql string, env Env) (st *Statement, err error) {
	defer func() {
		if r := recover(); r != nil {
			st, err = nil, &Error{Status: statusBadRequest, Code: codePanic, Pos: -1,
				Message: fmt.Sprintf("the statement could not be analyzed: %v", r)}
		}
	}()
	if env.Catalog == nil {
		env.Catalog = &StaticCatalog{}
	}
	a := newAnalyzer(sql, &env)
	s, e := a.statement()
	if e != nil {
		return nil, e
	}
	s.DynamicPaths, s.TypedPaths = a.dynamic, a.typed
	s.CountsHidden = a.countsHidden()
	return s, nil
}

// codePanic marks an internal failure recovered at the boundary; the fuzz
// test treats it as a bug.
const codePanic = "internal_error"

func (a *analyzer) statement() (*Statement, *Error) {
	toks, err := tokenize(a.sql)
	if err != nil {
		return nil, err
	}
	if toks[0].kind == tokEOF || toks[0].isOp(";") && toks[1].kind == tokEOF {
		return nil, badRequest(CodeEmptyStatement, 0, supportedHint, "the statement is empty")
	}
	for i, t := range toks {
		if t.isOp(";") && toks[i+1].kind != tokEOF {
			return nil, badRequest(CodeMultipleStatements, toks[i+1].pos, "send one statement per request",
				"only one statement per request is supported")
		}
	}
	t := &tokens{toks: toks}
	first := t.peek()
	switch {
	case first.is("SELECT") || first.is("WITH") || first.isOp("("):
		return a.selectStatement()
	case first.is("EXPLAIN"):
		return a.explain(t)
	case first.is("DESCRIBE") || first.is("DESC"):
		return a.describe(t)
	case first.is("INSERT"):
		return a.insert(t)
	case first.is("CREATE"):
		return a.create(t)
	case first.is("DROP"):
		return a.drop(t)
	case first.is("ALTER"):
		return a.alter(t)
	case first.is("GRANT"):
		return a.grant()
	case first.is("SHOW") && t.toks[1].is("CREATE"):
		return a.showCreate(t)
	case first.is("SHOW"):
		return nil, badRequest(CodeUnsupportedStatement, first.pos,
			"read the catalog with SELECT: SELECT name FROM system.tables, SELECT name FROM system.databases; SHOW CREATE TABLE t shows a table's definition",
			"SHOW statements other than SHOW CREATE TABLE are not supported")
	case first.is("REVOKE"):
		return nil, badRequest(CodeUnsupportedStatement, first.pos, "drop and recreate the role with the grants it should keep",
			"REVOKE is not supported")
	}
	return nil, badRequest(CodeUnsupportedStatement, first.pos, supportedHint, "unsupported statement %s", first.describe())
}

// selectStatement handles SELECT and WITH ... SELECT.
func (a *analyzer) selectStatement() (*Statement, *Error) {
	if !a.env.Principal.canRead() {
		return nil, forbidden(CodeForbidden, -1, "use a key with read permission", "%s cannot read", a.env.Principal)
	}
	stmts, err := parseStatements(a.sql, 0)
	if err != nil {
		return nil, withParseHint(err, a.sql)
	}
	if len(stmts) != 1 {
		return nil, badRequest(CodeMultipleStatements, 0, "send one statement per request", "only one statement per request is supported")
	}
	q, ok := stmts[0].(*ch.SelectQuery)
	if !ok {
		return nil, badRequest(CodeUnsupportedStatement, 0, supportedHint, "unsupported statement")
	}
	sel, err := a.readQuery(q)
	if err != nil {
		return nil, err
	}
	return a.readStatement(KindSelect, render(sel), false)
}

// readQuery analyzes a top-level query and checks the grants of its reads.
func (a *analyzer) readQuery(q *ch.SelectQuery) (*selectNode, *Error) {
	sel, _, err := a.query(q, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	if err := a.authorizeReads(); err != nil {
		return nil, err
	}
	return sel, nil
}

// readStatement finishes a read: verification of the engine SQL, settings.
func (a *analyzer) readStatement(kind Kind, sql string, verified bool) (*Statement, *Error) {
	if !verified {
		if err := a.verify(sql); err != nil {
			return nil, err
		}
	}
	settings, err := a.requestSettings(false)
	if err != nil {
		return nil, err
	}
	return &Statement{
		Kind:        kind,
		SQL:         sql,
		Reads:       a.readRefs(),
		Settings:    settings,
		RowPolicies: a.policies,
		Hints:       a.hints,
	}, nil
}
