package otlptraces

import (
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
)

// FuzzDecode feeds arbitrary bodies in both encodings: Decode must not panic, and when it
// succeeds every row is a compact JSON object and every span is either a row or rejected.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(handWritten), true)
	pb, _ := proto.Marshal(benchRequest(3))
	f.Add(pb, false)
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"00","spanId":"zz"}]}]}]}`), true)
	f.Fuzz(func(t *testing.T, body []byte, json bool) {
		contentType := "application/x-protobuf"
		if json {
			contentType = "application/json"
		}
		var b rows.Buffer
		if err := Decode(body, contentType, &b); err != nil {
			if b.Rows != 0 || len(b.B) != 0 {
				t.Fatal("rows left after an error")
			}
			return
		}
		rowstest.Lines(t, &b)
		var req coltracepb.ExportTraceServiceRequest
		if !json {
			_ = proto.Unmarshal(body, &req)
			spans := 0
			for _, rs := range req.GetResourceSpans() {
				for _, ss := range rs.GetScopeSpans() {
					spans += len(ss.GetSpans())
				}
			}
			if b.Rows+b.Rejected != spans {
				t.Fatalf("%d spans, %d rows, %d rejected", spans, b.Rows, b.Rejected)
			}
		}
	})
}
