package kafka

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The producer's LZ4 frames carry no content checksum, and franz-go's own decompressor
// (what the consumer uses) reads them back exactly.
func TestLZ4FramesWithoutContentChecksumRoundTrip(t *testing.T) {
	c := newLZ4Compressor()
	src := bytes.Repeat([]byte(`{"level":"info","msg":"request served","status":200,"path":"/v1/x"}`+"\n"), 20_000)
	for range 2 { // the second time on a pooled writer
		var dst bytes.Buffer
		out, codec := c.Compress(&dst, src)
		if codec != kgo.CodecLz4 || len(out) == 0 || len(out) >= len(src) {
			t.Fatalf("codec %v, %d bytes from %d", codec, len(out), len(src))
		}
		// Frame descriptor: magic (4 bytes), then FLG; bit 2 of FLG is the content checksum.
		if out[4]&0x04 != 0 {
			t.Fatalf("FLG %08b: the frame has a content checksum", out[4])
		}
		got, err := kgo.DefaultDecompressor().Decompress(out, kgo.CodecLz4)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("decompressed %d bytes, want the %d sent", len(got), len(src))
		}
	}
}

// BenchmarkLZ4 compresses and decompresses a 1,000-row batch with franz-go's default LZ4
// compressor (content checksum on) and with the producer's.
func BenchmarkLZ4(b *testing.B) {
	var rows bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&rows, `{"ts":"2026-11-25T04:%02d:%02d.%03dZ","level":"info","host":"web-%d","msg":"GET /v1/items/%d served","status":200,"bytes":%d,"ms":%d.%d}`+"\n",
			i/60%60, i%60, i%1000, i%12, i*7919, i*131%50000, i%97, i%10)
	}
	src := rows.Bytes()
	def, err := kgo.DefaultCompressor(kgo.Lz4Compression())
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		c    kgo.Compressor
	}{{"franz-go-default", def}, {"producer", newLZ4Compressor()}} {
		b.Run(c.name, func(b *testing.B) {
			dec := kgo.DefaultDecompressor()
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				var dst bytes.Buffer
				out, _ := c.c.Compress(&dst, src)
				if _, err := dec.Decompress(out, kgo.CodecLz4); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
