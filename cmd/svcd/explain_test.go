package main

import (
	"regexp"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// engineName matches what only the engine calls things: an organization's engine
// database (o_<32 hex>__name), a generation (t__g<n>), a UUID (a table's, a part's).
var engineName = regexp.MustCompile(`o_[0-9a-f]{32}__|__g[0-9]|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|_svc`)

// TestExplainShowsLogicalNames runs every EXPLAIN kind through svcd on the real engine:
// its output (plan text; ESTIMATE's database and table columns, though over the Merge view
// it has no rows) names the caller's database and table as the caller does, never the
// engine's names for them (o_<org>__default.events__g1 was shown).
func TestExplainShowsLogicalNames(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "events"})
	s.Must(202, "POST", "/v1/tables/events", []map[string]any{{"n": 1, "host": "a"}, {"n": 2, "host": "b"}})
	s.WaitCount("events", 2, time.Minute)
	for _, sql := range []string{
		"EXPLAIN SELECT count() FROM events WHERE n > 1",
		"EXPLAIN PLAN SELECT n FROM events WHERE n > 1",
		"EXPLAIN PLAN indexes = 1 SELECT n FROM events WHERE n > 1",
		"EXPLAIN PLAN actions = 1, header = 1 SELECT n FROM default.events",
		"EXPLAIN SYNTAX SELECT n FROM events",
		"EXPLAIN AST SELECT n FROM events",
		"EXPLAIN QUERY TREE SELECT n FROM events",
		"EXPLAIN PIPELINE SELECT n FROM events",
		"EXPLAIN ESTIMATE SELECT n FROM events",
	} {
		for _, f := range []string{"JSON", "TabSeparated"} {
			r := s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql, "format": f})
			if m := engineName.FindString(string(r.Body)); m != "" {
				t.Errorf("%s (%s) shows the engine's name %q:\n%s", sql, f, m, r.Body)
			}
		}
	}
}
