package otlplogs

import (
	"fmt"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"

	"github.com/svc-data/svc/pipeline/transform/internal/otlptest"
)

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// benchRequest is n application log lines of one service with a few attributes each.
func benchRequest(n int) *collogspb.ExportLogsServiceRequest {
	recs := make([]*logspb.LogRecord, n)
	for i := range recs {
		ts := uint64(1748779200000000000 + i*1000)
		recs[i] = &logspb.LogRecord{
			TimeUnixNano: ts, ObservedTimeUnixNano: ts + 500,
			SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_INFO, SeverityText: "INFO",
			Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: fmt.Sprintf("GET /api/v1/carts/%d 200 in 12.3ms (user=u%d)", i, i%97)}},
			Attributes: []*commonpb.KeyValue{
				str("logger", "http.access"), str("http.route", "/api/v1/carts/{id}"), str("client.address", "203.0.113.7"),
				{Key: "http.response.status_code", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 200}}},
			},
			TraceId: []byte(fmt.Sprintf("%016d", i)), SpanId: []byte(fmt.Sprintf("%08d", i)), Flags: 1,
		}
	}
	return &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
			str("service.name", "cart"), str("service.version", "2.4.1"), str("host.name", "cart-7f9c6d-x2x5p"),
		}},
		ScopeLogs: []*logspb.ScopeLogs{{Scope: &commonpb.InstrumentationScope{Name: "go.opentelemetry.io/contrib/bridges/otelslog"}, LogRecords: recs}},
	}}}
}

func BenchmarkDecode(b *testing.B) {
	otlptest.BenchmarkDecode(b, benchRequest(1000), Decode)
}

// BenchmarkDecodeUpstream is BenchmarkDecode through proto.Unmarshal (the path Decode
// takes when the wire reader hands a body over), for the ratio between the two.
func BenchmarkDecodeUpstream(b *testing.B) {
	otlptest.BenchmarkDecode(b, benchRequest(1000), decodeUpstream)
}
