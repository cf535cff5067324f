package ingest

import (
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/edge/apierr"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform"
	"github.com/svc-data/svc/query/tables"
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
func writeOTLPSuccess(ctx *fasthttp.RequestCtx, signal, contentType string, buf *rows.Buffer) error {
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
			return err
		}
		ctx.SetStatusCode(200)
		ctx.SetContentType("application/x-protobuf")
		ctx.SetBody(body)
		return nil
	}
	if rejected == 0 {
		writeJSON(ctx, 200, map[string]any{})
		return nil
	}
	field := map[string]string{"traces": "rejectedSpans", "logs": "rejectedLogRecords", "metrics": "rejectedDataPoints"}[signal]
	// OTLP JSON writes 64-bit integers as strings.
	writeJSON(ctx, 200, map[string]any{"partialSuccess": map[string]string{field: strconv.FormatInt(rejected, 10), "errorMessage": reason}})
	return nil
}

// OTLPTable is the table a native OTLP export of signal writes to: the signal's name
// (traces, logs, metrics) unless x-service-<signal>-table names another. values returns
// every value the header (HTTP) or metadata key (gRPC) was sent with; one rule for both
// transports: a header given empty names nothing and is refused rather than read as
// absent (one given twice was refused already: the edge's repeatedHeader).
func OTLPTable(signal string, values func(string) []string) (string, error) {
	h := "x-service-" + signal + "-table"
	switch v := values(h); {
	case len(v) == 0:
		return signal, nil
	case v[0] == "":
		return "", &apierr.Error{Status: 400, Code: "invalid_table", Field: h,
			Message: "the " + h + " header is empty", Hint: "name a table, or omit the header"}
	default:
		return v[0], nil
	}
}

// OTLPNewTable is how a native OTLP export (HTTP or gRPC) makes its signal's table on
// first use: traces with the span's string members declared and sorted by service and
// time (tables.TracesColumnType); logs and metrics as plain JSON with the automatic key.
func OTLPNewTable(signal string) NewTable {
	if signal == "traces" {
		return NewTable{SortingKey: tables.TracesSortingKey, ColumnType: tables.TracesColumnType}
	}
	return NewTable{}
}

// OTLP serves POST /otlp/v1/{signal}: OTLP/HTTP with JSON or protobuf bodies, gzip or
// not, into the signal's table of the selected database. Answers are OTLP responses
// (partialSuccess when records were dropped); refusals use the error envelope, and
// backpressure is 503 with Retry-After, which OTLP exporters retry.
func (h *Handlers) OTLP(signal string) func(ctx *fasthttp.RequestCtx, p Caller) error {
	t, err := transform.Get("otlp-" + signal)
	if err != nil {
		panic(err) // the otlp-* transforms are built in
	}
	return func(ctx *fasthttp.RequestCtx, p Caller) error {
		table, err := OTLPTable(signal, func(h string) []string {
			var vs []string
			for _, v := range ctx.Request.Header.PeekAll(h) {
				vs = append(vs, string(v))
			}
			return vs
		})
		if err != nil {
			return err
		}
		// The table is created on first use (tableForInsert), as for every insert.
		ctx.SetUserValue("table", table)
		ctx.SetUserValue(newTableKey, OTLPNewTable(signal))
		contentType := string(ctx.Request.Header.ContentType())
		encoding := string(ctx.Request.Header.Peek("Content-Encoding"))
		idem, err := IdempotencyHeader(ctx)
		if err != nil {
			return err
		}
		buf := NewRows()
		defer RecycleRows(buf)
		n, err := h.ingest(ctx, p, idem, buf, func(body []byte, buf *rows.Buffer) error {
			return t.Decode(transform.Request{Body: body, ContentType: contentType, ContentEncoding: encoding, MaxBodySize: MaxOTLPBody}, buf)
		})
		if err != nil {
			return err
		}
		ctx.Response.Header.Set("X-Successful-Rows", strconv.Itoa(n))
		return writeOTLPSuccess(ctx, signal, contentType, buf)
	}
}

// MaxOTLPBody is the largest OTLP request after decompression (SPEC: Limits).
const MaxOTLPBody = 100 << 20
