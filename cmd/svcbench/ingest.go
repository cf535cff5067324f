package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform"
	"github.com/svc-data/svc/pipeline/transform/firehose"
)

// workload is one ingest measurement: request bodies for the edge and the rows they
// become, for the direct insert.
type workload struct {
	name      string
	query     string // query string of the insert
	headers   map[string]string
	bodies    [][]byte
	rows      [][]byte // decoded rows per body, for the direct path
	rowCount  int
	bodyBytes int64
	unit      string // what one request is called in the report
	// grpc sends the bodies as OTLP/gRPC exports of this signal instead of HTTP posts.
	grpc string
	msgs []proto.Message // the bodies decoded, for gRPC
	// native posts to /otlp/v1/<native> (the OpenTelemetry app) instead of the insert.
	native string
}

func (st *stack) post(ctx context.Context, path string, body []byte, headers map[string]string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", st.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+st.key)
	for k, v := range headers {
		if k == "Authorization" && v == "" {
			req.Header.Del(k)
			continue
		}
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

func plainRows(start, n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		id := start + i
		fmt.Fprintf(&b, `{"ts":"2026-11-21 05:%02d:%02d.%03d","user":{"id":%d,"plan":"pro"},"status":%d,"path":"/api/v1/items/%d","ua":"Mozilla/5.0 (X11; Linux x86_64)","bytes":%d}`,
			id/60%60, id%60, id%1000, id, 200+id%5*100, id%977, id*37%10000)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func attr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// id is the n-th id of size bytes: random-looking, as exporters' trace and span ids are
// (the same n gives the same id in every run), never all zero.
func id(n, size int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	b[0] |= 1
	return b
}

// workloads builds every measurement of total rows in requests of batch rows.
func workloads(total, batch int, only string) ([]*workload, error) {
	now := time.Now()
	res := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{attr("service.name", "checkout"), attr("host.name", "web-1")}}
	scope := &commonpb.InstrumentationScope{Name: "bench", Version: "1.0"}
	gen := map[string]func(start, n int) ([]byte, string, map[string]string){
		"plain JSON": func(start, n int) ([]byte, string, map[string]string) { return plainRows(start, n), "", nil },
		"otlp-traces": func(start, n int) ([]byte, string, map[string]string) {
			var spans []*tracepb.Span
			for i := range n {
				spans = append(spans, &tracepb.Span{TraceId: id(start+i, 16), SpanId: id(start+i, 8), Name: fmt.Sprintf("GET /items/%d", (start+i)%97),
					Kind: tracepb.Span_SPAN_KIND_SERVER, StartTimeUnixNano: uint64(now.UnixNano()), EndTimeUnixNano: uint64(now.UnixNano() + 1e6),
					Attributes: []*commonpb.KeyValue{attr("http.request.method", "GET"), attr("http.route", "/items/{id}")}})
			}
			b, _ := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{Resource: res,
				ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope, Spans: spans}}}}})
			return b, "transform=otlp-traces", map[string]string{"Content-Type": "application/x-protobuf"}
		},
		"otlp-logs": func(start, n int) ([]byte, string, map[string]string) {
			var recs []*logspb.LogRecord
			for i := range n {
				recs = append(recs, &logspb.LogRecord{TimeUnixNano: uint64(now.UnixNano()), SeverityText: "INFO", SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_INFO,
					Body:       &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: fmt.Sprintf("payment %d accepted for order %d", start+i, (start+i)*7)}},
					Attributes: []*commonpb.KeyValue{attr("order.channel", "web")}})
			}
			b, _ := proto.Marshal(&collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{Resource: res,
				ScopeLogs: []*logspb.ScopeLogs{{Scope: scope, LogRecords: recs}}}}})
			return b, "transform=otlp-logs", map[string]string{"Content-Type": "application/x-protobuf"}
		},
		"otlp-metrics": func(start, n int) ([]byte, string, map[string]string) {
			var points []*metricspb.NumberDataPoint
			for i := range n {
				points = append(points, &metricspb.NumberDataPoint{TimeUnixNano: uint64(now.UnixNano()), Value: &metricspb.NumberDataPoint_AsInt{AsInt: int64(start + i)},
					Attributes: []*commonpb.KeyValue{attr("region", fmt.Sprintf("r%d", (start+i)%7))}})
			}
			b, _ := proto.Marshal(&colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{Resource: res,
				ScopeMetrics: []*metricspb.ScopeMetrics{{Scope: scope, Metrics: []*metricspb.Metric{{Name: "orders",
					Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{DataPoints: points, IsMonotonic: true,
						AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}}}}}}}}})
			return b, "transform=otlp-metrics", map[string]string{"Content-Type": "application/x-protobuf"}
		},
		"cloudwatch-logs": func(start, n int) ([]byte, string, map[string]string) {
			var events []map[string]any
			for i := range n {
				events = append(events, map[string]any{"id": fmt.Sprint(start + i), "timestamp": now.UnixMilli(),
					"message": fmt.Sprintf("[INFO] request %d served in %d ms", start+i, i%40)})
			}
			b, _ := json.Marshal(map[string]any{"messageType": "DATA_MESSAGE", "owner": "111111111111", "logGroup": "/aws/lambda/checkout",
				"logStream": "2026/11/21/[$LATEST]abc", "subscriptionFilters": []string{"all"}, "logEvents": events})
			return gz(b), "transform=cloudwatch-logs", nil
		},
		"cloudtrail": func(start, n int) ([]byte, string, map[string]string) {
			var recs []map[string]any
			for i := range n {
				recs = append(recs, map[string]any{"eventVersion": "1.08", "eventTime": now.UTC().Format(time.RFC3339),
					"eventSource": "s3.amazonaws.com", "eventName": "GetObject", "awsRegion": "eu-west-1", "sourceIPAddress": "203.0.113.7",
					"userIdentity":      map[string]any{"type": "IAMUser", "userName": fmt.Sprintf("u%d", (start+i)%50)},
					"requestParameters": map[string]any{"bucketName": "data", "key": fmt.Sprintf("k/%d", start+i)}, "eventID": hex.EncodeToString(id(start+i, 16))})
			}
			b, _ := json.Marshal(map[string]any{"Records": recs})
			return gz(b), "transform=cloudtrail", nil
		},
		"firehose": func(start, n int) ([]byte, string, map[string]string) {
			var recs []map[string]string
			var doc []json.RawMessage
			json.Unmarshal(plainRows(start, n), &doc)
			for _, d := range doc {
				recs = append(recs, map[string]string{"data": base64.StdEncoding.EncodeToString(d)})
			}
			b, _ := json.Marshal(map[string]any{"requestId": fmt.Sprintf("bench-%d", start), "timestamp": now.UnixMilli(), "records": recs})
			return b, "transform=firehose", map[string]string{"Authorization": "", "X-Cloud-Firehose-Access-Key": "KEY"}
		},
	}
	// The OpenTelemetry app's native endpoints, with the same bodies as the transforms.
	for _, signal := range []string{"traces", "logs", "metrics"} {
		gen["OTLP/HTTP "+signal] = gen["otlp-"+signal]
		gen["OTLP/gRPC "+signal] = gen["otlp-"+signal]
	}
	order := []string{"plain JSON", "otlp-traces", "OTLP/HTTP traces", "OTLP/gRPC traces", "otlp-logs", "OTLP/HTTP logs", "OTLP/gRPC logs",
		"otlp-metrics", "OTLP/HTTP metrics", "OTLP/gRPC metrics", "cloudwatch-logs", "cloudtrail", "firehose"}
	var out []*workload
	for _, name := range order {
		if only != "" && !strings.Contains(","+only+",", ","+name+",") {
			continue
		}
		w := &workload{name: name, unit: "requests"}
		if name == "firehose" {
			w.unit = "deliveries"
		}
		if signal, ok := strings.CutPrefix(name, "OTLP/HTTP "); ok {
			w.native = signal
		}
		if signal, ok := strings.CutPrefix(name, "OTLP/gRPC "); ok {
			w.grpc, w.unit = signal, "exports"
		}
		for start := 0; start < total; start += batch {
			body, q, headers := gen[name](start, min(batch, total-start))
			w.query, w.headers = q, headers
			w.bodies = append(w.bodies, body)
			if w.grpc != "" {
				m := map[string]proto.Message{"traces": &coltracepb.ExportTraceServiceRequest{}, "logs": &collogspb.ExportLogsServiceRequest{},
					"metrics": &colmetricspb.ExportMetricsServiceRequest{}}[w.grpc]
				if err := proto.Unmarshal(body, m); err != nil {
					return nil, err
				}
				w.msgs = append(w.msgs, m)
			}
			w.bodyBytes += int64(len(body))
			// The same rows the edge will produce, for the direct insert.
			buf := rows.Buffer{}
			var err error
			switch {
			case name == "plain JSON":
				err = rows.DecodeJSON(body, &buf)
			case name == "firehose":
				_, err = firehose.Decode(body, nil, &buf)
			default:
				t, _ := transform.Get(strings.TrimPrefix(q, "transform="))
				err = t.Decode(transform.Request{Body: body, ContentType: headers["Content-Type"]}, &buf)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: decode: %w", name, err)
			}
			w.rows = append(w.rows, buf.B)
			w.rowCount += buf.Rows
		}
		out = append(out, w)
	}
	return out, nil
}

// ingestOptions are the ingest benchmark's knobs.
type ingestOptions struct {
	total, batch, workers int
	only                  string
	// directBatch and directWorkers shape the engine's best direct path: large batches,
	// enough concurrent inserts to fill the engine.
	directBatch, directWorkers int
	// half is how long the half-load latency phase runs (0: not run).
	half time.Duration
	// pprofDir, when set, receives a CPU profile of svcd over the first seconds of
	// each workload's edge phase (svcd serves profiles at SVC_PPROF_ADDR).
	pprofDir string
}

func benchIngest(ctx context.Context, st *stack, o ingestOptions) error {
	total, batch, workers := o.total, o.batch, o.workers
	ws, err := workloads(total, batch, o.only)
	if err != nil {
		return err
	}
	if len(ws) == 0 {
		return fmt.Errorf("no workload named in -only %q", o.only)
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
	conn, err := grpc.NewClient(strings.TrimPrefix(st.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(100<<20)))
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := st.direct.Exec(ctx, "CREATE DATABASE IF NOT EXISTS bench_direct"); err != nil {
		return err
	}
	di, err := st.directInserter()
	if err != nil {
		return err
	}
	defer di.Close()
	pr := st.procs()
	// Warm up every process (the broker's JIT above all) and the direct formats on a
	// slice of the first workload's rows, unmeasured.
	if err := st.warmUp(ctx, conn, di, ws[0], engineDB, workers, o.directWorkers, o.directBatch); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	// What the processes use when nothing is sent, per second: part of every phase's
	// account (the broker's JVM, svcd's and the engine's background work).
	st.quiet(ctx)
	i0, t0 := pr.read(), time.Now()
	time.Sleep(3 * time.Second)
	idle := perMillion(i0, pr.read(), int(1e6*time.Since(t0).Seconds()))
	directTable := 0
	// newDirect creates an empty direct table shaped like the edge's.
	newDirect := func(key string) (string, error) {
		directTable++
		name := fmt.Sprintf("t%d", directTable)
		order := "tuple()"
		if key != "" {
			order = "doc.user.id.:Int64"
		}
		return name, st.direct.Exec(ctx, fmt.Sprintf("CREATE TABLE bench_direct.%s (doc JSON) ENGINE = MergeTree ORDER BY (%s) SETTINGS allow_nullable_key = 1, non_replicated_deduplication_window = 10000", name, order))
	}
	// The fastest direct format, measured on the first workload's rows.
	best := fmtJSONAsObject
	var formats []string
	report := [][]string{{"workload", "rows", "edge rows/s", "edge MB/s", "edge " + "req/s", "best direct rows/s", "ratio",
		fmt.Sprintf("direct %d-row rows/s", batch), "ratio", "ack→queryable p50/p99 ms"}}
	cpuReport := [][]string{{"workload", "edge inserts", "edge: engine / broker / svcd = total", "best direct: engine", fmt.Sprintf("%d-row direct: engine", batch)}}
	for i, w := range ws {
		table := fmt.Sprintf("b%d", i)
		key := ""
		if w.name == "plain JSON" || w.name == "firehose" {
			key = "user.id"
		}
		tb, _ := json.Marshal(map[string]string{"name": table, "sorting_key": key})
		if code, b, err := st.post(ctx, "/v1/tables", tb, nil); err != nil || code != 200 {
			return fmt.Errorf("create %s: %d %s %v", table, code, b, err)
		}
		headers := map[string]string{}
		for k, v := range w.headers {
			if v == "KEY" {
				v = st.key
			}
			headers[k] = v
		}
		// Through the edge: workers post every body, retrying until acknowledged, then
		// the rows are counted on the engine until all are queryable.
		st.quiet(ctx)
		profiled := st.profile(o.pprofDir, w.name)
		c0 := pr.read()
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					j := int(next.Add(1)) - 1
					if j >= len(w.bodies) {
						return
					}
					if err := st.send(ctx, conn, w, table, headers, j); err != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		if err := st.waitCount(ctx, engineDB, table, w.rowCount, start); err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		edge := time.Since(start)
		// The inserts the consumer made: parts of level 0 (merged-away parts stay listed,
		// inactive, for minutes).
		inserts := "n/a"
		if n, err := st.direct.QueryStrings(ctx, fmt.Sprintf("SELECT toString(count()) FROM system.parts WHERE database = '%s' AND (table = '%s' OR startsWith(table, '%s__')) AND level = 0", engineDB, table, table)); err == nil && len(n) == 1 {
			if k, _ := strconv.Atoi(n[0]); k > 0 {
				inserts = fmt.Sprintf("%s (%d rows each)", n[0], w.rowCount/k)
			}
		}
		// CPU is read once the merges the phase set off are done, so that every phase is
		// charged for its own merges (small parts cost more merging).
		st.quiet(ctx)
		edgeCPU := perMillion(c0, pr.read(), w.rowCount)
		<-profiled
		lat := st.freshness(table)
		// The engine's best direct path: large batches in its fastest format.
		batches := chunk(w.rows, o.directBatch)
		if i == 0 {
			// Best of two alternating rounds per format: the machine is shared.
			fs := directFormats
			rates := make([]float64, len(fs))
			cpus := make([]float64, len(fs))
			for round := range 2 {
				for k, f := range fs {
					st.quiet(ctx)
					tf, err := newDirect(key)
					if err != nil {
						return err
					}
					c0 := pr.read()
					d, err := di.run(ctx, f, "bench_direct", tf, batches, o.directWorkers)
					if err != nil {
						return fmt.Errorf("%s: %w", w.name, err)
					}
					rates[k] = max(rates[k], float64(w.rowCount)/d.Seconds())
					st.quiet(ctx)
					if c := perMillion(c0, pr.read(), w.rowCount).engine; round == 0 || c < cpus[k] {
						cpus[k] = c
					}
				}
			}
			for k, f := range fs {
				formats = append(formats, fmt.Sprintf("%s %.0f rows/s (engine %.2f core-s per million)", f, rates[k], cpus[k]))
				if rates[k] > rates[slices.Index(fs, best)] {
					best = f
				}
			}
		}
		// The engine's direct insert of the same rows in requests of the edge's size.
		st.quiet(ctx)
		t1k, err := newDirect(key)
		if err != nil {
			return err
		}
		c0 = pr.read()
		d1k, err := di.run(ctx, best, "bench_direct", t1k, w.rows, workers)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		st.quiet(ctx)
		direct1kCPU := perMillion(c0, pr.read(), w.rowCount)
		st.quiet(ctx)
		tb2, err := newDirect(key)
		if err != nil {
			return err
		}
		c0 = pr.read()
		dbest, err := di.run(ctx, best, "bench_direct", tb2, batches, o.directWorkers)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		st.quiet(ctx)
		bestCPU := perMillion(c0, pr.read(), w.rowCount)
		rate := func(d time.Duration) float64 { return float64(w.rowCount) / d.Seconds() }
		edgeRate := rate(edge)
		report = append(report, []string{w.name, fmt.Sprint(w.rowCount), fmt.Sprintf("%.0f", edgeRate), fmt.Sprintf("%.1f", mb(w.bodyBytes, edge)),
			fmt.Sprintf("%.0f %s", float64(len(w.bodies))/edge.Seconds(), w.unit),
			fmt.Sprintf("%.0f", rate(dbest)), ratio(edgeRate, rate(dbest)), fmt.Sprintf("%.0f", rate(d1k)), ratio(edgeRate, rate(d1k)), lat})
		cpuReport = append(cpuReport, []string{w.name, inserts, edgeCPU.String(), fmt.Sprintf("%.2f", bestCPU.engine), fmt.Sprintf("%.2f", direct1kCPU.engine)})
		if w.name == "plain JSON" && o.half > 0 {
			// Ingest-to-queryable at half the saturation rate just measured.
			if err := st.halfLoad(ctx, conn, w, headers, edgeRate/2, o.half, workers); err != nil {
				return err
			}
		}
	}
	// Ack-to-queryable latency without load: one small request every 50 ms, each
	// watched until its row is queryable.
	if code, b, err := st.post(ctx, "/v1/tables", []byte(`{"name":"latency"}`), nil); err != nil || code != 200 {
		return fmt.Errorf("create latency table: %d %s %v", code, b, err)
	}
	var lats []time.Duration
	for i := range 100 {
		sent := time.Now()
		if code, b, err := st.post(ctx, "/v1/tables/latency", []byte(fmt.Sprintf(`{"probe":%d}`, i)), nil); err != nil || code != 202 {
			return fmt.Errorf("latency probe: %d %s %v", code, b, err)
		}
		acked := time.Now()
		for {
			n, err := st.direct.QueryStrings(ctx, fmt.Sprintf("SELECT toString(count()) FROM `%s`.latency WHERE doc.probe.:Int64 = %d", engineDB, i))
			if err == nil && len(n) == 1 && n[0] == "1" {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		lats = append(lats, time.Since(acked))
		time.Sleep(max(0, 50*time.Millisecond-time.Since(sent)))
	}
	fmt.Printf("ack-to-queryable without load (100 single-row requests, batch linger %s default): p50 %s, p99 %s\n\n",
		"200ms", ms(pct(lats, 0.5)), ms(pct(lats, 0.99)))
	fmt.Printf("ingest: %d rows per workload, %d rows per request, %d concurrent requests; load average %s\n", total, batch, workers, loadavg())
	fmt.Println("edge = HTTP edge → Kafka (acks=all) → consumer → engine, until every row is queryable;")
	fmt.Printf("best direct = the same rows straight into the same engine in %d-row batches, %d concurrent, as %s (the fastest of: %s on %s);\n",
		o.directBatch, o.directWorkers, best, strings.Join(formats, ", "), ws[0].name)
	fmt.Printf("direct %d-row = the same rows as %s in the edge's request size, %d concurrent; ratio = edge / direct\n", batch, best, workers)
	table(report)
	fmt.Println()
	fmt.Printf("CPU core-seconds per million rows (user+system from /proc/<pid>/stat, before each phase and after its merges); idle, per second: engine / broker / svcd = %s\n", idle)
	table(cpuReport)
	return nil
}

// send posts body j of w through the edge into table, retrying until acknowledged.
func (st *stack) send(ctx context.Context, conn *grpc.ClientConn, w *workload, table string, headers map[string]string, j int) error {
	h := map[string]string{"Idempotency-Key": fmt.Sprintf("%s-%d", table, j)}
	for k, v := range headers {
		h[k] = v
	}
	for {
		var code int
		var err error
		switch {
		case w.grpc != "":
			err = exportGRPC(ctx, conn, st.key, w.grpc, table, h["Idempotency-Key"], w.msgs[j])
			code = 200
		case w.native != "":
			h["x-service-"+w.native+"-table"] = table
			code, _, err = st.post(ctx, "/otlp/v1/"+w.native, w.bodies[j], h)
		default:
			code, _, err = st.post(ctx, "/v1/tables/"+table+"?"+w.query, w.bodies[j], h)
		}
		if err == nil && code >= 200 && code < 300 {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitCount waits until table holds n rows.
func (st *stack) waitCount(ctx context.Context, engineDB, table string, n int, start time.Time) error {
	for {
		got, err := st.direct.QueryStrings(ctx, fmt.Sprintf("SELECT toString(count()) FROM `%s`.`%s`", engineDB, table))
		if err == nil && len(got) == 1 && got[0] == fmt.Sprint(n) {
			return nil
		}
		if time.Since(start) > 2*time.Minute {
			return fmt.Errorf("rows not queryable after 2 minutes (%v, %v)", got, err)
		}
		// Each count costs the engine about as much as SELECT 1 (a few ms of CPU): polled
		// every 20 ms it alone used to add about a core-second per million rows to the
		// engine's account.
		time.Sleep(100 * time.Millisecond)
	}
}

// freshness is the table's ack-to-queryable p50 / p99 as svcd measured it.
func (st *stack) freshness(table string) string { return st.freshnessIn("", table) }

// freshnessIn is freshness of a table of database db ("" for the key's default).
func (st *stack) freshnessIn(db, table string) string {
	var fresh struct {
		A struct {
			P50 *float64 `json:"p50_ms"`
			P99 *float64 `json:"p99_ms"`
		} `json:"ack_to_queryable"`
	}
	freq, _ := http.NewRequest("GET", st.url+"/v1/tables/"+table+"/freshness", nil)
	freq.Header.Set("Authorization", "Bearer "+st.key)
	if db != "" {
		freq.Header.Set("x-service-database", db)
	}
	if fr, err := http.DefaultClient.Do(freq); err == nil {
		json.NewDecoder(fr.Body).Decode(&fresh)
		fr.Body.Close()
	}
	if fresh.A.P50 == nil || fresh.A.P99 == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f / %.0f", *fresh.A.P50, *fresh.A.P99)
}

// halfLoad sends w's requests paced at rate rows/s for d into a new table and reports
// the ack-to-queryable percentiles svcd measured, and the same measured here: from each
// request's acknowledgement until its rows counted on the engine.
func (st *stack) halfLoad(ctx context.Context, conn *grpc.ClientConn, w *workload, headers map[string]string, rate float64, d time.Duration, workers int) error {
	table := "half"
	if code, b, err := st.post(ctx, "/v1/tables", []byte(`{"name":"half","sorting_key":"user.id"}`), nil); err != nil || code != 200 {
		return fmt.Errorf("create %s: %d %s %v", table, code, b, err)
	}
	engineDB, err := st.engineDatabase(ctx)
	if err != nil {
		return err
	}
	st.quiet(ctx)
	perReq := float64(w.rowCount) / float64(len(w.bodies))
	interval := time.Duration(float64(time.Second) * perReq / rate)
	n := min(len(w.bodies), int(d/interval)+1)
	// Each request's rows are found by count: requests are acknowledged in order of
	// sending closely enough that the count passing the sum of all earlier requests'
	// rows marks a request queryable (an upper bound on its latency).
	acked := make([]time.Time, n)
	var mu sync.Mutex
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for j := range n {
		time.Sleep(time.Until(start.Add(time.Duration(j) * interval)))
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			st.send(ctx, conn, w, table, headers, j)
			mu.Lock()
			acked[j] = time.Now()
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := st.waitCount(ctx, engineDB, table, int(perReq)*n, start); err != nil {
		return err
	}
	fmt.Printf("half load: %d requests of %.0f rows at %.0f rows/s (half the edge's saturation rate) for %s; ack→queryable p50/p99 ms (svcd's freshness): %s\n",
		n, perReq, rate, time.Since(start).Round(time.Millisecond), st.freshness(table))
	return nil
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

const benchPassword = "svcbench administrator password"

// installOpenTelemetry installs the OpenTelemetry app as the bootstrap administrator,
// for the native OTLP workloads.
func (st *stack) installOpenTelemetry(ctx context.Context) error {
	return st.installApp(ctx, "opentelemetry")
}

// installApp installs an app as the bootstrap administrator.
func (st *stack) installApp(ctx context.Context, app string) error {
	resp, err := http.Post(st.url+"/v1/auth/login", "application/json",
		strings.NewReader(`{"username":"admin","password":"`+benchPassword+`"}`))
	if err != nil {
		return err
	}
	var login struct{ Token string }
	err = json.NewDecoder(resp.Body).Decode(&login)
	resp.Body.Close()
	if err != nil || login.Token == "" {
		return fmt.Errorf("log in as the bootstrap admin: %d %v", resp.StatusCode, err)
	}
	req, _ := http.NewRequestWithContext(ctx, "PUT", st.url+"/v1/apps/"+app+"?organization=default&cluster=default", nil)
	req.Header.Set("Authorization", "Bearer "+login.Token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("install the %s app: %d", app, resp.StatusCode)
	}
	return nil
}

// exportGRPC sends one export request as an OTLP/gRPC Export of signal into table.
func exportGRPC(ctx context.Context, conn *grpc.ClientConn, key, signal, table, idem string, m proto.Message) error {
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key, "x-service-"+signal+"-table", table, "idempotency-key", idem)
	var err error
	switch req := m.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		_, err = coltracepb.NewTraceServiceClient(conn).Export(ctx, req)
	case *collogspb.ExportLogsServiceRequest:
		_, err = collogspb.NewLogsServiceClient(conn).Export(ctx, req)
	case *colmetricspb.ExportMetricsServiceRequest:
		_, err = colmetricspb.NewMetricsServiceClient(conn).Export(ctx, req)
	}
	return err
}
