package promread

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"

	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query/promstore"
)

// TestPushdownChecksHistogramsOfItsSeries runs a pushed-down rate over a counter whose
// metric has a series written only before the query's reach (in the tags table's ids,
// which the sample statements use, but not in the series answered), beside a metric
// with native histograms: the push-down answers the counter's series in reach alone;
// once one of the counter's series has a native histogram in reach it refuses
// (ErrHistogramsInReach, so the query runs without it); a native histogram out of reach
// does not count; and with the histograms table dropped it answers again.
func TestPushdownChecksHistogramsOfItsSeries(t *testing.T) {
	url, _ := chtest.Engine(t)
	eng := chtest.Client(t, url)
	ctx := context.Background()
	const db = "pushdown_hists"
	exec := func(sql string) {
		t.Helper()
		if err := eng.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("CREATE DATABASE " + db)
	for _, stmt := range promstore.DDL(db) {
		exec(stmt)
	}
	counter := func(job string, from, n int64) SeriesSamples {
		s := SeriesSamples{Labels: labels.FromStrings("__name__", "reqs_total", "job", job)}
		for i := range n {
			s.Samples = append(s.Samples, Sample{T: (from + i) * 15_000, F: float64(i)})
		}
		return s
	}
	hist := func(ls labels.Labels, ts ...int64) SeriesSamples {
		s := SeriesSamples{Labels: ls}
		for _, t := range ts {
			s.Samples = append(s.Samples, Sample{T: t, H: &histogram.FloatHistogram{Count: 1, Sum: 1, ZeroCount: 1, ZeroThreshold: 0.001}})
		}
		return s
	}
	load := func(ss ...SeriesSamples) {
		t.Helper()
		if err := (SQLLoader{Engine: eng, Database: db}).Load(ctx, ss); err != nil {
			t.Fatal(err)
		}
	}
	// In reach: 1,000 s to 2,000 s (a 60 s range, step 60 s). job "old" ends at 150 s.
	load(counter("a", 60, 80), counter("b", 60, 80), counter("old", 0, 10),
		hist(labels.FromStrings("__name__", "latency", "job", "a"), 1_500_000))
	q := New(Target{Engine: eng, Database: db})
	p := Pushdown{Start: 1_000_000, End: 2_000_000, Step: 60_000, Specs: map[string]Spec{
		"k": {Func: "rate", Range: 60_000, Matchers: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "__name__", "reqs_total")}},
	}}
	selectK := func() ([]string, error) {
		t.Helper()
		qr, err := q.WithPushdown(p).Querier(p.Start-60_000, p.End)
		if err != nil {
			t.Fatal(err)
		}
		set := qr.Select(ctx, true, &storage.SelectHints{Start: p.Start - 60_000, End: p.End}, labels.MustNewMatcher(labels.MatchEqual, PushdownLabel, "k"))
		var got []string
		for set.Next() {
			got = append(got, set.At().Labels().String())
		}
		return got, set.Err()
	}
	want := `[{job="a"} {job="b"}]`
	check := func(when string, wantErr error) {
		t.Helper()
		got, err := selectK()
		switch {
		case wantErr != nil && !errors.Is(err, wantErr):
			t.Errorf("%s: %v, %v; want %v", when, got, err, wantErr)
		case wantErr == nil && (err != nil || fmt.Sprint(got) != want):
			t.Errorf("%s: %v, %v; want %s", when, got, err, want)
		}
	}
	check("histograms of another metric in reach", nil)
	load(hist(labels.FromStrings("__name__", "reqs_total", "job", "b"), 3_000_000))
	check("a histogram of the metric out of reach", nil)
	load(hist(labels.FromStrings("__name__", "reqs_total", "job", "b"), 1_800_000))
	check("a histogram of the metric in reach", ErrHistogramsInReach)
	exec("DROP TABLE " + table(db, promstore.HistogramsTable))
	check("the histograms table dropped", nil)
}
