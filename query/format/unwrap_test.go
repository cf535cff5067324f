package format

import (
	"reflect"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/chcol"
)

// TestUnwrapDriverValues: the driver's Variant, Dynamic and JSON values, by value and by
// pointer, nil or not, unwrap to plain values through the methods the format names
// (variant, jsonObject), without the format importing the driver.
func TestUnwrapDriverValues(t *testing.T) {
	obj := chcol.NewJSON()
	obj.SetValueAtPath("a.b", int64(1))
	want := map[string]any{"a": map[string]any{"b": int64(1)}}
	v := chcol.NewVariantWithType(int64(7), "Int64")
	var nilVariant *chcol.Variant
	var nilJSON *chcol.JSON
	f := func(name string, in any, wantV any, wantT string) {
		t.Helper()
		got, typ := unwrap(in, "T")
		if !reflect.DeepEqual(got, wantV) || typ != wantT {
			t.Errorf("%s: unwrap = %#v, %q; want %#v, %q", name, got, typ, wantV, wantT)
		}
	}
	f("variant", v, int64(7), "Int64")
	f("pointer to variant", &v, int64(7), "Int64")
	f("nil pointer to variant", nilVariant, nil, "T")
	f("empty dynamic", chcol.Dynamic{}, nil, "T")
	f("variant holding a pointer", chcol.NewVariantWithType(&v, "Variant"), int64(7), "Int64")
	f("json by pointer", obj, want, "JSON")
	f("json by value", *obj, want, "JSON")
	f("nil json", nilJSON, nil, "T")
	f("plain", "x", "x", "T")
}
