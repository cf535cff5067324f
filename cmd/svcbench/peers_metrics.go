package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/svc-data/svc/query/promstore"
)

// peersMetrics sends the same pre-encoded remote-write 1.0 requests to svcd (the Prometheus
// app), VictoriaMetrics and Prometheus, one after the other, each until every sample is
// queryable, then runs the same query_range and Grafana calls on each and compares every
// answer with Prometheus's.
func peersMetrics(ctx context.Context, st *stack, o peersOptions, bins map[string]string) error {
	const (
		points     = 2880 // at 15 s: 12 hours, the measurement
		perRequest = 2000
		workers    = 8
	)
	series := max(16, int(1000*o.scale+0.5))
	// The data ends 10 minutes ago: no peer holds back samples as too recent.
	t0 := time.Now().Add(-time.Duration(points)*15*time.Second - 10*time.Minute).Truncate(time.Minute).UnixMilli()
	tEnd := t0 + int64(points-1)*15000
	bench := metricsData("bench", series, points, t0)
	shards, requests, err := bench.shards(workers, perRequest)
	if err != nil {
		return err
	}
	// The warm-up: a third of the series under other names, sent to each path first and
	// left out of its figures, so that no path pays for starting cold (the broker's JIT
	// compiler, first inserts and table creation).
	warm := metricsData("warmup", max(16, series/3), points, t0)
	warmShards, _, err := warm.shards(workers, perRequest)
	if err != nil {
		return err
	}
	total, counters, buckets := int(bench.samples()), bench.counters, bench.buckets

	if _, _, err := st.post(ctx, "/v1/query", []byte(`{"sql":"SELECT 1"}`), nil); err != nil {
		return err
	}
	engineDB, err := st.engineDatabase(ctx)
	if err != nil {
		return err
	}
	if err := st.installApp(ctx, "prometheus"); err != nil {
		return err
	}
	vm, err := startPeer(ctx, "victoria-metrics", filepath.Join(st.dir, "vm"), bins["vm"], "/health",
		"-httpListenAddr=ADDR", "-storageDataPath="+filepath.Join(st.dir, "vm", "data"), "-retentionPeriod=100y",
		"-search.disableCache", "-loggerLevel=WARN")
	if err != nil {
		return err
	}
	defer vm.stop()
	promDir := filepath.Join(st.dir, "prometheus")
	os.MkdirAll(promDir, 0o755)
	// Each series arrives in order, but the senders drift apart: with a window for samples
	// out of order, a sender behind the head's newest samples by more than half a block
	// range (or behind a block the head cut meanwhile) is not refused as out of bounds.
	prom, err := startPrometheus(ctx, promDir, bins["prometheus"], "global: {}\nstorage:\n  tsdb:\n    out_of_order_time_window: 2d\n",
		"--storage.tsdb.retention.time=100y")
	if err != nil {
		return err
	}
	defer prom.stop()

	auth := map[string]string{"Authorization": "Bearer " + st.key}
	svcCount := func() (int64, error) {
		c, err := st.direct.QueryStrings(ctx, fmt.Sprintf("SELECT toString(count()) FROM `%s`.%s", engineDB, promstore.DataTable))
		if err != nil || len(c) != 1 {
			return 0, err
		}
		return strconv.ParseInt(c[0], 10, 64)
	}
	type target struct {
		name, write, api string
		headers          map[string]string
		cpu              pathCPU
		count            func() (int64, error) // the benchmark's samples
		warmCount        func() (int64, error) // the warm-up's
		// stall, for a peer, ends a wait whose count stays short and unchanged that
		// long (waitForPeer); this service's count must reach what was sent.
		stall time.Duration
	}
	polls := 0
	promCount := func(base, prefix string, headers map[string]string) func() (int64, error) {
		return func() (int64, error) {
			// Each poll's selector is new (a matcher no series has), so that no answer
			// cached for an earlier poll (VictoriaMetrics caches the series a selector
			// found) stands for what is queryable now.
			polls++
			return promScalar(ctx, base, headers, url.Values{"query": {fmt.Sprintf(`sum(count_over_time({__name__=~"%s_.+", svcbench_poll!="%d"}[3d]))`, prefix, polls)},
				"time": {fmt.Sprintf("%.3f", float64(tEnd+60000)/1000)}})
		}
	}
	targets := []target{
		{name: "this service (edge → Kafka → engine)", write: st.url + "/prometheus/api/v1/write", api: st.url + "/prometheus/api/v1", headers: auth,
			cpu: pathCPU{names: []string{"svcd", "engine", "broker"}, pids: []int{st.svcd.Process.Pid, st.engine.PID(), st.broker.PID()}},
			// A count of the data table (the warm-up's samples and the benchmark's): the
			// engine's cheapest poll.
			count: func() (int64, error) {
				n, err := svcCount()
				return n - warm.samples(), err
			},
			warmCount: svcCount},
		{name: "VictoriaMetrics " + vmVersion, write: vm.url + "/api/v1/write", api: vm.url + "/api/v1",
			cpu: pathCPU{names: []string{"victoria-metrics"}, pids: []int{vm.pid()}}, stall: peerStall,
			count: promCount(vm.url+"/api/v1", "bench", nil), warmCount: promCount(vm.url+"/api/v1", "warmup", nil)},
		{name: "Prometheus " + promVersion, write: prom.url + "/api/v1/write", api: prom.url + "/api/v1",
			cpu: pathCPU{names: []string{"prometheus"}, pids: []int{prom.pid()}}, stall: peerStall,
			count: promCount(prom.url+"/api/v1", "bench", nil), warmCount: promCount(prom.url+"/api/v1", "warmup", nil)},
	}
	fmt.Printf("\nmetrics: %d series (%d counters, %d classic-histogram buckets) × %d samples at 15 s = %d samples, %d remote-write 1.0 requests of about %d samples, %d concurrent senders (shards of the series)\n",
		series, counters, buckets, points, total, requests, perRequest, workers)
	writeReport := [][]string{{"remote write", "samples/s until all queryable", "samples/s acknowledged", "core-seconds per million samples (every process of the path)", "total"}}
	for _, t := range targets {
		h := map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "snappy", "X-Prometheus-Remote-Write-Version": "0.1.0"}
		for k, v := range t.headers {
			h[k] = v
		}
		send := func(body []byte) error {
			code, b, err := httpDo(ctx, "POST", t.write, body, h)
			return answerError(t.name+" remote write", code, b, err)
		}
		if _, err := sendShards(ctx, warmShards, send); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		var stalled *stalledError
		if err := waitForPeer(ctx, t.name+" warm-up", warm.samples(), 10*time.Minute, t.stall, t.warmCount); errors.As(err, &stalled) {
			fmt.Printf("note: %v; going on (the warm-up is not measured)\n", err)
		} else if err != nil {
			return err
		}
		c0 := t.cpu.read()
		start := time.Now()
		last, err := sendShards(ctx, shards, send)
		if err != nil {
			return err
		}
		rate := ""
		if err := waitForPeer(ctx, t.name, int64(total), 10*time.Minute, t.stall, t.count); errors.As(err, &stalled) {
			rate = fmt.Sprintf("— (%d of %d queryable)", stalled.got, stalled.want)
			fmt.Printf("note: %v: its rate is not given, and its answers below miss samples\n", err)
		} else if err != nil {
			return err
		}
		d := time.Since(start)
		by, sum := t.cpu.perMillionBy(c0, t.cpu.read(), total)
		if rate == "" {
			rate = fmt.Sprintf("%.0fk", float64(total)/d.Seconds()/1000)
		}
		writeReport = append(writeReport, []string{t.name, rate,
			fmt.Sprintf("%.0fk", float64(total)/last.Sub(start).Seconds()/1000), by, fmt.Sprintf("%.2f", sum)})
	}
	table(writeReport)

	// query_range over the day at step 60 s, and Grafana's label, value and series calls.
	rng := url.Values{"start": {fmt.Sprintf("%.3f", float64(t0)/1000)}, "end": {fmt.Sprintf("%.3f", float64(tEnd)/1000)}}
	enc := func(extra url.Values) string {
		v := url.Values{}
		for k, x := range rng {
			v[k] = x
		}
		for k, x := range extra {
			v[k] = x
		}
		return v.Encode()
	}
	type call struct{ label, path string }
	var calls []call
	for _, q := range []string{"rate(bench_requests_total[5m])", "increase(bench_requests_total[5m])", "sum by (job) (rate(bench_requests_total[5m]))",
		"histogram_quantile(0.9, sum by (job, le) (rate(bench_duration_seconds_bucket[5m])))", "max_over_time(bench_requests_total[1h])",
		"avg_over_time(bench_requests_total[1h])"} {
		calls = append(calls, call{"query_range " + q, "/query_range?" + enc(url.Values{"query": {q}, "step": {"60"}})})
	}
	calls = append(calls,
		call{"labels", "/labels?" + enc(nil)},
		call{"labels match[] limit=1000", "/labels?" + enc(url.Values{"match[]": {"bench_duration_seconds_bucket"}, "limit": {"1000"}})},
		call{"label/job/values match[] limit=1000", "/label/job/values?" + enc(url.Values{"match[]": {"bench_requests_total"}, "limit": {"1000"}})},
		call{"series match[] limit=1000", "/series?" + enc(url.Values{"match[]": {"bench_duration_seconds_bucket"}, "limit": {"1000"}})},
		call{"series match[] limit=100 (count)", "/series?" + enc(url.Values{"match[]": {"bench_requests_total"}, "limit": {"100"}})},
	)
	fmt.Printf("\nquery_range over the data's 12 h (%d series × %d samples), step 60 s, and Grafana's calls; median of %d, the three taking turns; = Prometheus: same series, values within 1e-9 relative\n",
		series, points, o.runs)
	qReport := [][]string{{"call", "this service", "VictoriaMetrics", "Prometheus", "svc = Prometheus", "VM = Prometheus"}}
	for _, c := range calls {
		row := []string{c.label}
		var qs []func() ([]byte, error)
		for _, t := range targets {
			qs = append(qs, func() ([]byte, error) {
				code, b, err := httpDo(ctx, "GET", t.api+c.path, nil, t.headers)
				if err != nil || code != 200 {
					return nil, fmt.Errorf("%s %s: %d %.300s %v", t.name, c.label, code, b, err)
				}
				return b, nil
			})
		}
		ds, answers, err := timedTurns(o.runs, qs...)
		if err != nil {
			return err
		}
		for _, d := range ds {
			row = append(row, msf(d))
		}
		countOnly := strings.HasSuffix(c.label, "(count)")
		row = append(row, samePromAnswer(answers[0], answers[2], countOnly), samePromAnswer(answers[1], answers[2], countOnly))
		qReport = append(qReport, row)
	}
	table(qReport)
	fmt.Printf("load average after the metrics workload: %s\n", loadavg())
	if o.hold {
		holdForInspection(ctx, st, vm, prom)
	}
	return nil
}

// samePromAnswer compares an answer of the Prometheus HTTP API with Prometheus's own: a
// matrix by series (values within 1e-9 relative), a list of names or series as a set.
// countOnly compares only the number of entries (a limit picks any of them).
func samePromAnswer(a, b []byte, countOnly bool) string {
	if a == nil || b == nil {
		return "n/a"
	}
	var x, y struct {
		Data json.RawMessage
	}
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return "unreadable"
	}
	var mx, my struct {
		ResultType string
		Result     []struct {
			Metric map[string]string
			Values [][2]any
		}
	}
	if json.Unmarshal(x.Data, &mx) == nil && mx.ResultType == "matrix" && json.Unmarshal(y.Data, &my) == nil {
		key := func(m map[string]string) string {
			ks := make([]string, 0, len(m))
			for k, v := range m {
				ks = append(ks, k+"="+v)
			}
			slices.Sort(ks)
			return strings.Join(ks, ",")
		}
		theirs := map[string][][2]any{}
		for _, r := range my.Result {
			theirs[key(r.Metric)] = r.Values
		}
		if len(mx.Result) != len(my.Result) {
			return fmt.Sprintf("no: %d series, Prometheus %d", len(mx.Result), len(my.Result))
		}
		for _, r := range mx.Result {
			v, ok := theirs[key(r.Metric)]
			if !ok {
				return "no: series " + key(r.Metric) + " not Prometheus's"
			}
			if len(v) != len(r.Values) {
				return fmt.Sprintf("no: %s has %d points, Prometheus %d", key(r.Metric), len(r.Values), len(v))
			}
			for i := range v {
				ta, _ := r.Values[i][0].(float64)
				tb, _ := v[i][0].(float64)
				sa, _ := r.Values[i][1].(string)
				sb, _ := v[i][1].(string)
				fa, _ := strconv.ParseFloat(sa, 64)
				fb, _ := strconv.ParseFloat(sb, 64)
				if ta != tb || !closeEnough(fa, fb) {
					return fmt.Sprintf("no: %s at %.0f: %s, Prometheus %s at %.0f", key(r.Metric), ta, sa, sb, tb)
				}
			}
		}
		return "yes"
	}
	// Names, or series as label sets.
	set := func(raw json.RawMessage) []string {
		var names []string
		if json.Unmarshal(raw, &names) == nil {
			slices.Sort(names)
			return names
		}
		names = nil // a failed decoding leaves entries
		var ss []map[string]string
		json.Unmarshal(raw, &ss)
		for _, s := range ss {
			names = append(names, jsonString(s)) // map keys marshal sorted
		}
		slices.Sort(names)
		return names
	}
	sa, sb := set(x.Data), set(y.Data)
	if countOnly {
		if len(sa) == len(sb) {
			return fmt.Sprintf("yes (%d)", len(sa))
		}
		return fmt.Sprintf("no: %d, Prometheus %d", len(sa), len(sb))
	}
	if slices.Equal(sa, sb) {
		return fmt.Sprintf("yes (%d)", len(sa))
	}
	return fmt.Sprintf("no: %d, Prometheus %d", len(sa), len(sb))
}

// metricsSeries are the benchmark's series: counters and a classic histogram family (8
// buckets per instance), their metric names under a prefix, each with points samples at
// 15 s from t0.
type metricsSeries struct {
	series            []promSeries
	points            int
	t0                int64
	counters, buckets int
}

type promSeries struct {
	labels []prompb.Label
	value  func(k int) float64
}

func metricsData(prefix string, series, points int, t0 int64) metricsSeries {
	les := []string{"0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "+Inf"}
	hInst := max(1, series/80)
	d := metricsSeries{points: points, t0: t0, counters: series - hInst*len(les), buckets: hInst * len(les)}
	for s := range d.counters {
		d.series = append(d.series, promSeries{labels: []prompb.Label{{Name: "__name__", Value: prefix + "_requests_total"},
			{Name: "instance", Value: fmt.Sprintf("10.0.%d.%d:9090", s/250, s%250)}, {Name: "job", Value: fmt.Sprintf("job%d", s%10)}},
			value: func(k int) float64 { return float64(k * (s%7 + 1)) }})
	}
	for i := range hInst {
		for b, le := range les {
			d.series = append(d.series, promSeries{labels: []prompb.Label{{Name: "__name__", Value: prefix + "_duration_seconds_bucket"},
				{Name: "instance", Value: fmt.Sprintf("h%d", i)}, {Name: "job", Value: fmt.Sprintf("job%d", i%10)}, {Name: "le", Value: le}},
				value: func(k int) float64 { return float64(k * (b + 1) * (i%3 + 1)) }})
		}
	}
	return d
}

func (d metricsSeries) samples() int64 { return int64(len(d.series) * d.points) }

// shards cuts remote-write requests of about perRequest samples the way Prometheus's
// queues cut them: each sender a shard of the series (by index), its requests holding
// every series of the shard with a run of samples each, in time order, so that each
// series arrives in order (Prometheus refuses out-of-order samples).
func (d metricsSeries) shards(workers, perRequest int) ([][][]byte, int, error) {
	shards := make([][][]byte, workers)
	requests := 0
	for w := range workers {
		var mine []promSeries
		for i := w; i < len(d.series); i += workers {
			mine = append(mine, d.series[i])
		}
		if len(mine) == 0 {
			continue
		}
		perSeries := max(1, perRequest/len(mine))
		var req prompb.WriteRequest
		n := 0
		flush := func() error {
			raw, err := req.Marshal()
			if err != nil {
				return err
			}
			shards[w] = append(shards[w], snappy.Encode(nil, raw))
			requests++
			req, n = prompb.WriteRequest{}, 0
			return nil
		}
		for p := 0; p < d.points; p += perSeries {
			for _, s := range mine {
				ts := prompb.TimeSeries{Labels: s.labels}
				for k := p; k < min(d.points, p+perSeries); k++ {
					ts.Samples = append(ts.Samples, prompb.Sample{Value: s.value(k), Timestamp: d.t0 + int64(k)*15000})
				}
				req.Timeseries = append(req.Timeseries, ts)
				if n += len(ts.Samples); n >= perRequest {
					if err := flush(); err != nil {
						return nil, 0, err
					}
				}
			}
		}
		if n > 0 {
			if err := flush(); err != nil {
				return nil, 0, err
			}
		}
	}
	return shards, requests, nil
}
