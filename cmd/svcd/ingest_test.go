package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/infra/testenv"
)

// withQuery adds a query string to every request: the OTLP exporters keep only the
// path of their endpoint URL, and the transform is chosen by ?transform=.
type withQuery struct{ query string }

func (q withQuery) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.RawQuery = q.query
	return http.DefaultTransport.RoundTrip(r)
}

func TestOpenTelemetrySDKExportersThroughTransforms(t *testing.T) {
	s := svcdtest.Start(t)
	for _, tbl := range []string{"traces", "logs", "metrics"} {
		s.Must(200, "POST", "/v1/tables", map[string]string{"name": tbl})
	}
	ctx := context.Background()
	host := strings.TrimPrefix(s.URL, "http://")
	auth := map[string]string{"Authorization": "Bearer " + s.AdminKey}
	res := resource.NewSchemaless(attribute.String("service.name", "checkout"), attribute.String("deployment.environment", "e2e"))

	texp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(host), otlptracehttp.WithInsecure(),
		otlptracehttp.WithURLPath("/v1/tables/traces"), otlptracehttp.WithHeaders(auth),
		otlptracehttp.WithCompression(otlptracehttp.GzipCompression),
		otlptracehttp.WithHTTPClient(&http.Client{Transport: withQuery{"transform=otlp-traces"}}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(texp), sdktrace.WithResource(res))
	tr := tp.Tracer("e2e-tracer")
	for i := range 5 {
		_, span := tr.Start(ctx, fmt.Sprintf("GET /item/%d", i))
		span.SetAttributes(attribute.Int("item.id", i), attribute.String("http.request.method", "GET"))
		span.End()
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("trace export: %v", err)
	}

	lexp, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(host), otlploghttp.WithInsecure(),
		otlploghttp.WithURLPath("/v1/tables/logs"), otlploghttp.WithHeaders(auth),
		otlploghttp.WithHTTPClient(&http.Client{Transport: withQuery{"transform=otlp-logs"}}))
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(lexp)), sdklog.WithResource(res))
	logger := lp.Logger("e2e-logger")
	for i := range 3 {
		var rec otellog.Record
		rec.SetBody(attribute.StringValue(fmt.Sprintf("payment %d accepted", i)))
		rec.SetSeverity(otellog.SeverityInfo)
		rec.SetSeverityText("INFO")
		rec.SetTimestamp(time.Now())
		logger.Emit(ctx, rec)
	}
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatalf("log export: %v", err)
	}

	mexp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint(host), otlpmetrichttp.WithInsecure(),
		otlpmetrichttp.WithURLPath("/v1/tables/metrics"), otlpmetrichttp.WithHeaders(auth),
		otlpmetrichttp.WithHTTPClient(&http.Client{Transport: withQuery{"transform=otlp-metrics"}}))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp)), sdkmetric.WithResource(res))
	counter, _ := mp.Meter("e2e-meter").Int64Counter("orders")
	counter.Add(ctx, 3, metricAttr("region", "eu"))
	counter.Add(ctx, 4, metricAttr("region", "us"))
	if err := mp.Shutdown(ctx); err != nil {
		t.Fatalf("metric export: %v", err)
	}

	s.WaitCount("traces", 5, time.Minute)
	s.WaitCount("logs", 3, time.Minute)
	s.WaitCount("metrics", 2, time.Minute)
	spans := s.Query("SELECT name, service_name, scope_name, attributes.`item.id` AS item, length(trace_id) AS n FROM traces ORDER BY item")
	if len(spans) != 5 || spans[0]["name"] != "GET /item/0" || spans[0]["service_name"] != "checkout" ||
		spans[0]["scope_name"] != "e2e-tracer" || spans[4]["item"] != float64(4) || spans[0]["n"] != float64(32) {
		t.Fatalf("spans: %v", spans)
	}
	logs := s.Query("SELECT body, severity_text, service_name FROM logs ORDER BY body")
	if len(logs) != 3 || logs[0]["body"] != "payment 0 accepted" || logs[0]["severity_text"] != "INFO" || logs[0]["service_name"] != "checkout" {
		t.Fatalf("logs: %v", logs)
	}
	points := s.Query("SELECT name, type, attributes.region AS region, value FROM metrics ORDER BY region")
	if len(points) != 2 || points[0]["name"] != "orders" || points[0]["type"] != "Sum" || points[0]["region"] != "eu" || points[0]["value"] != float64(3) {
		t.Fatalf("metric points: %v", points)
	}
}

func TestCloudWatchAndCloudTrailSamples(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "cw"})
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "ct"})
	gz := func(path string) []byte {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(raw)
		zw.Close()
		return b.Bytes()
	}
	root := "../../pipeline/transform"
	var cwEvents struct{ LogEvents []any }
	raw, _ := os.ReadFile(filepath.Join(root, "cloudwatchlogs/testdata/data_message.json"))
	json.Unmarshal(raw, &cwEvents)
	s.Must(202, "POST", "/v1/tables/cw?transform=cloudwatch-logs", gz(filepath.Join(root, "cloudwatchlogs/testdata/data_message.json")))
	s.Must(202, "POST", "/v1/tables/cw?transform=cloudwatch-logs", gz(filepath.Join(root, "cloudwatchlogs/testdata/control_message.json")))
	var trail struct{ Records []any }
	raw, _ = os.ReadFile(filepath.Join(root, "cloudtrail/testdata/log_file.json"))
	json.Unmarshal(raw, &trail)
	s.Must(202, "POST", "/v1/tables/ct?transform=cloudtrail", gz(filepath.Join(root, "cloudtrail/testdata/log_file.json")), "Content-Encoding", "gzip")
	s.WaitCount("cw", len(cwEvents.LogEvents), time.Minute)
	s.WaitCount("ct", len(trail.Records), time.Minute)
	if d := s.Query("SELECT count() AS n FROM cw WHERE log_group != '' AND message != ''"); d[0]["n"] != float64(len(cwEvents.LogEvents)) {
		t.Fatalf("cloudwatch rows: %v", d)
	}
	if d := s.Query("SELECT count() AS n FROM ct WHERE eventName != '' AND timestamp IS NOT NULL"); d[0]["n"] != float64(len(trail.Records)) {
		t.Fatalf("cloudtrail rows: %v", d)
	}
	r := s.Must(400, "POST", "/v1/tables/cw?transform=syslog", "x")
	if !strings.Contains(string(r.Body), "otlp-traces") {
		t.Fatalf("unknown transform error should list the names: %s", r.Body)
	}
}

func firehoseBody(requestID string, records ...string) map[string]any {
	var recs []map[string]string
	for _, r := range records {
		recs = append(recs, map[string]string{"data": base64.StdEncoding.EncodeToString([]byte(r))})
	}
	return map[string]any{"requestId": requestID, "timestamp": time.Now().UnixMilli(), "records": recs}
}

func TestFirehoseDeliveries(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "fh"})
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "tsv"})
	key := []string{"Authorization", "", "X-Cloud-Firehose-Access-Key", s.AdminKey}
	// A JSON object, an array of objects, and text without columns.
	body := firehoseBody("req-1", `{"kind":"object"}`, `[{"kind":"array"},{"kind":"array"}]`, "plain text line")
	r := s.Must(200, "POST", "/v1/tables/fh?transform=firehose", body, key...)
	var ack struct {
		RequestID string `json:"requestId"`
		Timestamp int64  `json:"timestamp"`
	}
	r.JSON(t, &ack)
	if ack.RequestID != "req-1" || ack.Timestamp == 0 {
		t.Fatalf("firehose answer %s", r.Body)
	}
	// Firehose retries a delivery it did not see acknowledged: it must land once.
	s.Must(200, "POST", "/v1/tables/fh?transform=firehose", body, append(key, "X-Amz-Firehose-Request-Id", "req-1")...)
	// TSV with columns, from the stream's common attributes.
	s.Must(200, "POST", "/v1/tables/tsv?transform=firehose", firehoseBody("req-2", "a\t1\nb\t2\n"),
		append(key, "X-Amz-Firehose-Common-Attributes", `{"commonAttributes":{"columns":"name,n"}}`)...)
	s.WaitCaughtUp("fh", time.Minute)
	if n := s.Count("fh"); n != 4 {
		t.Fatalf("%d rows after a retried delivery, want 4", n)
	}
	if d := s.Query("SELECT data FROM fh WHERE data IS NOT NULL"); len(d) != 1 || d[0]["data"] != "plain text line" {
		t.Fatalf("text without columns: %v", d)
	}
	if d := s.Query("SELECT name, n FROM tsv ORDER BY name"); len(d) != 2 || d[1]["name"] != "b" {
		t.Fatalf("tsv rows: %v", d)
	}
	// Anything else is a 400 in Firehose's error shape, naming the record.
	r = s.Must(400, "POST", "/v1/tables/fh?transform=firehose", firehoseBody("req-3", "\xff\xfe\x00binary"), key...)
	var fail struct {
		RequestID    string `json:"requestId"`
		ErrorMessage string `json:"errorMessage"`
	}
	r.JSON(t, &fail)
	if fail.RequestID != "req-3" || !strings.Contains(fail.ErrorMessage, "records[0]") {
		t.Fatalf("firehose error %s", r.Body)
	}
	r = s.Must(401, "POST", "/v1/tables/fh?transform=firehose", firehoseBody("req-4", `{}`), "Authorization", "", "X-Cloud-Firehose-Access-Key", "svck_nope")
	r.JSON(t, &fail)
	if fail.RequestID != "req-4" || fail.ErrorMessage == "" {
		t.Fatalf("firehose auth error %s", r.Body)
	}
}

func TestURLImport(t *testing.T) {
	var served atomic.Int64
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		for i := range 1000 {
			fmt.Fprintf(w, "{\"i\":%d,\"ts\":\"2026-11-21 05:00:00\"}\n", i)
		}
	}))
	defer src.Close()
	s := svcdtest.Start(t, "SVC_URL_IMPORT_ALLOW=127.0.0.1/32")
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "imp"})
	u := src.URL + "/data.ndjson"
	r := s.Must(200, "POST", "/v1/tables/imp?url="+urlQuery(u)+"&query_id=import-1", nil)
	var res struct{ Inserted *int }
	r.JSON(t, &res)
	if res.Inserted == nil || *res.Inserted != 1000 || r.Header.Get("X-Engine-Query-Id") != "import-1" {
		t.Fatalf("import answer %s, query id %q", r.Body, r.Header.Get("X-Engine-Query-Id"))
	}
	if n := s.Count("imp"); n != 1000 {
		t.Fatalf("%d rows imported", n)
	}
	// The import recorded its paths: they read typed.
	if d := s.Query("SELECT toString(sum(i)) AS s, toTypeName(i) AS t FROM imp GROUP BY t"); len(d) != 1 || d[0]["s"] != "499500" || d[0]["t"] != "Nullable(Int64)" {
		t.Fatalf("imported paths are not typed: %v", d)
	}
	// Retrying with the same query id does not import twice.
	s.Must(200, "POST", "/v1/tables/imp?url="+urlQuery(u)+"&query_id=import-1", nil)
	if n := s.Count("imp"); n != 1000 {
		t.Fatalf("%d rows after a retried import", n)
	}
	for _, bad := range []string{"http://10.1.2.3/x", "http://169.254.169.254/latest/meta-data", "file:///etc/passwd",
		"http://[::1]:9/x", "gopher://example.com/", "http://user:pw@example.com/",
		// IPv6 forms embedding IPv4: compatible, SIIT, NAT64, 6to4, Teredo.
		"http://[::127.0.0.1]:" + strings.Split(src.URL, ":")[2] + "/data.ndjson", "http://[::ffff:0:a01:203]/x",
		"http://[64:ff9b::a9fe:a9fe]/x", "http://[2002:a01:203::1]/x", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x"} {
		r := s.Must(400, "POST", "/v1/tables/imp?url="+urlQuery(bad), nil)
		if !strings.Contains(string(r.Body), `"code":"url_refused"`) {
			t.Errorf("%s: %s", bad, r.Body)
		}
	}
	s.Must(400, "POST", "/v1/tables/imp?url="+urlQuery(u)+"&transform=cloudtrail", nil)
}

func urlQuery(s string) string {
	return strings.NewReplacer(":", "%3A", "/", "%2F", "?", "%3F", "&", "%26", "@", "%40", "[", "%5B", "]", "%5D").Replace(s)
}

func TestAutomaticSortingKey(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "auto"})
	var rows []string
	for i := range 200 {
		rows = append(rows, fmt.Sprintf(`{"timestamp":"2026-11-21 05:%02d:00","service_name":"svc%d","msg":"m%d"}`, i%60, i%3, i))
	}
	s.Must(202, "POST", "/v1/tables/auto", "["+strings.Join(rows, ",")+"]")
	s.WaitCount("auto", 200, time.Minute)
	var desc struct {
		SortingKey string  `json:"sorting_key"`
		Automatic  *string `json:"automatic_sorting_key"`
		Physical   *string `json:"physical_sorting_key"`
	}
	s.Must(200, "GET", "/v1/tables/auto", nil).JSON(t, &desc)
	if desc.SortingKey != "" || desc.Automatic == nil || *desc.Automatic != "service_name, timestamp" ||
		desc.Physical == nil || !strings.Contains(*desc.Physical, "doc.timestamp.:DateTime") {
		t.Fatalf("automatic key: %+v %v %v", desc, deref(desc.Automatic), deref(desc.Physical))
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestChangingTheSortingKeyResortsExistingDataInTheBackground(t *testing.T) {
	t.Parallel() // see TestMain
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "rs", "sorting_key": "a"})
	s.Must(202, "POST", "/v1/tables/rs", rowsOf(0, 500))
	s.WaitCount("rs", 500, time.Minute)
	checksum := func() any {
		return s.Query("SELECT count() AS n, sum(toInt64(a)) AS sa, sum(toInt64(b)) AS sb FROM rs")[0]
	}
	// Through the query API, as ALTER TABLE ... MODIFY ORDER BY.
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "ALTER TABLE rs MODIFY ORDER BY (b, a)"})
	s.Must(202, "POST", "/v1/tables/rs", rowsOf(500, 500))
	s.WaitCount("rs", 1000, time.Minute)
	want := fmt.Sprint(checksum())
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		// Reads go on while the background re-sort runs, and their results never change.
		if got := fmt.Sprint(checksum()); got != want {
			t.Fatalf("results changed during the re-sort: %s, want %s", got, want)
		}
		var desc struct {
			SortingKey  string `json:"sorting_key"`
			Generations []struct {
				Number int
				Key    string `json:"physical_sorting_key"`
			}
		}
		s.Must(200, "GET", "/v1/tables/rs", nil).JSON(t, &desc)
		if len(desc.Generations) == 2 && desc.Generations[0].Key == desc.Generations[1].Key {
			if desc.SortingKey != "b, a" || !strings.HasPrefix(desc.Generations[0].Key, "doc.b") {
				t.Fatalf("after re-sort: %+v", desc)
			}
			return true, ""
		}
		return false, fmt.Sprintf("older generation not re-sorted: %+v\n%s", desc, s.Logs())
	})
	if got := fmt.Sprint(checksum()); got != want {
		t.Fatalf("results changed by the re-sort: %s, want %s", got, want)
	}
}

func rowsOf(start, n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"a":%d,"b":%d}`, start+i, (start+i)%17)
	}
	b.WriteByte(']')
	return b.String()
}

func TestPoisonRowGoesToDeadLettersWhileItsNeighboursLand(t *testing.T) {
	s := svcdtest.Start(t)
	// The key divides by a path: a row with n = 0 makes the engine refuse that row.
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "p", "sorting_key": "intDiv(100, n)"})
	s.Must(202, "POST", "/v1/tables/p", `[{"n":1},{"n":2},{"n":0,"poison":true},{"n":4},{"n":5}]`)
	s.WaitCount("p", 4, time.Minute)
	var page struct {
		DeadLetters []struct{ Row, Reason, Table string } `json:"dead_letters"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.Must(200, "GET", "/v1/tables/p/dead_letters", nil).JSON(t, &page)
		if len(page.DeadLetters) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(page.DeadLetters) != 1 || !strings.Contains(page.DeadLetters[0].Row, "poison") ||
		!strings.Contains(page.DeadLetters[0].Reason, "Division by zero") || page.DeadLetters[0].Table != "p" {
		t.Fatalf("dead letters: %+v", page)
	}
	// The partition is not blocked: later rows land.
	s.Must(202, "POST", "/v1/tables/p", `[{"n":7}]`)
	s.WaitCount("p", 5, time.Minute)
	var fresh struct {
		RowsInserted   int64 `json:"rows_inserted"`
		DeadLettered   int64 `json:"dead_lettered"`
		AckToQueryable struct {
			P50 *float64 `json:"p50_ms"`
		} `json:"ack_to_queryable"`
		ConsumerLag struct{ Records int64 } `json:"consumer_lag"`
	}
	s.Must(200, "GET", "/v1/tables/p/freshness", nil).JSON(t, &fresh)
	if fresh.RowsInserted < 5 || fresh.DeadLettered != 1 || fresh.AckToQueryable.P50 == nil {
		t.Fatalf("freshness: %+v", fresh)
	}
	metrics := s.Must(200, "GET", "/metrics", nil, "Authorization", "")
	if !bytes.Contains(metrics.Body, []byte("svc_ingest_dead_letters_total")) || !bytes.Contains(metrics.Body, []byte("svc_consumer_lag_records")) {
		t.Fatalf("metrics: %s", metrics.Body)
	}
}

// TestBrokerStoppedDuringALoad runs svcd on a broker of its own, stops the broker in the
// middle of a load and starts it again: requests meanwhile get 503 with Retry-After,
// nothing acknowledged is lost, nothing is duplicated.
func TestBrokerStoppedDuringALoad(t *testing.T) {
	t.Parallel() // see TestMain
	svcdtest.Requirements(t)
	libs := testenv.KafkaLibs(t)
	dir := t.TempDir()
	port := freePort(t)
	newBroker := func() *kafka.Broker {
		b, err := kafka.NewBroker(kafka.BrokerConfig{LibsDir: libs, DataDir: dir, Port: port})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := newBroker()
	s := svcdtest.Start(t, "SVC_KAFKA_SEEDS="+b.Seeds(), "SVC_KAFKA_SASL_FILE="+b.CredentialsFile())
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "load", "sorting_key": "user.id"})
	l := startLoader(s, "load", 4, 20)
	time.Sleep(2 * time.Second)
	b.Shutdown(context.Background())
	// While the broker is away, nothing is acknowledged and answers say when to retry.
	// The probe carries an idempotency key: a 503 means "not acknowledged", and the
	// record may still be written once the broker returns, so a client retries it.
	asked := time.Now()
	r, err := s.Do("POST", "/v1/tables/load", `{"user":{"id":-1}}`, "Idempotency-Key", "probe")
	if err != nil {
		t.Fatalf("insert while the broker is down: %v", err)
	}
	if r.Status != 503 || r.Header.Get("Retry-After") == "" || time.Since(asked) > 30*time.Second {
		t.Fatalf("insert while the broker is down: %d after %s, Retry-After %q: %s", r.Status, time.Since(asked), r.Header.Get("Retry-After"), r.Body)
	}
	b = newBroker()
	defer b.Shutdown(context.Background())
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		r, err := s.Do("POST", "/v1/tables/load", `{"user":{"id":-1}}`, "Idempotency-Key", "probe")
		return err == nil && r.Status == 202, fmt.Sprintf("the probe was not acknowledged after the broker's return: %v %v", r, err)
	})
	time.Sleep(2 * time.Second)
	acked := l.finish() + 1 // the probe
	t.Logf("acknowledged %d rows, %d attempts retried", acked, l.failed.Load())
	s.WaitCaughtUp("load", 2*time.Minute)
	if n := s.Count("load"); n != acked {
		t.Fatalf("%d rows, want %d", n, acked)
	}
	if d := s.Query("SELECT count() AS n FROM (SELECT user.id FROM load GROUP BY user.id HAVING count() > 1)"); d[0]["n"] != float64(0) {
		t.Fatalf("duplicated rows: %v", d)
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func metricAttr(k, v string) metric.MeasurementOption {
	return metric.WithAttributes(attribute.String(k, v))
}
