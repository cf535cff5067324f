package otlptraces

import (
	"bytes"
	"math"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform/internal/otlptest"
)

// wireCorpus is protobuf trace exports: the SDK exporter's, the benchmark's, and hand-made
// ones with every value type, nesting, duplicate keys, dropped counts, schema URLs, spans
// Append rejects, and wire forms only proto.Unmarshal reads (unknown fields, a message
// set twice, invalid UTF-8).
func wireCorpus(t testing.TB) (bodies [][]byte, wire []bool) {
	add := func(b []byte, viaWire bool) {
		bodies, wire = append(bodies, b), append(wire, viaWire)
	}
	for _, body := range otlptest.Bodies(t, otlptest.Traces(t, res, &ids{}, false, emit)) {
		add(body, true)
	}
	marshal := func(m proto.Message) []byte { return otlptest.Marshal(t, m) }
	add(marshal(benchRequest(20)), true)
	anyv := func(v any) *commonpb.AnyValue {
		switch v := v.(type) {
		case string:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}
		case bool:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v}}
		case int64:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}
		case float64:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}
		case []byte:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: v}}
		case []*commonpb.AnyValue:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: v}}}
		case *commonpb.AnyValue:
			return v
		case []*commonpb.KeyValue:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: v}}}
		}
		return &commonpb.AnyValue{}
	}
	kv := func(k string, v any) *commonpb.KeyValue { return &commonpb.KeyValue{Key: k, Value: anyv(v)} }
	var many []*commonpb.KeyValue
	for i := range 40 {
		many = append(many, kv(string(rune('a'+i%20)), int64(i)))
	}
	deep := anyv("x")
	for range 70 {
		deep = anyv([]*commonpb.AnyValue{deep})
	}
	full := &tracepb.Span{TraceId: make16(1), SpanId: make8(2), ParentSpanId: make8(3), TraceState: "k=v", Flags: 0x301, Name: "n\u2028\"",
		Kind: 9, StartTimeUnixNano: 5, EndTimeUnixNano: 3,
		Attributes: []*commonpb.KeyValue{kv("s", "é"), kv("b", true), kv("i", int64(math.MinInt64)), kv("d", math.NaN()), kv("inf", math.Inf(1)),
			kv("by", []byte{0, 1, 255}), kv("arr", []*commonpb.AnyValue{anyv("a"), anyv(int64(1)), anyv([]*commonpb.AnyValue{}), {}}),
			kv("map", []*commonpb.KeyValue{kv("x", 1.5), kv("x", "dup"), {Key: "nil"}}), kv("s", "dup"), {Key: "empty", Value: &commonpb.AnyValue{}}},
		DroppedAttributesCount: 1, DroppedEventsCount: 2, DroppedLinksCount: 3,
		Events: []*tracepb.Span_Event{{TimeUnixNano: 7, Name: "e", Attributes: many, DroppedAttributesCount: 4}, {}},
		Links:  []*tracepb.Span_Link{{TraceId: make16(4), SpanId: make8(5), TraceState: "t", Flags: 1, Attributes: []*commonpb.KeyValue{kv("l", "v")}, DroppedAttributesCount: 6}, {}},
		Status: &tracepb.Status{Code: 7, Message: "m"}}
	req := func(rs ...*tracepb.ResourceSpans) []byte {
		return marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	}
	add(req(&tracepb.ResourceSpans{SchemaUrl: "https://r", Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", int64(1)), kv("service.name", "second")}, DroppedAttributesCount: 2},
		ScopeSpans: []*tracepb.ScopeSpans{{SchemaUrl: "https://s", Scope: &commonpb.InstrumentationScope{Name: "sc", Version: "v", Attributes: many, DroppedAttributesCount: 1}, Spans: []*tracepb.Span{full, full}},
			{Spans: []*tracepb.Span{{TraceId: make16(9), SpanId: make8(9)}}}, {}}},
		&tracepb.ResourceSpans{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{TraceId: make16(8), SpanId: make8(8), Attributes: many}}}}}, &tracepb.ResourceSpans{}), true)
	add(nil, true)
	add(req(&tracepb.ResourceSpans{Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", "s")}}}), true)
	// Append rejects these spans, or an attribute nests too deeply: proto.Unmarshal's path.
	add(req(&tracepb.ResourceSpans{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{full, {TraceId: make16(1)}, full}}}}), false)
	add(req(&tracepb.ResourceSpans{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{TraceId: make16(1), SpanId: make8(1), ParentSpanId: []byte{1}}}}}}), false)
	add(req(&tracepb.ResourceSpans{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{TraceId: make16(1), SpanId: make8(1), Attributes: []*commonpb.KeyValue{kv("deep", deep)}}}}}}), false)
	add(req(&tracepb.ResourceSpans{Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("deep", deep)}},
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{full}}}}), false)
	// Wire forms: an unknown span field, a status set twice (merged), invalid UTF-8, a
	// value set twice (the last wins), truncated.
	one := req(&tracepb.ResourceSpans{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{full}}}})
	wrap := func(span []byte) []byte {
		ss := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), span)
		rs := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), ss)
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), rs)
	}
	span := marshal(full)
	add(wrap(protowire.AppendVarint(protowire.AppendTag(bytes.Clone(span), 99, protowire.VarintType), 1)), false)
	add(wrap(append(bytes.Clone(span), marshal(&tracepb.Span{Status: &tracepb.Status{Message: "again"}})...)), false)
	add(wrap(protowire.AppendString(protowire.AppendTag(bytes.Clone(span), 5, protowire.BytesType), "\xff")), false)
	add(wrap(append(bytes.Clone(span), marshal(&tracepb.Span{Name: "last", Kind: 2})...)), true)
	add(one[:len(one)-3], false)
	return bodies, wire
}

// TestWireMatchesUpstream: the wire reader writes the rows, rejections and errors the
// proto.Unmarshal path writes, and reads what exporters send itself.
func TestWireMatchesUpstream(t *testing.T) {
	bodies, viaWire := wireCorpus(t)
	for i, body := range bodies {
		compareWire(t, body)
		var b rows.Buffer
		if got := appendWire(body, &b); got != viaWire[i] {
			t.Errorf("body %d: read off the wire %v, want %v", i, got, viaWire[i])
		}
	}
}

func compareWire(t *testing.T, body []byte) {
	t.Helper()
	otlptest.CompareDecoders(t, body, Decode, decodeUpstream)
}

// FuzzWire: on any body, Decode writes what the proto.Unmarshal path writes.
func FuzzWire(f *testing.F) {
	bodies, _ := wireCorpus(f)
	for _, b := range bodies {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		compareWire(t, body)
	})
}
