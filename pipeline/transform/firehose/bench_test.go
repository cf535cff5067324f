package firehose

import (
	"fmt"
	"strings"
	"testing"

	"github.com/svc-data/svc/pipeline/rows"
)

func BenchmarkDecode(b *testing.B) {
	objects := make([]string, 500)
	lines := make([]string, 500)
	for i := range objects {
		objects[i] = fmt.Sprintf(`{"timestamp":"2025-06-01T12:00:%02dZ","event":"click","user":{"id":%d,"plan":"pro"},"page":"/docs/ingest?tab=%d","ms":%d}`, i%60, i, i%7, i%900)
		lines[i] = strings.Repeat(fmt.Sprintf("2025-06-01T12:00:%02dZ\tclick\tu%d\t/docs/ingest\t%d\n", i%60, i, i%900), 4)
	}
	for _, c := range []struct {
		name    string
		body    []byte
		columns []string
	}{
		{"json", delivery(objects...), nil},
		{"tsv", delivery(lines...), []string{"ts", "event", "user", "page", "ms"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var buf rows.Buffer
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if _, err := Decode(c.body, c.columns, &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(buf.Rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
