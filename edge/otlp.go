package edge

import (
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
)

// isProtobuf reports whether an OTLP request body is protobuf (else JSON), as the OTLP
// transforms decide it.
func isProtobuf(contentType string) bool {
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	return ct == "application/x-protobuf" || ct == "application/protobuf"
}

// writeOTLPSuccess answers an OTLP export the way OTLP/HTTP clients read it: 200 with an
// empty response, or partialSuccess naming how many records were dropped and why, in
// the request's encoding.
func writeOTLPSuccess(ctx *fasthttp.RequestCtx, signal, contentType string, buf *rows.Buffer) {
	rejected, reason := int64(buf.Rejected), buf.RejectedReason
	if isProtobuf(contentType) {
		var msg proto.Message
		switch signal {
		case "traces":
			r := &coltracepb.ExportTraceServiceResponse{}
			if rejected > 0 {
				r.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: rejected, ErrorMessage: reason}
			}
			msg = r
		case "logs":
			r := &collogspb.ExportLogsServiceResponse{}
			if rejected > 0 {
				r.PartialSuccess = &collogspb.ExportLogsPartialSuccess{RejectedLogRecords: rejected, ErrorMessage: reason}
			}
			msg = r
		default:
			r := &colmetricspb.ExportMetricsServiceResponse{}
			if rejected > 0 {
				r.PartialSuccess = &colmetricspb.ExportMetricsPartialSuccess{RejectedDataPoints: rejected, ErrorMessage: reason}
			}
			msg = r
		}
		body, err := proto.Marshal(msg)
		if err != nil {
			writeError(ctx, err)
			return
		}
		ctx.SetStatusCode(200)
		ctx.SetContentType("application/x-protobuf")
		ctx.SetBody(body)
		return
	}
	if rejected == 0 {
		writeJSON(ctx, 200, map[string]any{})
		return
	}
	field := map[string]string{"traces": "rejectedSpans", "logs": "rejectedLogRecords", "metrics": "rejectedDataPoints"}[signal]
	// OTLP JSON writes 64-bit integers as strings.
	writeJSON(ctx, 200, map[string]any{"partialSuccess": map[string]string{field: strconv.FormatInt(rejected, 10), "errorMessage": reason}})
}
