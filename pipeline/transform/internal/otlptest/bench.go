package otlptest

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
)

// BenchmarkDecode measures an OTLP transform's decode on req in both OTLP/HTTP encodings,
// reporting rows/s and the bytes each row takes in the buffer.
func BenchmarkDecode(b *testing.B, req proto.Message, decode func(body []byte, contentType string, dst *rows.Buffer) error) {
	pb, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, contentType string
		body              []byte
	}{
		{"protobuf", "application/x-protobuf", pb},
		{"json", "application/json", JSON(b, req)},
	} {
		b.Run(c.name, func(b *testing.B) {
			var buf rows.Buffer
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := decode(c.body, c.contentType, &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(buf.Rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(len(buf.B))/float64(buf.Rows), "B/row")
		})
	}
}
