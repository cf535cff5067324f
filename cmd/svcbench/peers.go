package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The peers of svcbench peers: the systems a user would run instead, built from the Go
// module proxy at exact versions (the proxy may refuse to list versions) into the cache
// the Taskfile uses, once.
const (
	vmVersion        = "v1.151.0"
	vmPackage        = "github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics"
	promVersion      = "v0.316.0"
	promPackage      = "github.com/prometheus/prometheus/cmd/prometheus"
	vlVersion        = "v1.52.1"
	vlPackage        = "github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs"
	otelVersion      = "v0.165.0" // the builder, the collector core and its otlp receiver and batch processor
	otelBuilder      = "go.opentelemetry.io/collector/cmd/builder"
	clickhouseExport = "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/clickhouseexporter v0.165.1"
)

// peersOptions are the knobs of svcbench peers.
type peersOptions struct {
	workload string  // metrics, logs or traces (comma-separated for several)
	scale    float64 // fraction of the data sizes
	cache    string  // the Taskfile's cache directory
	runs     int     // runs of each query; the median is reported
	hold     bool    // keep the processes running after a workload's report, until interrupted
}

// holdForInspection prints where the workload's processes answer and blocks until the
// benchmark is interrupted (SIGINT or SIGTERM), so that they can be profiled and queried.
func holdForInspection(ctx context.Context, st *stack, peers ...*peer) {
	fmt.Printf("\nholding (-hold): svcd %s (key %s, profiles %s), engine %s\n", st.url, st.key, st.pprof, st.engine.URL())
	for _, p := range peers {
		fmt.Printf("  %s %s\n", p.name, p.url)
	}
	fmt.Println("interrupt (Ctrl-C) to stop")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	select {
	case <-ctx.Done():
	case <-sig:
	}
}

// peersCache is the cache directory: SVC_CACHE_DIR as the Taskfile reads it, else ~/.cache/svc.
func peersCache() string {
	if d := os.Getenv("SVC_CACHE_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "svc")
}

// goInstall builds pkg@version into <cache>/peers/<name>/<version> unless its binary is there,
// and returns the binary's path.
func goInstall(ctx context.Context, cache, name, pkg, version string) (string, error) {
	dir := filepath.Join(cache, "peers", name, version)
	bin := filepath.Join(dir, filepath.Base(pkg))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	fmt.Fprintf(os.Stderr, "svcbench: building %s@%s into %s (once)\n", pkg, version, dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "install", pkg+"@"+version)
	cmd.Dir = os.TempDir() // outside any module: no replace directives, no workspace
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod", "GOWORK=off")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w", pkg, version, err)
	}
	return bin, nil
}

// otelCollector builds an OpenTelemetry Collector with the official builder: the otlp
// receiver, the batch processor and the clickhouse exporter. The builder's own go mod tidy
// fails on a test-only module the proxy refuses, so it only generates the sources (its
// failure is tolerated once go.mod is written), then go mod tidy -e and go build run here.
func otelCollector(ctx context.Context, cache string) (string, error) {
	dir := filepath.Join(cache, "peers", "otelcol", otelVersion)
	bin := filepath.Join(dir, "otelcol-peers")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	builder, err := goInstall(ctx, cache, "otelcol-builder", otelBuilder, otelVersion)
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "src")
	config := fmt.Sprintf(`dist:
  name: otelcol-peers
  description: OpenTelemetry Collector for svcbench peers (otlp -> batch -> clickhouse)
  output_path: %s
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver %[2]s
processors:
  - gomod: go.opentelemetry.io/collector/processor/batchprocessor %[2]s
exporters:
  - gomod: %[3]s
`, src, otelVersion, clickhouseExport)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "builder.yaml"), []byte(config), 0o644); err != nil {
		return "", err
	}
	step := func(dir string, name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd.Run()
	}
	fmt.Fprintf(os.Stderr, "svcbench: building the OpenTelemetry Collector into %s (once)\n", dir)
	if err := step(dir, builder, "--config", "builder.yaml", "--skip-compilation"); err != nil {
		if _, serr := os.Stat(filepath.Join(src, "go.mod")); serr != nil {
			return "", fmt.Errorf("collector builder: %w", err)
		}
		fmt.Fprintln(os.Stderr, "svcbench: the builder failed after writing go.mod (its go mod tidy); tidying with -e")
	}
	if err := step(src, "go", "mod", "tidy", "-e"); err != nil {
		return "", fmt.Errorf("go mod tidy -e: %w", err)
	}
	if err := step(src, "go", "build", "-trimpath", "-o", bin, "."); err != nil {
		return "", fmt.Errorf("go build the collector: %w", err)
	}
	return bin, nil
}

// peer is one running peer process.
type peer struct {
	name string
	cmd  *exec.Cmd
	url  string
	dir  string
	// exited closes when the process has exited.
	exited chan struct{}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startPrometheus starts Prometheus in dir with config as its prometheus.yml, receiving
// remote write, and extra flags.
func startPrometheus(ctx context.Context, dir, bin, config string, extra ...string) (*peer, error) {
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		return nil, err
	}
	return startPeer(ctx, "prometheus", dir, bin, "/-/ready", append([]string{"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=ADDR", "--web.enable-remote-write-receiver",
		"--log.level=warn"}, extra...)...)
}

// startPeer starts bin with args (ADDR in an argument is replaced by a free address) and waits until GET url+health answers 200 (any answer when
// health is empty).
func startPeer(ctx context.Context, name, dir, bin, health string, args ...string) (*peer, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	return startPeerAt(ctx, name, dir, bin, addr, health, args...)
}

// startPeerAt is startPeer on a given address.
func startPeerAt(ctx context.Context, name, dir, bin, addr, health string, args ...string) (*peer, error) {
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "ADDR", addr)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p := &peer{name: name, url: "http://" + addr, dir: dir}
	p.cmd = exec.Command(bin, args...)
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	p.exited = make(chan struct{})
	go func() { p.cmd.Wait(); close(p.exited) }()
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if resp, err := http.Get(p.url + health); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 || health == "" {
				return p, nil
			}
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s exited at start; see %s", name, logf.Name())
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s did not start; see %s", name, logf.Name())
		}
	}
}

func (p *peer) pid() int { return p.cmd.Process.Pid }

func (p *peer) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// pathCPU is the CPU of every process of one path, read from /proc/<pid>/stat.
type pathCPU struct {
	names []string
	pids  []int
}

func (p pathCPU) read() []float64 {
	out := make([]float64, len(p.pids))
	for i, pid := range p.pids {
		out[i] = cpuSeconds(pid)
	}
	return out
}

// perMillionBy is "name a + name b = total" core-seconds per million of n between a and b.
func (p pathCPU) perMillionBy(a, b []float64, n int) (string, float64) {
	var parts []string
	total := 0.0
	for i := range a {
		v := (b[i] - a[i]) * 1e6 / float64(n)
		total += v
		parts = append(parts, fmt.Sprintf("%s %.2f", p.names[i], v))
	}
	return strings.Join(parts, " + "), total
}

// refused is an answer that a retry would not change (a 4xx other than 429).
type refused struct{ error }

func isRefused(err error) bool {
	var r refused
	return errors.As(err, &r)
}

// answerError is the error of a request answered code (want: 2xx), refused for a 4xx other than 429.
func answerError(what string, code int, body []byte, err error) error {
	if err == nil && code/100 == 2 {
		return nil
	}
	e := fmt.Errorf("%s: %d %.300s %v", what, code, body, err)
	if err == nil && code/100 == 4 && code != 429 {
		return refused{e}
	}
	return e
}

// sendAll posts n requests with workers concurrent senders, each retried until do
// reports it acknowledged, and returns when the last was acknowledged.
func sendAll(ctx context.Context, n, workers int, do func(j int) error) (time.Time, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failure atomic.Value
	var last atomic.Int64
	for range workers {
		wg.Go(func() {
			for {
				j := int(next.Add(1)) - 1
				if j >= n || ctx.Err() != nil || failure.Load() != nil {
					return
				}
				var err error
				for attempt := 0; ; attempt++ {
					if err = do(j); err == nil || attempt >= 100 || ctx.Err() != nil || isRefused(err) {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				if err != nil {
					failure.Store(err)
					return
				}
				now := time.Now().UnixNano()
				for {
					l := last.Load()
					if now <= l || last.CompareAndSwap(l, now) {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	if e, ok := failure.Load().(error); ok {
		return time.Time{}, e
	}
	return time.Unix(0, last.Load()), ctx.Err()
}

// sendShards sends each shard's requests in order, the shards concurrently, each request
// retried until do reports it acknowledged, and returns when the last was acknowledged.
func sendShards(ctx context.Context, shards [][][]byte, do func(body []byte) error) (time.Time, error) {
	var wg sync.WaitGroup
	var failure atomic.Value
	var mu sync.Mutex
	var last time.Time
	for _, shard := range shards {
		wg.Go(func() {
			for _, body := range shard {
				if ctx.Err() != nil || failure.Load() != nil {
					return
				}
				var err error
				for attempt := 0; ; attempt++ {
					if err = do(body); err == nil || attempt >= 100 || ctx.Err() != nil || isRefused(err) {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				if err != nil {
					failure.Store(err)
					return
				}
			}
			mu.Lock()
			if now := time.Now(); now.After(last) {
				last = now
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if e, ok := failure.Load().(error); ok {
		return time.Time{}, e
	}
	return last, ctx.Err()
}

// waitFor polls count every 100 ms until it returns want (at most limit).
func waitFor(ctx context.Context, what string, want int64, limit time.Duration, count func() (int64, error)) error {
	return waitForPeer(ctx, what, want, limit, 0, count)
}

// peerStall is how long a peer's count may stay short of what was sent, unchanged,
// before the wait ends (waitForPeer): far longer than any peer takes between two
// flushes.
const peerStall = time.Minute

// A stalledError is a peer's count that stayed short of what was sent, unchanged.
type stalledError struct {
	what      string
	got, want int64
	stall     time.Duration
}

func (e *stalledError) Error() string {
	return fmt.Sprintf("%s: %d of %d queryable, unchanged for %s", e.what, e.got, e.want, e.stall)
}

// waitForPeer is waitFor for a peer (stall > 0): a count that stays short of want and
// unchanged for stall ends the wait with a *stalledError, since a peer that lost
// acknowledged data is a finding of the run, reported, not a wait until the limit.
// (Prometheus v0.316.0 with an out-of-order window kept 23 series of a warm-up short
// of their samples for good after "aborting block compactions to persist the head
// block", twice on 2026-12-03.)
func waitForPeer(ctx context.Context, what string, want int64, limit, stall time.Duration, count func() (int64, error)) error {
	start := time.Now()
	changed := start
	deadline := start.Add(limit)
	trace := os.Getenv("SVCBENCH_TRACE") != ""
	var got, last int64
	var err error
	for {
		got, err = count()
		if trace && (got != last || err != nil) {
			fmt.Fprintf(os.Stderr, "svcbench: %s: %d of %d after %v (%v)\n", what, got, want, time.Since(start).Round(time.Millisecond), err)
		}
		if err == nil && got == want {
			return nil
		}
		if err == nil && got != last {
			changed, last = time.Now(), got
		}
		if stall > 0 && err == nil && got < want && time.Since(changed) > stall {
			return &stalledError{what: what, got: got, want: want, stall: stall}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d of %d queryable after %s (%v)", what, got, want, limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// httpDo sends one request and reads the answer whole.
func httpDo(ctx context.Context, method, url string, body []byte, headers map[string]string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// timed runs q runs times and returns the median latency and the last answer.
// timedTurns runs each query runs times, the queries taking turns (who goes first
// rotates), so that a load that comes and goes weighs on all of them alike, and returns
// each one's median duration and last answer. A query that fails stops it.
func timedTurns(runs int, qs ...func() ([]byte, error)) ([]time.Duration, [][]byte, error) {
	ds := make([][]time.Duration, len(qs))
	last := make([][]byte, len(qs))
	for r := range max(1, runs) {
		for k := range qs {
			i := (r + k) % len(qs)
			t := time.Now()
			b, err := qs[i]()
			if err != nil {
				return nil, nil, err
			}
			ds[i] = append(ds[i], time.Since(t))
			last[i] = b
		}
	}
	med := make([]time.Duration, len(qs))
	for i, d := range ds {
		slices.Sort(d)
		med[i] = d[len(d)/2]
	}
	return med, last, nil
}

// closeEnough is equality within 1e-9 relative (NaN equals NaN).
func closeEnough(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func msf(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// benchPeers runs the side-by-side benchmark of each workload named.
func benchPeers(ctx context.Context, st *stack, o peersOptions, bins map[string]string) error {
	fmt.Printf("svcbench peers: scale %g, load average at start %s\n", o.scale, loadavg())
	for _, w := range strings.Split(o.workload, ",") {
		var err error
		switch w {
		case "metrics":
			err = peersMetrics(ctx, st, o, bins)
		case "logs":
			err = peersLogs(ctx, st, o, bins)
		case "traces":
			err = peersTraces(ctx, st, o, bins)
		default:
			err = fmt.Errorf("unknown workload %q (metrics, logs or traces)", w)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
	}
	return nil
}

// buildPeers builds the peers the workloads need before anything starts.
func buildPeers(ctx context.Context, o peersOptions) (map[string]string, error) {
	bins := map[string]string{}
	var err error
	for _, w := range strings.Split(o.workload, ",") {
		switch w {
		case "metrics":
			if bins["vm"], err = goInstall(ctx, o.cache, "victoria-metrics", vmPackage, vmVersion); err != nil {
				return nil, err
			}
			if bins["prometheus"], err = goInstall(ctx, o.cache, "prometheus", promPackage, promVersion); err != nil {
				return nil, err
			}
		case "logs":
			if bins["vl"], err = goInstall(ctx, o.cache, "victoria-logs", vlPackage, vlVersion); err != nil {
				return nil, err
			}
		case "traces":
			if bins["otelcol"], err = otelCollector(ctx, o.cache); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown workload %q (metrics, logs or traces)", w)
		}
	}
	return bins, nil
}
