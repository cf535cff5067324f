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

// Floats are written positionally, as the engine writes them, except below 1e-6 and from
// 1e21 in magnitude; 'g' had written a sum of 1000218.16 as 1.00021816e+06.
func TestFloatsArePositional(t *testing.T) {
	for _, c := range []struct {
		f    float64
		bits int
		want string
	}{
		{1000218.16, 64, "1000218.16"},
		{123456789012, 64, "123456789012"},
		{-2.5, 64, "-2.5"},
		{0, 64, "0"},
		{0.000001, 64, "0.000001"},
		{1e-7, 64, "1e-7"},
		{-1.5e-10, 64, "-1.5e-10"},
		{1e21, 64, "1e+21"},
		{1e20, 64, "100000000000000000000"},
		{float64(float32(0.1)), 32, "0.1"},
		{float64(float32(3e7)), 32, "30000000"},
	} {
		if got := string(appendJSONFloat(nil, c.f, c.bits)); got != c.want {
			t.Errorf("JSON %v (%d bits) = %s, want %s", c.f, c.bits, got, c.want)
		}
		if got := formatFloatText(c.f, c.bits); got != c.want {
			t.Errorf("text %v (%d bits) = %s, want %s", c.f, c.bits, got, c.want)
		}
	}
}
