package rows

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestDecodeJSON(t *testing.T) {
	f := func(body, want string, rows int) {
		t.Helper()
		var b Buffer
		if err := DecodeJSON([]byte(body), &b); err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if string(b.B) != want || b.Rows != rows {
			t.Fatalf("%q: got %d rows %q, want %d rows %q", body, b.Rows, b.B, rows, want)
		}
	}
	f(`{}`, "{}\n", 1)
	f(`{"a":1}`, "{\"a\":1}\n", 1)
	f(" \n{ \"a\" : [1, 2] ,\n \"b\": {\"c\": \"x y\"} }\n", "{\"a\":[1,2],\"b\":{\"c\":\"x y\"}}\n", 1)
	f(`[]`, "", 0)
	f(`[{"a":1},{"b":"\u00e9\n"}, {}]`, "{\"a\":1}\n{\"b\":\"\\u00e9\\n\"}\n{}\n", 3)
	f(`{"big":123456789012345678901234567890,"f":1.5e300}`, "{\"big\":123456789012345678901234567890,\"f\":1.5e300}\n", 1)
	f(`{"dup":1,"dup":2}`, "{\"dup\":1,\"dup\":2}\n", 1) // passed through; see docs/transforms.md
}

func TestDecodeJSONErrors(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		b := Buffer{B: []byte("{\"before\":1}\n"), Rows: 1}
		err := DecodeJSON([]byte(body), &b)
		if err == nil {
			t.Fatalf("%q: no error, want %q", body, want)
		}
		if err.Error() != want {
			t.Fatalf("%q:\n got %q\nwant %q", body, err, want)
		}
		if string(b.B) != "{\"before\":1}\n" || b.Rows != 1 {
			t.Fatalf("%q: buffer changed on error: %d rows %q", body, b.Rows, b.B)
		}
	}
	f(``, "the body is empty; send one JSON object or an array of JSON objects")
	f(" \n\t", "the body is empty; send one JSON object or an array of JSON objects")
	f(`"text"`, "the body is a string; send one JSON object or an array of JSON objects")
	f(`42`, "the body is a number; send one JSON object or an array of JSON objects")
	f(`null`, "the body is null; send one JSON object or an array of JSON objects")
	f(`[{"a":1},{"b":2},{"c":3},"x"]`, "element 3 of the array is a string, not an object")
	f(`[{}, [1]]`, "element 1 of the array is an array, not an object")
	f(`[{}, 1e]`, `invalid JSON at offset 7: expected a digit in the exponent, found "]"`)
	f(`{"a":1,}`, `invalid JSON at offset 7: expected a string as object key, found "}"`)
	f(`{"a":1}{"b":2}`, `invalid JSON at offset 7: unexpected "{\"b\":2}" after the end of the top-level value (send several objects as one JSON array)`)
	f("{\"a\":1}\n{\"b\":2}\n", `invalid JSON at offset 8: unexpected "{\"b\":2}" after the end of the top-level value (send several objects as one JSON array)`)
	f("{\"a\":\"\xff\"}", "invalid JSON at offset 6: invalid UTF-8 byte 0xff in string")
	f(`[{"a":1},{"b":`, "invalid JSON at offset 14: unexpected end of input, expected a value")
	f(`nope`, `invalid JSON at offset 0: expected null, found "nope"`)
	f(`<xml/>`, `invalid JSON at offset 0: expected a value, found "<xml/>"`)
	f(strings.Repeat(`{"a":`, 1001)+"1"+strings.Repeat("}", 1001), "invalid JSON at offset 5000: nested deeper than 1000 levels")
}

func TestDecodeJSONMaxBytes(t *testing.T) {
	b := Buffer{MaxBytes: 20}
	err := DecodeJSON([]byte(`[{"a":"0123456789"},{"b":1}]`), &b)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if err.Error() != "the rows would be larger than the limit of 20 bytes" {
		t.Fatalf("message: %q", err)
	}
	if len(b.B) != 0 || b.Rows != 0 {
		t.Fatalf("buffer not restored: %q", b.B)
	}
}

func TestBufferAppendsAcrossCalls(t *testing.T) {
	var b Buffer
	for i := range 3 {
		if err := DecodeJSON(fmt.Appendf(nil, `[{"i":%d}]`, i), &b); err != nil {
			t.Fatal(err)
		}
	}
	if want := "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n"; string(b.B) != want || b.Rows != 3 {
		t.Fatalf("got %q", b.B)
	}
	b.Reset()
	if len(b.B) != 0 || b.Rows != 0 {
		t.Fatal("Reset kept rows")
	}
}

// sampleBody is an array of n objects shaped like product analytics events.
func sampleBody(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"timestamp":"2025-06-01T12:%02d:%02d.%03dZ","event":"page_view","user":{"id":%d,"plan":"pro","email":"user%d@example.com"},`+
			`"page":{"url":"https://example.com/docs/ingest?tab=%d","title":"Ingest \"JSON\" rows","referrer":null},`+
			`"duration_ms":%d.25,"tags":["web","eu-west-1","beta"],"ok":true}`, i/60%60, i%60, i%1000, 100000+i, i, i%7, i%5000)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// logBody is an array of n log lines with long messages, where strings dominate.
func logBody(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ts":"2025-06-01T12:00:%02dZ","level":"info","host":"web-%d","message":"GET /api/v1/carts/%d?include=items,prices,discounts&currency=EUR 200 1532 bytes in 12.3 ms user_agent=Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0 referer=https://shop.example.com/cart request_id=6f1c2d3e-0000-4000-8000-%012d"}`, i%60, i%16, i, i)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func BenchmarkDecodeJSON(b *testing.B) {
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"compact", sampleBody(1000)},
		{"indented", indent(sampleBody(1000))},
		{"logs", logBody(1000)},
	} {
		b.Run(c.name, func(b *testing.B) {
			var buf Buffer
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := DecodeJSON(c.body, &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(buf.Rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
	// The edge decodes each request into a new Buffer.
	b.Run("logs-new-buffer", func(b *testing.B) {
		body := logBody(1000)
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var buf Buffer
			if err := DecodeJSON(body, &buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func indent(body []byte) []byte {
	var out bytes.Buffer
	if err := jsonIndent(&out, body); err != nil {
		panic(err)
	}
	return out.Bytes()
}
