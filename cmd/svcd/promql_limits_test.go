package main

import (
	"encoding/json"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/projections/catalog"
)

// promBombQuery is the outside probe's query (issue 23): 864 million subquery steps.
const promBombQuery = "count(count_over_time(a_metric[10000d:1s]))"

// TestPromQLSubqueryBombIsRefused runs the probe's three concurrent subquery queries with
// a read-only key against a real svcd: each is refused before evaluation with
// Prometheus's bad_data error naming the step limit and the remedy, and svcd's peak
// memory (VmHWM) stays under 1 GiB. Before the step limit the three took svcd from
// 149 MiB to 13-20 GiB.
func TestPromQLSubqueryBombIsRefused(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	installApp(t, s, catalog.AppPrometheus)
	ro, _ := createKey(t, s, map[string]any{"name": "ro", "permission": "read_only"})
	now := time.Now()
	// An hour of a_metric at 15 s, ending now: every subquery step near it finds a sample.
	ts := prompb.TimeSeries{Labels: prompb.FromLabels(labels.FromStrings("__name__", "a_metric", "job", "probe"), nil)}
	for k := range 240 {
		ts.Samples = append(ts.Samples, prompb.Sample{Timestamp: now.Add(-time.Hour).UnixMilli() + int64(k)*15_000, Value: float64(k)})
	}
	s.WritePrometheus(s.AdminKey, "", []prompb.TimeSeries{ts})
	at := strconv.FormatInt(now.Unix(), 10)
	// The data is queryable (a query within the limits answers).
	r := s.Must(200, "GET", "/prometheus/api/v1/query?"+url.Values{"query": {"count(count_over_time(a_metric[1h:1m]))"}, "time": {at}}.Encode(),
		nil, "Authorization", "Bearer "+ro)
	if !strings.Contains(string(r.Body), `"value":[`) {
		t.Fatalf("query within limits: %s", r.Body)
	}

	// Two rounds of three at once: the second reuses the heap the first freed, which the
	// runtime zeroes (touches) in full, where fresh pages from the system stay untouched.
	for range 2 {
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				r, err := s.Do("GET", "/prometheus/api/v1/query?"+url.Values{"query": {promBombQuery}, "time": {at}}.Encode(), nil, "Authorization", "Bearer "+ro)
				if err != nil {
					t.Error(err)
					return
				}
				var e struct{ Status, ErrorType, Error string }
				if err := json.Unmarshal(r.Body, &e); err != nil || r.Status != 400 || e.Status != "error" || e.ErrorType != "bad_data" ||
					!strings.Contains(e.Error, "864000001 steps") || !strings.Contains(e.Error, "larger subquery step") {
					t.Errorf("%s: %d %s", promBombQuery, r.Status, r.Body)
				}
			})
		}
		wg.Wait()
	}
	if hwm := vmHWM(t, s.PID()); hwm > 1<<30 {
		t.Errorf("svcd's peak memory is %d MiB, over 1 GiB", hwm>>20)
	} else {
		t.Logf("svcd's peak memory: %d MiB", hwm>>20)
	}
}

// vmHWM is a process's peak resident memory in bytes (/proc/<pid>/status).
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// TestPromQLQueryByteBudget: what one query loads from the engine is bounded by its byte
// budget (SVC_PROMQL_QUERY_MEMORY), counted as promread materialises series: past it the
// query is refused with Prometheus's cost_limit error (422) naming the remedy, and a
// query of a shorter range answers.
func TestPromQLQueryByteBudget(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword, "SVC_PROMQL_QUERY_MEMORY=1MiB")
	installApp(t, s, catalog.AppPrometheus)
	ro, _ := createKey(t, s, map[string]any{"name": "ro", "permission": "read_only"})
	now := time.Now()
	// 80,000 samples a second apart: 1.25 MiB of samples held.
	ts := prompb.TimeSeries{Labels: prompb.FromLabels(labels.FromStrings("__name__", "b_metric"), nil)}
	for k := range 80_000 {
		ts.Samples = append(ts.Samples, prompb.Sample{Timestamp: now.Add(-80_000*time.Second).UnixMilli() + int64(k)*1000, Value: 1})
	}
	s.WritePrometheus(s.AdminKey, "", []prompb.TimeSeries{ts})
	at := strconv.FormatInt(now.Unix(), 10)
	query := func(q string) *svcdtest.Response {
		t.Helper()
		r, err := s.Do("GET", "/prometheus/api/v1/query?"+url.Values{"query": {q}, "time": {at}}.Encode(), nil, "Authorization", "Bearer "+ro)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// With an offset nothing is pushed down: the samples are loaded into the PromQL
	// engine (sum_over_time alone would be computed on the step grid, loading one point
	// per step).
	r := query("sum_over_time(b_metric[1d] offset 1s)")
	var e struct{ Status, ErrorType, Error string }
	if err := json.Unmarshal(r.Body, &e); err != nil || r.Status != 422 || e.ErrorType != "cost_limit" ||
		!strings.Contains(e.Error, "budget of 1 MiB") || !strings.Contains(e.Error, "narrow the time range") {
		t.Errorf("over the budget: %d %s", r.Status, r.Body)
	}
	if r := query("sum_over_time(b_metric[1h] offset 1s)"); r.Status != 200 || !strings.Contains(string(r.Body), `"3600"`) {
		t.Errorf("within the budget: %d %s", r.Status, r.Body)
	}
}
