package sortkey

import (
	"errors"
	"testing"
)

func TestCompile(t *testing.T) {
	f := func(key string, types map[string]string, paths []string, want string) {
		t.Helper()
		k, err := Parse(key)
		if err != nil {
			t.Fatalf("Parse(%q): %v", key, err)
		}
		if got := k.Paths(); len(got) != len(paths) || (len(got) > 0 && got[0] != paths[0]) {
			t.Fatalf("Paths(%q) = %v, want %v", key, got, paths)
		}
		if got := k.Compile(types); got != want {
			t.Fatalf("Compile(%q) = %q, want %q", key, got, want)
		}
	}
	f("", nil, nil, "tuple()")
	f("status", map[string]string{"status": "Int64"}, []string{"status"}, "doc.status.:Int64")
	f("user.id, toDate(ts)", map[string]string{"user.id": "Int64", "ts": "DateTime64(9)"}, []string{"ts", "user.id"},
		"doc.user.id.:Int64, toDate(doc.ts.:`DateTime64(9)`)")
	f("cityHash64(a, b), c", map[string]string{"a": "String", "b": "String", "c": "Float64"}, []string{"a", "b", "c"},
		"cityHash64(doc.a.:String, doc.b.:String), doc.c.:Float64")
	f("`odd name`, x", map[string]string{"odd name": "String", "x": "Int64"}, []string{"odd name", "x"},
		"doc.`odd name`.:String, doc.x.:Int64")
	f("_time", map[string]string{"_time": ""}, []string{"_time"}, "doc._time")
	f("toStartOfHour(toDateTime(ts)), -n", map[string]string{"ts": "String", "n": "Int64"}, []string{"n", "ts"},
		"toStartOfHour(toDateTime(doc.ts.:String)), -doc.n.:Int64")
}

func TestParseErrors(t *testing.T) {
	for _, key := range []string{"a AS b", "(SELECT 1)", "a FROM t", "a,", "arrayMap(x -> x, a)", "*", "a b c"} {
		if _, err := Parse(key); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want a syntax error", key, err)
		}
	}
}
