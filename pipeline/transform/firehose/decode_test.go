package firehose

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
)

// delivery builds a delivery body whose records hold the given data.
func delivery(data ...string) []byte {
	var b strings.Builder
	b.WriteString(`{"requestId":"req-1","timestamp":1578090901599,"records":[`)
	for i, d := range data {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"data":%q}`, base64.StdEncoding.EncodeToString([]byte(d)))
	}
	b.WriteString("]}")
	return []byte(b.String())
}

func TestDecode(t *testing.T) {
	f := func(body []byte, columns []string, want ...string) {
		t.Helper()
		var b rows.Buffer
		env, err := Decode(body, columns, &b)
		if err != nil {
			t.Fatal(err)
		}
		if env.RequestID == "" || env.Timestamp == 0 {
			t.Fatalf("envelope %+v", env)
		}
		got := rowstest.Lines(t, &b)
		if len(got) != len(want) {
			t.Fatalf("%d rows, want %d:\n%s", len(got), len(want), b.B)
		}
		for i := range want {
			rowstest.Equal(t, got[i], want[i])
		}
	}
	sample, err := os.ReadFile("testdata/delivery.json")
	if err != nil {
		t.Fatal(err)
	}
	// Amazon's example: two text records, no columns.
	f(sample, nil, `{"data":"hello"}`, `{"data":"hello world"}`)

	// JSON object, array of objects, text: each record on its own terms.
	f(delivery(
		`{"user": "u1", "n": 1}`,
		"\n[{\"a\":1},{\"b\":[true]}]\n",
		"plain text\twith a tab\n",
		"",
	), nil,
		`{"user":"u1","n":1}`, `{"a":1}`, `{"b":[true]}`, `{"data":"plain text\twith a tab\n"}`, `{"data":""}`)

	// TSV with columns: one row per non-empty line, TabSeparated escapes, \N is null.
	f(delivery("2025-06-01\tinfo\tstarted\n2025-06-01\terror\tline one\\nline two\r\n\n", "2025-06-02\t\\N\ta\\tb\\\\c\\x"),
		[]string{"day", "level", "msg"},
		`{"day":"2025-06-01","level":"info","msg":"started"}`,
		`{"day":"2025-06-01","level":"error","msg":"line one\nline two"}`,
		`{"day":"2025-06-02","level":null,"msg":"a\tb\\c\\x"}`)

	// With columns, JSON records are still JSON.
	f(delivery(`{"a":1}`), []string{"x"}, `{"a":1}`)

	// Gzip at the HTTP level is the transform's business (Content-Encoding); records inside are
	// decoded as they are.
	f([]byte(`{"records":[],"requestId":"r","timestamp":1}`), nil)
}

func TestDecodeErrors(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`{"a":1}`))
	w.Close()
	f := func(body []byte, columns []string, want string) {
		t.Helper()
		b := rows.Buffer{B: []byte("{}\n"), Rows: 1}
		_, err := Decode(body, columns, &b)
		if err == nil || err.Error() != want {
			t.Fatalf("%s:\n got %v\nwant %s", body, err, want)
		}
		if string(b.B) != "{}\n" || b.Rows != 1 {
			t.Fatal("buffer changed")
		}
	}
	f([]byte(`[]`), nil, "not a Firehose delivery: the body is an array, not an object with records")
	f([]byte(`{"requestId":"r"}`), nil, "not a Firehose delivery: it has no records array")
	f([]byte(`{"records":{}}`), nil, "records is an object, not an array")
	f([]byte(`{"records":[1]}`), nil, "records[0]: the record is a number, not an object")
	f([]byte(`{"records":[{"date":"aGk="}]}`), nil, "records[0]: the record has no data")
	f([]byte(`{"records":[{"data":1}]}`), nil, "records[0]: data is a number, not a base64 string")
	f([]byte(`{"records":[{"data":"aGk="},{"data":"***"}]}`), nil, "records[1]: data is not valid base64: illegal base64 data at input byte 0")
	f([]byte(`{"requestId":7,"records":[]}`), nil, "requestId is a number, not a string")
	f([]byte(`{"timestamp":1.5,"records":[]}`), nil, "timestamp 1.5 is not a whole number of milliseconds")
	f(delivery(`{"a":1}`, gz.String()), nil, "records[1]: data is gzip-compressed, not JSON or UTF-8 text; turn on decompression in the Firehose stream's settings (for CloudWatch Logs sources) or send records uncompressed")
	f(delivery("ok", "a\x00b"), nil, "records[1]: data is binary (control byte 0x00 at offset 1), not JSON or UTF-8 text")
	f(delivery("caf\xe9"), nil, "records[0]: data is not UTF-8 (byte 0xe9 at offset 3), not JSON or text")
	f(delivery(`{"a":}`), nil, `records[0]: data is not a JSON object or an array of objects: invalid JSON at offset 5: expected a value, found "}"`)
	f(delivery(`[{"a":1},2]`), nil, "records[0]: data is not a JSON object or an array of objects: element 1 of the array is a number, not an object")
	f(delivery("a\tb\n", "a\tb\tc\n"), []string{"x", "y"}, "records[1]: line 1 has 3 tab-separated values for 2 columns")
	f(delivery("a"), []string{"x", "y"}, "records[0]: line 1 has 1 tab-separated values for 2 columns")
	f([]byte(`{"records":[]} {}`), nil, `invalid JSON at offset 15: unexpected "{}" after the end of the top-level value`)
}

func TestMaxBytes(t *testing.T) {
	b := rows.Buffer{MaxBytes: 30}
	_, err := Decode(delivery(`{"a":"0123456789"}`, `{"b":"0123456789"}`), nil, &b)
	if !errors.Is(err, rows.ErrTooLarge) || err.Error() != "the rows would be larger than the limit of 30 bytes" || b.Rows != 0 {
		t.Fatalf("got %v, %d rows", err, b.Rows)
	}
}

func TestParseEnvelope(t *testing.T) {
	env, err := ParseEnvelope(delivery("x"))
	if err != nil || env != (Envelope{RequestID: "req-1", Timestamp: 1578090901599}) {
		t.Fatalf("%+v %v", env, err)
	}
	// A broken body still yields the id read before the fault.
	env, err = ParseEnvelope([]byte(`{"requestId":"req-2","timestamp":5,"records":[{"data":`))
	if err == nil || env.RequestID != "req-2" || env.Timestamp != 5 {
		t.Fatalf("%+v %v", env, err)
	}
	if _, err := ParseEnvelope([]byte(`"x"`)); err == nil {
		t.Fatal("no error for a string")
	}
}

func TestResponses(t *testing.T) {
	now := time.UnixMilli(1578090903599)
	if got := string(AppendResponse(nil, "ed4acda5-034f-9f42-bba1-f29aea6d7d8f", now)); got != `{"requestId":"ed4acda5-034f-9f42-bba1-f29aea6d7d8f","timestamp":1578090903599}` {
		t.Fatal(got)
	}
	if got := string(AppendErrorResponse(nil, "r", now, `records[1]: "data" is binary`)); got != `{"requestId":"r","timestamp":1578090903599,"errorMessage":"records[1]: \"data\" is binary"}` {
		t.Fatal(got)
	}
}

func TestParseColumns(t *testing.T) {
	f := func(in string, want []string, wantErr string) {
		t.Helper()
		got, err := ParseColumns(in)
		if wantErr != "" {
			if err == nil || err.Error() != wantErr {
				t.Fatalf("%q: got %v, want %q", in, err, wantErr)
			}
			return
		}
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("%q: got %q %v", in, got, err)
		}
	}
	f("a,b,c", []string{"a", "b", "c"}, "")
	f(" ts , level,msg ", []string{"ts", "level", "msg"}, "")
	f("user.id,odd name", []string{"user.id", "odd name"}, "")
	f("", nil, "columns is empty; give the names of the tab-separated values, separated by commas")
	f("a,,b", nil, "column 2 of columns has no name")
	f("a,b,a", nil, `column "a" appears twice in columns`)
	f(strings.Repeat("c,", MaxColumns)+"c", nil, "columns names 1001 columns, more than 1000")
}

func TestCommonAttribute(t *testing.T) {
	h := []byte(`{"commonAttributes":{"columns":"a,b","other":"x"}}`)
	if v, ok, err := CommonAttribute(h, "columns"); v != "a,b" || !ok || err != nil {
		t.Fatal(v, ok, err)
	}
	if _, ok, err := CommonAttribute(h, "missing"); ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, ok, err := CommonAttribute(nil, "columns"); ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, _, err := CommonAttribute([]byte(`{"commonAttributes":{"columns":1}}`), "columns"); err == nil ||
		err.Error() != `X-Amz-Firehose-Common-Attributes: common attribute "columns" is a number, not a string` {
		t.Fatal(err)
	}
}
