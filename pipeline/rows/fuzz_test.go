package rows

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeJSON checks DecodeJSON against encoding/json: it accepts exactly the UTF-8 bodies
// that are one object or an array of objects, emits each object compacted as encoding/json
// compacts it, and leaves the buffer untouched on error.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":1}`, `[{"a":[1,{"b":null}]},{}]`, ` [ { "x" : "y\n" } ] `, `[{},1]`, `[{},`,
		`"s"`, `{"a":1}{}`, "{\"a\":\"\xff\"}", `{"a":"\ud83d\ude00"}`, `[{"a":1e}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		b := Buffer{B: []byte("{}\n"), Rows: 1}
		err := DecodeJSON(body, &b)
		want, ok := expectedRows(body)
		if err != nil {
			if ok && !strings.Contains(err.Error(), "nested deeper") {
				t.Fatalf("%q: rejected: %v", body, err)
			}
			if string(b.B) != "{}\n" || b.Rows != 1 {
				t.Fatalf("%q: buffer changed on error", body)
			}
			return
		}
		if !ok {
			t.Fatalf("%q: accepted as %q", body, b.B)
		}
		if got := b.B[3:]; !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", body, got, want)
		}
		if n := bytes.Count(b.B, []byte("\n")); n != b.Rows {
			t.Fatalf("%q: %d rows counted, %d lines", body, b.Rows, n)
		}
	})
}

// expectedRows is what DecodeJSON should append for body, by encoding/json.
func expectedRows(body []byte) ([]byte, bool) {
	if !json.Valid(body) || !utf8.Valid(body) {
		return nil, false
	}
	var elems []json.RawMessage
	switch t := bytes.TrimLeft(body, " \t\r\n"); t[0] {
	case '{':
		elems = []json.RawMessage{body}
	case '[':
		if err := json.Unmarshal(body, &elems); err != nil {
			return nil, false
		}
	default:
		return nil, false
	}
	var out bytes.Buffer
	for _, e := range elems {
		if e := bytes.TrimLeft(e, " \t\r\n"); e[0] != '{' {
			return nil, false
		}
		if err := json.Compact(&out, e); err != nil {
			return nil, false
		}
		out.WriteByte('\n')
	}
	return out.Bytes(), true
}
