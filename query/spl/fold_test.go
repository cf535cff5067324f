package spl

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// testFoldedAsSeparate runs searches both ways, the stage counts and the
// timeline folded into the result statement (Search) and every statement
// on its own (searchSeparately), and requires the same responses: stage
// counts on truncated and empty results, timelines from the returned rows
// (rows moved out of the window, no _time, all time), empty windows.
func testFoldedAsSeparate(t *testing.T, env *e2eEnv) {
	searches := []string{
		`*`,
		`error`,
		`error | head 100`,
		`error | head 5`,
		`status=500`,
		`host=db1 | dedup status`,
		`* | where bytes > 99990`,
		`* | where bytes > 99990 | head 1`,
		`* | where status > 100000`,
		`* | eval _time=_time - 3600 | head 50`,
		`* | eval _time=_time + 86400 | where bytes > 99000`,
		`* | where bytes > 50000 | eval _time=_time - 43200 | head 10`,
		`* | fields host, status | head 10`,
		`* | sort bytes | head 20 | rename host AS h`,
		`* | search region=ap | where status=404 | head 7 | eval k=1`,
		`status=500 | stats count BY host`,
		`* | where bytes > 99990 | stats count`,
		`* | where status > 100000 | stats count BY host`,
		`* | chart count OVER host BY region`,
		`* | timechart span=1h count BY region`,
		`* | where status > 100000 | timechart span=1h count`,
	}
	windows := []struct{ earliest, latest TimeBound }{
		{"1704067200", "1704153600"}, // the day
		{"1704070000", "1704070300"}, // five minutes
		{"1703980800", "1704060000"}, // before every event
		{"0", "1704153600"},          // all time: the timeline starts at the first event
		{"0", "1704067200"},          // all time, before the day
	}
	ctx := context.Background()
	for _, w := range windows {
		for _, q := range searches {
			req := Request{SPL: q, Earliest: w.earliest, Latest: w.latest, Table: env.table, Now: e2eEnd.Add(30 * time.Minute)}
			got, err := Search(ctx, env.eng, req)
			if err != nil {
				t.Fatalf("%s [%s, %s): %v", q, w.earliest, w.latest, err)
			}
			want, err := searchSeparately(ctx, env.eng, req)
			if err != nil {
				t.Fatalf("%s [%s, %s) separately: %v", q, w.earliest, w.latest, err)
			}
			g, h := responseJSON(t, got), responseJSON(t, want)
			if g != h {
				t.Errorf("%s [%s, %s):\nfolded     %.2000s\nseparately %.2000s", q, w.earliest, w.latest, g, h)
			}
		}
	}
}

// responseJSON is the response without its statistics and query id.
func responseJSON(t *testing.T, r *Response) string {
	c := *r
	c.Statistics, c.QueryID = Statistics{}, ""
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
