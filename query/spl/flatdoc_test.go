package spl

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestFlattenDocIsTheMapWalk: flattenDoc gives the leaves decoding into a map and flatten
// give, strings with escapes and arrays included, skipping what it is told to; what it does
// not read it leaves to that decode, having reported nothing.
func TestFlattenDocIsTheMapWalk(t *testing.T) {
	docs := []string{
		`{}`,
		`{"_raw":"1.2.3.4 - - \"GET /x HTTP/1.1\" 200","_time":"2024-01-01 00:00:00.000","host":"web-01","status":200,"bytes":-1.5e3,"ok":true,"none":null}`,
		`{"a":{"b":{"c":"d\u00e9\n"},"e":[1,"x",{"f":2},[true,null]]},"g":"\ud800 lone","h":"caf\u00e9"}`,
		` { "sp" : 1 , "nested" : { "x" : "y" } } `,
		`{"k\u00e9y":1}`,
		`{"dup":1,"dup":2}`,
		"{\"bad\":\"\xff\"}",
		`{"a":1} trailing`,
		`{"a":01}`,
		`{"a":tru}`,
		`[1]`,
	}
	skip := func(p string) bool { return p == "_raw" }
	for _, s := range docs {
		got := map[string]any{}
		calls := 0
		ok := flattenDoc(s, skip, func(p string, v any) { got[p] = v; calls++ })
		want := map[string]any{}
		var doc map[string]any
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if err := dec.Decode(&doc); err == nil {
			flatten("", doc, func(p string, v any) {
				if !skip(p) {
					want[p] = v
				}
			})
		}
		if !ok {
			if calls != 0 {
				t.Fatalf("%s: reported %d leaves and false", s, calls)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %#v\nwant %#v", s, got, want)
		}
	}
	for _, s := range []string{`{"a":1} trailing`, `{"a":01}`, `{"a":tru}`, `[1]`} {
		if flattenDoc(s, skip, func(string, any) {}) {
			t.Fatalf("%s: read", s)
		}
	}
}

// TestRowMarshalsAsJSONMarshal: a row is written byte for byte as json.Marshal writes its
// names and values, escapes and every value type included.
func TestRowMarshalsAsJSONMarshal(t *testing.T) {
	names := []string{"plain", "esc\"<&>\u2028", "nil", "t", "i", "u", "n", "f", "num", "raw", "arr", "bad\xff"}
	values := []any{"web-01 GET /x", "a<b>&\"\\\n\u2028é\xff", nil, true, int64(-3), uint64(7), 12, 1e21, json.Number("1.50"), json.RawMessage(`{"a": 1}`), []any{"x", json.Number("2")}, "ok"}
	got, err := Row{names: names, values: values}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	want = append(want, '{')
	for i, n := range names {
		if i > 0 {
			want = append(want, ',')
		}
		k, _ := json.Marshal(n)
		v, _ := json.Marshal(values[i])
		want = append(append(append(want, k...), ':'), v...)
	}
	want = append(want, '}')
	if string(got) != string(want) {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}
