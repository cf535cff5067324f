// Package otlplogs flattens OTLP log exports into rows, one per log record (transform
// "otlp-logs" and POST /otlp/v1/logs). docs/transforms.md describes the rows.
package otlplogs

import (
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform/internal/otlpconv"
)

// Decode appends one row per log record of an OTLP/HTTP logs body to dst. contentType selects
// the encoding (see otlpconv.Unmarshal); the body must already be decompressed. Records with
// malformed ids are dropped and counted in dst.Rejected. On error dst is left as it was.
func Decode(body []byte, contentType string, dst *rows.Buffer) error {
	if otlpconv.IsProtobuf(body, contentType) && appendWire(body, dst) {
		return nil
	}
	return decodeUpstream(body, contentType, dst)
}

// decodeUpstream is Decode through proto.Unmarshal and the generated messages.
func decodeUpstream(body []byte, contentType string, dst *rows.Buffer) error {
	var req collogspb.ExportLogsServiceRequest
	if err := otlpconv.Unmarshal(body, contentType, &req); err != nil {
		return err
	}
	return Append(&req, dst)
}

// Append appends one row per log record of an export request already unmarshaled, as the OTLP
// gRPC service receives it. On error (only a row limit) dst is left as it was.
func Append(req *collogspb.ExportLogsServiceRequest, dst *rows.Buffer) error {
	mark := dst.Mark()
	var ctx otlpconv.Context
	for ri, rl := range req.GetResourceLogs() {
		resErr := ctx.SetResource(rl.GetResource(), rl.GetSchemaUrl())
		for si, sl := range rl.GetScopeLogs() {
			err := resErr
			if err == nil {
				err = ctx.SetScope(sl.GetScope(), sl.GetSchemaUrl())
			}
			for i, rec := range sl.GetLogRecords() {
				if err != nil {
					dst.Reject("resource %d, scope %d, log record %d: %v", ri, si, i, err)
					continue
				}
				start := len(dst.B)
				var reason string
				dst.B, reason = appendRecord(dst.B, rec, &ctx)
				if reason != "" {
					dst.B = dst.B[:start]
					dst.Reject("resource %d, scope %d, log record %d: %s", ri, si, i, reason)
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

// appendRecord appends one log record row, or returns why the record is rejected.
func appendRecord(b []byte, r *logspb.LogRecord, ctx *otlpconv.Context) (_ []byte, reason string) {
	switch {
	case len(r.GetTraceId()) != 0 && len(r.GetTraceId()) != 16:
		return b, "trace_id must be empty or 16 bytes"
	case len(r.GetSpanId()) != 0 && len(r.GetSpanId()) != 8:
		return b, "span_id must be empty or 8 bytes"
	}
	// A record without its own time is placed at the time it was observed, as the Collector's
	// ClickHouse exporter does.
	ts := r.GetTimeUnixNano()
	if ts == 0 {
		ts = r.GetObservedTimeUnixNano()
	}
	b = jsontext.AppendUnixNano(append(b, `{"timestamp":`...), ts)
	b = jsontext.AppendUnixNano(append(b, `,"observed_timestamp":`...), r.GetObservedTimeUnixNano())
	b = otlpconv.AppendID(append(b, `,"trace_id":`...), r.GetTraceId())
	b = otlpconv.AppendID(append(b, `,"span_id":`...), r.GetSpanId())
	b = jsontext.AppendUint(append(b, `,"flags":`...), uint64(r.GetFlags()))
	b = jsontext.AppendString(append(b, `,"severity_text":`...), r.GetSeverityText())
	b = jsontext.AppendInt(append(b, `,"severity_number":`...), int64(r.GetSeverityNumber()))
	var err error
	if b, err = otlpconv.AppendAnyValue(append(b, `,"body":`...), r.GetBody()); err != nil {
		return b, "body: " + err.Error()
	}
	if b, err = otlpconv.AppendAttributes(append(b, `,"attributes":`...), r.GetAttributes()); err != nil {
		return b, "attributes: " + err.Error()
	}
	if n := r.GetDroppedAttributesCount(); n != 0 {
		b = jsontext.AppendUint(append(b, `,"dropped_attributes_count":`...), uint64(n))
	}
	if name := r.GetEventName(); name != "" {
		b = jsontext.AppendString(append(b, `,"event_name":`...), name)
	}
	b = ctx.Append(b)
	return append(b, '}'), ""
}
