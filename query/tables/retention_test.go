package tables_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/query/sqlquote"
	"github.com/svc-data/svc/query/tables"
)

// TestParseRetention: the two forms the API takes, their canonical text, and the 400s.
func TestParseRetention(t *testing.T) {
	ok := []struct{ in, canonical, text, path string }{
		{"30d", "30d", "30d", "timestamp"},
		{" 12h ", "12h", "12h", "timestamp"},
		{"2w", "2w", "2w", "timestamp"},
		{"ts + INTERVAL 30 DAY", "ts + INTERVAL 30 DAY", "ts + INTERVAL 30 DAY", "ts"},
		{"event.time+interval 36 hours", "event.time + INTERVAL 36 HOUR", "event.time + INTERVAL 36 HOUR", "event.time"},
		{"ts + 90m", "ts + INTERVAL 90 MINUTE", "ts + INTERVAL 90 MINUTE", "ts"},
		{"timestamp + INTERVAL 48 HOUR", "timestamp + INTERVAL 48 HOUR", "2d", "timestamp"},
		{"ts + INTERVAL 7 days", "ts + INTERVAL 7 DAY", "ts + INTERVAL 1 WEEK", "ts"},
		{"", "", "", ""},
	}
	for _, c := range ok {
		r, canonical, err := tables.ParseRetention(c.in, "JSON")
		if err != nil || canonical != c.canonical || r.Text("JSON") != c.text || (r != nil && r.Path != c.path) {
			t.Errorf("%q: %+v %q %v, want %q / %q on %q", c.in, r, canonical, err, c.canonical, c.text, c.path)
		}
	}
	if r, _, _ := tables.ParseRetention("7d", tables.LogSearchColumnType); r.Path != "_time" {
		t.Errorf("log search events are measured on _time, not %q", r.Path)
	}
	for _, bad := range []string{"30", "d", "30x", "-3d", "0d", "30s", "36501d", "1.5d", "ts + INTERVAL 30 MONTH",
		"doc.`x` + 1d", "f(ts) + 1d", "ts' + 1d", "ts + INTERVAL 1 DAY DELETE", "+30d", "a..b + 1d", "1a + 1d"} {
		if _, _, err := tables.ParseRetention(bad, "JSON"); err == nil {
			t.Errorf("%q accepted", bad)
		}
		if _, err := tables.CheckRetention(bad, "JSON"); err == nil || !strings.Contains(err.Error(), "retention") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestRetentionTTLOnTheEngine: the TTL the service writes is printed back by the engine
// exactly (so the read-back recognizes it), deletes rows older than the retention by the
// row's time path (ISO text, engine-typed times, Unix seconds, nested paths, a typed
// path of the log-search column), and keeps rows without a usable time.
func TestRetentionTTLOnTheEngine(t *testing.T) {
	e := engine(t)
	ctx := context.Background()
	if err := e.Exec(ctx, "CREATE DATABASE IF NOT EXISTS r"); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	old, recent := now.Add(-40*24*time.Hour), now.Add(-24*time.Hour)
	cases := []struct {
		retention, columnType string
		rows                  []string
		keep                  string
	}{
		{"30d", "JSON", []string{
			fmt.Sprintf(`{"n":1,"timestamp":%q}`, old.Format(time.RFC3339Nano)),
			fmt.Sprintf(`{"n":2,"timestamp":%q}`, recent.Format(time.RFC3339Nano)),
			fmt.Sprintf(`{"n":3,"timestamp":%d}`, old.Unix()),
			fmt.Sprintf(`{"n":4,"timestamp":%q}`, old.Format("2006-01-02 15:04:05")),
			`{"n":5}`, `{"n":6,"timestamp":"not a time"}`, `{"n":7,"timestamp":{"x":1}}`,
		}, "2,5,6,7"},
		{"event.at + INTERVAL 30 DAY", "JSON", []string{
			fmt.Sprintf(`{"n":1,"event":{"at":%q}}`, old.Format(time.RFC3339)),
			fmt.Sprintf(`{"n":2,"event":{"at":%q}}`, recent.Format(time.RFC3339)),
		}, "2"},
		{"30d", tables.LogSearchColumnType, []string{
			fmt.Sprintf(`{"n":1,"_time":%q}`, old.Format(time.RFC3339)),
			fmt.Sprintf(`{"n":2,"_time":%q}`, recent.Format(time.RFC3339)),
		}, "2"},
	}
	for i, c := range cases {
		r, _, err := tables.ParseRetention(c.retention, c.columnType)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("r.t%d", i)
		if err := e.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (doc %s) ENGINE = MergeTree ORDER BY tuple() TTL %s SETTINGS %s",
			name, c.columnType, r.TTL(), tables.GenerationSettings)); err != nil {
			t.Fatalf("%s: %v", c.retention, err)
		}
		full, err := e.QueryStrings(ctx, fmt.Sprintf("SELECT engine_full FROM system.tables WHERE database = 'r' AND name = 't%d'", i))
		if err != nil || len(full) != 1 {
			t.Fatal(full, err)
		}
		ttl := tables.EngineTTL(full[0])
		if ttl != r.TTL() {
			t.Fatalf("the engine prints the TTL as\n%s\nnot as written\n%s", ttl, r.TTL())
		}
		if got, ok := tables.DecodeTTL(ttl); !ok || *got != *r {
			t.Fatalf("decode %q: %+v %v", ttl, got, ok)
		}
		if err := e.Exec(ctx, fmt.Sprintf("INSERT INTO %s SELECT * FROM format(JSONAsObject, %s)", name,
			sqlquote.String(strings.Join(c.rows, "\n")))); err != nil {
			t.Fatal(err)
		}
		if err := e.Exec(ctx, "OPTIMIZE TABLE "+name+" FINAL"); err != nil {
			t.Fatal(err)
		}
		kept, err := e.QueryStrings(ctx, "SELECT arrayStringConcat(arraySort(groupArray(toString(doc.n))), ',') FROM "+name)
		if err != nil || len(kept) != 1 || kept[0] != c.keep {
			t.Errorf("%s: kept %v %v, want %s", c.retention, kept, err, c.keep)
		}
	}
	// A TTL the service did not write is not taken for one.
	for _, ttl := range []string{"", "toDateTime(x) + toIntervalDay(1)",
		strings.Replace(mustTTL(t, "30d"), "toIntervalSecond(2592000)", "toIntervalSecond(2592000) + toIntervalDay(1)", 1)} {
		if r, ok := tables.DecodeTTL(ttl); ok {
			t.Errorf("%q decoded as %+v", ttl, r)
		}
	}
}

func mustTTL(t *testing.T, s string) string {
	r, _, err := tables.ParseRetention(s, "JSON")
	if err != nil {
		t.Fatal(err)
	}
	return r.TTL()
}
