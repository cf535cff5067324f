package otlplogs

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform/internal/otlpconv"
)

// appendWire is Append over an ExportLogsServiceRequest on the wire, without unmarshaling
// it (otlpconv's wire readers). It reports false, with dst left as it was, whenever the
// body holds anything those readers leave to proto.Unmarshal, a record Append would
// reject, or rows over dst's limit: Decode then takes the upstream path, which stores,
// rejects and fails exactly as before (TestWireMatchesUpstream, FuzzWire).
func appendWire(body []byte, dst *rows.Buffer) bool {
	w := wireDecoder{dst: dst}
	return otlpconv.ReadItems(body, dst, &w.ctx, w.row)
}

type wireDecoder struct {
	dst   *rows.Buffer
	ctx   otlpconv.Context
	attrs [][]byte
}

// row writes the row of a log record on the wire.
func (w *wireDecoder) row(r []byte) bool {
	var ok bool
	w.dst.B, ok = w.record(w.dst.B, r)
	return ok && w.dst.EndRow() == nil
}

// record is appendRecord over a LogRecord on the wire; false where appendRecord rejects
// the record or the wire holds what the readers leave to proto.Unmarshal.
func (w *wireDecoder) record(b, r []byte) (_ []byte, ok bool) {
	var (
		ts, observed            uint64
		severity                int32
		flags, dropped          uint32
		traceID, spanID, body   []byte
		hasBody                 bool
		severityText, eventName string
	)
	attrs := w.attrs[:0]
	defer func() { w.attrs = attrs }()
	if !otlpconv.Fields(r, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) bool {
		var ok bool
		switch {
		case num == 1 && typ == protowire.Fixed64Type:
			ts = u
		case num == 11 && typ == protowire.Fixed64Type:
			observed = u
		case num == 2 && typ == protowire.VarintType:
			severity = int32(u)
		case num == 3 && typ == protowire.BytesType:
			severityText, ok = otlpconv.WireString(v)
			return ok
		case num == 5 && typ == protowire.BytesType:
			if hasBody {
				return false
			}
			body, hasBody = v, true
		case num == 6 && typ == protowire.BytesType:
			attrs = append(attrs, v)
		case num == 7 && typ == protowire.VarintType:
			dropped = uint32(u)
		case num == 8 && typ == protowire.Fixed32Type:
			flags = uint32(u)
		case num == 9 && typ == protowire.BytesType:
			traceID = v
		case num == 10 && typ == protowire.BytesType:
			spanID = v
		case num == 12 && typ == protowire.BytesType:
			eventName, ok = otlpconv.WireString(v)
			return ok
		default:
			return false
		}
		return true
	}) {
		return b, false
	}
	if (len(traceID) != 0 && len(traceID) != 16) || (len(spanID) != 0 && len(spanID) != 8) {
		return b, false
	}
	if ts == 0 {
		ts = observed
	}
	b = jsontext.AppendUnixNano(append(b, `{"timestamp":`...), ts)
	b = jsontext.AppendUnixNano(append(b, `,"observed_timestamp":`...), observed)
	b = otlpconv.AppendID(append(b, `,"trace_id":`...), traceID)
	b = otlpconv.AppendID(append(b, `,"span_id":`...), spanID)
	b = jsontext.AppendUint(append(b, `,"flags":`...), uint64(flags))
	b = jsontext.AppendString(append(b, `,"severity_text":`...), severityText)
	b = jsontext.AppendInt(append(b, `,"severity_number":`...), int64(severity))
	if b, ok = otlpconv.AppendWireAnyValue(append(b, `,"body":`...), body, hasBody); !ok {
		return b, false
	}
	if b, ok = otlpconv.AppendWireAttributes(append(b, `,"attributes":`...), attrs); !ok {
		return b, false
	}
	if dropped != 0 {
		b = jsontext.AppendUint(append(b, `,"dropped_attributes_count":`...), uint64(dropped))
	}
	if eventName != "" {
		b = jsontext.AppendString(append(b, `,"event_name":`...), eventName)
	}
	b = w.ctx.Append(b)
	return append(b, '}'), true
}
