package format

import "testing"

// Map keys are written in sorted order whatever the map's Go type, so output is stable.
func TestMapKeysSorted(t *testing.T) {
	f := func(v any, wantJSON, wantText string) {
		t.Helper()
		if got := string(appendJSON(nil, v, "")); got != wantJSON {
			t.Errorf("appendJSON(%v) = %s, want %s", v, got, wantJSON)
		}
		if got := string(appendText(nil, v, "", false)); got != wantText {
			t.Errorf("appendText(%v) = %s, want %s", v, got, wantText)
		}
	}
	f(map[string]any{"b": 2, "a": 1, "c": 3}, `{"a":1,"b":2,"c":3}`, `{'a':1,'b':2,'c':3}`)
	f(map[string]int64{"z": 1, "m": 2, "a": 3}, `{"a":3,"m":2,"z":1}`, `{'a':3,'m':2,'z':1}`)
	f(map[int32]string{30: "c", 10: "a", 20: "b"}, `{"10":"a","20":"b","30":"c"}`, `{10:'a',20:'b',30:'c'}`)
}
