package edge

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform"
	"github.com/svc-data/svc/projections/catalog"
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

// otlpTable is the table a native OTLP export of signal writes to: the signal's name
// (traces, logs, metrics) unless x-service-<signal>-table names another.
func otlpTable(signal string, header func(string) string) string {
	if t := header("x-service-" + signal + "-table"); t != "" {
		return t
	}
	return signal
}

// ensureOTLPTable makes sure the table of an export exists, creating it on first use
// (with an automatic sorting key). Keys with database roles never create tables: 404.
func (s *Server) ensureOTLPTable(p *Principal, database, table string) error {
	if _, ok := s.deps.Catalog.Table(p.ClusterID, database, table); ok {
		return nil
	}
	if p.CustomRole() {
		return apiErr(404, "table_not_found", fmt.Sprintf("table %q does not exist in database %q", table, database),
			"keys with database roles insert into existing tables only; create it with an admin key")
	}
	if !p.can(actInsert) {
		return forbidden("insert rows")
	}
	_, err := s.deps.Tables.CreateTable(s.work(), p.OrgID, p.ClusterID, database, table, "", "")
	if errors.Is(err, catalog.ErrExists) {
		// A concurrent first export created it: read the winner's table.
		err = s.deps.Commands.Sync(s.work())
	}
	if err != nil {
		return tableError(err)
	}
	return nil
}

// otlpHTTP serves POST /otlp/v1/{signal}: OTLP/HTTP with JSON or protobuf bodies, gzip or
// not, into the signal's table of the selected database. Answers are OTLP responses
// (partialSuccess when records were dropped); refusals use the error envelope, and
// backpressure is 503 with Retry-After, which OTLP exporters retry.
func (s *Server) otlpHTTP(signal string) keyHandler {
	t, err := transform.Get("otlp-" + signal)
	if err != nil {
		panic(err) // the otlp-* transforms are built in
	}
	return func(ctx *fasthttp.RequestCtx, p *Principal) {
		db, err := s.database(ctx, p)
		if err != nil {
			writeError(ctx, err)
			return
		}
		table := otlpTable(signal, func(h string) string { return string(ctx.Request.Header.Peek(h)) })
		if err := s.ensureOTLPTable(p, db.Name, table); err != nil {
			writeError(ctx, err)
			return
		}
		ctx.SetUserValue("table", table)
		contentType := string(ctx.Request.Header.ContentType())
		encoding := string(ctx.Request.Header.Peek("Content-Encoding"))
		var buf rows.Buffer
		n, err := s.ingest(ctx, p, string(ctx.Request.Header.Peek("Idempotency-Key")), &buf, func(body []byte, buf *rows.Buffer) error {
			return t.Decode(transform.Request{Body: body, ContentType: contentType, ContentEncoding: encoding, MaxBodySize: MaxOTLPBody}, buf)
		})
		if err != nil {
			writeError(ctx, err)
			return
		}
		ctx.Response.Header.Set("X-Successful-Rows", strconv.Itoa(n))
		writeOTLPSuccess(ctx, signal, contentType, &buf)
	}
}

// MaxOTLPBody is the largest OTLP request after decompression (SPEC: Limits).
const MaxOTLPBody = 100 << 20
