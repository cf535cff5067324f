package statement

import (
	"strings"
	"testing"
)

// orderCatalog has a table orders whose rows hold an array of objects, items, with
// the element paths the consumer records (items[].sku, ...).
func orderCatalog() *StaticCatalog {
	const arr = "Array(JSON(max_dynamic_types=16, max_dynamic_paths=256))"
	const inner = "Array(JSON(max_dynamic_types=8, max_dynamic_paths=64))"
	paths := map[string][]string{
		"id": {"Int64"}, "items": {arr}, "items[].sku": {"String"}, "items[].qty": {"Int64"},
		"items[].price": {"Float64", "Int64"}, "items[].tags": {inner}, "items[].tags[].k": {"String"},
	}
	return &StaticCatalog{
		DBs:    []Database{{Name: "default", Engine: defaultDB}},
		Tables: map[string]map[string]Table{"default": {"orders": {Generation: 1, Paths: paths}}},
	}
}

// TestArraysOfObjectsRewrite: where the elements of an array of objects are taken, the
// array reads as its type and paths into an element are typed by items[].<path>.
func TestArraysOfObjectsRewrite(t *testing.T) {
	env := Env{Principal: KeyWithPermission(PermAdmin), Database: "default", Catalog: orderCatalog()}
	const arr = "dynamicElement(doc.items, 'Array(JSON(max_dynamic_types=16, max_dynamic_paths=256))')"
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"SELECT it.sku, sum(it.qty) FROM orders ARRAY JOIN items AS it GROUP BY it.sku",
			[]string{"ARRAY JOIN " + arr + " AS it", "sum(dynamicElement(it.qty, 'Int64'))", "GROUP BY dynamicElement(it.sku, 'String')"}},
		{"SELECT sum(it.qty * it.price) FROM (SELECT arrayJoin(items) AS it FROM orders)",
			[]string{"sum(dynamicElement(it.qty, 'Int64') * CAST(it.price AS Nullable(Float64)))", "arrayJoin(" + arr + ") AS it"}},
		{"SELECT it.sku, arrayJoin(items) AS it FROM orders", []string{"SELECT dynamicElement(it.sku, 'String') AS `it.sku`"}},
		{"SELECT s.it.sku FROM (SELECT arrayJoin(items) AS it FROM orders) AS s", []string{"dynamicElement(s.it.sku, 'String')"}},
		{"SELECT arrayMap(x -> x.price * x.qty, items), arrayExists(x -> x.sku = 'a', items) FROM orders",
			[]string{"arrayMap(x -> CAST(x.price AS Nullable(Float64)) * dynamicElement(x.qty, 'Int64'), " + arr + ")",
				"arrayExists(x -> dynamicElement(x.sku, 'String') = 'a', " + arr + ")"}},
		{"SELECT arraySum(x -> x.qty, items) FROM orders",
			[]string{"ifNull(arrayReduce('sum', arrayMap(x -> dynamicElement(x.qty, 'Int64'), " + arr + ")), 0)"}},
		{"SELECT arraySum(arrayMap(x -> x.qty, items)), arrayMax(arrayMap(x -> x.price, items)) FROM orders",
			[]string{"ifNull(arrayReduce('sum', arrayMap(x -> dynamicElement(x.qty, 'Int64'), " + arr + ")), 0)",
				"arrayReduce('max', arrayMap(x -> CAST(x.price AS Nullable(Float64)), " + arr + "))"}},
		{"WITH e AS (SELECT arrayJoin(items) AS it FROM orders) SELECT max(it.qty) FROM e", []string{"max(dynamicElement(it.qty, 'Int64'))"}},
		{"SELECT tg.k FROM orders ARRAY JOIN items AS it ARRAY JOIN it.tags AS tg",
			[]string{"dynamicElement(tg.k, 'String')", "ARRAY JOIN dynamicElement(it.tags, 'Array(JSON(max_dynamic_types=8, max_dynamic_paths=64))') AS tg"}},
		{"SELECT items.sku FROM orders ARRAY JOIN items", []string{"dynamicElement(items.sku, 'String')"}},
		{"SELECT sum(it.qty) FROM (SELECT arrayJoin(arrayFilter(x -> x.qty > 1, items)) AS it FROM orders)",
			[]string{"sum(dynamicElement(it.qty, 'Int64'))", "arrayJoin(arrayFilter(x -> dynamicElement(x.qty, 'Int64') > 1, " + arr + ")) AS it"}},
		{"SELECT it.sku FROM orders ARRAY JOIN arraySlice(items, 1, 2) AS it", []string{"dynamicElement(it.sku, 'String')", "arraySlice(" + arr + ", 1, 2) AS it"}},
		// Outside those places the array stays Dynamic, as before.
		{"SELECT items FROM orders", []string{"doc.items AS `items`"}},
	} {
		st, err := Analyze(c.sql, env)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(st.SQL, w) {
				t.Errorf("%s:\n got %s\nwant %s", c.sql, st.SQL, w)
			}
		}
	}
	// A path no element has reads Dynamic and is named in the 400 as written.
	st, err := Analyze("SELECT sum(it.nope) FROM orders ARRAY JOIN items AS it", env)
	if err != nil {
		t.Fatal(err)
	}
	if e := st.PathTypeError("Illegal type Dynamic of argument for aggregate function sum"); e == nil || !strings.Contains(e.Message, "it.nope (no row has it)") {
		t.Fatalf("path type error: %+v", e)
	}
}

func TestDescribeListsElementPaths(t *testing.T) {
	cols := DescribeColumns(orderCatalog().Tables["default"]["orders"].Paths, map[string]bool{"items": true})
	got := map[string]string{}
	for _, c := range cols {
		got[c.Name] = c.Type
	}
	if got["items[].sku"] != "Nullable(String)" || got["items[].price"] != "Nullable(Float64)" || got["items"] != "Dynamic" || got["id"] != "" {
		t.Fatalf("a key granted items sees: %v", got)
	}
}

// TestRowPolicyOverElementPaths: a policy filter is SQL over the table's paths, so a
// lambda over an array of objects types its element paths there too.
func TestRowPolicyOverElementPaths(t *testing.T) {
	env := Env{Principal: KeyWithRoles("analyst"), Database: "default", Catalog: orderCatalog(), Access: &StaticAccess{
		Roles:    []string{"analyst"},
		GrantSet: []Grant{{Role: "analyst", Privileges: PrivSelect, Database: "default", Table: "orders"}},
		Policies: []RowPolicy{{Name: "p", Database: "default", Table: "orders", Filter: "arrayExists(x -> x.sku = 'a', items)", Roles: []string{"analyst"}}},
	}}
	st, err := Analyze("SELECT count() FROM orders", env)
	if err != nil {
		t.Fatal(err)
	}
	want := "arrayExists(x -> dynamicElement(x.sku, 'String') = 'a', dynamicElement(doc.items, 'Array(JSON(max_dynamic_types=16, max_dynamic_paths=256))'))"
	if !strings.Contains(st.SQL, want) {
		t.Fatalf("policy filter:\n got %s\nwant %s", st.SQL, want)
	}
}
