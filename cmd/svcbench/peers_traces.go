package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chclient"
)

// peersTraces sends the same OTLP/HTTP protobuf spans into svcd's native OTLP endpoint (the
// OpenTelemetry app) and into an OpenTelemetry Collector (otlp receiver → batch →
// clickhouseexporter) writing into a second engine process of its own, each until every
// span is queryable.
func peersTraces(ctx context.Context, st *stack, o peersOptions, bins map[string]string) error {
	const (
		perRequest = 1000
		workers    = 8
	)
	total := max(10_000, int(600_000*o.scale+0.5))
	services := []string{"checkout", "cart", "payments", "catalog", "frontend"}
	now := time.Now()
	bodies, err := spanRequests(0, total, perRequest, services, now)
	if err != nil {
		return err
	}
	// The warm-up: a third as many spans of other ids, sent to each path first and left
	// out of its figures, so that no path pays for starting cold (the broker's JIT
	// compiler, the table's creation).
	warmTotal := total / 3
	warm, err := spanRequests(total, warmTotal, perRequest, services, now)
	if err != nil {
		return err
	}

	if _, _, err := st.post(ctx, "/v1/query", []byte(`{"sql":"SELECT 1"}`), nil); err != nil {
		return err
	}
	engineDB, err := st.engineDatabase(ctx)
	if err != nil {
		return err
	}
	if err := st.installOpenTelemetry(ctx); err != nil {
		return err
	}
	// The Collector's engine: a second chengine, started as the stack starts its own.
	engine2, err := clickhouse.NewProcess(clickhouse.ProcessConfig{Binary: filepath.Join(os.Getenv("SVC_BIN_DIR"), "chengine"), Lib: os.Getenv("SVC_CHDB_LIB"),
		DataDir: filepath.Join(st.dir, "engine2"), Listen: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	if err := engine2.Start(ctx); err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		engine2.Shutdown(sctx)
	}()
	direct2, err := chclient.Open(chclient.Config{URL: engine2.URL(), MaxConns: 4})
	if err != nil {
		return err
	}
	defer direct2.Close()
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	dir := filepath.Join(st.dir, "otelcol")
	os.MkdirAll(dir, 0o755)
	// The ClickStack path: otlp receiver → batch (its defaults) → clickhouseexporter. The
	// engine serves HTTP without native block compression, so the exporter sends none.
	config := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
processors:
  batch: {}
exporters:
  clickhouse:
    endpoint: %s
    database: otel
    compress: none
    create_schema: true
    timeout: 30s
service:
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [clickhouse]
`, addr, engine2.URL())
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o644); err != nil {
		return err
	}
	col, err := startPeerAt(ctx, "otelcol", dir, bins["otelcol"], addr, "", "--config="+filepath.Join(dir, "config.yaml"))
	if err != nil {
		return err
	}
	defer col.stop()
	count := func(c *chclient.Client, table string) func() (int64, error) {
		return func() (int64, error) {
			r, err := c.QueryStrings(ctx, "SELECT toString(count()) FROM "+table)
			if err != nil || len(r) != 1 {
				return 0, err
			}
			return strconv.ParseInt(r[0], 10, 64)
		}
	}
	type target struct {
		name, url string
		headers   map[string]string
		cpu       pathCPU
		count     func() (int64, error)
	}
	targets := []target{
		{name: "this service (OTLP/HTTP, traces table)", url: st.url + "/otlp/v1/traces", headers: map[string]string{"Authorization": "Bearer " + st.key},
			cpu:   pathCPU{names: []string{"svcd", "engine", "broker"}, pids: []int{st.svcd.Process.Pid, st.engine.PID(), st.broker.PID()}},
			count: count(st.direct, fmt.Sprintf("`%s`.traces", engineDB))},
		{name: "OpenTelemetry Collector " + otelVersion + " → clickhouseexporter", url: col.url + "/v1/traces",
			cpu:   pathCPU{names: []string{"otelcol", "engine"}, pids: []int{col.pid(), engine2.PID()}},
			count: count(direct2, "otel.otel_traces")},
	}
	fmt.Printf("\ntraces: %d spans (random ids, %d services, 3 attributes each), OTLP/HTTP protobuf, %d requests of %d spans, %d concurrent\n",
		total, len(services), len(bodies), perRequest, workers)
	var svcRate float64
	report := [][]string{{"traces", "spans/s until all queryable", "spans/s acknowledged", "core-seconds per million spans (every process of the path)", "total", "ack → queryable of the last request"}}
	for _, t := range targets {
		h := map[string]string{"Content-Type": "application/x-protobuf"}
		for k, v := range t.headers {
			h[k] = v
		}
		send := func(bodies [][]byte) func(j int) error {
			return func(j int) error {
				code, b, err := httpDo(ctx, "POST", t.url, bodies[j], h)
				return answerError(t.name, code, b, err)
			}
		}
		if _, err := sendAll(ctx, len(warm), workers, send(warm)); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		if err := waitFor(ctx, t.name+" warm-up", int64(warmTotal), 10*time.Minute, t.count); err != nil {
			return err
		}
		c0 := t.cpu.read()
		start := time.Now()
		last, err := sendAll(ctx, len(bodies), workers, send(bodies))
		if err != nil {
			return err
		}
		if err := waitFor(ctx, t.name, int64(warmTotal+total), 10*time.Minute, t.count); err != nil {
			return err
		}
		end := time.Now()
		if svcRate == 0 {
			svcRate = float64(total) / end.Sub(start).Seconds()
		}
		by, sum := t.cpu.perMillionBy(c0, t.cpu.read(), total)
		report = append(report, []string{t.name, fmt.Sprintf("%.1fk", float64(total)/end.Sub(start).Seconds()/1000),
			fmt.Sprintf("%.1fk", float64(total)/last.Sub(start).Seconds()/1000), by, fmt.Sprintf("%.2f", sum), msf(end.Sub(last))})
	}
	table(report)
	if err := st.tracesHalfLoad(ctx, svcRate/2, total+warmTotal, perRequest, workers, services, now); err != nil {
		return fmt.Errorf("half load: %w", err)
	}
	fmt.Printf("load average after the traces workload: %s\n", loadavg())
	if o.hold {
		holdForInspection(ctx, st)
	}
	return nil
}

// tracesHalfLoad sends span requests paced at rate spans/s for 15 s into a database of
// their own and reports svcd's ack → queryable percentiles of its traces table (from
// each batch's oldest record's acknowledgement until the batch is inserted).
func (st *stack) tracesHalfLoad(ctx context.Context, rate float64, first, perRequest, workers int, services []string, now time.Time) error {
	const db, d = "half", 15 * time.Second
	if code, b, err := st.post(ctx, "/v1/databases", []byte(`{"name":"`+db+`"}`), nil); err != nil || code != 200 {
		return fmt.Errorf("create database %s: %d %s %v", db, code, b, err)
	}
	interval := time.Duration(float64(time.Second) * float64(perRequest) / rate)
	n := int(d/interval) + 1
	bodies, err := spanRequests(first, n*perRequest, perRequest, services, now)
	if err != nil {
		return err
	}
	h := map[string]string{"Content-Type": "application/x-protobuf", "Authorization": "Bearer " + st.key, "x-service-database": db}
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for j := range bodies {
		time.Sleep(time.Until(start.Add(time.Duration(j) * interval)))
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			code, b, err := httpDo(ctx, "POST", st.url+"/otlp/v1/traces", bodies[j], h)
			if err := answerError("half load", code, b, err); err != nil {
				failed.Store(err)
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return err
	}
	engineDB, err := st.engineDatabaseOf(ctx, db)
	if err != nil {
		return err
	}
	count := func() (int64, error) {
		r, err := st.direct.QueryStrings(ctx, fmt.Sprintf("SELECT toString(count()) FROM `%s`.traces", engineDB))
		if err != nil || len(r) != 1 {
			return 0, err
		}
		return strconv.ParseInt(r[0], 10, 64)
	}
	if err := waitFor(ctx, "half load", int64(len(bodies)*perRequest), time.Minute, count); err != nil {
		return err
	}
	fmt.Printf("half load: %d requests of %d spans at %.0f spans/s (half this service's rate above) for %s; ack → queryable p50 / p99 ms (svcd's freshness of the traces table): %s\n",
		len(bodies), perRequest, rate, d, st.freshnessIn(db, "traces"))
	return nil
}

// spanRequests are n spans (span k from first on: random-looking ids, one of the
// services, 3 attributes) as OTLP/HTTP protobuf requests of perRequest spans.
func spanRequests(first, n, perRequest int, services []string, now time.Time) ([][]byte, error) {
	scope := &commonpb.InstrumentationScope{Name: "svcbench", Version: "1.0"}
	var bodies [][]byte
	for start := 0; start < n; start += perRequest {
		m := min(perRequest, n-start)
		var rs []*tracepb.ResourceSpans
		for si, svc := range services {
			var spans []*tracepb.Span
			for i := si; i < m; i += len(services) {
				k := first + start + i
				t := uint64(now.Add(time.Duration(k) * time.Microsecond).UnixNano())
				spans = append(spans, &tracepb.Span{TraceId: id(2*k, 16), SpanId: id(2*k+1, 8), ParentSpanId: id(2*k+3, 8),
					Name: fmt.Sprintf("GET /items/%d", k%97), Kind: tracepb.Span_SPAN_KIND_SERVER,
					StartTimeUnixNano: t, EndTimeUnixNano: t + uint64(1e6+k%5000*1000),
					Attributes: []*commonpb.KeyValue{attr("http.request.method", "GET"), attr("http.route", "/items/{id}"),
						attr("user.id", strconv.Itoa(k%10_000))}})
			}
			rs = append(rs, &tracepb.ResourceSpans{Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{attr("service.name", svc), attr("host.name", "node-1")}},
				ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope, Spans: spans}}})
		}
		b, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
		if err != nil {
			return nil, err
		}
		bodies = append(bodies, b)
	}
	return bodies, nil
}
