package otlptraces

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform/internal/otlpconv"
)

// appendWire is Append over an ExportTraceServiceRequest on the wire, without unmarshaling
// it (otlpconv's wire readers). It reports false, with dst left as it was, whenever the
// body holds anything those readers leave to proto.Unmarshal, a span Append would reject,
// or rows over dst's limit: Decode then takes the upstream path, which stores, rejects
// and fails exactly as before (TestWireMatchesUpstream, FuzzWire).
func appendWire(body []byte, dst *rows.Buffer) bool {
	w := wireDecoder{dst: dst}
	return otlpconv.ReadItems(body, dst, &w.ctx, w.span)
}

type wireDecoder struct {
	dst *rows.Buffer
	ctx otlpconv.Context
	s   wireSpan
}

// span writes the row of a span on the wire.
func (w *wireDecoder) span(b []byte) bool {
	var ok bool
	if !w.s.read(b) {
		return false
	}
	w.dst.B, ok = w.s.append(w.dst.B, &w.ctx)
	return ok && w.dst.EndRow() == nil
}

// wireSpan is a span's fields on the wire; its slices are reused from span to span.
type wireSpan struct {
	traceID, spanID, parent     []byte
	traceState, name, statusMsg string
	kind, statusCode            int32
	flags                       uint32
	start, end                  uint64
	attrs, events, links        [][]byte
	dropAttrs, dropEvents       uint32
	dropLinks                   uint32
	hasStatus                   bool
	scratch                     [][]byte // an event's or link's attributes
}

func (s *wireSpan) read(b []byte) bool {
	*s = wireSpan{attrs: s.attrs[:0], events: s.events[:0], links: s.links[:0], scratch: s.scratch}
	var status []byte
	if !otlpconv.Fields(b, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) bool {
		var ok bool
		switch {
		case num == 1 && typ == protowire.BytesType:
			s.traceID = v
		case num == 2 && typ == protowire.BytesType:
			s.spanID = v
		case num == 3 && typ == protowire.BytesType:
			s.traceState, ok = otlpconv.WireString(v)
			return ok
		case num == 4 && typ == protowire.BytesType:
			s.parent = v
		case num == 5 && typ == protowire.BytesType:
			s.name, ok = otlpconv.WireString(v)
			return ok
		case num == 6 && typ == protowire.VarintType:
			s.kind = int32(u)
		case num == 7 && typ == protowire.Fixed64Type:
			s.start = u
		case num == 8 && typ == protowire.Fixed64Type:
			s.end = u
		case num == 9 && typ == protowire.BytesType:
			s.attrs = append(s.attrs, v)
		case num == 10 && typ == protowire.VarintType:
			s.dropAttrs = uint32(u)
		case num == 11 && typ == protowire.BytesType:
			s.events = append(s.events, v)
		case num == 12 && typ == protowire.VarintType:
			s.dropEvents = uint32(u)
		case num == 13 && typ == protowire.BytesType:
			s.links = append(s.links, v)
		case num == 14 && typ == protowire.VarintType:
			s.dropLinks = uint32(u)
		case num == 15 && typ == protowire.BytesType:
			if s.hasStatus {
				return false
			}
			status, s.hasStatus = v, true
		case num == 16 && typ == protowire.Fixed32Type:
			s.flags = uint32(u)
		default:
			return false
		}
		return true
	}) {
		return false
	}
	return otlpconv.Fields(status, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) bool {
		switch {
		case num == 2 && typ == protowire.BytesType:
			var ok bool
			s.statusMsg, ok = otlpconv.WireString(v)
			return ok
		case num == 3 && typ == protowire.VarintType:
			s.statusCode = int32(u)
			return true
		}
		return false
	})
}

// append is appendSpan over a span read off the wire; false where appendSpan rejects the
// span or the wire holds what the readers leave to proto.Unmarshal.
func (s *wireSpan) append(b []byte, ctx *otlpconv.Context) (_ []byte, ok bool) {
	if !otlpconv.ValidID(s.traceID, 16) || !otlpconv.ValidID(s.spanID, 8) || (len(s.parent) != 0 && len(s.parent) != 8) {
		return b, false
	}
	b = append(b, `{"timestamp":`...)
	b = jsontext.AppendUnixNano(b, s.start)
	b = jsontext.AppendUnixNano(append(b, `,"end_timestamp":`...), s.end)
	b = jsontext.AppendInt(append(b, `,"duration_ns":`...), int64(s.end-s.start))
	b = otlpconv.AppendID(append(b, `,"trace_id":`...), s.traceID)
	b = otlpconv.AppendID(append(b, `,"span_id":`...), s.spanID)
	b = otlpconv.AppendID(append(b, `,"parent_span_id":`...), s.parent)
	b = jsontext.AppendString(append(b, `,"trace_state":`...), s.traceState)
	b = jsontext.AppendUint(append(b, `,"flags":`...), uint64(s.flags))
	b = jsontext.AppendString(append(b, `,"name":`...), s.name)
	b = jsontext.AppendString(append(b, `,"kind":`...), otlpconv.EnumName(kindNames, s.kind))
	b = jsontext.AppendString(append(b, `,"status_code":`...), otlpconv.EnumName(statusNames, s.statusCode))
	b = jsontext.AppendString(append(b, `,"status_message":`...), s.statusMsg)
	if b, ok = otlpconv.AppendWireAttributes(append(b, `,"attributes":`...), s.attrs); !ok {
		return b, false
	}
	b = appendDropped(b, "dropped_attributes_count", s.dropAttrs)

	attrs := s.scratch[:0]
	defer func() { s.scratch = attrs }()
	b = append(b, `,"events":[`...)
	for _, e := range s.events {
		var (
			ts      uint64
			name    string
			dropped uint32
		)
		attrs = attrs[:0]
		if !otlpconv.Fields(e, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) bool {
			var ok bool
			switch {
			case num == 1 && typ == protowire.Fixed64Type:
				ts = u
			case num == 2 && typ == protowire.BytesType:
				name, ok = otlpconv.WireString(v)
				return ok
			case num == 3 && typ == protowire.BytesType:
				attrs = append(attrs, v)
			case num == 4 && typ == protowire.VarintType:
				dropped = uint32(u)
			default:
				return false
			}
			return true
		}) {
			return b, false
		}
		b = jsontext.Sep(b)
		b = jsontext.AppendUnixNano(append(b, `{"timestamp":`...), ts)
		b = jsontext.AppendString(append(b, `,"name":`...), name)
		if b, ok = otlpconv.AppendWireAttributes(append(b, `,"attributes":`...), attrs); !ok {
			return b, false
		}
		b = append(appendDropped(b, "dropped_attributes_count", dropped), '}')
	}
	b = append(b, ']')
	b = appendDropped(b, "dropped_events_count", s.dropEvents)

	b = append(b, `,"links":[`...)
	for _, l := range s.links {
		var (
			traceID, spanID []byte
			state           string
			flags, dropped  uint32
		)
		attrs = attrs[:0]
		if !otlpconv.Fields(l, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) bool {
			var ok bool
			switch {
			case num == 1 && typ == protowire.BytesType:
				traceID = v
			case num == 2 && typ == protowire.BytesType:
				spanID = v
			case num == 3 && typ == protowire.BytesType:
				state, ok = otlpconv.WireString(v)
				return ok
			case num == 4 && typ == protowire.BytesType:
				attrs = append(attrs, v)
			case num == 5 && typ == protowire.VarintType:
				dropped = uint32(u)
			case num == 6 && typ == protowire.Fixed32Type:
				flags = uint32(u)
			default:
				return false
			}
			return true
		}) {
			return b, false
		}
		b = jsontext.Sep(b)
		b = otlpconv.AppendID(append(b, `{"trace_id":`...), traceID)
		b = otlpconv.AppendID(append(b, `,"span_id":`...), spanID)
		b = jsontext.AppendString(append(b, `,"trace_state":`...), state)
		b = jsontext.AppendUint(append(b, `,"flags":`...), uint64(flags))
		if b, ok = otlpconv.AppendWireAttributes(append(b, `,"attributes":`...), attrs); !ok {
			return b, false
		}
		b = append(appendDropped(b, "dropped_attributes_count", dropped), '}')
	}
	b = append(b, ']')
	b = appendDropped(b, "dropped_links_count", s.dropLinks)

	b = ctx.Append(b)
	return append(b, '}'), true
}
