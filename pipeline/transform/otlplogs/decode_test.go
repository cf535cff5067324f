package otlplogs

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
	"github.com/svc-data/svc/pipeline/transform/internal/otlptest"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

var res = resource.NewSchemaless(attribute.String("service.name", "payments"), attribute.String("k8s.pod.name", "payments-0"))

// emit logs a structured error inside a span, and a record with a map body and only an
// observed time.
func emit(ctx context.Context, lp *sdklog.LoggerProvider) {
	logger := lp.Logger("github.com/acme/payments",
		log.WithInstrumentationVersion("2.0.0"),
		log.WithInstrumentationAttributes(attribute.String("bridge", "slog")),
		log.WithSchemaURL("https://opentelemetry.io/schemas/1.26.0"))

	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0: 0xab, 15: 0xcd},
		SpanID:     trace.SpanID{0: 0x12, 7: 0x34},
		TraceFlags: trace.FlagsSampled,
	})
	var rec log.Record
	rec.SetTimestamp(t0)
	rec.SetObservedTimestamp(t0.Add(time.Second))
	rec.SetSeverity(log.SeverityError)
	rec.SetSeverityText("ERROR")
	rec.SetEventName("payment.failed")
	rec.SetBody(attribute.StringValue("payment failed"))
	rec.AddAttributes(
		attribute.String("order.id", "A-1"),
		attribute.Int("attempt", 3),
		attribute.Bool("final", true),
		attribute.Float64("amount", 12.5),
		attribute.ByteSlice("raw", []byte{1, 2, 3}),
		attribute.Slice("items", attribute.StringValue("x"), attribute.Int64Value(2)),
		attribute.Map("user", attribute.String("id", "u1"), attribute.Map("geo", attribute.String("country", "FR"))),
	)
	logger.Emit(trace.ContextWithSpanContext(ctx, sc), rec)

	var rec2 log.Record
	rec2.SetObservedTimestamp(t0.Add(2 * time.Second))
	rec2.SetSeverity(log.SeverityInfo)
	rec2.SetBody(attribute.MapValue(attribute.String("msg", "checkout"), attribute.Int("items", 2)))
	logger.Emit(ctx, rec2)
}

const scope = `"service_name":"payments","resource_attributes":{"service.name":"payments","k8s.pod.name":"payments-0"},
	"scope_name":"github.com/acme/payments","scope_version":"2.0.0","scope_attributes":{"bridge":"slog"},
	"scope_schema_url":"https://opentelemetry.io/schemas/1.26.0"`

var wantRows = []string{
	`{"timestamp":"2025-06-01T12:00:00.000000000Z","observed_timestamp":"2025-06-01T12:00:01.000000000Z",
	"trace_id":"ab0000000000000000000000000000cd","span_id":"1200000000000034","flags":1,
	"severity_text":"ERROR","severity_number":17,"body":"payment failed",
	"attributes":{"order.id":"A-1","attempt":3,"final":true,"amount":12.5,"raw":"AQID","items":["x",2],
	              "user":{"id":"u1","geo":{"country":"FR"}}},
	"event_name":"payment.failed",` + scope + `}`,
	`{"timestamp":"2025-06-01T12:00:02.000000000Z","observed_timestamp":"2025-06-01T12:00:02.000000000Z",
	"trace_id":"","span_id":"","flags":0,"severity_text":"","severity_number":9,
	"body":{"msg":"checkout","items":2},"attributes":{},` + scope + `}`,
}

func TestSDKExport(t *testing.T) {
	reqs := otlptest.Logs(t, res, emit)
	if len(reqs) != 1 || reqs[0].ContentEncoding != "gzip" || reqs[0].ContentType != "application/x-protobuf" {
		t.Fatalf("requests: %+v", reqs)
	}
	var b rows.Buffer
	body, err := b.Inflate(reqs[0].Body, reqs[0].ContentEncoding, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := Decode(body, reqs[0].ContentType, &b); err != nil {
		t.Fatal(err)
	}
	checkRows(t, &b, wantRows)

	// The same records in OTLP JSON made from the captured message.
	var msg collogspb.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	var jb rows.Buffer
	if err := Decode(otlptest.JSON(t, &msg), "application/json", &jb); err != nil {
		t.Fatal(err)
	}
	checkRows(t, &jb, wantRows)
}

func checkRows(t *testing.T, b *rows.Buffer, want []string) {
	t.Helper()
	got := rowstest.Lines(t, b)
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d:\n%s", len(got), len(want), b.B)
	}
	for i := range want {
		rowstest.Equal(t, got[i], want[i])
	}
	if b.Rejected != 0 {
		t.Fatalf("%d rejected: %s", b.Rejected, b.RejectedReason)
	}
}

// handWritten follows the OTLP specification's logs example.
const handWritten = `{"resourceLogs":[{
  "resource":{"attributes":[{"key":"service.name","value":{"stringValue":"my.service"}}]},
  "scopeLogs":[{
    "scope":{"name":"my.library","version":"1.0.0"},
    "logRecords":[{
      "timeUnixNano":"1544712660300000000",
      "observedTimeUnixNano":"1544712660300000000",
      "severityNumber":10,
      "severityText":"Information",
      "traceId":"5B8EFFF798038103D269B633813FC60C",
      "spanId":"EEE19B7EC3C1B174",
      "body":{"stringValue":"Example log record"},
      "attributes":[
        {"key":"string.attribute","value":{"stringValue":"some string"}},
        {"key":"boolean.attribute","value":{"boolValue":true}},
        {"key":"int.attribute","value":{"intValue":"10"}},
        {"key":"double.attribute","value":{"doubleValue":637.704}},
        {"key":"array.attribute","value":{"arrayValue":{"values":[{"stringValue":"many"},{"stringValue":"values"}]}}},
        {"key":"map.attribute","value":{"kvlistValue":{"values":[{"key":"some.map.key","value":{"stringValue":"some value"}}]}}}
      ]
    }]
  }]
}]}`

func TestHandWrittenJSON(t *testing.T) {
	var b rows.Buffer
	if err := Decode([]byte(handWritten), "application/json", &b); err != nil {
		t.Fatal(err)
	}
	checkRows(t, &b, []string{`{"timestamp":"2018-12-13T14:51:00.300000000Z","observed_timestamp":"2018-12-13T14:51:00.300000000Z",
	"trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b174","flags":0,
	"severity_text":"Information","severity_number":10,"body":"Example log record",
	"attributes":{"string.attribute":"some string","boolean.attribute":true,"int.attribute":10,"double.attribute":637.704,
	              "array.attribute":["many","values"],"map.attribute":{"some.map.key":"some value"}},
	"service_name":"my.service","resource_attributes":{"service.name":"my.service"},
	"scope_name":"my.library","scope_version":"1.0.0","scope_attributes":{}}`})
}

func TestRejects(t *testing.T) {
	req := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{
		ScopeLogs: []*logspb.ScopeLogs{{LogRecords: []*logspb.LogRecord{
			{TraceId: []byte{1, 2, 3}},
			{},
			{SpanId: []byte{1}},
		}}},
	}}}
	var b rows.Buffer
	if err := Append(req, &b); err != nil {
		t.Fatal(err)
	}
	if b.Rows != 1 || b.Rejected != 2 || b.RejectedReason != "resource 0, scope 0, log record 0: trace_id must be empty or 16 bytes" {
		t.Fatalf("%d rows, %d rejected: %s", b.Rows, b.Rejected, b.RejectedReason)
	}
	rowstest.Equal(t, rowstest.Lines(t, &b)[0], `{"timestamp":"1970-01-01T00:00:00.000000000Z","observed_timestamp":"1970-01-01T00:00:00.000000000Z",
	"trace_id":"","span_id":"","flags":0,"severity_text":"","severity_number":0,"body":null,"attributes":{},
	"service_name":"","resource_attributes":{},"scope_name":"","scope_version":"","scope_attributes":{}}`)
}

func TestErrors(t *testing.T) {
	f := func(body, contentType string, is error, want string) {
		t.Helper()
		var b rows.Buffer
		err := Decode([]byte(body), contentType, &b)
		if err == nil || !strings.Contains(err.Error(), want) || (is != nil && !errors.Is(err, is)) {
			t.Fatalf("%q: got %v, want %q", body, err, want)
		}
		if b.Rows != 0 || len(b.B) != 0 {
			t.Fatal("rows left")
		}
	}
	f(`{}`, "application/xml", rows.ErrUnsupportedMediaType, `Content-Type "application/xml" is not supported`)
	f(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":1}}]}]}]}`, "application/json", nil, "invalid OTLP JSON: proto:")
	f(`[]`, "application/json", nil, "invalid OTLP JSON")
	f("\xff\xff", "application/x-protobuf", nil, "invalid OTLP protobuf")
}
