package otlptraces

import (
	"fmt"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/svc-data/svc/pipeline/transform/internal/otlptest"
)

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func num(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

// benchRequest is n HTTP server spans of one service, shaped like an instrumented web app's.
func benchRequest(n int) *coltracepb.ExportTraceServiceRequest {
	spans := make([]*tracepb.Span, n)
	for i := range spans {
		start := uint64(1748779200000000000 + i*1000)
		spans[i] = &tracepb.Span{
			TraceId:           []byte(fmt.Sprintf("%016d", i)),
			SpanId:            []byte(fmt.Sprintf("%08d", i)),
			ParentSpanId:      []byte(fmt.Sprintf("%08d", i+1)),
			Name:              "GET /api/v1/carts/{id}",
			Kind:              tracepb.Span_SPAN_KIND_SERVER,
			StartTimeUnixNano: start,
			EndTimeUnixNano:   start + 1234567,
			Attributes: []*commonpb.KeyValue{
				str("http.request.method", "GET"), str("url.path", fmt.Sprintf("/api/v1/carts/%d", i)),
				str("url.scheme", "https"), num("http.response.status_code", 200),
				str("server.address", "shop.example.com"), num("server.port", 443),
				str("user_agent.original", "Mozilla/5.0 (X11; Linux x86_64) Firefox/126.0"),
				str("client.address", "203.0.113.7"), str("network.protocol.version", "1.1"),
				str("http.route", "/api/v1/carts/{id}"),
			},
			Events: []*tracepb.Span_Event{{TimeUnixNano: start + 1000, Name: "cache.miss", Attributes: []*commonpb.KeyValue{str("cache.key", "cart")}}},
			Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK},
		}
	}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
			str("service.name", "cart"), str("service.version", "2.4.1"), str("deployment.environment.name", "production"),
			str("host.name", "cart-7f9c6d-x2x5p"), str("telemetry.sdk.language", "go"),
		}},
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp", Version: "0.61.0"}, Spans: spans}},
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
