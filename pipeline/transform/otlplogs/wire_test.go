package otlplogs

import (
	"bytes"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform/internal/otlptest"
)

// wireCorpus is protobuf log exports: the SDK exporter's, the benchmark's, and hand-made
// ones with records Append rejects and wire forms only proto.Unmarshal reads.
func wireCorpus(t testing.TB) (bodies [][]byte, wire []bool) {
	add := func(b []byte, viaWire bool) {
		bodies, wire = append(bodies, b), append(wire, viaWire)
	}
	for _, body := range otlptest.Bodies(t, otlptest.Logs(t, res, emit)) {
		add(body, true)
	}
	marshal := func(m proto.Message) []byte { return otlptest.Marshal(t, m) }
	add(marshal(benchRequest(20)), true)
	one := func(recs ...*logspb.LogRecord) []byte {
		return marshal(&collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{LogRecords: recs}}}}})
	}
	add(one(&logspb.LogRecord{ObservedTimeUnixNano: 9, Body: &commonpb.AnyValue{}, Attributes: []*commonpb.KeyValue{str("a", "1"), str("a", "2"), {Key: "n"}}}, &logspb.LogRecord{}), true)
	add(one(&logspb.LogRecord{TraceId: []byte{1}}), false)
	add(one(&logspb.LogRecord{SpanId: []byte{1, 2}}), false)
	rec := marshal(&logspb.LogRecord{TimeUnixNano: 1, Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "b"}}})
	wrap := func(r []byte) []byte {
		sl := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), r)
		rl := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), sl)
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), rl)
	}
	add(wrap(rec), true)
	add(wrap(protowire.AppendVarint(protowire.AppendTag(bytes.Clone(rec), 4, protowire.VarintType), 1)), false)
	add(wrap(append(bytes.Clone(rec), marshal(&logspb.LogRecord{Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 2}}})...)), false)
	add(wrap(protowire.AppendString(protowire.AppendTag(bytes.Clone(rec), 3, protowire.BytesType), "\xc3")), false)
	add(wrap(append(bytes.Clone(rec), marshal(&logspb.LogRecord{SeverityText: "last", SeverityNumber: 99})...)), true)
	// A repeated attribute key is dropped, but its value must still be UTF-8.
	dup := marshal(&logspb.LogRecord{TimeUnixNano: 1, Attributes: []*commonpb.KeyValue{str("a", "1"), str("a", "x")}})
	dup[len(dup)-1] = 0xc3
	add(wrap(dup), false)
	return bodies, wire
}

// TestWireMatchesUpstream: the wire reader writes the rows, rejections and errors the
// proto.Unmarshal path writes, and reads what exporters send itself.
func TestWireMatchesUpstream(t *testing.T) {
	bodies, viaWire := wireCorpus(t)
	for i, body := range bodies {
		otlptest.CompareDecoders(t, body, Decode, decodeUpstream)
		var b rows.Buffer
		if got := appendWire(body, &b); got != viaWire[i] {
			t.Errorf("body %d: read off the wire %v, want %v", i, got, viaWire[i])
		}
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
