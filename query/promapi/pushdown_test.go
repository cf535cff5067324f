package promapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/teststorage"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query/promread"
	"github.com/svc-data/svc/query/promstore"
)

// pdT0 is the test data's first time (ms).
const pdT0 = int64(1_700_000_000_000)

// pushdownData is series the push-down must read as Prometheus does: counters with
// resets (one down to 0, one to a value above the first), irregular intervals, a gap
// longer than the ranges, stale markers (inside a range and ending a series), a plain
// NaN, a series starting late, one with a single sample, a gauge going negative, and
// classic histogram buckets.
func pushdownData() []promread.SeriesSamples {
	stale := math.Float64frombits(value.StaleNaN)
	var out []promread.SeriesSamples
	add := func(ss []promread.Sample, ls ...string) {
		out = append(out, promread.SeriesSamples{Labels: labels.FromStrings(ls...), Samples: ss})
	}
	for i, job := range []string{"api", "db", "web"} {
		for inst := range 2 {
			var ss []promread.Sample
			v, t := float64(inst*7), pdT0
			for k := range 300 {
				// Irregular: 10 to 22 s apart, a 20-minute gap in the middle for db.
				t += int64(10_000 + (k*7919+inst*31)%12_000 + (k%5)*13)
				if job == "db" && k == 150 {
					t += 20 * 60_000
				}
				v += float64((k*13+i)%9) + 0.25*float64(inst)
				switch {
				case job == "api" && k == 100:
					v = 0 // a reset to zero
				case job == "db" && k == 200:
					v = 3.5 // a reset to a small value
				case job == "web" && inst == 1 && k == 60:
					v = 1e6 // a jump, then a reset
				case job == "web" && inst == 1 && k == 61:
					v = 2
				}
				f := v
				if job == "web" && k == 120 {
					f = stale // a stale marker inside the data
				}
				if job == "api" && inst == 1 && k == 250 {
					ss = append(ss, promread.Sample{T: t, F: stale}) // the series ends
					break
				}
				ss = append(ss, promread.Sample{T: t, F: f})
			}
			add(ss, "__name__", "http_requests_total", "job", job, "instance", fmt.Sprint(inst))
		}
	}
	var g, late []promread.Sample
	for k := range 400 {
		t := pdT0 + int64(k)*15_000 + int64(k%3)*1_000
		f := math.Sin(float64(k)/17) * 100
		switch k {
		case 77:
			f = math.NaN()
		case 200:
			f = stale
		}
		g = append(g, promread.Sample{T: t, F: f})
		if k > 250 {
			late = append(late, promread.Sample{T: t, F: float64(k) * 1.5})
		}
	}
	add(g, "__name__", "temperature", "room", "a")
	// Values that tell the aggregations over time apart: equal values of both signs of
	// zero (the earliest wins min and max), NaN first and alone in windows, sums that
	// overflow (avg switches to its incremental mean) and cancel.
	var ex []promread.Sample
	for k := range 200 {
		var f float64
		switch k % 10 {
		case 0:
			f = math.Copysign(0, -1)
		case 1:
			f = 0
		case 2, 3:
			f = math.NaN()
		case 4:
			f = math.MaxFloat64 / 3
		case 5:
			f = math.MaxFloat64
		case 6:
			f = -math.MaxFloat64
		case 7:
			f = 1e-300 * float64(k)
		default:
			f = float64(k%7) - 3
		}
		if k >= 100 && k < 130 {
			f = math.NaN() // windows of NaN alone
		}
		ex = append(ex, promread.Sample{T: pdT0 + int64(k)*20_000, F: f})
	}
	add(ex, "__name__", "temperature", "room", "extremes")
	// Native histograms under a pushable function: one series of them beside a float
	// series of the same name, so the selection finds them in reach and the query is
	// evaluated again without the push-down.
	var nh, nf []promread.Sample
	for k := range 200 {
		h := &histogram.FloatHistogram{Count: float64(10 * k), Sum: float64(k) * 2.5, Schema: 0, ZeroThreshold: 0.001, ZeroCount: float64(k),
			PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}}, PositiveBuckets: []float64{float64(4 * k), float64(5 * k)}}
		nh = append(nh, promread.Sample{T: pdT0 + int64(k)*15_000, H: h})
		nf = append(nf, promread.Sample{T: pdT0 + int64(k)*15_000, F: float64(3 * k)})
	}
	add(nh, "__name__", "mixed_total", "kind", "histogram")
	add(nf, "__name__", "mixed_total", "kind", "float")
	add(late, "__name__", "temperature", "room", "b")
	add([]promread.Sample{{T: pdT0 + 3_000_000, F: 42}}, "__name__", "temperature", "room", "single")
	for _, le := range []string{"0.1", "0.5", "1", "+Inf"} {
		var ss []promread.Sample
		c := 0.0
		for k := range 300 {
			c += map[string]float64{"0.1": 1, "0.5": 3, "1": 4, "+Inf": 5}[le] * float64(1+k%3)
			ss = append(ss, promread.Sample{T: pdT0 + int64(k)*15_000, F: c})
		}
		add(ss, "__name__", "latency_seconds_bucket", "job", "api", "le", le)
	}
	return out
}

// countingStorage is promread's storage, counting the queries the push-down rewrote.
type countingStorage struct {
	*promread.Storage
	pushed *atomic.Int64
}

func (c countingStorage) WithPushdown(p promread.Pushdown) storage.Queryable {
	c.pushed.Add(1)
	return c.Storage.WithPushdown(p)
}

// TestPushdownMatchesUpstream loads the same series into the engine and into
// Prometheus's in-memory storage and wants every query whose functions are pushed down
// answered identically by the API with the push-down, without it (raw samples through
// promread) and over the in-memory storage, range and instant queries alike, and the
// push-down to have been used for each of them.
func TestPushdownMatchesUpstream(t *testing.T) {
	eng := chtest.Start(t, clickhouse.ProcessConfig{})
	client := chtest.Client(t, eng.URL())
	ctx := context.Background()
	const db = "pushdown_test"
	if err := client.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+db); err != nil {
		t.Fatal(err)
	}
	for _, st := range promstore.DDL(db) {
		if err := client.Exec(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	data := pushdownData()
	if err := (promread.SQLLoader{Engine: client, Database: db}).Load(ctx, data); err != nil {
		t.Fatal(err)
	}
	var pushed atomic.Int64
	st := countingStorage{Storage: &promread.Storage{Queryable: promread.New(promread.Target{Engine: client, Database: db})}, pushed: &pushed}
	on := NewOver(Config{}, st, nil)
	off := NewOver(Config{NoPushdown: true}, st, nil)
	ref := referenceOver(t, data)
	for _, a := range []*API{on, off} {
		t.Cleanup(func() { _ = a.Close() })
	}

	sec := func(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }
	// Every function at every range over the counters and the gauges; under an
	// aggregation (the upstream engine's, over the same pushed series) at one range each.
	var queries []string
	for _, f := range []string{"rate", "increase", "delta", "count_over_time", "last_over_time", "present_over_time",
		"min_over_time", "max_over_time", "sum_over_time", "avg_over_time"} {
		for _, r := range []string{"30s", "5m", "1h"} {
			queries = append(queries,
				fmt.Sprintf("%s(http_requests_total[%s])", f, r),
				fmt.Sprintf("%s(temperature[%s])", f, r),
			)
		}
		queries = append(queries,
			fmt.Sprintf("sum by (job) (%s(http_requests_total[5m]))", f),
			fmt.Sprintf("max without (instance) (%s(http_requests_total[1h]))", f),
		)
	}
	queries = append(queries,
		"histogram_quantile(0.9, sum by (le) (rate(latency_seconds_bucket[5m])))",
		"histogram_quantile(0.9, rate(latency_seconds_bucket[5m]))",
		"rate(http_requests_total[5m]) * 60 > 10",
		`abs(delta(temperature{room=~"a|b"}[2m])) / ignoring(room) group_left sum(rate(http_requests_total{job="api"}[5m]))`,
		"rate(temperature[5m])", // not a counter's name: an info annotation
		"rate(mixed_total[5m])", `sum(increase(mixed_total{kind="histogram"}[5m]))`, "count_over_time(mixed_total[5m])",
	)
	var calls []url.Values
	for _, q := range queries {
		// Range queries: aligned and not, steps finer and coarser than the samples.
		calls = append(calls,
			url.Values{"query": {q}, "start": {sec(pdT0 - 60_000)}, "end": {sec(pdT0 + 6000_000)}, "step": {"60"}},
			url.Values{"query": {q}, "start": {sec(pdT0 + 1234)}, "end": {sec(pdT0 + 5000_000)}, "step": {"7"}, "lookback_delta": {"1ms"}},
		)
		// Instant queries: in the data, in the gap, after the data.
		for _, ts := range []int64{pdT0 + 1800_000, pdT0 + 3_000_000, pdT0 + 8000_000} {
			calls = append(calls, url.Values{"query": {q}, "time": {sec(ts)}})
		}
	}
	for _, form := range calls {
		path := Prefix + "/query"
		if form.Has("start") {
			path += "_range"
		}
		path += "?" + form.Encode()
		before := pushed.Load()
		got := serve(on, path)
		if pushed.Load() == before {
			t.Errorf("%s: not pushed down", form)
		}
		if want := serve(ref, path); !sameJSON(got, want) {
			t.Errorf("%s:\n push-down %s\n upstream  %s", form, got, want)
		}
		if want := serve(off, path); !sameJSON(got, want) {
			t.Errorf("%s:\n push-down %s\n raw       %s", form, got, want)
		}
	}
}

// referenceOver is the API over Prometheus's in-memory storage holding ss.
func referenceOver(t *testing.T, ss []promread.SeriesSamples) *API {
	st := teststorage.New(t)
	app := st.AppenderV2(context.Background())
	ss = slices.Clone(ss)
	slices.SortFunc(ss, func(a, b promread.SeriesSamples) int { return labels.Compare(a.Labels, b.Labels) })
	for _, s := range ss {
		for _, smp := range s.Samples {
			if _, err := app.Append(0, s.Labels, 0, smp.T, smp.F, nil, smp.H, storage.AppendV2Options{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	a := NewOver(Config{}, st, st)
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func serve(a *API, path string) []byte {
	rec := httptest.NewRecorder()
	a.Serve(rec, httptest.NewRequest("GET", path, nil), Request{})
	return rec.Body.Bytes()
}

// sameJSON compares two JSON documents by value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
