package otlpmetrics

import (
	"fmt"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"

	"github.com/svc-data/svc/pipeline/transform/internal/otlptest"
)

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// benchRequest is n series of a counter and n of a histogram with the usual HTTP buckets.
func benchRequest(n int) *colmetricspb.ExportMetricsServiceRequest {
	sums := make([]*metricspb.NumberDataPoint, n)
	hists := make([]*metricspb.HistogramDataPoint, n)
	bounds := []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	for i := range n {
		attrs := []*commonpb.KeyValue{str("http.route", fmt.Sprintf("/api/v1/items/%d", i)), str("http.request.method", "GET"), str("http.response.status_code", "200")}
		sums[i] = &metricspb.NumberDataPoint{Attributes: attrs, StartTimeUnixNano: 1748779200000000000, TimeUnixNano: 1748779260000000000,
			Value: &metricspb.NumberDataPoint_AsInt{AsInt: int64(i * 17)}}
		sum := float64(i) * 0.37
		hists[i] = &metricspb.HistogramDataPoint{Attributes: attrs, StartTimeUnixNano: 1748779200000000000, TimeUnixNano: 1748779260000000000,
			Count: uint64(i + 15), Sum: &sum, ExplicitBounds: bounds, BucketCounts: []uint64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, uint64(i + 1)}}
	}
	return &colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", "cart"), str("host.name", "cart-7f9c6d-x2x5p")}},
		ScopeMetrics: []*metricspb.ScopeMetrics{{Scope: &commonpb.InstrumentationScope{Name: "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"},
			Metrics: []*metricspb.Metric{
				{Name: "http.server.requests", Unit: "{request}", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{IsMonotonic: true,
					AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, DataPoints: sums}}},
				{Name: "http.server.request.duration", Unit: "s", Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
					AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, DataPoints: hists}}},
			}}},
	}}}
}

// BenchmarkDecode: 1,000 data points (500 counters, 500 histograms) in both encodings,
// and protobuf against proto.Unmarshal in the same run ("against-upstream", x-upstream).
func BenchmarkDecode(b *testing.B) {
	otlptest.BenchmarkDecode(b, benchRequest(500), Decode)
	b.Run("against-upstream", func(b *testing.B) {
		otlptest.BenchmarkAgainst(b, benchRequest(500), Decode, decodeUpstream)
	})
}

// BenchmarkDecodeUpstream is BenchmarkDecode through proto.Unmarshal (the path Decode
// takes when the wire reader hands a body over), for the ratio between the two.
func BenchmarkDecodeUpstream(b *testing.B) {
	otlptest.BenchmarkDecode(b, benchRequest(500), decodeUpstream)
}
