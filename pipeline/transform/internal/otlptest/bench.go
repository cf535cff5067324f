package otlptest

import (
	"testing"
	"time"

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
				buf = rows.Buffer{} // as the edge: a new buffer per request
				if err := decode(c.body, c.contentType, &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(buf.Rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(len(buf.B))/float64(buf.Rows), "B/row")
		})
	}
}

// BenchmarkAgainst decodes req as protobuf with decode and with upstream in turn on every
// iteration, so that both see the same machine, and reports upstream's time over
// decode's ("x-upstream": how many times faster decode is) with each one's rows/s.
func BenchmarkAgainst(b *testing.B, req proto.Message, decode, upstream Decoder) {
	body, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	var (
		buf      rows.Buffer
		own, ups time.Duration
		n        int
	)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		for i, d := range []Decoder{decode, upstream} {
			buf.Reset()
			start := time.Now()
			if err := d(body, "application/x-protobuf", &buf); err != nil {
				b.Fatal(err)
			}
			if i == 0 {
				own += time.Since(start)
			} else {
				ups += time.Since(start)
			}
		}
		n++
	}
	b.ReportMetric(float64(ups)/float64(own), "x-upstream")
	b.ReportMetric(float64(n)*float64(buf.Rows)/own.Seconds(), "rows/s")
	b.ReportMetric(float64(n)*float64(buf.Rows)/ups.Seconds(), "upstream-rows/s")
}
