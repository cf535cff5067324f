package cloudtrail

import (
	"bytes"
	"testing"

	"github.com/svc-data/svc/pipeline/rows"
)

func BenchmarkDecode(b *testing.B) {
	// The sample's two records repeated to a log file of 1000, indented as CloudTrail writes
	// them in the documentation (real files are compact; this is the slower case).
	one := sample(b)
	recs := one[bytes.IndexByte(one, '[')+1 : bytes.LastIndexByte(one, ']')]
	var body bytes.Buffer
	body.WriteString(`{"Records":[`)
	for i := range 500 {
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(recs)
	}
	body.WriteString("]}")
	var buf rows.Buffer
	b.SetBytes(int64(body.Len()))
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := Decode(body.Bytes(), &buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(buf.Rows)/b.Elapsed().Seconds(), "rows/s")
}
