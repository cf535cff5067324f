package otlptest

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
)

// Decoder is an OTLP transform's Decode.
type Decoder func(body []byte, contentType string, dst *rows.Buffer) error

// CompareDecoders fails t unless decode and upstream (the transform's proto.Unmarshal
// path) write the same rows, rejections and error for body sent as protobuf, with and
// without a row limit, after a row already in the buffer.
func CompareDecoders(t testing.TB, body []byte, decode, upstream Decoder) {
	t.Helper()
	for _, ct := range []string{"application/x-protobuf", ""} {
		if ct == "" && strings.HasPrefix(strings.TrimLeft(string(body[:min(len(body), 64)]), " \t\r\n"), "{") {
			continue // sniffed as JSON
		}
		for _, limit := range []int{0, 700} {
			want := rows.Buffer{MaxBytes: limit, B: []byte("x\n"), Rows: 1}
			wantErr := upstream(body, ct, &want)
			got := rows.Buffer{MaxBytes: limit, B: []byte("x\n"), Rows: 1}
			gotErr := decode(body, ct, &got)
			if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
				t.Fatalf("%x: error %v, upstream %v", body, gotErr, wantErr)
			}
			if !bytes.Equal(got.B, want.B) || got.Rows != want.Rows || got.Rejected != want.Rejected || got.RejectedReason != want.RejectedReason {
				t.Fatalf("%x:\n got %d rows, %d rejected (%s)\n%s\nwant %d rows, %d rejected (%s)\n%s", body,
					got.Rows, got.Rejected, got.RejectedReason, got.B, want.Rows, want.Rejected, want.RejectedReason, want.B)
			}
		}
	}
}

// Bodies returns the exporter's requests' bodies, decompressed.
func Bodies(t testing.TB, reqs []Request) [][]byte {
	t.Helper()
	var out [][]byte
	for _, req := range reqs {
		var b rows.Buffer
		body, err := b.Inflate(req.Body, req.ContentEncoding, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, body)
	}
	return out
}

// Marshal is proto.Marshal, failing t on error.
func Marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
