package statement

import (
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

// verify re-reads the engine SQL this package produced, independently of
// how it was produced: it must lex without escapes in identifiers (so the
// engine and the parser read the same names), parse as one SELECT, and read
// only engine tables recorded as reads of this statement, allowed system
// tables and allowed table functions. A failure is a bug of the rewrite, and
// the statement is refused.
func (a *analyzer) verify(sql string, writeTarget ...TableRef) *Error {
	fail := func(format string, args ...any) *Error {
		return badRequest(CodeInternal, -1, "", "rewritten statement failed verification: "+format, args...)
	}
	toks, terr := tokenize(sql)
	if terr != nil {
		return fail("%s", terr.Message)
	}
	for _, t := range toks {
		if t.kind == tokIdent && t.quoted && strings.ContainsAny(t.text, "\\`\"") {
			return fail("identifier %q", t.text)
		}
	}
	stmts, perr := parseStatements(sql, 0)
	if perr != nil {
		return fail("%s", perr.Message)
	}
	if len(stmts) != 1 {
		return fail("%d statements", len(stmts))
	}
	allowed := map[string]bool{}
	for _, r := range a.reads {
		if !r.system {
			allowed[r.ref.EngineDatabase+"."+r.ref.EngineTable] = true
		}
	}
	for _, w := range writeTarget {
		allowed[w.EngineDatabase+"."+w.EngineTable] = true
	}
	var bad *Error
	ch.Walk(stmts[0], func(node ch.Expr) bool {
		if bad != nil {
			return false
		}
		switch n := node.(type) {
		case *ch.TableIdentifier:
			if n.Database == nil || n.Table == nil {
				bad = fail("unqualified table %s", render(n))
				return false
			}
			db, table := n.Database.Name, n.Table.Name
			if db == systemDatabase {
				if _, ok := systemViews[table]; !ok {
					bad = fail("system table %s", table)
				}
			} else if !allowed[db+"."+table] {
				bad = fail("table %s.%s", db, table)
			}
		case *ch.TableFunctionExpr:
			id, ok := n.Name.(*ch.Ident)
			if !ok {
				bad = fail("table function")
			} else if _, ok := tableFunctions[strings.ToLower(id.Name)]; !ok {
				bad = fail("table function %s", id.Name)
			}
		case *ch.InsertStmt, *ch.CreateTable, *ch.DropStmt, *ch.AlterTable:
			bad = fail("statement %T", n)
		}
		return bad == nil
	})
	return bad
}
