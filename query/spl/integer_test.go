package spl

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Comparisons of an integer path with a whole number are written with an integer
// literal (integerLiteral; the golden files show the SQL) and answer as the float
// comparison does, on the engine: negative numbers, exponents, a fraction (which stays a
// float) and integers past 2^53, which both forms compare exactly.
func TestIntegerLiteralsCompareAsNumbers(t *testing.T) {
	eng := openTestEngine(t)
	ctx := context.Background()
	now := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	doc := "doc JSON(_time DateTime64(3, 'UTC'), _raw String, host String, source String, sourcetype String, index String)"
	for _, s := range []string{
		"CREATE DATABASE IF NOT EXISTS it",
		"CREATE TABLE it.logsearch_events (" + doc + ") ENGINE = MergeTree ORDER BY doc._time",
		`INSERT INTO it.logsearch_events FORMAT JSONAsObject {"_time":"2024-01-01 10:00:00","status":200}
{"_time":"2024-01-01 10:00:01","status":500} {"_time":"2024-01-01 10:00:02","status":503}
{"_time":"2024-01-01 10:00:03","status":-7} {"_time":"2024-01-01 10:00:04","status":9007199254740993}`,
	} {
		if err := eng.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	count := func(spl string, paths map[string][]string) string {
		t.Helper()
		r, err := Search(ctx, eng, Request{SPL: spl + " | stats count", Earliest: "-24h", Latest: "now", Table: "`it`.`logsearch_events`", Now: now, Paths: paths})
		if err != nil {
			t.Fatalf("%s: %v", spl, err)
		}
		v, _ := r.Data[0].Get("count")
		return fmt.Sprint(v)
	}
	typed := map[string][]string{"status": {"Int64"}}
	for _, c := range []struct {
		spl, want string
	}{
		{"status=503", "1"},
		{"status>=500", "3"},
		{"status<0", "1"},
		{"status>499.5", "3"}, // a fraction stays a float comparison
		{"status!=200", "4"},
		{"status=5e2", "1"},
		{"status<=-7.0", "1"},
		{"status=9007199254740992", "0"},
		{"status>9007199254740992", "1"},
	} {
		if got := count(c.spl, typed); got != c.want {
			t.Errorf("%s typed: %s, want %s", c.spl, got, c.want)
		}
	}
	// Without the schema (a Dynamic read) the whole numbers answer alike.
	for _, spl := range []string{"status=503", "status>=500", "status<0", "status>499.5", "status!=200", "status=5e2"} {
		if got, want := count(spl, nil), count(spl, typed); got != want {
			t.Errorf("%s: %s read as Dynamic, %s typed", spl, got, want)
		}
	}
}
