package otlpmetrics

import (
	"bytes"
	"context"
	"math"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform/internal/otlpconv"
	"github.com/svc-data/svc/pipeline/transform/internal/otlptest"
)

// emitExemplars records inside a sampled span, so that the SDK's default (trace-based)
// exemplar filter keeps exemplars, with an attribute a view filters out of the stream (it
// lands in the exemplars' filtered attributes).
func emitExemplars(ctx context.Context, mp *sdkmetric.MeterProvider) {
	ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:  trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, TraceFlags: trace.FlagsSampled,
	}))
	meter := mp.Meter("exemplars")
	c, _ := meter.Int64Counter("jobs.done")
	c.Add(ctx, 4, metric.WithAttributes(attribute.String("queue", "q1"), attribute.String("user", "u1")))
	h, _ := meter.Float64Histogram("job.duration", metric.WithExplicitBucketBoundaries(1, math.Inf(1)))
	h.Record(ctx, 0.5, metric.WithAttributes(attribute.String("queue", "q1"), attribute.Bool("retry", true)))
	g, _ := meter.Float64Gauge("queue.load")
	g.Record(ctx, math.Inf(-1))
	g.Record(ctx, math.NaN(), metric.WithAttributes(attribute.String("queue", "q2")))
}

var onlyQueue = sdkmetric.NewView(sdkmetric.Instrument{Name: "j*"},
	sdkmetric.Stream{AttributeFilter: attribute.NewAllowKeysFilter("queue")})

// Tags and values for the hand-made bodies.
func tag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	return protowire.AppendTag(b, num, typ)
}

func msg(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(tag(b, num, protowire.BytesType), v)
}

func fixed(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendFixed64(tag(b, num, protowire.Fixed64Type), v)
}

func varint(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(tag(b, num, protowire.VarintType), v)
}

// export wraps Metric messages on the wire into an export request of one resource and scope.
func export(metrics ...[]byte) []byte {
	var sm []byte
	for _, m := range metrics {
		sm = msg(sm, 2, m)
	}
	return msg(nil, 1, msg(nil, 2, sm))
}

// named is a Metric named "m" with data (field num) on the wire.
func named(num protowire.Number, data []byte) []byte {
	return msg(protowire.AppendString(tag(nil, 1, protowire.BytesType), "m"), num, data)
}

// wireCorpus is protobuf metric exports: the SDK exporter's, the benchmark's, and hand-made
// ones with the forms proto.Unmarshal reads (unpacked repeated numbers, NaN and
// infinities, empty data), points Append rejects and forms only proto.Unmarshal reads.
func wireCorpus(t testing.TB) (bodies [][]byte, wire []bool) {
	add := func(b []byte, viaWire bool) {
		bodies, wire = append(bodies, b), append(wire, viaWire)
	}
	for _, temporality := range []sdkmetric.TemporalitySelector{sdkmetric.DeltaTemporalitySelector, sdkmetric.CumulativeTemporalitySelector} {
		opts := []otlpmetrichttp.Option{otlpmetrichttp.WithTemporalitySelector(temporality)}
		for _, body := range otlptest.Bodies(t, otlptest.Metrics(t, res, opts, []sdkmetric.View{exponential}, emit)) {
			add(body, true)
		}
		for _, body := range otlptest.Bodies(t, otlptest.Metrics(t, res, opts, []sdkmetric.View{onlyQueue}, emitExemplars)) {
			add(body, true)
		}
	}
	marshal := func(m *colmetricspb.ExportMetricsServiceRequest) []byte { return otlptest.Marshal(t, m) }
	add(marshal(benchRequest(20)), true)
	var hand colmetricspb.ExportMetricsServiceRequest
	if err := otlpconv.Unmarshal([]byte(handWritten), "application/json", &hand); err != nil {
		t.Fatal(err)
	}
	add(marshal(&hand), true)

	one := func(ms ...*metricspb.Metric) []byte {
		return marshal(&colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: ms}}}}})
	}
	gauge := func(name string, points ...*metricspb.NumberDataPoint) *metricspb.Metric {
		return &metricspb.Metric{Name: name, Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: points}}}
	}
	double := func(v float64) *metricspb.NumberDataPoint {
		return &metricspb.NumberDataPoint{TimeUnixNano: 5, Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: v}}
	}
	nan, inf := math.NaN(), math.Inf(1)
	// NaN and infinities wherever a double is.
	add(one(gauge("g", double(nan), double(inf), double(-inf), double(math.Copysign(0, -1)), double(math.MaxFloat64)),
		&metricspb.Metric{Name: "h", Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{DataPoints: []*metricspb.HistogramDataPoint{
			{Count: 2, Sum: &nan, Min: &inf, Max: &inf, BucketCounts: []uint64{1, 1, 0}, ExplicitBounds: []float64{-inf, inf}},
		}}}},
		&metricspb.Metric{Name: "e", Data: &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{
			AggregationTemporality: 7, DataPoints: []*metricspb.ExponentialHistogramDataPoint{
				{Count: 1, Scale: -3, ZeroThreshold: inf, Sum: &inf, Positive: &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: -5, BucketCounts: []uint64{1, 1 << 40}},
					Negative: &metricspb.ExponentialHistogramDataPoint_Buckets{}},
			}}}},
		&metricspb.Metric{Name: "s", Data: &metricspb.Metric_Summary{Summary: &metricspb.Summary{DataPoints: []*metricspb.SummaryDataPoint{
			{Sum: nan, QuantileValues: []*metricspb.SummaryDataPoint_ValueAtQuantile{{Quantile: inf, Value: -inf}, {}}},
		}}}}), true)
	// Empty data: no data points, no data, a point with nothing set but its value, an
	// exemplar without value, no name but no point either.
	add(one(gauge("empty"), &metricspb.Metric{Name: "nodata", Metadata: []*commonpb.KeyValue{str("k", "v")}}, gauge(""),
		&metricspb.Metric{Name: "h", Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{DataPoints: []*metricspb.HistogramDataPoint{{}}}}},
		&metricspb.Metric{Name: "e", Data: &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{DataPoints: []*metricspb.ExponentialHistogramDataPoint{{}}}}},
		&metricspb.Metric{Name: "s", Data: &metricspb.Metric_Summary{Summary: &metricspb.Summary{DataPoints: []*metricspb.SummaryDataPoint{{}}}}},
		&metricspb.Metric{Name: "c", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{DataPoints: []*metricspb.NumberDataPoint{
			{Value: &metricspb.NumberDataPoint_AsInt{AsInt: -3}, Exemplars: []*metricspb.Exemplar{{}, {Value: &metricspb.Exemplar_AsDouble{AsDouble: nan}}}},
		}}}}), true)
	// Explicit bounds shared by points and metrics, and not (the reader writes them once).
	hist := func(bounds ...[]float64) *metricspb.Metric {
		m := &metricspb.Histogram{}
		for _, b := range bounds {
			m.DataPoints = append(m.DataPoints, &metricspb.HistogramDataPoint{Count: 3, BucketCounts: []uint64{1, 1, 1}, ExplicitBounds: b})
		}
		return &metricspb.Metric{Name: "h", Data: &metricspb.Metric_Histogram{Histogram: m}}
	}
	add(one(hist([]float64{1, 2}, []float64{1, 2}, []float64{1, 3}, []float64{1, 2}), hist([]float64{1, 2}, []float64{1, 4})), true)
	// Points Append rejects.
	add(one(gauge("", double(1))), false)
	add(one(gauge("g", &metricspb.NumberDataPoint{})), false)
	add(one(&metricspb.Metric{Name: "h", Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{DataPoints: []*metricspb.HistogramDataPoint{
		{BucketCounts: []uint64{1, 2}}}}}}), false)

	// Repeated numbers unpacked, and split between packed and unpacked runs.
	var hp []byte
	hp = fixed(hp, 4, 3)
	hp = fixed(hp, 6, 1)
	hp = msg(hp, 6, protowire.AppendFixed64(protowire.AppendFixed64(nil, 1), 0))
	hp = fixed(hp, 7, math.Float64bits(0.5))
	hp = msg(hp, 7, nil)
	hp = fixed(hp, 7, math.Float64bits(inf))
	hp = msg(hp, 7, protowire.AppendFixed64(nil, math.Float64bits(nan)))
	hp = fixed(hp, 6, 1)
	hp = varint(hp, 10, 1)
	add(export(named(histogramField, msg(varint(nil, 2, 2), 1, hp))), true)
	var buckets []byte
	buckets = varint(buckets, 2, 4)
	buckets = varint(buckets, 1, protowire.EncodeZigZag(-2))
	buckets = msg(buckets, 2, protowire.AppendVarint(protowire.AppendVarint(nil, 5), 1<<63))
	buckets = varint(buckets, 2, 0)
	ep := fixed(varint(nil, 6, protowire.EncodeZigZag(-1)), 4, 9)
	add(export(named(exponentialField, msg(nil, 1, msg(msg(ep, 8, buckets), 9, buckets)))), true)
	// Bounds split between an unpacked value and a packed field the point before sent alone.
	one1 := msg(nil, 7, protowire.AppendFixed64(nil, math.Float64bits(1)))
	p1 := msg(fixed(fixed(nil, 6, 1), 6, 1), 7, nil)
	p1 = append(p1, one1...)
	p2 := append(fixed(fixed(fixed(fixed(nil, 6, 1), 6, 1), 6, 1), 7, math.Float64bits(5)), one1...)
	add(export(named(histogramField, msg(msg(nil, 1, append(fixed(fixed(nil, 6, 1), 6, 1), one1...)), 1, p2)), named(histogramField, msg(nil, 1, p1))), true)
	// Scalars set twice (the last wins), a oneof value replaced, a temporality and a
	// boolean as proto.Unmarshal reads any varint.
	np := fixed(fixed(fixed(nil, 3, 1), 3, 2), 4, math.Float64bits(1.5))
	np = fixed(np, 6, 7)
	add(export(named(sumField, msg(varint(varint(nil, 2, 1<<40+2), 3, 2), 1, np))), true)

	// Forms only proto.Unmarshal reads (or refuses): the wire reader hands them over.
	add(export(msg(named(gaugeField, nil), 4, nil)), false)                                                   // the reserved field 4
	add(export(msg(named(gaugeField, nil), sumField, nil)), false)                                            // data set twice
	add(export(msg(named(gaugeField, msg(nil, 1, fixed(nil, 4, 1))), gaugeField, nil)), false)                // the same data twice: merged
	add(export(named(histogramField, msg(nil, 1, msg(nil, 6, make([]byte, 12))))), false)                     // a packed fixed64 list cut short
	add(export(named(exponentialField, msg(nil, 1, msg(msg(nil, 8, buckets), 8, varint(nil, 2, 1))))), false) // buckets twice: merged
	add(export(named(exponentialField, msg(nil, 1, msg(msg(nil, 9, buckets), 9, buckets)))), false)
	add(export(named(exponentialField, msg(nil, 1, msg(nil, 8, msg(nil, 2, []byte{0x80}))))), false)        // a packed varint cut short
	add(export(named(gaugeField, msg(nil, 1, fixed(fixed(nil, 4, 1), 1, 1)))), false)                       // the reserved field 1
	add(export(named(gaugeField, msg(nil, 1, varint(fixed(nil, 4, 1), 2, 1)))), false)                      // a known field, other wire type
	add(export(named(summaryField, msg(nil, 1, msg(nil, 6, fixed(nil, 3, 1))))), false)                     // an unknown quantile field
	add(export(named(summaryField, msg(nil, 1, msg(nil, 5, nil)))), false)                                  // summaries have no exemplars
	add(export(named(sumField, msg(nil, 1, msg(fixed(nil, 4, 1), 5, fixed(nil, 1, 1))))), false)            // an unknown exemplar field
	add(export(msg(named(gaugeField, nil), 2, []byte("\xc3"))), false)                                      // a description not UTF-8
	add(export(msg(named(gaugeField, nil), 12, msg(nil, 1, []byte("\xc3")))), false)                        // metadata not UTF-8
	add(export(named(gaugeField, msg(nil, 1, msg(fixed(nil, 4, 1), 7, msg(nil, 1, []byte{0xff}))))), false) // an attribute key not UTF-8
	add(export(named(gaugeField, varint(nil, 2, 1))), false)                                                // a gauge has no temporality
	return bodies, wire
}

// TestWireMatchesUpstream: the wire reader writes the rows, rejections and errors the
// proto.Unmarshal path writes, and reads what exporters send itself.
func TestWireMatchesUpstream(t *testing.T) {
	bodies, viaWire := wireCorpus(t)
	exemplars := 0
	for i, body := range bodies {
		otlptest.CompareDecoders(t, body, Decode, decodeUpstream)
		var b rows.Buffer
		if got := appendWire(body, &b); got != viaWire[i] {
			t.Errorf("body %d: read off the wire %v, want %v", i, got, viaWire[i])
		}
		exemplars += bytes.Count(b.B, []byte(`"exemplars":`))
	}
	if exemplars < 4 {
		t.Errorf("%d points with exemplars in the corpus", exemplars)
	}
}

// FuzzWire: on any body, Decode writes what the proto.Unmarshal path writes.
func FuzzWire(f *testing.F) {
	bodies, _ := wireCorpus(f)
	for _, b := range bodies {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		otlptest.CompareDecoders(t, body, Decode, decodeUpstream)
	})
}
