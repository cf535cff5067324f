package spl

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// benchQueries are representative searches.
var benchQueries = []string{
	`error`,
	`host=web* status=500 | stats count BY host`,
	`* | stats count, avg(bytes), dc(user.name) BY host, method`,
	`* | eval kb=round(bytes/1024, 1) | where kb > 10 | table _time, host, kb | head 100`,
	`* | chart limit=5 count OVER host BY region`,
	`* | timechart span=1h count, avg(dur) BY region`,
	`* | rename host AS h, user.* AS u_* | fields h, u_name | dedup h | sort -_time`,
	`(status=404 OR status>=500) NOT "connection refused" | search bytes>1000 | stats count(eval(bytes>50000)) AS big, count BY host | sort -big | head 3`,
}

// BenchmarkCompile measures Parse and Compile of a search (series are
// answered by a fake resolver).
func BenchmarkCompile(b *testing.B) {
	opts := goldenOptions("")
	for i, q := range benchQueries {
		b.Run(fmt.Sprint(i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := Parse(q)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Compile(context.Background(), p, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSearchVsSQL runs searches on the engine beside hand-written
// SQL computing the same result, and reports the latency ratios: main is
// the result statement alone, search the whole Search (result, stage
// counts, timeline, ranking), separate the whole search with every
// statement run on its own.
func BenchmarkSearchVsSQL(b *testing.B) {
	eng := openTestEngine(b)
	evs := genEvents(200000)
	table := loadEvents(b, eng, "spl_bench", evs)
	window := "doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')"
	cases := []struct{ name, spl, sql string }{
		{"term_head", `error | head 100`,
			"SELECT doc._time, doc._raw, doc.host, doc.source, doc.sourcetype, doc.index, toJSONString(doc) FROM " + table +
				" WHERE " + window + " AND hasTokenCaseInsensitive(doc._raw, 'error') ORDER BY doc._time DESC LIMIT 100"},
		{"filter_stats", `status=500 | stats count BY host`,
			"SELECT doc.host AS h, count() FROM " + table + " WHERE " + window +
				" AND (doc.status.:Int64 = 500 OR doc.status.:String = '500') AND h != '' GROUP BY h ORDER BY h"},
		{"stats_avg", `* | stats count, avg(bytes) BY host`,
			"SELECT doc.host AS h, count(), avg(coalesce(toFloat64(doc.bytes.:Int64), doc.bytes.:Float64, toFloat64OrNull(doc.bytes.:String))) FROM " + table +
				" WHERE " + window + " AND h != '' GROUP BY h ORDER BY h"},
		{"timechart", `* | timechart span=1h count`,
			"SELECT toStartOfHour(doc._time) AS t, count() FROM " + table + " WHERE " + window +
				" GROUP BY t ORDER BY t WITH FILL FROM toDateTime('2024-01-01 00:00:00', 'UTC') TO toDateTime('2024-01-02 00:00:00', 'UTC') STEP 3600"},
		{"chart_split", `* | chart count OVER host BY region`,
			"SELECT doc.host AS h, countIf(doc.region.:String = 'ap'), countIf(doc.region.:String = 'eu-west'), countIf(doc.region.:String = 'us-east'), countIf(doc.region IS NULL) FROM " + table +
				" WHERE " + window + " AND h != '' GROUP BY h ORDER BY h"},
		{"timechart_split", `* | timechart span=1h count BY region`,
			"SELECT toStartOfHour(doc._time) AS t, countIf(doc.region.:String = 'ap'), countIf(doc.region.:String = 'eu-west'), countIf(doc.region.:String = 'us-east'), countIf(doc.region IS NULL) FROM " + table +
				" WHERE " + window + " GROUP BY t ORDER BY t WITH FILL FROM toDateTime('2024-01-01 00:00:00', 'UTC') TO toDateTime('2024-01-02 00:00:00', 'UTC') STEP 3600"},
	}
	ctx := context.Background()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			req := Request{SPL: c.spl, Earliest: "1704067200", Latest: "1704153600", Table: table, Now: e2eEnd}
			w, _ := ParseWindow(req.Earliest, req.Latest, req.Now)
			p, err := Parse(c.spl)
			if err != nil {
				b.Fatal(err)
			}
			plan, err := Compile(ctx, p, CompileOptions{Table: table, Window: w, Now: req.Now, Resolver: &executor{eng: eng}})
			if err != nil {
				b.Fatal(err)
			}
			var search, main, hand time.Duration
			var searchR, sepR []float64 // per-iteration ratios, for medians
			for b.Loop() {
				t0 := time.Now()
				if _, err := Search(ctx, eng, req); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := eng.Query(ctx, plan.SQL, ""); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if _, err := eng.Query(ctx, c.sql, ""); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				if _, err := searchSeparately(ctx, eng, req); err != nil {
					b.Fatal(err)
				}
				t4 := time.Now()
				search, main, hand = search+t1.Sub(t0), main+t2.Sub(t1), hand+t3.Sub(t2)
				searchR = append(searchR, float64(t1.Sub(t0))/float64(t3.Sub(t2)))
				sepR = append(sepR, float64(t4.Sub(t3))/float64(t3.Sub(t2)))
			}
			b.ReportMetric(float64(main)/float64(hand), "main/sql")
			b.ReportMetric(float64(search)/float64(hand), "search/sql")
			// Medians of the per-iteration ratios, steadier on a shared
			// machine; separate/sql is the search with every statement on its
			// own (the stage counts, timeline and split-chart ranking not
			// folded), measured in the same run.
			b.ReportMetric(median(searchR), "search/sql_med")
			b.ReportMetric(median(sepR), "separate/sql_med")
			b.ReportMetric(float64(hand.Microseconds())/float64(b.N), "sql_us/op")
		})
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
