package otlpmetrics

import (
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
)

// FuzzDecode feeds arbitrary bodies in both encodings: Decode must not panic, and when it
// succeeds every row is a compact JSON object.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(handWritten), true)
	pb, _ := proto.Marshal(benchRequest(2))
	f.Add(pb, false)
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
		var req colmetricspb.ExportMetricsServiceRequest
		if !json && proto.Unmarshal(body, &req) == nil && b.Rows+b.Rejected > points(&req) {
			t.Fatalf("%d rows and %d rejected for %d data points", b.Rows, b.Rejected, points(&req))
		}
	})
}

func points(req *colmetricspb.ExportMetricsServiceRequest) int {
	n := 0
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				n += len(m.GetGauge().GetDataPoints()) + len(m.GetSum().GetDataPoints()) + len(m.GetHistogram().GetDataPoints()) +
					len(m.GetExponentialHistogram().GetDataPoints()) + len(m.GetSummary().GetDataPoints())
			}
		}
	}
	return n
}
