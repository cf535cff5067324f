package statement

import (
	"testing"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

var benchStatements = []struct {
	name, sql string
	p         Principal
}{
	{"simple", "SELECT user.id, count() FROM events WHERE ts > now() - INTERVAL 1 DAY GROUP BY user.id ORDER BY count() DESC LIMIT 10", KeyWithPermission(PermReadOnly)},
	{"join_cte", "WITH u AS (SELECT id::UInt64 AS id, plan FROM users) SELECT u.plan, count() FROM events AS e JOIN u ON e.user.id::UInt64 = u.id GROUP BY u.plan", KeyWithPermission(PermReadOnly)},
	{"policies", "SELECT e.region, count() FROM events AS e JOIN users AS u ON e.user.id::UInt64 = u.id::UInt64 WHERE e.ts > '2024-01-01' GROUP BY e.region", KeyWithRoles("eu")},
	{"window", "SELECT user.id, ts, row_number() OVER (PARTITION BY user.id ORDER BY ts) AS rn, lagInFrame(ts) OVER (PARTITION BY user.id ORDER BY ts) FROM events WHERE event = 'click'", KeyWithPermission(PermReadOnly)},
	{"system", "SELECT database, name, total_rows FROM system.tables ORDER BY total_rows DESC", KeyWithRoles("analyst")},
	{"insert", "INSERT INTO events SELECT user.id AS uid, count() AS n FROM events GROUP BY uid SETTINGS max_threads = 2", KeyWithPermission(PermReadWrite)},
}

// BenchmarkAnalyze measures parse-and-rewrite cost per statement, against
// the bare parse of the same text (BenchmarkParseOnly).
func BenchmarkAnalyze(b *testing.B) {
	for _, bs := range benchStatements {
		env := Env{Principal: bs.p, Database: "default", Catalog: fixtureCatalog(), Access: fixtureAccess()}
		b.Run(bs.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Analyze(bs.sql, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseOnly(b *testing.B) {
	for _, bs := range benchStatements {
		b.Run(bs.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ch.NewParser(bs.sql).ParseStmts(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
