package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

// otlpSetup starts svcd with a password-bootstrapped admin and returns its session.
func otlpSetup(t *testing.T) (*svcdtest.Service, string) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	return s, "Bearer " + login(t, s, "admin", adminPassword)
}

const appScope = "?organization=default&cluster=default"

// sdkTraces sends n spans through a tracer provider with exp and shuts it down, which
// exports them.
func sdkTraces(t *testing.T, exp sdktrace.SpanExporter, n int) {
	t.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	tr := tp.Tracer("svc-test")
	for i := range n {
		_, span := tr.Start(context.Background(), fmt.Sprintf("op-%d", i))
		span.SetAttributes(attribute.Int("i", i))
		span.End()
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatalf("trace export: %v", err)
	}
}

func sdkLogs(t *testing.T, exp sdklog.Exporter, n int) {
	t.Helper()
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	l := lp.Logger("svc-test")
	for i := range n {
		var r otellog.Record
		r.SetTimestamp(time.Now())
		r.SetBody(attribute.StringValue(fmt.Sprintf("line %d", i)))
		r.SetSeverity(otellog.SeverityInfo)
		l.Emit(context.Background(), r)
	}
	if err := lp.Shutdown(context.Background()); err != nil {
		t.Fatalf("log export: %v", err)
	}
}

// sdkMetrics records one counter over n attribute sets: n data points at shutdown.
func sdkMetrics(t *testing.T, exp sdkmetric.Exporter, n int) {
	t.Helper()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(time.Hour))))
	c, err := mp.Meter("svc-test").Int64Counter("requests")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		c.Add(context.Background(), int64(i+1), metric.WithAttributes(attribute.Int("shard", i)))
	}
	if err := mp.Shutdown(context.Background()); err != nil {
		t.Fatalf("metric export: %v", err)
	}
}

// TestOpenTelemetryAppWithTheSDKExporters points the unmodified OpenTelemetry Go SDK
// exporters, over HTTP and gRPC, at svcd and counts the rows in the default, overridden
// and other-database tables exactly.
func TestOpenTelemetryAppWithTheSDKExporters(t *testing.T) {
	s, admin := otlpSetup(t)
	host := strings.TrimPrefix(s.URL, "http://")
	key := "Bearer " + s.AdminKey
	auth := map[string]string{"Authorization": key}
	ctx := context.Background()

	// Not installed: native OTLP is refused with a hint, the transform path is not.
	r := s.Must(403, "POST", "/otlp/v1/logs", `{}`, "Authorization", key, "Content-Type", "application/json")
	if !strings.Contains(string(r.Body), "PUT /v1/apps/opentelemetry") {
		t.Fatalf("gated answer: %s", r.Body)
	}
	conn, err := grpc.NewClient(host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	logsClient := collogspb.NewLogsServiceClient(conn)
	withKey := func(k string, kv ...string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, append([]string{"authorization", "Bearer " + k}, kv...)...)
	}
	if _, err := logsClient.Export(withKey(s.AdminKey), &collogspb.ExportLogsServiceRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("gRPC before install: %v", err)
	}
	s.Must(200, "PUT", "/v1/apps/opentelemetry"+appScope, nil, "Authorization", admin)
	s.Must(200, "POST", "/v1/databases", map[string]string{"name": "other"}, "Authorization", key)

	// HTTP exporters (protobuf), one gzip-compressed; the override header on traces.
	th, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(host), otlptracehttp.WithInsecure(),
		otlptracehttp.WithURLPath("/otlp/v1/traces"), otlptracehttp.WithHeaders(auth), otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	if err != nil {
		t.Fatal(err)
	}
	sdkTraces(t, th, 120)
	lh, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(host), otlploghttp.WithInsecure(), otlploghttp.WithURLPath("/otlp/v1/logs"),
		otlploghttp.WithHeaders(auth))
	if err != nil {
		t.Fatal(err)
	}
	sdkLogs(t, lh, 70)
	mh, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint(host), otlpmetrichttp.WithInsecure(), otlpmetrichttp.WithURLPath("/otlp/v1/metrics"),
		otlpmetrichttp.WithHeaders(auth), otlpmetrichttp.WithCompression(otlpmetrichttp.GzipCompression))
	if err != nil {
		t.Fatal(err)
	}
	sdkMetrics(t, mh, 5)
	overridden := map[string]string{"Authorization": key, "x-service-traces-table": "spans_http"}
	th2, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(host), otlptracehttp.WithInsecure(),
		otlptracehttp.WithURLPath("/otlp/v1/traces"), otlptracehttp.WithHeaders(overridden))
	if err != nil {
		t.Fatal(err)
	}
	sdkTraces(t, th2, 11)

	// gRPC exporters, gzip, overridden tables and the other database.
	tg, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(host), otlptracegrpc.WithInsecure(), otlptracegrpc.WithCompressor("gzip"),
		otlptracegrpc.WithHeaders(map[string]string{"authorization": key, "x-service-traces-table": "spans_grpc"}))
	if err != nil {
		t.Fatal(err)
	}
	sdkTraces(t, tg, 33)
	lg, err := otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(host), otlploggrpc.WithInsecure(), otlploggrpc.WithCompressor("gzip"),
		otlploggrpc.WithHeaders(map[string]string{"authorization": key, "x-service-database": "other"}))
	if err != nil {
		t.Fatal(err)
	}
	sdkLogs(t, lg, 44)
	mg, err := otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(host), otlpmetricgrpc.WithInsecure(),
		otlpmetricgrpc.WithHeaders(map[string]string{"authorization": key, "x-service-metrics-table": "metrics_grpc"}))
	if err != nil {
		t.Fatal(err)
	}
	sdkMetrics(t, mg, 6)

	// JSON over HTTP into the other database, with a known number of invalid spans:
	// partialSuccess counts them and the valid ones land.
	span := func(trace string) string {
		return fmt.Sprintf(`{"traceId":%q,"spanId":"0102030405060708","name":"j","startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000000000001"}`, trace)
	}
	var spans []string
	for i := range 9 {
		if i%3 == 0 {
			spans = append(spans, span("00000000000000000000000000000000")) // all-zero trace id: invalid
		} else {
			spans = append(spans, span(fmt.Sprintf("%032x", i+1)))
		}
	}
	body := `{"resourceSpans":[{"scopeSpans":[{"spans":[` + strings.Join(spans, ",") + `]}]}]}`
	r = s.Must(200, "POST", "/otlp/v1/traces?database=other", body, "Authorization", key, "Content-Type", "application/json")
	if !strings.Contains(string(r.Body), `"rejectedSpans":"3"`) || !strings.Contains(string(r.Body), "trace_id") {
		t.Fatalf("partial success: %s", r.Body)
	}
	r = s.Must(200, "POST", "/otlp/v1/logs", `{}`, "Authorization", key, "Content-Type", "application/json")
	if string(r.Body) != `{}` {
		t.Fatalf("empty export: %s", r.Body)
	}
	r = s.Must(200, "POST", "/otlp/v1/logs", ``, "Authorization", key, "Content-Type", "application/x-protobuf")
	if len(r.Body) != 0 {
		t.Fatalf("empty protobuf export answered %x", r.Body)
	}
	s.Must(400, "POST", "/otlp/v1/logs", `{"resourceLogs":`, "Authorization", key, "Content-Type", "application/json")
	s.Must(404, "POST", "/otlp/v1/logs?database=nope", `{}`, "Authorization", key, "Content-Type", "application/json")

	for table, want := range map[string]int{"traces": 120, "logs": 70, "metrics": 5, "spans_http": 11, "spans_grpc": 33,
		"other.logs": 44, "metrics_grpc": 6, "other.traces": 6} {
		s.WaitCount(table, want, 2*time.Minute)
	}
	// The trace tables an export made (HTTP and gRPC) are sorted by service and time, with
	// the span's strings declared; a query reads them as any path.
	for _, table := range []string{"traces", "spans_grpc"} {
		var desc struct {
			SortingKey string `json:"sorting_key"`
		}
		s.Must(200, "GET", "/v1/tables/"+table, nil, "Authorization", key).JSON(t, &desc)
		if desc.SortingKey != "service_name, timestamp" {
			t.Errorf("%s: sorting key %q", table, desc.SortingKey)
		}
		d := s.Query("SELECT count() AS n, countIf(length(trace_id) = 32 AND length(span_id) = 16) AS ids, " +
			"uniqExact(service_name) AS services, min(timestamp) > '2020-01-01' AS timed, toTypeName(any(name)) AS type FROM " + table)
		if d[0]["n"] != d[0]["ids"] || d[0]["services"] != float64(1) || d[0]["timed"] != float64(1) || d[0]["type"] != "String" {
			t.Errorf("%s: %v", table, d)
		}
	}
	if logs := s.Query("SELECT toTypeName(any(severity_text)) AS type FROM logs"); logs[0]["type"] == "String" {
		t.Errorf("logs: %v, want its paths dynamic", logs)
	}

	// gRPC calls are in the platform request log beside HTTP requests.
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		r := s.Must(200, "GET", "/v1/logs?limit=200", nil, "Authorization", key)
		return strings.Contains(string(r.Body), "/opentelemetry.proto.collector.logs.v1.LogsService/Export") &&
			strings.Contains(string(r.Body), "/otlp/v1/traces"), fmt.Sprintf("no gRPC export in the request log: %s", r.Body)
	})

	// A key that expired: UNAUTHENTICATED over gRPC, 401 over HTTP.
	var created struct{ Token string }
	expires := time.Now().Add(5 * time.Second).UTC().Format(time.RFC3339Nano)
	s.Must(200, "POST", "/v1/keys", map[string]any{"name": "short", "permission": "write_only", "expires_at": expires},
		"Authorization", key).JSON(t, &created)
	if _, err := logsClient.Export(withKey(created.Token), &collogspb.ExportLogsServiceRequest{}); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		_, err := logsClient.Export(withKey(created.Token), &collogspb.ExportLogsServiceRequest{})
		if status.Code(err) == codes.Unauthenticated {
			return true, ""
		}
		if err != nil {
			t.Fatalf("expired key over gRPC: %v", err)
		}
		return false, "expired key over gRPC: still accepted"
	})
	one := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{
		LogRecords: []*logspb.LogRecord{{TimeUnixNano: 1}}}}}}}
	if _, err := logsClient.Export(withKey(s.AdminKey, "idempotency-key", "not a valid key"), one); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("bad idempotency key over gRPC: %v", err)
	}
	if _, err := logsClient.Export(withKey(s.AdminKey, "x-service-database", "nope"), one); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown database over gRPC: %v", err)
	}
	if _, err := logsClient.Export(withKey("svck_nope"), &collogspb.ExportLogsServiceRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("unknown key over gRPC: %v", err)
	}
	s.Must(401, "POST", "/otlp/v1/logs", `{}`, "Authorization", "Bearer "+created.Token, "Content-Type", "application/json")

	// Uninstalled again: refused on both protocols; the data stays.
	s.Must(200, "DELETE", "/v1/apps/opentelemetry"+appScope, nil, "Authorization", admin)
	s.Must(403, "POST", "/otlp/v1/logs", `{}`, "Authorization", key, "Content-Type", "application/json")
	if _, err := logsClient.Export(withKey(s.AdminKey), &collogspb.ExportLogsServiceRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("gRPC after uninstall: %v", err)
	}
	if n := s.Count("traces"); n != 120 {
		t.Fatalf("traces after uninstall: %d", n)
	}
}

// TestOTLPHundredMiBLimit sends bodies of exactly 100 MiB and 1 byte more after
// decompression, over HTTP (plain and gzip) and gRPC. The bodies are generated here: a
// valid export padded with JSON whitespace, or with an unknown protobuf field, which
// receivers must skip.
func TestOTLPHundredMiBLimit(t *testing.T) {
	t.Parallel() // see TestMain
	s, admin := otlpSetup(t)
	key := "Bearer " + s.AdminKey
	s.Must(200, "PUT", "/v1/apps/opentelemetry"+appScope, nil, "Authorization", admin)
	const limit = 100 << 20
	record := `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1700000000000000000","body":{"stringValue":"big"}}]}]}]}`
	padded := func(n int) []byte {
		b := make([]byte, n)
		copy(b, record)
		for i := len(record); i < n; i++ {
			b[i] = ' '
		}
		return b
	}
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		w, _ := gzip.NewWriterLevel(&out, gzip.BestSpeed)
		w.Write(b)
		w.Close()
		return out.Bytes()
	}
	s.Must(200, "POST", "/otlp/v1/logs", padded(limit), "Authorization", key, "Content-Type", "application/json")
	s.Must(413, "POST", "/otlp/v1/logs", padded(limit+1), "Authorization", key, "Content-Type", "application/json")
	s.Must(200, "POST", "/otlp/v1/logs", gz(padded(limit)), "Authorization", key, "Content-Type", "application/json", "Content-Encoding", "gzip")
	s.Must(413, "POST", "/otlp/v1/logs", gz(padded(limit+1)), "Authorization", key, "Content-Type", "application/json", "Content-Encoding", "gzip")

	conn, err := grpc.NewClient(strings.TrimPrefix(s.URL, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(limit+1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := collogspb.NewLogsServiceClient(conn)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", key)
	message := func(size int) *collogspb.ExportLogsServiceRequest {
		req := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{
			LogRecords: []*logspb.LogRecord{{TimeUnixNano: 1700000000000000000}}}}}}}
		// An unknown bytes field (number 1000) fills the message to size exactly.
		base := 0
		for pad := size; ; pad-- {
			u := protowire.AppendBytes(protowire.AppendTag(nil, 1000, protowire.BytesType), make([]byte, pad))
			req.ProtoReflect().SetUnknown(u)
			got := protoSize(req)
			if got == size {
				return req
			}
			if base == 0 {
				base = got - size
				pad = size - base + 1 // jump close, then step
			}
		}
	}
	if _, err := client.Export(ctx, message(limit), grpc.UseCompressor("gzip")); err != nil {
		t.Fatalf("exactly 100 MiB over gRPC: %v", err)
	}
	if _, err := client.Export(ctx, message(limit+1)); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("100 MiB + 1 over gRPC: %v", err)
	}
	s.WaitCount("logs", 3, 2*time.Minute)
}

func protoSize(m *collogspb.ExportLogsServiceRequest) int { return proto.Size(m) }

// TestRequestsOverOneRecordLandWhole sends a request whose rows pass what one log record
// holds (48 MiB): its parts go in one transaction and land exactly once, also when the
// request is retried with its idempotency key.
func TestRequestsOverOneRecordLandWhole(t *testing.T) {
	t.Parallel() // see TestMain
	s := svcdtest.Start(t)
	key := "Bearer " + s.AdminKey
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "big"}, "Authorization", key)
	const n = 200_000
	pad := strings.Repeat("p", 280)
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"i":%d,"pad":"%s"}`, i, pad)
	}
	b.WriteByte(']')
	if b.Len() < 56<<20 {
		t.Fatalf("the body is %d bytes, not over one record", b.Len())
	}
	for range 2 {
		s.Must(202, "POST", "/v1/tables/big", b.Bytes(), "Authorization", key, "Idempotency-Key", "big-request-1")
	}
	s.WaitCount("big", n, 5*time.Minute)
	if d := s.Query("SELECT uniqExact(i) AS u FROM big"); d[0]["u"] != float64(n) {
		t.Fatalf("distinct rows: %v", d)
	}
}

// TestOTLPBackpressure runs svcd with one insert slot and no wait for it, and eight SDK
// exporters (HTTP and gRPC) at once: refused exports are answered 503 with Retry-After
// (gRPC: UNAVAILABLE with RetryInfo), the exporters retry them, and every record lands
// exactly once.
func TestOTLPBackpressure(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword, "SVC_MAX_CONCURRENT_INGEST=1", "SVC_INGEST_WAIT=1ms")
	installApp(t, s, "opentelemetry")
	host := strings.TrimPrefix(s.URL, "http://")
	key := "Bearer " + s.AdminKey
	ctx := context.Background()
	const perExporter, batch = 400, 20
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			exp, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(host), otlploghttp.WithInsecure(), otlploghttp.WithURLPath("/otlp/v1/logs"),
				otlploghttp.WithHeaders(map[string]string{"Authorization": key}),
				otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: 5 * time.Minute}))
			if err != nil {
				t.Error(err)
				return
			}
			sdkLogsBatched(t, exp, perExporter, batch, i)
		})
		wg.Go(func() {
			exp, err := otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(host), otlploggrpc.WithInsecure(),
				otlploggrpc.WithHeaders(map[string]string{"authorization": key}),
				otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: 5 * time.Minute}))
			if err != nil {
				t.Error(err)
				return
			}
			sdkLogsBatched(t, exp, perExporter, batch, 10+i)
		})
	}
	wg.Wait()
	s.WaitCount("logs", 8*perExporter, 3*time.Minute)
	// The refusals happened, on both protocols, and are in the request log (written
	// asynchronously: wait for them).
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		var logs struct {
			Logs []struct {
				Route  string
				Status int
			}
		}
		s.Must(200, "GET", "/v1/logs?limit=200&status_codes=503", nil, "Authorization", key).JSON(t, &logs)
		refused := map[string]int{}
		for _, e := range logs.Logs {
			if e.Status == 503 {
				refused[e.Route]++
			}
		}
		return refused["/otlp/v1/logs"] > 0 && refused["/opentelemetry.proto.collector.logs.v1.LogsService/Export"] > 0,
			fmt.Sprintf("no backpressure seen on both protocols (503s by route: %v); the test proves nothing", refused)
	})
}

// sdkLogsBatched emits n records through a batch processor exporting batch at a time.
func sdkLogsBatched(t *testing.T, exp sdklog.Exporter, n, batch, who int) {
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithExportMaxBatchSize(batch),
		// An export's retries run inside its timeout (30 s by default): on a loaded machine
		// with one insert slot, the 503s can outlast that, and the exporter drops the batch.
		sdklog.WithExportTimeout(5*time.Minute), sdklog.WithMaxQueueSize(n))))
	l := lp.Logger("svc-test")
	for i := range n {
		var r otellog.Record
		r.SetTimestamp(time.Now())
		r.SetBody(attribute.StringValue(fmt.Sprintf("exporter %d line %d", who, i)))
		l.Emit(context.Background(), r)
	}
	if err := lp.Shutdown(context.Background()); err != nil {
		t.Errorf("log export: %v", err)
	}
}

// TestRealOTLPExportNearTheLimitLandsWhole sends a real protobuf logs export of almost
// 100 MiB (gzip over HTTP): its rows pass what one log record holds, travel as parts of
// one transaction, and land exactly once, also when the export is retried with its key.
func TestRealOTLPExportNearTheLimitLandsWhole(t *testing.T) {
	t.Parallel() // see TestMain
	s, admin := otlpSetup(t)
	key := "Bearer " + s.AdminKey
	s.Must(200, "PUT", "/v1/apps/opentelemetry"+appScope, nil, "Authorization", admin)
	line := strings.Repeat("payment accepted for order; ", 140) // about 4 KiB
	var recs []*logspb.LogRecord
	for i := 0; ; i++ {
		recs = append(recs, &logspb.LogRecord{TimeUnixNano: 1700000000000000000 + uint64(i),
			Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: fmt.Sprintf("%d %s", i, line)}}})
		if i%1000 == 999 && proto.Size(&collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{
			ScopeLogs: []*logspb.ScopeLogs{{LogRecords: recs}}}}}) > 95<<20 {
			break
		}
	}
	body, err := proto.Marshal(&collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{LogRecords: recs}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	w, _ := gzip.NewWriterLevel(&zipped, gzip.BestSpeed)
	w.Write(body)
	w.Close()
	for range 2 {
		s.Must(200, "POST", "/otlp/v1/logs", zipped.Bytes(), "Authorization", key, "Content-Type", "application/x-protobuf",
			"Content-Encoding", "gzip", "Idempotency-Key", "near-the-limit")
	}
	s.WaitCount("logs", len(recs), 5*time.Minute)
	if d := s.Query("SELECT uniqExact(toString(body)) AS u FROM logs"); d[0]["u"] != float64(len(recs)) {
		t.Fatalf("distinct records: %v, want %d", d, len(recs))
	}
}
