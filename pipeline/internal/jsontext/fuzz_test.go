package jsontext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func isUTF8(b []byte) bool { return utf8.Valid(b) }

// FuzzAppendCompact checks the reader against encoding/json: it accepts exactly the valid JSON
// texts in UTF-8 (up to MaxDepth) and compacts them the same way.
func FuzzAppendCompact(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":[1,2,{"b":null}],"c":"\u00e9\n"}`, ` [ 1 , -0.5e+3 , true ] `,
		`"\ud83d\ude00"`, `{"a":1,}`, `[01]`, "\"\xff\"", `{"a" "b"}`, `1e`, `-`, `nul`,
		// Long strings, read eight bytes at a time, with the byte that ends a run at each offset.
		`["0123456789abcdef\"0123456789abcdef", "0123456789abcdé0123456789abcdef"]`,
		"[\"0123456789\x01bcdef\", \"01234567890123456789\\n0123\", \"01234567\x7f9abcdef~~~~~~~~\"]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(in)
		got, err := r.AppendCompact(nil)
		if err == nil {
			err = r.End()
		}
		want, ok := oracle(in)
		if err != nil {
			if ok && !strings.Contains(err.Error(), "nested deeper") {
				t.Fatalf("%q: rejected valid JSON: %v", in, err)
			}
			return
		}
		if !ok {
			t.Fatalf("%q: accepted invalid JSON as %q", in, got)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q: compacted to %q, encoding/json gives %q", in, got, want)
		}
	})
}

// FuzzStrings checks that AppendString always writes a valid JSON string that decodes to the
// input (invalid UTF-8 replaced as encoding/json does), and that AppendUnescaped decodes what
// encoding/json decodes.
func FuzzStrings(f *testing.F) {
	for _, s := range []string{"", "abc", "a\"b\\c\n\x00", "é😀", "\xff\xfe", `\ud83d\ude00`, `\ud83d`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := AppendString(nil, s)
		var got, want string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("%q: wrote invalid JSON %s: %v", s, enc, err)
		}
		std, _ := json.Marshal(s)
		_ = json.Unmarshal(std, &want)
		if got != want {
			t.Fatalf("%q: decodes to %q, want %q", s, got, want)
		}
		// Read s as the inside of a JSON string literal.
		lit := []byte(`"` + s + `"`)
		r := NewReader(lit)
		dec, err := r.String()
		if err != nil || !r.AtEnd() {
			return
		}
		var ref string
		if err := json.Unmarshal(lit, &ref); err != nil {
			t.Fatalf("%q: reader accepted, encoding/json says %v", lit, err)
		}
		if string(dec) != ref {
			t.Fatalf("%q: decoded %q, encoding/json %q", lit, dec, ref)
		}
	})
}
