package query

import (
	"maps"
	"slices"
	"testing"
)

func TestDeclaredPaths(t *testing.T) {
	got := DeclaredPaths("JSON(_time DateTime64(3, 'UTC'), _raw String, `a.b` Int64, max_dynamic_paths=10, SKIP x.y)")
	want := []string{"_raw", "_time", "a.b"}
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, want) {
		t.Fatalf("got %v, want %v", keys, want)
	}
	if DeclaredPaths("JSON") != nil {
		t.Fatal("plain JSON declares nothing")
	}
}
