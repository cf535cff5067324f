package otlplogs

import (
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
)

// FuzzDecode feeds arbitrary bodies in both encodings: Decode must not panic, and when it
// succeeds every row is a compact JSON object and every record is either a row or rejected.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(handWritten), true)
	pb, _ := proto.Marshal(benchRequest(3))
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
		if !json {
			var req collogspb.ExportLogsServiceRequest
			_ = proto.Unmarshal(body, &req)
			n := 0
			for _, rl := range req.GetResourceLogs() {
				for _, sl := range rl.GetScopeLogs() {
					n += len(sl.GetLogRecords())
				}
			}
			if b.Rows+b.Rejected != n {
				t.Fatalf("%d records, %d rows, %d rejected", n, b.Rows, b.Rejected)
			}
		}
	})
}
