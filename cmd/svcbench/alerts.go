package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"

	"github.com/svc-data/svc/infra/localproc"
)

// alertsOptions are the knobs of svcbench alerts.
type alertsOptions struct {
	alerts   int           // PromQL alert rules, one series each
	duration time.Duration // measured time of each side
	cache    string        // where Prometheus is built (peers' cache)
	pprofDir string        // a CPU profile of svcd during its measured phase
}

// alertSeries is the data both sides read: one counter per rule, its rate (i%10)/10 per
// second, so that rate(...[5m]) > 0.5 holds for the instances ending in 6 to 9.
func alertSeries(n int, at time.Time) []prompb.TimeSeries {
	out := make([]prompb.TimeSeries, 0, n)
	for i := range n {
		out = append(out, prompb.TimeSeries{
			Labels: []prompb.Label{{Name: "__name__", Value: "bench_requests_total"}, {Name: "instance", Value: fmt.Sprintf("inst-%04d", i)},
				{Name: "job", Value: fmt.Sprintf("job%d", i%10)}},
			Samples: []prompb.Sample{{Value: float64(i%10) / 10 * float64(at.Unix()), Timestamp: at.UnixMilli()}}})
	}
	return out
}

func alertExpr(i int) string {
	return fmt.Sprintf(`rate(bench_requests_total{instance="inst-%04d"}[5m]) > 0.5`, i)
}

// benchAlerts runs the same alerting rules in svcd (PromQL alerts over the Prometheus
// app) and in a Prometheus server (rule_files, evaluation_interval 60s), one side after
// the other over the same remote-written series, and compares evaluation lag (scheduled
// time to evaluation done), CPU by process and the alerts that fire.
func benchAlerts(ctx context.Context, st *stack, o alertsOptions, promBin string) error {
	const interval = 60 * time.Second
	if _, _, err := st.post(ctx, "/v1/query", []byte(`{"sql":"SELECT 1"}`), nil); err != nil {
		return err
	}
	if err := st.installApp(ctx, "prometheus"); err != nil {
		return err
	}
	temporalPID := localproc.ReadPID(filepath.Join(st.dir, "svcd", "temporal", "temporal.pid"))
	if temporalPID == 0 {
		return fmt.Errorf("no embedded Temporal; set SVC_TEMPORAL_BIN (go tool task bench-alerts does)")
	}
	promDir := filepath.Join(st.dir, "prometheus")
	os.MkdirAll(promDir, 0o755)
	rulesFile := filepath.Join(promDir, "rules.yml")
	if err := os.WriteFile(rulesFile, []byte("groups: []\n"), 0o644); err != nil {
		return err
	}
	config := fmt.Sprintf("global:\n  evaluation_interval: %s\nrule_files: [%q]\nstorage:\n  tsdb:\n    out_of_order_time_window: 1h\n", interval, rulesFile)
	prom, err := startPrometheus(ctx, promDir, promBin, config, "--web.enable-lifecycle")
	if err != nil {
		return err
	}
	defer prom.stop()

	// The same samples to both, every 15 s as a scrape would, after 10 minutes of history.
	auth := map[string]string{"Authorization": "Bearer " + st.key}
	write := func(at time.Time) error {
		raw, err := (&prompb.WriteRequest{Timeseries: alertSeries(o.alerts, at)}).Marshal()
		if err != nil {
			return err
		}
		body := snappy.Encode(nil, raw)
		h := map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "snappy", "X-Prometheus-Remote-Write-Version": "0.1.0"}
		for _, t := range []struct {
			url string
			h   map[string]string
		}{{st.url + "/prometheus/api/v1/write", auth}, {prom.url + "/api/v1/write", nil}} {
			hh := maps(h, t.h)
			for attempt := 0; ; attempt++ {
				code, b, err := httpDo(ctx, "POST", t.url, body, hh)
				if err = answerError("remote write", code, b, err); err == nil {
					break
				} else if attempt > 50 || isRefused(err) {
					return err
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		return nil
	}
	now := time.Now().Truncate(15 * time.Second)
	for at := now.Add(-10 * time.Minute); !at.After(now); at = at.Add(15 * time.Second) {
		if err := write(at); err != nil {
			return err
		}
	}
	feedCtx, stopFeed := context.WithCancel(ctx)
	var feed sync.WaitGroup
	feed.Go(func() {
		for at := now.Add(15 * time.Second); ; at = at.Add(15 * time.Second) {
			select {
			case <-feedCtx.Done():
				return
			case <-time.After(time.Until(at)):
			}
			if err := write(at); err != nil && feedCtx.Err() == nil {
				fmt.Fprintln(os.Stderr, "svcbench: feed:", err)
			}
		}
	})
	defer func() { stopFeed(); feed.Wait() }()
	const count = "count(bench_requests_total)"
	if err := waitFor(ctx, "svcd's series", int64(o.alerts), 5*time.Minute, func() (int64, error) {
		return promScalar(ctx, st.url+"/prometheus/api/v1", auth, url.Values{"query": {count}})
	}); err != nil {
		return err
	}
	fmt.Printf("svcbench alerts: %d PromQL alerting rules at %s (`%s`, for 1m), one series each, load average %s\n",
		o.alerts, interval, alertExpr(0), loadavg())
	// Baseline: a minute of the feed alone, no rule anywhere, so that the figures below
	// can be read net of ingest.
	ours := pathCPU{names: []string{"svcd", "engine", "temporal"}, pids: []int{st.svcd.Process.Pid, st.engine.PID(), temporalPID}}
	theirs := pathCPU{names: []string{"prometheus"}, pids: []int{prom.pid()}}
	b0, bp0, bt := ours.readTree(), theirs.readTree(), time.Now()
	if err := sleepCtx(ctx, time.Minute); err != nil {
		return err
	}
	b1, bp1, baseline := ours.readTree(), theirs.readTree(), time.Since(bt)

	// Ours: one alert per rule, each its own Temporal schedule.
	t0 := time.Now()
	scope := "?organization=default&cluster=default"
	ids := make([]string, o.alerts)
	if err := parallel(ctx, o.alerts, 4, func(i int) error {
		body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("bench-%04d", i), "interval_seconds": int(interval.Seconds()), "for": "1m",
			"query": map[string]any{"promql": alertExpr(i)}, "condition": map[string]any{"op": "any"}, "labels": map[string]any{"severity": "warning"}})
		code, b, err := st.post(ctx, "/v1/alerts"+scope, body, nil)
		if err != nil || code != 201 {
			return fmt.Errorf("create alert %d: %d %.300s %v", i, code, b, err)
		}
		var v struct{ ID string }
		json.Unmarshal(b, &v)
		ids[i] = v.ID
		return nil
	}); err != nil {
		return err
	}
	created := time.Since(t0)
	// Warm-up: every alert has been evaluated once.
	if err := waitFor(ctx, "first evaluations", 1, 3*interval, func() (int64, error) {
		h, err := st.evalHistograms(ctx)
		if err != nil {
			return 0, err
		}
		if h["svc_alert_evaluation_lag_seconds"].count >= uint64(o.alerts) {
			return 1, nil
		}
		return 0, nil
	}); err != nil {
		return err
	}
	h0, err := st.evalHistograms(ctx)
	if err != nil {
		return err
	}
	c0 := ours.readTree()
	start := time.Now()
	profiled := st.profileFor(o.pprofDir, "alerts-svcd", min(o.duration, time.Minute))
	if err := sleepCtx(ctx, o.duration); err != nil {
		return err
	}
	<-profiled
	h1, err := st.evalHistograms(ctx)
	if err != nil {
		return err
	}
	c1 := ours.readTree()
	oursElapsed := time.Since(start)
	lag := h1["svc_alert_evaluation_lag_seconds"].minus(h0["svc_alert_evaluation_lag_seconds"])
	dur := h1["svc_alert_evaluation_duration_seconds"].minus(h0["svc_alert_evaluation_duration_seconds"])
	oursFiring, err := st.firingAlerts(ctx)
	if err != nil {
		return err
	}
	failedSample := ""
	if h1.failed() > h0.failed() {
		failedSample = st.alertError(ctx)
	}
	if err := parallel(ctx, len(ids), 4, func(i int) error {
		req, _ := http.NewRequestWithContext(ctx, "DELETE", st.url+"/v1/alerts/"+ids[i]+scope, nil)
		req.Header.Set("Authorization", "Bearer "+st.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}); err != nil {
		return err
	}

	// Theirs: the same rules, one group each (as ours: one schedule each).
	var rules strings.Builder
	rules.WriteString("groups:\n")
	for i := range o.alerts {
		fmt.Fprintf(&rules, "- name: bench-%04d\n  rules:\n  - alert: bench-%04d\n    expr: '%s'\n    for: 1m\n    labels:\n      severity: warning\n", i, i, alertExpr(i))
	}
	if err := os.WriteFile(rulesFile, []byte(rules.String()), 0o644); err != nil {
		return err
	}
	if code, b, err := httpDo(ctx, "POST", prom.url+"/-/reload", nil, nil); err != nil || code != 200 {
		return fmt.Errorf("reload Prometheus: %d %s %v", code, b, err)
	}
	if err := waitFor(ctx, "Prometheus's first evaluations", int64(o.alerts), 3*interval, func() (int64, error) {
		gs, err := promGroups(ctx, prom.url)
		n := 0
		for _, g := range gs {
			if g.LastEvaluation.Year() > 2000 {
				n++
			}
		}
		return int64(n), err
	}); err != nil {
		return err
	}
	p0 := theirs.readTree()
	start = time.Now()
	seen := map[string]promGroup{}
	for time.Since(start) < o.duration {
		if err := sleepCtx(ctx, min(20*time.Second, o.duration-time.Since(start))); err != nil {
			return err
		}
		gs, err := promGroups(ctx, prom.url)
		if err != nil {
			return err
		}
		for _, g := range gs {
			if g.LastEvaluation.After(start) {
				seen[g.Name+"@"+g.LastEvaluation.String()] = g
			}
		}
	}
	p1 := theirs.readTree()
	theirElapsed := time.Since(start)
	var pLag, pDur []float64
	for _, g := range seen {
		slot := promSlot(g.Name, g.File, interval, g.LastEvaluation)
		pLag = append(pLag, g.LastEvaluation.Sub(slot).Seconds()+g.EvaluationTime)
		pDur = append(pDur, g.EvaluationTime)
	}
	theirFiring, err := promFiring(ctx, prom.url)
	if err != nil {
		return err
	}

	perMin := func(a, b []float64, names []string, d time.Duration, evals float64) (string, string, float64, float64) {
		var parts, per1k []string
		total := 0.0
		for i := range a {
			v := b[i] - a[i]
			total += v
			parts = append(parts, fmt.Sprintf("%s %.2f", names[i], v/d.Minutes()))
			per1k = append(per1k, fmt.Sprintf("%s %.2f", names[i], v*1000/evals))
		}
		return strings.Join(parts, " + "), strings.Join(per1k, " + "), total / d.Minutes(), total * 1000 / evals
	}
	oursEvals := float64(lag.count)
	theirEvals := float64(len(seen))
	oMin, oPer, oTotMin, oTotPer := perMin(c0, c1, ours.names, oursElapsed, oursEvals)
	tMin, tPer, tTotMin, tTotPer := perMin(p0, p1, theirs.names, theirElapsed, theirEvals)
	obMin, _, _, _ := perMin(b0, b1, ours.names, baseline, 1)
	tbMin, _, _, _ := perMin(bp0, bp1, theirs.names, baseline, 1)
	slices.Sort(pLag)
	slices.Sort(pDur)
	same := slices.Equal(oursFiring, theirFiring)
	fmt.Printf("created %d alerts in %s; measured %s each side after every rule's first evaluation\n\n", o.alerts, created.Round(time.Millisecond), o.duration)
	table([][]string{
		{"measure", "this service (svcd + engine + Temporal)", "Prometheus " + promVersion, "ratio (ours / Prometheus)"},
		{"evaluations in the window", fmt.Sprintf("%.0f (%.1f/s; %d failed)", oursEvals, oursEvals/oursElapsed.Seconds(), h1.failed()-h0.failed()), fmt.Sprintf("%.0f (%.1f/s)", theirEvals, theirEvals/theirElapsed.Seconds()), ""},
		{"lag p50 (scheduled → done)", msf(secs(lag.quantile(0.5))), msf(secs(quantile(pLag, 0.5))), ratio(lag.quantile(0.5), quantile(pLag, 0.5))},
		{"lag p99", msf(secs(lag.quantile(0.99))), msf(secs(quantile(pLag, 0.99))), ratio(lag.quantile(0.99), quantile(pLag, 0.99))},
		{"evaluation p50 (start → done)", msf(secs(dur.quantile(0.5))), msf(secs(quantile(pDur, 0.5))), ratio(dur.quantile(0.5), quantile(pDur, 0.5))},
		{"evaluation p99", msf(secs(dur.quantile(0.99))), msf(secs(quantile(pDur, 0.99))), ratio(dur.quantile(0.99), quantile(pDur, 0.99))},
		{"CPU core-seconds per minute, the feed alone (baseline)", obMin, tbMin, ""},
		{"CPU core-seconds per minute", fmt.Sprintf("%s = %.2f", oMin, oTotMin), fmt.Sprintf("%s = %.2f", tMin, tTotMin), ratio(oTotMin, tTotMin)},
		{"CPU core-seconds per 1,000 evaluations", fmt.Sprintf("%s = %.2f", oPer, oTotPer), fmt.Sprintf("%s = %.2f", tPer, tTotPer), ratio(oTotPer, tTotPer)},
		{"alerts firing at the end", fmt.Sprint(len(oursFiring)), fmt.Sprint(len(theirFiring)), fmt.Sprintf("same set: %v", same)},
	})
	fmt.Println("\nOurs from svcd's /metrics histograms (buckets 25% apart); Prometheus's from /api/v1/rules (lastEvaluation − the group's slot + evaluationTime), polled every 20 s. Both sides are fed the same 1,000 samples every 15 s meanwhile.")
	if failedSample != "" {
		fmt.Println("a failed evaluation said:", failedSample)
	}
	if !same {
		return fmt.Errorf("the firing alerts differ: ours %d %v, Prometheus's %d %v", len(oursFiring), head(oursFiring), len(theirFiring), head(theirFiring))
	}
	return nil
}

func head(s []string) []string { return s[:min(len(s), 10)] }

func secs(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

func maps(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, f func(i int) error) error {
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var err error
loop:
	for i := range n {
		select {
		case next <- i:
		case err = <-errs:
			break loop
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		}
	}
	close(next)
	wg.Wait()
	if err == nil && len(errs) > 0 {
		err = <-errs
	}
	return err
}

// readTree is every process's CPU with its children's (the embedded Temporal's server
// is its forwarder's child).
func (p pathCPU) readTree() []float64 {
	out := make([]float64, len(p.pids))
	for i, pid := range p.pids {
		out[i] = treeCPUSeconds(pid)
	}
	return out
}

// profileFor fetches a CPU profile of svcd over d into dir/<name>.prof in the background;
// the channel closes when it is written (at once when no profile is asked for).
func (st *stack) profileFor(dir, name string, d time.Duration) <-chan struct{} {
	done := make(chan struct{})
	if dir == "" || st.pprof == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", st.pprof, int(d.Seconds())))
		if err != nil {
			fmt.Fprintln(os.Stderr, "svcbench: profile:", err)
			return
		}
		defer resp.Body.Close()
		os.MkdirAll(dir, 0o755)
		f, err := os.Create(filepath.Join(dir, strings.NewReplacer(" ", "_", "/", "_").Replace(name)+".prof"))
		if err != nil {
			return
		}
		defer f.Close()
		io.Copy(f, resp.Body)
	}()
	return done
}

// hist is a cumulative histogram read from /metrics.
type hist struct {
	bounds []float64
	counts []uint64
	count  uint64
}

type histograms map[string]hist

func (h histograms) failed() uint64 { return h["svc_alert_evaluation_failures_total"].count }

func (h hist) minus(o hist) hist {
	out := hist{bounds: h.bounds, counts: make([]uint64, len(h.counts)), count: h.count - o.count}
	for i := range h.counts {
		out.counts[i] = h.counts[i]
		if i < len(o.counts) {
			out.counts[i] -= o.counts[i]
		}
	}
	return out
}

// quantile interpolates linearly within the bucket holding rank q, as histogram_quantile does.
func (h hist) quantile(q float64) float64 {
	if h.count == 0 {
		return math.NaN()
	}
	rank := q * float64(h.count)
	prevB, prevC := 0.0, 0.0
	for i, b := range h.bounds {
		c := float64(h.counts[i])
		if c >= rank {
			if c == prevC {
				return b
			}
			return prevB + (b-prevB)*(rank-prevC)/(c-prevC)
		}
		prevB, prevC = b, c
	}
	return h.bounds[len(h.bounds)-1]
}

// evalHistograms reads svcd's alert evaluation histograms from /metrics.
func (st *stack) evalHistograms(ctx context.Context) (histograms, error) {
	code, b, err := httpDo(ctx, "GET", st.url+"/metrics", nil, nil)
	if err != nil || code != 200 {
		return nil, fmt.Errorf("/metrics: %d %.200s %v", code, b, err)
	}
	out := histograms{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "svc_alert_evaluation_") {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		v, _ := strconv.ParseFloat(rest, 64)
		switch {
		case strings.Contains(name, `_bucket{le="+Inf"}`):
		case strings.Contains(name, "_bucket{le="):
			base := name[:strings.Index(name, "_bucket")]
			le, _ := strconv.ParseFloat(strings.Trim(name[strings.Index(name, "le=")+3:len(name)-1], `"`), 64)
			h := out[base]
			h.bounds, h.counts = append(h.bounds, le), append(h.counts, uint64(v))
			out[base] = h
		case strings.HasSuffix(name, "_count"), strings.HasSuffix(name, "_total"):
			base := strings.TrimSuffix(name, "_count")
			h := out[base]
			h.count = uint64(v)
			out[base] = h
		}
	}
	return out, sc.Err()
}

// alertError is the error of the first alert in the error state, from its history.
func (st *stack) alertError(ctx context.Context) string {
	scope := "?organization=default&cluster=default"
	_, b, _ := st.get(ctx, "/v1/alerts"+scope)
	var res struct{ Alerts []struct{ ID, State string } }
	json.Unmarshal(b, &res)
	for _, a := range res.Alerts {
		if a.State != "error" {
			continue
		}
		_, b, _ = st.get(ctx, "/v1/alerts/"+a.ID+"/history"+scope)
		var h struct{ History []struct{ Error string } }
		json.Unmarshal(b, &h)
		for _, e := range h.History {
			if e.Error != "" {
				return e.Error
			}
		}
	}
	return "(no alert is in the error state now)"
}

// firingAlerts are svcd's firing alerts as "name instance", sorted.
func (st *stack) firingAlerts(ctx context.Context) ([]string, error) {
	code, b, err := st.get(ctx, "/v1/alerts?organization=default&cluster=default")
	if err != nil || code != 200 {
		return nil, fmt.Errorf("list alerts: %d %.200s %v", code, b, err)
	}
	var res struct {
		Alerts []struct {
			Name   string
			Groups []struct {
				State  string
				Labels map[string]string
			}
		}
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, err
	}
	out := []string{}
	for _, a := range res.Alerts {
		for _, g := range a.Groups {
			if g.State == "firing" {
				out = append(out, a.Name+" "+g.Labels["instance"])
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

type promGroup struct {
	Name           string    `json:"name"`
	File           string    `json:"file"`
	LastEvaluation time.Time `json:"lastEvaluation"`
	EvaluationTime float64   `json:"evaluationTime"`
}

func promGroups(ctx context.Context, base string) ([]promGroup, error) {
	code, b, err := httpDo(ctx, "GET", base+"/api/v1/rules?type=alert", nil, nil)
	if err != nil || code != 200 {
		return nil, fmt.Errorf("rules: %d %.200s %v", code, b, err)
	}
	var res struct {
		Data struct{ Groups []promGroup }
	}
	return res.Data.Groups, json.Unmarshal(b, &res)
}

// promSlot is the slot a Prometheus rule group's evaluation that started at start was
// scheduled for (rules.Group.EvalTimestamp: the interval's multiples shifted by the
// group's hash of name and file).
func promSlot(name, file string, interval time.Duration, start time.Time) time.Time {
	offset := int64(labels.New(labels.Label{Name: "name", Value: name}, labels.Label{Name: "file", Value: file}).Hash() % uint64(interval))
	adj := start.UnixNano() - offset
	return time.Unix(0, adj-adj%int64(interval)+offset)
}

func promFiring(ctx context.Context, base string) ([]string, error) {
	code, b, err := httpDo(ctx, "GET", base+"/api/v1/alerts", nil, nil)
	if err != nil || code != 200 {
		return nil, fmt.Errorf("alerts: %d %.200s %v", code, b, err)
	}
	var res struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string
				State  string
			}
		}
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, err
	}
	out := []string{}
	for _, a := range res.Data.Alerts {
		if a.State == "firing" {
			out = append(out, a.Labels["alertname"]+" "+a.Labels["instance"])
		}
	}
	slices.Sort(out)
	return out, nil
}

// promScalar is the value of an instant query's first sample (query: its parameters).
func promScalar(ctx context.Context, api string, headers map[string]string, query url.Values) (int64, error) {
	code, b, err := httpDo(ctx, "GET", api+"/query?"+query.Encode(), nil, headers)
	if err != nil || code != 200 {
		return 0, fmt.Errorf("query: %d %.200s %v", code, b, err)
	}
	var r struct {
		Data struct {
			Result []struct{ Value [2]any }
		}
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Data.Result) == 0 {
		return 0, err
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return int64(v), err
}

// quantile is the nearest-rank quantile of sorted values.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return sorted[min(len(sorted)-1, int(math.Ceil(q*float64(len(sorted))))-1)]
}
