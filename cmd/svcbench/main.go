// Command svcbench measures the hot paths end to end against the engine's direct path
// on the same engine, in the same run, and prints the ratios:
//
//	svcbench ingest   rows/s and MB/s of plain JSON, every transform and Firehose
//	                  deliveries through the edge, beside direct inserts of the same rows,
//	                  and ack-to-queryable latency
//	svcbench query    SELECT 1 latency and a 1M-row scan through the API beside the same
//	                  on the engine
//	svcbench cli      svc ingest of a 1M-row NDJSON file beside the edge fed by HTTP
//	                  workers, each until queryable
//	svcbench prometheus  remote-write samples/s through the edge until queryable,
//	                  beside direct RowBinary inserts of the same samples
//	svcbench workflows  N workflows at 1 s with a table sink: evaluations/s achieved
//	                  against scheduled, schedule lag, CPU of engine, Temporal and svcd
//	svcbench alerts   1,000 PromQL alerting rules at 60 s in svcd and in Prometheus
//	                  (built from the Go module proxy) over the same remote-written
//	                  series: evaluation lag p50/p99, CPU by process, the same alerts firing
//	svcbench prometheus -workload prom-query  query_range latency of rate and sum by
//	                  rate over 1,000 series x 1 day through svcd, beside the same
//	                  PromQL on Prometheus's in-memory TSDB head (-workload prom-write:
//	                  the remote-write part alone)
//	svcbench peers -workload metrics|logs|traces  the same data side by side into svcd
//	                  and the systems a user would run instead, built from the Go module
//	                  proxy into the cache: VictoriaMetrics and Prometheus (metrics),
//	                  VictoriaLogs (logs), the OpenTelemetry Collector into a second
//	                  engine (traces); rates until queryable, core-seconds per million by
//	                  process, query latencies and whether the answers match
//
// It starts its own Kafka broker, engine and svcd (go tool task bench-ingest does).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chclient"
	"github.com/svc-data/svc/infra/kafka"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "svcbench:", err)
		os.Exit(1)
	}
}

// stack is the broker, engine and svcd a benchmark runs against.
type stack struct {
	dir    string
	broker *kafka.Broker
	engine *clickhouse.Process
	svcd   *exec.Cmd
	url    string
	key    string
	direct *chclient.Client
	pprof  string // svcd's profile address, when it serves one
	env    []string
}

// startSvcd starts an svcd over the stack's broker and engine with its own data directory
// and address, and waits until it answers.
func (st *stack) startSvcd(dataDir string, env ...string) (*exec.Cmd, string, error) {
	bin := os.Getenv("SVC_BIN_DIR")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	addr := l.Addr().String()
	l.Close()
	url := "http://" + addr
	cmd := exec.Command(filepath.Join(bin, "svcd"))
	cmd.Env = append(os.Environ(), "SVC_HTTP_ADDR="+addr, "SVC_DATA_DIR="+dataDir,
		"SVC_KAFKA_SEEDS="+st.broker.Seeds(), "SVC_KAFKA_SASL_FILE="+st.broker.CredentialsFile(), "SVC_CLICKHOUSE_URL="+st.engine.URL(), "SVC_BOOTSTRAP_API_KEY="+st.key,
		"SVC_BOOTSTRAP_PASSWORD="+benchPassword, "SVC_LOG_LEVEL=warn")
	cmd.Env = append(cmd.Env, env...)
	logf, _ := os.Create(dataDir + ".log")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	for deadline := time.Now().Add(90 * time.Second); ; {
		if resp, err := http.Get(url + "/health"); err == nil {
			resp.Body.Close()
			return cmd, url, nil
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			return nil, "", fmt.Errorf("svcd did not start; see %s.log", dataDir)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func run(args []string) (err error) {
	if len(args) == 0 {
		return fmt.Errorf("usage: svcbench ingest|query|cli|prometheus|workflows|peers|alerts [flags]")
	}
	fs := flag.NewFlagSet("svcbench "+args[0], flag.ContinueOnError)
	// A million rows take a few seconds per workload: long enough that the last batch's linger
	// and the wait until it is queryable do not dominate the rate.
	rows := fs.Int("rows", 1_000_000, "rows per measurement")
	batch := fs.Int("batch", 1000, "rows per request")
	workers := fs.Int("workers", 8, "concurrent requests")
	directBatch := fs.Int("direct-batch", 100_000, "rows per insert of the engine's best direct path")
	directWorkers := fs.Int("direct-workers", 4, "concurrent inserts of the engine's best direct path")
	half := fs.Duration("half", 10*time.Second, "how long the half-load latency phase runs (0: skip)")
	pprofDir := fs.String("pprof-dir", "", "directory for CPU profiles of svcd during each ingest workload, prom-write and the query scan (sets SVC_PPROF_ADDR)")
	scanRows := fs.Int("scan-rows", 1_000_000, "rows of the scan measurement")
	only := fs.String("only", "", "comma-separated workloads to run (default all)")
	nWorkflows := fs.Int("workflows", 100, "workflows of the workflow benchmark")
	nAlerts := fs.Int("alerts", 1000, "alerts: PromQL alerting rules, in svcd and in Prometheus")
	wfDuration := fs.Duration("duration", 2*time.Minute, "measured time of the workflow benchmark (alerts: of each side)")
	promSeries := fs.Int("series", 1000, "series of the prometheus benchmark (rows are its samples, batch its samples per request; prom-query: series of a day at 15 s)")
	workload := fs.String("workload", "", "prometheus: comma-separated parts to run, prom-write and prom-query (default both); peers: metrics, logs or traces (comma-separated for several)")
	promStep := fs.Duration("step", 5*time.Minute, "prometheus prom-query: query_range step")
	promRuns := fs.Int("runs", 5, "prometheus prom-query and peers: runs of each query (the median is reported)")
	scale := fs.Float64("scale", 1, "peers: fraction of the issue's data sizes (1,000 series × a day, 1M log events, 600k spans)")
	cacheDir := fs.String("cache-dir", peersCache(), "peers: the cache the peers are built into (<dir>/peers/<name>/<version>)")
	hold := fs.Bool("hold", false, "peers: after each workload's report, keep every process running (addresses printed) until interrupted, to profile or query them by hand")
	promAB := fs.Bool("ab", false, "prometheus prom-query: also run each query through a second svcd with the PromQL push-down off, alternating with the first (push-down on)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	var popts peersOptions
	var peerBins map[string]string
	if args[0] == "peers" {
		// The peers are built (once, into the cache) before anything is started.
		if *workload == "" {
			return fmt.Errorf("peers: -workload metrics, logs or traces")
		}
		popts = peersOptions{workload: *workload, scale: *scale, cache: *cacheDir, runs: *promRuns, hold: *hold}
		if peerBins, err = buildPeers(ctx, popts); err != nil {
			return err
		}
	}
	var promBin string
	if args[0] == "alerts" {
		if promBin, err = goInstall(ctx, *cacheDir, "prometheus", promPackage, promVersion); err != nil {
			return err
		}
	}
	// Only the workflow and alert benchmarks run Temporal; the others leave it out of
	// their figures.
	workflows := "off"
	if args[0] == "workflows" || args[0] == "alerts" {
		workflows = "on"
	}
	env := []string{"SVC_WORKFLOWS=" + workflows}
	pprofAddr := ""
	if *pprofDir != "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		pprofAddr = l.Addr().String()
		l.Close()
		env = append(env, "SVC_PPROF_ADDR="+pprofAddr)
	}
	st, err := startStack(ctx, env...)
	if err != nil {
		return err
	}
	st.pprof = pprofAddr
	defer func() {
		if err != nil {
			fmt.Fprintln(os.Stderr, "svcbench: keeping", st.dir, "for inspection")
			st.dir = ""
		}
		st.stop()
	}()
	switch args[0] {
	case "ingest":
		err = benchIngest(ctx, st, ingestOptions{total: *rows, batch: *batch, workers: *workers, only: *only,
			directBatch: *directBatch, directWorkers: *directWorkers, half: *half, pprofDir: *pprofDir})
		return err
	case "query":
		err = benchQuery(ctx, st, *scanRows, *pprofDir)
		return err
	case "cli":
		err = benchCLI(ctx, st, *rows, *batch, *workers)
		return err
	case "prometheus":
		if *workload == "" || strings.Contains(*workload, "prom-write") {
			if err = benchPrometheus(ctx, st, *rows, *batch, *workers, *promSeries, *pprofDir); err != nil {
				return err
			}
		}
		if *workload == "" || strings.Contains(*workload, "prom-query") {
			err = benchPromQuery(ctx, st, *promSeries, *promStep, *promRuns, *promAB)
		}
		return err
	case "workflows":
		err = benchWorkflows(ctx, st, *nWorkflows, *wfDuration)
		return err
	case "peers":
		err = benchPeers(ctx, st, popts, peerBins)
		return err
	case "alerts":
		err = benchAlerts(ctx, st, alertsOptions{alerts: *nAlerts, duration: *wfDuration, cache: *cacheDir, pprofDir: *pprofDir}, promBin)
		return err
	}
	return fmt.Errorf("unknown benchmark %q", args[0])
}

func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	return ctx, cancel
}

func startStack(ctx context.Context, env ...string) (*stack, error) {
	bin := os.Getenv("SVC_BIN_DIR")
	libs, lib := os.Getenv("SVC_KAFKA_LIBS"), os.Getenv("SVC_CHDB_LIB")
	if bin == "" || libs == "" || lib == "" {
		return nil, fmt.Errorf("set SVC_BIN_DIR, SVC_KAFKA_LIBS and SVC_CHDB_LIB (go tool task bench-ingest does)")
	}
	dir, err := os.MkdirTemp("", "svcbench-*")
	if err != nil {
		return nil, err
	}
	st := &stack{dir: dir, key: "svck_benchmark_admin_key_0123456789"}
	log := slog.New(slog.DiscardHandler)
	if st.broker, err = kafka.NewBroker(kafka.BrokerConfig{LibsDir: libs, DataDir: filepath.Join(dir, "kafka"), Logger: log}); err != nil {
		return nil, err
	}
	if err := st.broker.Start(ctx); err != nil {
		return nil, err
	}
	if st.engine, err = clickhouse.NewProcess(clickhouse.ProcessConfig{Binary: filepath.Join(bin, "chengine"), Lib: lib,
		DataDir: filepath.Join(dir, "engine"), Listen: "127.0.0.1:0"}); err != nil {
		st.stop()
		return nil, err
	}
	if err := st.engine.Start(ctx); err != nil {
		st.stop()
		return nil, err
	}
	if st.direct, err = chclient.Open(chclient.Config{URL: st.engine.URL(), MaxConns: 16}); err != nil {
		st.stop()
		return nil, err
	}
	st.env = env
	if st.svcd, st.url, err = st.startSvcd(filepath.Join(dir, "svcd"), env...); err != nil {
		st.stop()
		return nil, err
	}
	return st, nil
}

func (st *stack) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if st.svcd != nil && st.svcd.Process != nil {
		st.svcd.Process.Signal(syscall.SIGTERM)
		st.svcd.Wait()
	}
	if st.direct != nil {
		st.direct.Close()
	}
	if st.engine != nil {
		st.engine.Shutdown(ctx)
	}
	if st.broker != nil {
		st.broker.Shutdown(ctx)
	}
	if st.dir != "" {
		os.RemoveAll(st.dir)
	}
}

func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func mb(bytes int64, d time.Duration) float64 { return float64(bytes) / (1 << 20) / d.Seconds() }

func table(rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			fmt.Fprintf(&b, "%-*s  ", widths[i], c)
		}
		fmt.Println(strings.TrimRight(b.String(), " "))
	}
}
