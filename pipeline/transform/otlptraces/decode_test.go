package otlptraces

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
	"github.com/svc-data/svc/pipeline/transform/internal/otlptest"
)

// ids hands out fixed trace and span ids so that rows can be compared whole.
type ids struct{ next byte }

func (g *ids) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	return trace.TraceID{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c}, g.NewSpanID(ctx, trace.TraceID{})
}

func (g *ids) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	g.next++
	return trace.SpanID{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, g.next}
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// emit makes a server span with a child client span, with every kind of attribute value, an
// event, a link and both error and ok statuses.
func emit(ctx context.Context, tp *sdktrace.TracerProvider) {
	tracer := tp.Tracer("github.com/acme/checkout/http",
		trace.WithInstrumentationVersion("0.9.0"),
		trace.WithInstrumentationAttributes(attribute.String("lib.kind", "http")))
	ctx, root := tracer.Start(ctx, "GET /cart", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(t0),
		trace.WithAttributes(
			attribute.String("http.request.method", "GET"),
			attribute.Int("http.response.status_code", 500),
			attribute.Float64("load", 0.75),
			attribute.Bool("retry", false),
			attribute.StringSlice("tags", []string{"a", "b"}),
			attribute.Int64Slice("sizes", []int64{1, 2}),
		))
	root.AddEvent("cache miss", trace.WithTimestamp(t0.Add(10*time.Millisecond)),
		trace.WithAttributes(attribute.String("cache.key", "cart:42")))
	root.SetStatus(codes.Error, "boom")

	linked := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{15: 1},
		SpanID:     trace.SpanID{7: 2},
		TraceState: must(trace.ParseTraceState("vendor=a")),
		Remote:     true,
	})
	_, child := tracer.Start(ctx, "SELECT carts", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(t0.Add(20*time.Millisecond)),
		trace.WithLinks(trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("why", "batch")}}))
	child.SetStatus(codes.Ok, "")
	child.End(trace.WithTimestamp(t0.Add(120 * time.Millisecond)))
	root.End(trace.WithTimestamp(t0.Add(250 * time.Millisecond)))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

var res = resource.NewSchemaless(
	attribute.String("service.name", "checkout"),
	attribute.String("service.version", "1.2.3"),
	attribute.Int("host.cpus", 8),
)

const resourceAndScope = `"service_name":"checkout",
	"resource_attributes":{"host.cpus":8,"service.name":"checkout","service.version":"1.2.3"},
	"scope_name":"github.com/acme/checkout/http","scope_version":"0.9.0","scope_attributes":{"lib.kind":"http"}`

// The SDK exports spans in the order they end: the child first. It does not export a link's
// trace state, and sets flags bit 8 (0x100, "is_remote known") with bit 9 (0x200) for remote
// contexts over the W3C trace flags (0x01 sampled).
var wantRows = []string{
	`{"timestamp":"2025-06-01T12:00:00.020000000Z","end_timestamp":"2025-06-01T12:00:00.120000000Z","duration_ns":100000000,
	"trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b102","parent_span_id":"eee19b7ec3c1b101",
	"trace_state":"","flags":257,"name":"SELECT carts","kind":"Client","status_code":"Ok","status_message":"",
	"attributes":{},"events":[],
	"links":[{"trace_id":"00000000000000000000000000000001","span_id":"0000000000000002","trace_state":"","flags":768,"attributes":{"why":"batch"}}],
	` + resourceAndScope + `}`,
	`{"timestamp":"2025-06-01T12:00:00.000000000Z","end_timestamp":"2025-06-01T12:00:00.250000000Z","duration_ns":250000000,
	"trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b101","parent_span_id":"",
	"trace_state":"","flags":257,"name":"GET /cart","kind":"Server","status_code":"Error","status_message":"boom",
	"attributes":{"http.request.method":"GET","http.response.status_code":500,"load":0.75,"retry":false,"tags":["a","b"],"sizes":[1,2]},
	"events":[{"timestamp":"2025-06-01T12:00:00.010000000Z","name":"cache miss","attributes":{"cache.key":"cart:42"}}],
	"links":[],
	` + resourceAndScope + `}`,
}

func TestSDKExport(t *testing.T) {
	for _, encoding := range []string{"protobuf", "json"} {
		t.Run(encoding, func(t *testing.T) {
			reqs := otlptest.Traces(t, res, &ids{}, encoding == "json", emit)
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			req := reqs[0]
			if req.ContentEncoding != "gzip" {
				t.Fatalf("Content-Encoding %q", req.ContentEncoding)
			}
			var b rows.Buffer
			body, err := b.Inflate(req.Body, req.ContentEncoding, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := Decode(body, req.ContentType, &b); err != nil {
				t.Fatalf("%s: %v", req.ContentType, err)
			}
			checkRows(t, &b, wantRows)

			if encoding == "protobuf" {
				// The same export in OTLP JSON made from the captured message.
				var msg coltracepb.ExportTraceServiceRequest
				if err := proto.Unmarshal(body, &msg); err != nil {
					t.Fatal(err)
				}
				var jb rows.Buffer
				if err := Decode(otlptest.JSON(t, &msg), "application/json", &jb); err != nil {
					t.Fatal(err)
				}
				checkRows(t, &jb, wantRows)
			}
		})
	}
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

// handWritten follows the OTLP specification's JSON example: hex ids, int64 as strings, enums
// as numbers, and an unknown field that must be ignored.
const handWritten = `{
  "resourceSpans": [{
    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "my.service"}}]},
    "scopeSpans": [{
      "scope": {"name": "my.library", "version": "1.0.0",
                "attributes": [{"key": "my.scope.attribute", "value": {"stringValue": "some scope attribute"}}]},
      "spans": [{
        "traceId": "5B8EFFF798038103D269B633813FC60C",
        "spanId": "EEE19B7EC3C1B174",
        "parentSpanId": "EEE19B7EC3C1B173",
        "name": "I'm a server span",
        "startTimeUnixNano": "1544712660000000000",
        "endTimeUnixNano": "1544712661000000000",
        "kind": 2,
        "attributes": [
          {"key": "my.span.attr", "value": {"stringValue": "some value"}},
          {"key": "count", "value": {"intValue": "9007199254740993"}},
          {"key": "ratio", "value": {"doubleValue": "NaN"}},
          {"key": "blob", "value": {"bytesValue": "aGk="}},
          {"key": "nested", "value": {"kvlistValue": {"values": [{"key": "a", "value": {"arrayValue": {"values": [{"boolValue": true}, {}]}}}]}}},
          {"key": "my.span.attr", "value": {"stringValue": "duplicate, dropped"}}
        ],
        "status": {"code": 9},
        "futureField": {"anything": [1, 2, 3]}
      }]
    }],
    "schemaUrl": "https://opentelemetry.io/schemas/1.26.0"
  }]
}`

func TestHandWrittenJSON(t *testing.T) {
	var b rows.Buffer
	if err := Decode([]byte(handWritten), "application/json; charset=utf-8", &b); err != nil {
		t.Fatal(err)
	}
	checkRows(t, &b, []string{`{"timestamp":"2018-12-13T14:51:00.000000000Z","end_timestamp":"2018-12-13T14:51:01.000000000Z",
	"duration_ns":1000000000,"trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b174",
	"parent_span_id":"eee19b7ec3c1b173","trace_state":"","flags":0,"name":"I'm a server span","kind":"Server",
	"status_code":"9","status_message":"",
	"attributes":{"my.span.attr":"some value","count":9007199254740993,"ratio":"NaN","blob":"aGk=","nested":{"a":[true,null]}},
	"events":[],"links":[],
	"service_name":"my.service","resource_attributes":{"service.name":"my.service"},
	"resource_schema_url":"https://opentelemetry.io/schemas/1.26.0",
	"scope_name":"my.library","scope_version":"1.0.0","scope_attributes":{"my.scope.attribute":"some scope attribute"}}`})
}

func span(traceID, spanID, parent []byte) *tracepb.Span {
	return &tracepb.Span{TraceId: traceID, SpanId: spanID, ParentSpanId: parent, Name: "s"}
}

func TestRejects(t *testing.T) {
	good := span(make16(1), make8(1), nil)
	deep := &commonpb.AnyValue{}
	for v, i := deep, 0; i < 70; i++ {
		inner := &commonpb.AnyValue{}
		v.Value = &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{inner}}}
		v = inner
	}
	tooDeep := span(make16(1), make8(2), nil)
	tooDeep.Attributes = []*commonpb.KeyValue{{Key: "deep", Value: deep}}
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{
			span(nil, make8(1), nil),              // no trace id
			good,                                  // kept
			span(make([]byte, 16), make8(1), nil), // all-zero trace id
			span(make16(1), make8(0)[:4], nil),    // short span id
			span(make16(1), make8(1), []byte{1}),
			tooDeep,
		}}},
	}}}
	var b rows.Buffer
	if err := Append(req, &b); err != nil {
		t.Fatal(err)
	}
	if b.Rows != 1 || b.Rejected != 5 {
		t.Fatalf("%d rows, %d rejected", b.Rows, b.Rejected)
	}
	if want := "resource 0, scope 0, span 0: trace_id must be 16 bytes and not all zero"; b.RejectedReason != want {
		t.Fatalf("reason %q", b.RejectedReason)
	}
	rowstest.Lines(t, &b)
}

func make16(last byte) []byte { b := make([]byte, 16); b[15] = last; return b }
func make8(last byte) []byte  { b := make([]byte, 8); b[7] = last; return b }

func TestErrors(t *testing.T) {
	f := func(body, contentType string, is error, want string) {
		t.Helper()
		b := rows.Buffer{B: []byte("{}\n"), Rows: 1}
		err := Decode([]byte(body), contentType, &b)
		if err == nil || !strings.Contains(err.Error(), want) || (is != nil && !errors.Is(err, is)) {
			t.Fatalf("%q: got %v, want %q", body, err, want)
		}
		if string(b.B) != "{}\n" || b.Rows != 1 {
			t.Fatal("buffer changed")
		}
	}
	f(`{}`, "text/plain", rows.ErrUnsupportedMediaType, `Content-Type "text/plain" is not supported; send application/x-protobuf or application/json`)
	f(`{"resourceSpans": [}`, "application/json", nil, "invalid OTLP JSON: invalid JSON at offset 19")
	f(`{"resourceSpans": {}}`, "application/json", nil, "invalid OTLP JSON: proto:")
	f(`{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "z!"}]}]}]}`, "application/json", nil, "invalid OTLP JSON: proto:")
	f("\x0a\x05\x0a\x03", "application/x-protobuf", nil, "invalid OTLP protobuf")
	// A span named "\xff": protobuf strings must be UTF-8, so the whole request is refused.
	f("\x0a\x07\x12\x05\x12\x03\x2a\x01\xff", "application/x-protobuf", nil, "invalid OTLP protobuf: string field contains invalid UTF-8")
}

func TestMaxBytes(t *testing.T) {
	b := rows.Buffer{MaxBytes: 100}
	err := Decode([]byte(handWritten), "application/json", &b)
	if !errors.Is(err, rows.ErrTooLarge) || len(b.B) != 0 || b.Rows != 0 {
		t.Fatalf("got %v with %d rows", err, b.Rows)
	}
}

func TestEmptyContentTypeSniffs(t *testing.T) {
	var b rows.Buffer
	if err := Decode([]byte(handWritten), "", &b); err != nil || b.Rows != 1 {
		t.Fatalf("json: %v, %d rows", err, b.Rows)
	}
	pb, _ := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{span(make16(1), make8(1), nil)}}}}}})
	b.Reset()
	if err := Decode(pb, "", &b); err != nil || b.Rows != 1 {
		t.Fatalf("protobuf: %v, %d rows", err, b.Rows)
	}
}
