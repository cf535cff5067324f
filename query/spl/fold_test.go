package spl

import (
	"context"
	"encoding/json"
	"strings"
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
		// Timecharts without a split count their input rows on the way.
		`* | timechart span=1h count`,
		`* | timechart span=1h avg(bytes)`,
		`* | timechart span=1h cont=f count`,
		`* | timechart span=1s cont=f count`, // more than 10,000 buckets: the input is counted apart
		`* | where bytes > 50000 | timechart span=2h max(bytes)`,
		`* | eval _time=_time + 7200 | timechart span=1h count`, // a computed _time: counted apart
		// Split charts of counts: one statement ranks and counts.
		`* | chart count OVER host BY status`,           // status: numbers and text, ties in the ranking
		`* | chart limit=2 count OVER method BY status`, // a Dynamic row key: two statements
		`* | chart limit=2 count OVER host BY status`,   // OTHER
		`* | chart limit=2 useother=f count OVER host BY status`,
		`* | chart limit=bottom2 count OVER host BY region`,
		`* | chart usenull=f count OVER host BY region`,
		`* | chart limit=0 count, count(bytes) OVER host BY user.name`, // NULL split values
		`* | chart count(eval(bytes > 50000)) AS big OVER user.name BY flag`,
		`* | search region=ap | chart limit=1 count OVER host BY method`,
		`* | timechart span=2h count BY host`,
		`* | timechart span=30m limit=3 count BY status`,
		`* | timechart span=1h cont=f count BY region`,
		`* | eval _time=_time + 7200 | timechart span=1h limit=1 count BY region`,
		`* | where status > 100000 | timechart span=1h count BY region`,
		`* | chart count OVER host BY region | head 2`,
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
			var folded, separate int
			var sqls []string
			got, err := Search(ctx, countingEngine{env.eng, &folded, &sqls}, req)
			if err != nil {
				t.Fatalf("%s [%s, %s): %v", q, w.earliest, w.latest, err)
			}
			want, err := searchSeparately(ctx, countingEngine{env.eng, &separate, nil}, req)
			if err != nil {
				t.Fatalf("%s [%s, %s) separately: %v", q, w.earliest, w.latest, err)
			}
			g, h := responseJSON(t, got), responseJSON(t, want)
			if folded > separate || (onePass[q] && len(got.Data) > 0 && *got.Stages[0].OutputRows > 0 && folded != separate-2) {
				t.Errorf("%s [%s, %s): %d statements, %d separately", q, w.earliest, w.latest, folded, separate)
			}
			if wantN, ok := byInput[q]; ok && len(got.Data) > 0 && len(got.Data) <= MaxOutputRows {
				// The result statement is the last (all time first finds the first event).
				main := sqls[len(sqls)-1]
				for _, s := range sqls {
					if onePass[q] && strings.Contains(s, "dense_rank()") {
						main = s // the ranking statement, whose tuples make the result
					}
				}
				if !strings.Contains(main, " AS __in") || strings.Count(main, " AS __n") != wantN || strings.Contains(main, ") AS n0") {
					t.Errorf("%s [%s, %s): the input rows are not counted by the chart or stats: %d statements, the last:\n%s", q, w.earliest, w.latest, folded, main)
				}
			}
			if g != h {
				i := 0
				for i < len(g) && i < len(h) && g[i] == h[i] {
					i++
				}
				i = max(0, i-300)
				t.Errorf("%s [%s, %s), from byte %d:\nfolded     %.800s\nseparately %.800s", q, w.earliest, w.latest, i, g[i:], h[i:])
			}
		}
	}
}

// onePass are the split charts whose ranking statement also counts their
// rows and the earlier stages (row keys of a typed path or time): one
// statement where there were three.
var onePass = map[string]bool{
	`* | chart count OVER host BY status`:                            true,
	`* | chart limit=bottom2 count OVER host BY region`:              true,
	`* | chart usenull=f count OVER host BY region`:                  true,
	`* | search region=ap | chart limit=1 count OVER host BY method`: true,
	`* | timechart span=2h count BY host`:                            true,
	`* | timechart span=30m limit=3 count BY status`:                 true,
	`* | timechart span=1h cont=f count BY region`:                   true,
	`* | chart limit=2 count OVER host BY status`:                    true,
	`* | chart limit=2 useother=f count OVER host BY status`:         true,
	`* | chart limit=0 count, count(bytes) OVER host BY user.name`:   true,
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

// byInput are the searches whose input stage is counted by the timechart or
// stats ending them (the sum of its per-bucket count of input rows, or the
// count every row carries), not by a count of its own; the value is how many
// other stages the result statement still counts.
var byInput = map[string]int{
	`* | timechart span=1h count`:        0,
	`* | timechart span=1h avg(bytes)`:   0,
	`* | timechart span=1h cont=f count`: 0,
	// Stats: one row counting every input row, or groups of null keys made
	// and dropped after, every row carrying the count of all input rows.
	`status=500 | stats count BY host`:      0,
	`* | where bytes > 99990 | stats count`: 1,
	// Split charts of counts over a field that can be null: rows of a null
	// row key are grouped too and dropped after the total is taken.
	`* | chart count OVER host BY status`:                            0,
	`* | chart limit=2 useother=f count OVER host BY status`:         0,
	`* | chart usenull=f count OVER host BY region`:                  0,
	`* | search region=ap | chart limit=1 count OVER host BY method`: 1,
	// Split timecharts of counts: the ranking statement sums its tuples' rows.
	`* | timechart span=2h count BY host`:            0,
	`* | timechart span=30m limit=3 count BY status`: 0,
	`* | timechart span=1h cont=f count BY region`:   0,
}

// countingEngine counts statements, and records them when sqls is set.
type countingEngine struct {
	Engine
	n    *int
	sqls *[]string
}

func (e countingEngine) Query(ctx context.Context, sql, queryID string) (*Result, error) {
	*e.n++
	if e.sqls != nil {
		*e.sqls = append(*e.sqls, sql)
	}
	return e.Engine.Query(ctx, sql, queryID)
}
