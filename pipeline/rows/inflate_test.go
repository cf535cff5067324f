package rows

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func jsonIndent(dst *bytes.Buffer, src []byte) error { return json.Indent(dst, src, "", "  ") }

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestInflate(t *testing.T) {
	body := []byte(`{"a":1}`)
	f := func(in []byte, encoding string, want []byte) {
		t.Helper()
		var b Buffer
		got, err := b.Inflate(in, encoding, 0)
		if err != nil {
			t.Fatalf("%q: %v", encoding, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", encoding, got, want)
		}
	}
	f(body, "", body)
	f(body, "identity", body)
	f(gz(t, body), "gzip", body)
	f(gz(t, body), " GZIP ", body)
	f(gz(t, body), "x-gzip", body)
	f(gz(t, body), "", body)                                                // sniffed: a .gz file posted as it is
	f(gz(t, gz(t, body)), "gzip", body)                                     // a .gz file sent with Content-Encoding: gzip
	f(append(gz(t, []byte(`{"a":`)), gz(t, []byte(`1}`))...), "gzip", body) // concatenated members
}

func TestInflateErrors(t *testing.T) {
	f := func(in []byte, encoding string, limit int, is error, msg string) {
		t.Helper()
		var b Buffer
		_, err := b.Inflate(in, encoding, limit)
		if err == nil || (is != nil && !errors.Is(err, is)) || !strings.Contains(err.Error(), msg) {
			t.Fatalf("%q: got %v, want %v containing %q", encoding, err, is, msg)
		}
	}
	big := bytes.Repeat([]byte("x"), 5000)
	f(big, "", 4096, ErrTooLarge, "the decompressed body would be larger than the limit of 4 KiB")
	f(gz(t, big), "gzip", 4096, ErrTooLarge, "the decompressed body would be larger than the limit of 4 KiB")
	f(gz(t, big), "", 4999, ErrTooLarge, "limit of 4999 bytes")
	f([]byte("{}"), "br", 0, ErrUnsupportedMediaType, `Content-Encoding "br" is not supported; send gzip or no Content-Encoding`)
	f([]byte("not gzip"), "gzip", 0, nil, "invalid gzip data")
	f(gz(t, big)[:30], "gzip", 0, nil, "invalid gzip data")
}

func TestInflateBomb(t *testing.T) {
	// 64 MiB of zeros compress to about 64 KiB; the reader must stop at the limit.
	bomb := gz(t, make([]byte, 64<<20))
	var b Buffer
	_, err := b.Inflate(bomb, "gzip", 1<<20)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
	if c := cap(b.inflated[0]); c > 4<<20 {
		t.Fatalf("decompressed %d bytes for a 1 MiB limit", c)
	}
}
