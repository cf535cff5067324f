package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/svc-data/svc/infra/localproc"
)

// cpuSeconds is the CPU time (user + system) pid used so far.
func cpuSeconds(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // clock ticks; 100 per second on Linux
}

// treeCPUSeconds is pid's CPU time and its children's: the embedded Temporal's recorded
// process is its forwarder, the server that forwarder's child. A child is listed under
// the thread that started it, any of a Go process's threads, so every task is read (the
// main thread's list alone missed the server and counted Temporal near zero).
func treeCPUSeconds(pid int) float64 {
	total := cpuSeconds(pid)
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		raw, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(raw)) {
			if kid, err := strconv.Atoi(f); err == nil {
				total += cpuSeconds(kid)
			}
		}
	}
	return total
}

// benchWorkflows runs n workflows at a 1 s interval, each a small SELECT with a table
// sink, for the duration, and reports evaluations per second achieved against those
// scheduled, the schedule lag (start minus nominal time) and the CPU of the engine,
// Temporal and svcd.
func benchWorkflows(ctx context.Context, st *stack, n int, dur time.Duration) error {
	if code, body, err := st.post(ctx, "/v1/tables", []byte(`{"name":"bench_sink"}`), nil); err != nil || code != 200 {
		return fmt.Errorf("create the sink table: %d %s %v", code, body, err)
	}
	scope := "?organization=default&cluster=default"
	for i := range n {
		body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("bench-%03d", i), "interval_seconds": 1,
			"query": map[string]any{"database": "default", "sql": fmt.Sprintf("SELECT %d AS w, now64(3) AS at", i)},
			"sinks": []any{map[string]any{"type": "table", "settings": map[string]any{"database": "default", "table": "bench_sink"}}}})
		if code, resp, err := st.post(ctx, "/v1/workflows"+scope, body, nil); err != nil || code != 201 {
			return fmt.Errorf("create workflow %d: %d %s %v", i, code, resp, err)
		}
	}
	temporalPID := localproc.ReadPID(filepath.Join(st.dir, "svcd", "temporal", "temporal.pid"))
	if temporalPID == 0 {
		return fmt.Errorf("no embedded Temporal; set SVC_TEMPORAL_BIN (go tool task bench-workflows does)")
	}
	// Warm up: every schedule has fired at least once.
	time.Sleep(10 * time.Second)
	pids := map[string]int{"engine": st.engine.PID(), "temporal": temporalPID, "svcd": st.svcd.Process.Pid}
	before := map[string]float64{}
	cpuOf := func(k string, p int) float64 {
		if k == "temporal" {
			return treeCPUSeconds(p)
		}
		return cpuSeconds(p)
	}
	for k, p := range pids {
		before[k] = cpuOf(k, p)
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(dur):
	}
	end := time.Now()
	elapsed := end.Sub(start).Seconds()
	cpu := map[string]float64{}
	for k, p := range pids {
		cpu[k] = (cpuOf(k, p) - before[k]) / elapsed
	}
	// The run log says what ran: evaluations that started in the window, and their lag.
	rows, err := st.direct.QueryStrings(ctx, fmt.Sprintf(`SELECT concat(toString(count()), ' ', toString(countIf(status = 'ok')), ' ',
		toString(quantileExact(0.5)(assumeNotNull(schedule_lag_ms))), ' ', toString(quantileExact(0.99)(assumeNotNull(schedule_lag_ms))))
		FROM _svc.workflow_log WHERE event_type = 'workflow.evaluated' AND source = 'scheduled'
		AND ts >= fromUnixTimestamp64Milli(%d) AND ts < fromUnixTimestamp64Milli(%d)`, start.UnixMilli(), end.UnixMilli()))
	if err != nil || len(rows) != 1 {
		return fmt.Errorf("read the run log: %v %v", rows, err)
	}
	var evals, ok int
	var p50, p99 float64
	fmt.Sscan(rows[0], &evals, &ok, &p50, &p99)
	scheduled := float64(n) // one per workflow per second
	achieved := float64(evals) / elapsed
	fmt.Printf("%d workflows at 1 s with a table sink, %s measured after a 10 s warm-up\n\n", n, dur)
	table([][]string{
		{"measure", "value"},
		{"evaluations/s scheduled", fmt.Sprintf("%.1f", scheduled)},
		{"evaluations/s achieved", fmt.Sprintf("%.1f (ratio %s; %d ok of %d)", achieved, ratio(achieved, scheduled), ok, evals)},
		{"schedule lag p50 / p99", fmt.Sprintf("%.0f / %.0f ms", p50, p99)},
		{"CPU cores: engine / Temporal / svcd", fmt.Sprintf("%.2f / %.2f / %.2f", cpu["engine"], cpu["temporal"], cpu["svcd"])},
	})
	return nil
}
