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
	"net/http"
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

func id(n, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(n >> (8 * (i % 4)))
	}
	b[0] |= 1
	return b
}

// workloads builds every measurement of total rows in requests of batch rows.
func workloads(total, batch int) ([]*workload, error) {
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

func benchIngest(ctx context.Context, st *stack, total, batch, workers int, only string) error {
	all, err := workloads(total, batch)
	if err != nil {
		return err
	}
	var ws []*workload
	for _, w := range all {
		if only == "" || strings.Contains(","+only+",", ","+w.name+",") {
			ws = append(ws, w)
		}
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
	report := [][]string{{"workload", "rows", "edge rows/s", "edge MB/s", "edge " + "req/s", "direct rows/s", "ratio", "ack→queryable p50/p99 ms"}}
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
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		var failed atomic.Int64
		for range workers {
			wg.Go(func() {
				for {
					j := int(next.Add(1)) - 1
					if j >= len(w.bodies) {
						return
					}
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
							break
						}
						failed.Add(1)
						time.Sleep(50 * time.Millisecond)
					}
				}
			})
		}
		wg.Wait()
		acked := time.Since(start)
		for {
			n, err := st.direct.QueryStrings(ctx, fmt.Sprintf("SELECT toString(count()) FROM `%s`.`%s`", engineDB, table))
			if err == nil && len(n) == 1 && n[0] == fmt.Sprint(w.rowCount) {
				break
			}
			if time.Since(start) > 2*time.Minute {
				return fmt.Errorf("%s: rows not queryable after 2 minutes (%v, %v)", w.name, n, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		edge := time.Since(start)
		var fresh struct {
			A struct {
				P50 *float64 `json:"p50_ms"`
				P99 *float64 `json:"p99_ms"`
			} `json:"ack_to_queryable"`
		}
		freq, _ := http.NewRequest("GET", st.url+"/v1/tables/"+table+"/freshness", nil)
		freq.Header.Set("Authorization", "Bearer "+st.key)
		if fr, err := http.DefaultClient.Do(freq); err == nil {
			json.NewDecoder(fr.Body).Decode(&fresh)
			fr.Body.Close()
		}
		// The engine's direct batch insert of the same rows, same concurrency.
		direct := fmt.Sprintf("bench_direct.t%d", i)
		order := "tuple()"
		if key != "" {
			order = "doc.user.id.:Int64"
		}
		if err := st.direct.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (doc JSON) ENGINE = MergeTree ORDER BY (%s) SETTINGS allow_nullable_key = 1, non_replicated_deduplication_window = 10000", direct, order)); err != nil {
			return err
		}
		dstart := time.Now()
		next.Store(0)
		var derr atomic.Value
		for range workers {
			wg.Go(func() {
				for {
					j := int(next.Add(1)) - 1
					if j >= len(w.rows) {
						return
					}
					if err := st.direct.InsertRows(ctx, "bench_direct", fmt.Sprintf("t%d", i), fmt.Sprintf("d-%d", j), w.rows[j]); err != nil {
						derr.Store(err)
					}
				}
			})
		}
		wg.Wait()
		if e, ok := derr.Load().(error); ok {
			return fmt.Errorf("%s direct: %w", w.name, e)
		}
		dt := time.Since(dstart)
		edgeRate, directRate := float64(w.rowCount)/edge.Seconds(), float64(w.rowCount)/dt.Seconds()
		lat := "n/a"
		if fresh.A.P50 != nil && fresh.A.P99 != nil {
			lat = fmt.Sprintf("%.0f / %.0f", *fresh.A.P50, *fresh.A.P99)
		}
		report = append(report, []string{w.name, fmt.Sprint(w.rowCount), fmt.Sprintf("%.0f", edgeRate), fmt.Sprintf("%.1f", mb(w.bodyBytes, edge)),
			fmt.Sprintf("%.0f %s", float64(len(w.bodies))/edge.Seconds(), w.unit), fmt.Sprintf("%.0f", directRate), ratio(edgeRate, directRate), lat})
		_ = acked
		_ = failed.Load()
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
	fmt.Printf("ingest: %d rows per workload, %d rows per request, %d concurrent requests\n", total, batch, workers)
	fmt.Println("edge = HTTP edge → Kafka (acks=all) → consumer → engine, until every row is queryable;")
	fmt.Println("direct = the same rows inserted with clickhouse-go straight into the same engine; ratio = edge / direct")
	table(report)
	return nil
}

const benchPassword = "svcbench administrator password"

// installOpenTelemetry installs the OpenTelemetry app as the bootstrap administrator,
// for the native OTLP workloads.
func (st *stack) installOpenTelemetry(ctx context.Context) error {
	return st.installApp(ctx, "opentelemetry")
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
