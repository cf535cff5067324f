package statement

import (
	"strings"
	"testing"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

// TestAttacks runs the tenant-escape suite: every case is either refused or
// produces engine SQL that an independent check finds clean.
func TestAttacks(t *testing.T) {
	runGolden(t, "testdata/attacks", func(t *testing.T, c goldenCase, st *Statement, err error) {
		if err != nil {
			if e := err.(*Error); e.Code == codePanic || e.Code == CodeInternal {
				t.Errorf("case %s: %v", c.name, err)
			}
			return
		}
		assertNoLeak(t, c, st)
		assertTables(t, c, st)
	})
}

// assertTables parses the engine SQL again and checks every table it reads:
// an engine database of the fixture organization, or a readable system table.
func assertTables(t *testing.T, c goldenCase, st *Statement) {
	t.Helper()
	sql := st.SQL
	switch st.Kind {
	case KindExplain:
		i := strings.Index(sql, "SELECT")
		sql = sql[i:]
	case KindDescribe:
		// DESCRIBE TABLE x reads x; a description built from the catalog (paths, SHOW
		// CREATE TABLE) is a SELECT already.
		if rest, ok := strings.CutPrefix(sql, "DESCRIBE TABLE "); ok {
			sql = "SELECT * FROM " + rest
		}
	case KindInsertSelect:
		sql = sql[strings.Index(sql, " SELECT ")+1:]
	case KindSelect:
	default:
		return
	}
	stmts, err := ch.NewParser(sql).ParseStmts()
	if err != nil {
		t.Errorf("case %s: engine SQL does not parse: %v\n%s", c.name, err, sql)
		return
	}
	for _, s := range stmts {
		ch.Walk(s, func(node ch.Expr) bool {
			switch n := node.(type) {
			case *ch.TableIdentifier:
				if n.Database == nil {
					t.Errorf("case %s: unqualified table %s", c.name, n.Table.Name)
					return true
				}
				db := n.Database.Name
				if db != "system" && !strings.HasPrefix(db, "o_"+fixtureOrg+"__") {
					t.Errorf("case %s: table in database %s", c.name, db)
				}
				if db == "system" {
					if _, ok := systemViews[n.Table.Name]; !ok {
						t.Errorf("case %s: system.%s", c.name, n.Table.Name)
					}
				}
			case *ch.TableFunctionExpr:
				name := strings.ToLower(render(n.Name))
				if _, ok := tableFunctions[name]; !ok {
					t.Errorf("case %s: table function %s", c.name, name)
				}
			}
			return true
		})
	}
}
