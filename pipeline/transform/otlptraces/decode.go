// Package otlptraces flattens OTLP trace exports into rows, one per span (transform
// "otlp-traces" and POST /otlp/v1/traces). docs/transforms.md describes the rows.
package otlptraces

import (
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform/internal/otlpconv"
)

// Decode appends one row per span of an OTLP/HTTP traces body to dst. contentType selects the
// encoding (see otlpconv.Unmarshal); the body must already be decompressed. Spans without valid
// ids are dropped and counted in dst.Rejected. On error dst is left as it was.
func Decode(body []byte, contentType string, dst *rows.Buffer) error {
	if otlpconv.IsProtobuf(body, contentType) && appendWire(body, dst) {
		return nil
	}
	return decodeUpstream(body, contentType, dst)
}

// decodeUpstream is Decode through proto.Unmarshal and the generated messages.
func decodeUpstream(body []byte, contentType string, dst *rows.Buffer) error {
	var req coltracepb.ExportTraceServiceRequest
	if err := otlpconv.Unmarshal(body, contentType, &req); err != nil {
		return err
	}
	return Append(&req, dst)
}

// Append appends one row per span of an export request already unmarshaled, as the OTLP gRPC
// service receives it. On error (only a row limit) dst is left as it was.
func Append(req *coltracepb.ExportTraceServiceRequest, dst *rows.Buffer) error {
	mark := dst.Mark()
	var ctx otlpconv.Context
	for ri, rs := range req.GetResourceSpans() {
		resErr := ctx.SetResource(rs.GetResource(), rs.GetSchemaUrl())
		for si, ss := range rs.GetScopeSpans() {
			err := resErr
			if err == nil {
				err = ctx.SetScope(ss.GetScope(), ss.GetSchemaUrl())
			}
			for i, span := range ss.GetSpans() {
				if err != nil {
					dst.Reject("resource %d, scope %d, span %d: %v", ri, si, i, err)
					continue
				}
				start := len(dst.B)
				var reason string
				dst.B, reason = appendSpan(dst.B, span, &ctx)
				if reason != "" {
					dst.B = dst.B[:start]
					dst.Reject("resource %d, scope %d, span %d: %s", ri, si, i, reason)
					continue
				}
				if err := dst.EndRow(); err != nil {
					dst.Restore(mark)
					return err
				}
			}
		}
	}
	return nil
}

// Names of Span.SpanKind and Status.StatusCode values, as the Collector's ClickHouse exporter
// writes them.
var (
	kindNames   = []string{"Unspecified", "Internal", "Server", "Client", "Producer", "Consumer"}
	statusNames = []string{"Unset", "Ok", "Error"}
)

// appendSpan appends one span row, or returns why the span is rejected.
func appendSpan(b []byte, s *tracepb.Span, ctx *otlpconv.Context) (_ []byte, reason string) {
	switch {
	case !otlpconv.ValidID(s.GetTraceId(), 16):
		return b, "trace_id must be 16 bytes and not all zero"
	case !otlpconv.ValidID(s.GetSpanId(), 8):
		return b, "span_id must be 8 bytes and not all zero"
	case len(s.GetParentSpanId()) != 0 && len(s.GetParentSpanId()) != 8:
		return b, "parent_span_id must be empty or 8 bytes"
	}
	startNs, endNs := s.GetStartTimeUnixNano(), s.GetEndTimeUnixNano()
	b = append(b, `{"timestamp":`...)
	b = jsontext.AppendUnixNano(b, startNs)
	b = jsontext.AppendUnixNano(append(b, `,"end_timestamp":`...), endNs)
	b = jsontext.AppendInt(append(b, `,"duration_ns":`...), int64(endNs-startNs))
	b = otlpconv.AppendID(append(b, `,"trace_id":`...), s.GetTraceId())
	b = otlpconv.AppendID(append(b, `,"span_id":`...), s.GetSpanId())
	b = otlpconv.AppendID(append(b, `,"parent_span_id":`...), s.GetParentSpanId())
	b = jsontext.AppendString(append(b, `,"trace_state":`...), s.GetTraceState())
	b = jsontext.AppendUint(append(b, `,"flags":`...), uint64(s.GetFlags()))
	b = jsontext.AppendString(append(b, `,"name":`...), s.GetName())
	b = jsontext.AppendString(append(b, `,"kind":`...), otlpconv.EnumName(kindNames, int32(s.GetKind())))
	b = jsontext.AppendString(append(b, `,"status_code":`...), otlpconv.EnumName(statusNames, int32(s.GetStatus().GetCode())))
	b = jsontext.AppendString(append(b, `,"status_message":`...), s.GetStatus().GetMessage())
	var err error
	if b, err = otlpconv.AppendAttributes(append(b, `,"attributes":`...), s.GetAttributes()); err != nil {
		return b, "attributes: " + err.Error()
	}
	b = appendDropped(b, "dropped_attributes_count", s.GetDroppedAttributesCount())

	b = append(b, `,"events":[`...)
	for _, e := range s.GetEvents() {
		b = jsontext.Sep(b)
		b = jsontext.AppendUnixNano(append(b, `{"timestamp":`...), e.GetTimeUnixNano())
		b = jsontext.AppendString(append(b, `,"name":`...), e.GetName())
		if b, err = otlpconv.AppendAttributes(append(b, `,"attributes":`...), e.GetAttributes()); err != nil {
			return b, "event attributes: " + err.Error()
		}
		b = append(appendDropped(b, "dropped_attributes_count", e.GetDroppedAttributesCount()), '}')
	}
	b = append(b, ']')
	b = appendDropped(b, "dropped_events_count", s.GetDroppedEventsCount())

	b = append(b, `,"links":[`...)
	for _, l := range s.GetLinks() {
		b = jsontext.Sep(b)
		b = otlpconv.AppendID(append(b, `{"trace_id":`...), l.GetTraceId())
		b = otlpconv.AppendID(append(b, `,"span_id":`...), l.GetSpanId())
		b = jsontext.AppendString(append(b, `,"trace_state":`...), l.GetTraceState())
		b = jsontext.AppendUint(append(b, `,"flags":`...), uint64(l.GetFlags()))
		if b, err = otlpconv.AppendAttributes(append(b, `,"attributes":`...), l.GetAttributes()); err != nil {
			return b, "link attributes: " + err.Error()
		}
		b = append(appendDropped(b, "dropped_attributes_count", l.GetDroppedAttributesCount()), '}')
	}
	b = append(b, ']')
	b = appendDropped(b, "dropped_links_count", s.GetDroppedLinksCount())

	b = ctx.Append(b)
	return append(b, '}'), ""
}

// appendDropped appends a dropped-items count when it is not zero.
func appendDropped(b []byte, name string, n uint32) []byte {
	if n == 0 {
		return b
	}
	return jsontext.AppendUint(jsontext.AppendField(b, name), uint64(n))
}
