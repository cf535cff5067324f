package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestAppendCompact(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		r := NewReader([]byte(in))
		got, err := r.AppendCompact(nil)
		if err == nil {
			err = r.End()
		}
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if string(got) != want {
			t.Fatalf("%q: got %s, want %s", in, got, want)
		}
	}
	f(`{}`, `{}`)
	f(` { "a" : [ 1 , 2.5e-3 , -0 , true , false , null ] } `, `{"a":[1,2.5e-3,-0,true,false,null]}`)
	f(`{"s":"a b\t\"\\\/\u00e9\ud83d\ude00 é"}`, `{"s":"a b\t\"\\\/\u00e9\ud83d\ude00 é"}`)
	f("[\n{\"x\" :{\"y\":[ ]}}\r\n]", `[{"x":{"y":[]}}]`)
	f(`"only a string"`, `"only a string"`)
	f(`123456789012345678901234567890`, `123456789012345678901234567890`)
}

func TestSyntaxErrors(t *testing.T) {
	f := func(in string, offset int, msg string) {
		t.Helper()
		r := NewReader([]byte(in))
		_, err := r.AppendCompact(nil)
		if err == nil {
			err = r.End()
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("%q: got %v, want a syntax error", in, err)
		}
		if se.Offset != offset || !strings.Contains(se.Msg, msg) {
			t.Fatalf("%q: got %q at %d, want %q at %d", in, se.Msg, se.Offset, msg, offset)
		}
	}
	f(``, 0, "unexpected end of input")
	f(`{`, 1, "expected a string as object key")
	f(`{"a"}`, 4, "expected ':'")
	f(`{"a":1,}`, 7, "expected a string as object key")
	f(`{"a":1 "b":2}`, 7, "expected ',' or '}'")
	f(`[1,]`, 3, "expected a value")
	f(`[1 2]`, 3, "expected ',' or ']'")
	f(`[01]`, 2, "expected ',' or ']'")
	f(`[1.]`, 3, "after the decimal point")
	f(`[1e]`, 3, "in the exponent")
	f(`[-]`, 2, "expected a digit")
	f(`[+1]`, 1, "expected a value")
	f(`[NaN]`, 1, "expected a value")
	f(`[tru]`, 1, "expected true")
	f(`"abc`, 0, "not terminated")
	f("\"a\x01\"", 2, "control character 0x01")
	f("\"a\xff\"", 2, "invalid UTF-8 byte 0xff")
	f("\"\xed\xa0\x80\"", 1, "invalid UTF-8") // UTF-8-encoded surrogate
	f(`"\x"`, 1, "invalid escape")
	f(`"\u12G4"`, 1, "four hex digits")
	f(`{} {}`, 3, "after the end of the top-level value")
	f(strings.Repeat("[", MaxDepth+1), MaxDepth, "nested deeper than 1000 levels")
}

func TestDepthLimit(t *testing.T) {
	in := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	r := NewReader([]byte(in))
	if err := r.Skip(); err != nil {
		t.Fatal(err)
	}
}

func TestObjectWalk(t *testing.T) {
	in := []byte(`{"a": "x\n", "b\u0041": {"c": [1, "two"]}, "skip": [{"deep": true}], "n": -1.5}`)
	r := NewReader(in)
	var got []string
	err := r.Object(func(key []byte) error {
		switch string(key) {
		case "a":
			s, err := r.String()
			got = append(got, "a="+string(s))
			return err
		case "bA":
			return r.Object(func(key []byte) error {
				return r.Array(func(i int) error {
					if r.Kind() == String {
						raw, err := r.RawString()
						got = append(got, string(raw))
						return err
					}
					return nil // left to the reader to skip
				})
			})
		case "n":
			n, err := r.Number()
			got = append(got, "n="+string(n))
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
	want := "a=x\n|\"two\"|n=-1.5"
	if s := strings.Join(got, "|"); s != want {
		t.Fatalf("got %q, want %q", s, want)
	}
}

func TestAppendString(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := string(AppendString(nil, in)); got != want {
			t.Fatalf("%q: got %s, want %s", in, got, want)
		}
	}
	f("", `""`)
	f("plain", `"plain"`)
	f("q\"b\\n\nr\rt\t\x00\x1f", `"q\"b\\n\nr\rt\t\u0000\u001f"`)
	f("é😀<>&\u2028", "\"é😀<>&\u2028\"")
	f("a\xffb", `"a\ufffdb"`)
}

func TestAppendFloat(t *testing.T) {
	f := func(in float64, want string) {
		t.Helper()
		if got := string(AppendFloat(nil, in)); got != want {
			t.Fatalf("%v: got %s, want %s", in, got, want)
		}
	}
	f(0, "0")
	f(1.5, "1.5")
	f(-2, "-2")
	f(1e21, "1e+21")
	f(1e-7, "1e-07")
	f(123456789.125, "123456789.125")
	nan := 0.0
	f(nan/nan, `"NaN"`)
}

func TestAppendUnescaped(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		if got := string(AppendUnescaped(nil, []byte(raw))); got != want {
			t.Fatalf("%q: got %q, want %q", raw, got, want)
		}
	}
	f(`plain`, "plain")
	f(`a\"\\\/\b\f\n\r\tz`, "a\"\\/\b\f\n\r\tz")
	f(`\u00e9\u20AC`, "é€")
	f(`\ud83d\ude00`, "😀")
	f(`\ud83d`, "\ufffd")
	f(`\ude00x`, "\ufffdx")
	f(`\ud83d\u0041`, "\ufffdA")
}

// oracle is what encoding/json makes of in: the compacted text, or ok false when it is not
// one valid JSON value in UTF-8.
func oracle(in []byte) (compact []byte, ok bool) {
	if !json.Valid(in) || !isUTF8(in) {
		return nil, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, in); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// TestSkipPlain puts every byte value at every offset of a run of plain bytes: the word-wise
// scan must stop exactly where the table says.
func TestSkipPlain(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 24; pos++ {
			s := []byte(strings.Repeat("a", 24))
			s[pos] = byte(c)
			want := len(s)
			if !plain[c] {
				want = pos
			}
			if got := skipPlain(s, 0); got != want {
				t.Fatalf("byte 0x%02x at %d: stopped at %d, want %d", c, pos, got, want)
			}
		}
	}
}
