package chclient

import (
	"fmt"
	"testing"
)

// BenchmarkJSONBlock encodes a batch of 25k HEC events (the log-search layout), as the
// consumer inserts them.
func BenchmarkJSONBlock(b *testing.B) {
	const typ = "JSON(_time DateTime64(3, 'UTC'), _raw String, host String, source String, sourcetype String, index String)"
	var rows []byte
	for i := range 25_000 {
		rows = fmt.Appendf(rows, `{"_time":"2026-12-01 10:%02d:%02d.%03d","_raw":"10.1.%d.%d - - [01/Dec/2026:10:00:00 +0000] \"GET /checkout HTTP/1.1\" 200 %d \"-\" \"Mozilla/5.0 (X11; Linux x86_64)\" 0.%03d","host":"web-%02d","source":"/var/log/nginx/access.log","sourcetype":"access_combined","index":"main","status":200,"bytes":%d,"duration":0.%03d,"path":"/checkout","method":"GET"}`+"\n",
			i/60%60, i%60, i%1000, i%256, i%200, i*7%50000, i%1000, i%12, i*7%50000, i%1000)
	}
	b.SetBytes(int64(len(rows)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, ok := encodeJSONBlock(typ, [][]byte{rows}, true); !ok {
			b.Fatal("refused")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/25_000, "ns/row")
}
