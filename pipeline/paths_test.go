package pipeline

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"testing"
)

func TestShapeHash(t *testing.T) {
	seed := maphash.MakeSeed()
	h := func(s string) uint64 { return shapeHash(seed, []byte(s)) }
	same := [][2]string{
		{`{"a":1,"b":"x"}`, `{"a":22,"b":"yy"}`},
		{`{"u":{"id":1}}`, ` { "u" : { "id" : 99 } } `},
		{`{"t":["x","y"]}`, `{"t":["z"]}`},
		{`{"d":"2023-11-14"}`, `{"d":"2024-01-02"}`},
		{`{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`, `{"trace_id":"0af7651916cd43dd8448eb211c80319c"}`},
		{`{"m":"Nov 25 10:00:01 web-1 sshd[4021]: Accepted publickey for deploy from 10.0.0.7 port 52144"}`, `{"m":"x"}`},
	}
	for _, p := range same {
		if h(p[0]) != h(p[1]) {
			t.Errorf("%s and %s should have one shape", p[0], p[1])
		}
	}
	differ := [][2]string{
		{`{"a":1}`, `{"a":1.5}`},
		{`{"a":1}`, `{"a":"1"}`},
		{`{"a":1}`, `{"b":1}`},
		{`{"a":{"b":1}}`, `{"a":5}`},
		{`{"d":"2023-11-14"}`, `{"d":"2023-11-14T22:13:20Z"}`},
		{`{"d":"x2023"}`, `{"d":"2023-11-14"}`},
		{`{"d":"25dec2026"}`, `{"d":"4bf92f35"}`},
		{`{"d":"Nov 25 2026"}`, `{"d":"hello"}`},
		{`{"t":["x"]}`, `{"t":[1]}`},
		{`{"t":[1]}`, `{"t":[1,2.5]}`},
		{`{"a":true}`, `{"a":1}`},
		{`{"a":1}`, `{"a":12345678901234567890}`},
		{`{"a":1}`, `{"a":1`},
	}
	for _, p := range differ {
		if h(p[0]) == h(p[1]) {
			t.Errorf("%s and %s should differ in shape", p[0], p[1])
		}
	}
}

func TestLinesOf(t *testing.T) {
	var got []string
	for l := range linesOf([]byte("a\n\nb\nc")) {
		got = append(got, string(l))
	}
	if len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" {
		t.Fatalf("%q", got)
	}
}

// FuzzShapeHash: any input hashes without panicking, the same input always to the same
// shape, and a valid document's shape ignores the whitespace between its tokens.
func FuzzShapeHash(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":"x"}`, `{"t":[{"x":[1,[2]]},{"y":"2023-11-14"}]}`, `{"a":{"b":{"c":null}}}`, `[1,2]`, `{"a":"\""}`, `{`} {
		f.Add([]byte(s))
	}
	seed := maphash.MakeSeed()
	f.Fuzz(func(t *testing.T, row []byte) {
		h := shapeHash(seed, row)
		if shapeHash(seed, row) != h {
			t.Fatalf("%q hashed to two shapes", row)
		}
		var v any
		if json.Unmarshal(row, &v) != nil {
			return
		}
		spaced := bytes.ReplaceAll(row, []byte(","), []byte(" , "))
		if json.Unmarshal(spaced, &v) == nil && !bytes.Contains(row, []byte(`"`)) && shapeHash(seed, spaced) != h {
			t.Fatalf("%q and %q differ in shape", row, spaced)
		}
	})
}
