package pathtype

import "testing"

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		seen []string
		want Read
		expr string
	}{
		{nil, Read{}, "doc.a"},
		{[]string{"Int64"}, Read{Type: "Int64", Subcolumn: true}, "dynamicElement(doc.a, 'Int64')"},
		{[]string{"Array(Nullable(String))"}, Read{Type: "Array(Nullable(String))", Subcolumn: true}, "dynamicElement(doc.a, 'Array(Nullable(String))')"},
		{[]string{"Float64", "Int64"}, Read{Type: "Float64"}, "CAST(doc.a AS Nullable(Float64))"},
		{[]string{"Int64", "UInt64"}, Read{Type: "Float64"}, "CAST(doc.a AS Nullable(Float64))"},
		{[]string{"Int64", "String"}, Read{}, "doc.a"},
		{[]string{"Bool", "Int64"}, Read{}, "doc.a"},
		{[]string{"Date", "DateTime"}, Read{Type: "DateTime64(9)"}, "CAST(doc.a AS Nullable(DateTime64(9)))"},
		{[]string{"DateTime", "String"}, Read{Type: "String"}, "CAST(doc.a AS Nullable(String))"},
		{[]string{"Array(Nullable(Float64))", "Array(Nullable(Int64))"}, Read{Type: "Array(Nullable(Float64))"}, "CAST(doc.a AS Array(Nullable(Float64)))"},
		{[]string{"Array(Nullable(Int64))", "Array(Nullable(String))"}, Read{}, "doc.a"},
		{[]string{"Array(JSON(max_dynamic_types=16, max_dynamic_paths=256))"}, Read{}, "doc.a"},
		{[]string{"Array(Nullable(Int64))", "Int64"}, Read{}, "doc.a"},
		{[]string{"DateTime64(3, 'UTC')"}, Read{Type: "DateTime64(3, 'UTC')", Subcolumn: true}, "dynamicElement(doc.a, 'DateTime64(3, \\'UTC\\')')"},
	} {
		got := Decide(c.seen)
		if got != c.want {
			t.Errorf("Decide(%v) = %+v, want %+v", c.seen, got, c.want)
		}
		if e := got.Expr("doc.a"); e != c.expr {
			t.Errorf("Decide(%v).Expr = %s, want %s", c.seen, e, c.expr)
		}
	}
}

func TestObjectArray(t *testing.T) {
	const arr = "Array(JSON(max_dynamic_types=16, max_dynamic_paths=256))"
	for _, c := range []struct {
		seen []string
		want string
	}{
		{[]string{arr}, arr},
		{[]string{arr, "Array(Nullable(String))"}, arr}, // empty arrays
		{[]string{"Array(Nullable(String))"}, ""},
		{[]string{arr, "Int64"}, ""},
		{[]string{arr, "Array(JSON(max_dynamic_types=8, max_dynamic_paths=64))"}, ""},
		{nil, ""},
	} {
		if got := ObjectArray(c.seen); got != c.want {
			t.Errorf("ObjectArray(%v) = %q, want %q", c.seen, got, c.want)
		}
	}
}
