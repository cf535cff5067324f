package cloudwatchlogs

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/svc-data/svc/pipeline/rows"
)

// benchPayload is a subscription payload of n events, half plain text and half JSON messages.
func benchPayload(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"messageType":"DATA_MESSAGE","owner":"123456789012","logGroup":"/aws/lambda/checkout",` +
		`"logStream":"2025/06/01/[$LATEST]0123456789abcdef","subscriptionFilters":["to-svc"],"logEvents":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		msg := fmt.Sprintf(`2025-06-01T12:00:00.%03dZ\t6f1c2d3e-0000-4000-8000-%012d\tINFO\tcart %d updated: 3 items, total 42.50 EUR\n`, i%1000, i, i)
		if i%2 == 1 {
			msg = fmt.Sprintf(`{\"level\":\"info\",\"msg\":\"cart updated\",\"cart\":%d,\"items\":3,\"total\":42.5,\"currency\":\"EUR\"}`, i)
		}
		fmt.Fprintf(&b, `{"id":"3833442091646738348%037d","timestamp":%d,"message":"%s"}`, i, 1748779200000+i, msg)
	}
	b.WriteString("]}")
	return b.Bytes()
}

func BenchmarkDecode(b *testing.B) {
	body := benchPayload(1000)
	var buf rows.Buffer
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := Decode(body, &buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(buf.Rows)/b.Elapsed().Seconds(), "rows/s")
}
