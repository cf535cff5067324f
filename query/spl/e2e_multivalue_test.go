package spl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/tables"
)

// TestMultivalueFieldsOfArraysOfObjects searches a log-search table of JSON events with
// arrays of objects, order line items (items{}.sku) and OTLP span events (events{}.name),
// with the table's path schema recorded as the service records it, and checks every
// answer against the same semantics computed in Go: a comparison matches when any
// element does, stats BY counts an event once per distinct value, aggregates take every
// element, table lists the values.
func TestMultivalueFieldsOfArraysOfObjects(t *testing.T) {
	eng := openTestEngine(t)
	evs := genOrderEvents()
	table := loadEvents(t, eng, "spl_multivalue", evs)
	const docType = "JSON(_time DateTime64(3, 'UTC'), _raw String, host String, source String, sourcetype String, index String)"
	rows := make([][]byte, len(evs))
	for i, line := range strings.Split(strings.TrimSuffix(ndjson(evs), "\n"), "\n") {
		rows[i] = []byte(line)
	}
	paths, err := tables.PathsOf(context.Background(), eng.(streamEngine).c, docType, rows)
	if err != nil {
		t.Fatal(err)
	}
	for p := range query.DeclaredPaths(docType) {
		delete(paths, p)
	}
	for _, p := range []string{"items[].sku", "items[].qty", "items[].price", "events[].name"} {
		if len(paths[p]) == 0 {
			t.Fatalf("the schema lacks %s: %v", p, paths)
		}
	}
	run := func(spl string, mod ...func(*Request)) (*result, error) {
		env := &e2eEnv{eng: eng, table: table}
		return env.try(spl, append(mod, func(r *Request) { r.Paths = paths })...)
	}
	search := func(t *testing.T, spl string) *result {
		t.Helper()
		r, err := run(spl)
		if err != nil {
			if es, ok := AsErrors(err); ok {
				t.Fatalf("%s:\n%s", spl, es.Render())
			}
			t.Fatalf("%s: %v", spl, err)
		}
		return r
	}
	inWindow := filter(evs, func(e event) bool { return !e.time().Before(e2eStart) && e.time().Before(e2eEnd) })
	count := func(pred func(event) bool) int { return len(filter(inWindow, pred)) }
	one := func(t *testing.T, spl, col string) any {
		t.Helper()
		r := search(t, spl)
		if len(r.Data) != 1 {
			t.Fatalf("%s: %d rows", spl, len(r.Data))
		}
		return r.Data[0][col]
	}
	checkCount := func(t *testing.T, spl string, want int) {
		t.Helper()
		if got := one(t, spl+" | stats count", "count"); fmt.Sprint(got) != strconv.Itoa(want) {
			t.Errorf("%s: count %v, want %d", spl, got, want)
		}
	}

	t.Run("search", func(t *testing.T) {
		hasSku := func(s string) func(event) bool {
			return func(e event) bool {
				return slices.ContainsFunc(elems(e, "items", "sku"), func(v any) bool { return strings.EqualFold(fmt.Sprint(v), s) })
			}
		}
		want := count(hasSku("b"))
		if want == 0 || want == count(func(e event) bool { return e["items"] != nil }) {
			t.Fatalf("the data does not tell: %d events with sku b", want)
		}
		checkCount(t, `items{}.sku=b`, want)                   // the base search reads the table
		checkCount(t, `* | search items{}.sku=B`, want)        // a later stage reads the path column
		checkCount(t, `| where items{}.sku="b"`, want)         // the expression language
		checkCount(t, `| where 'items[].sku'="b"`, want)       // the schema's own spelling, quoted
		checkCount(t, `NOT items{}.sku=b`, len(inWindow)-want) // events without items included
		checkCount(t, `items{}.sku=*`, count(func(e event) bool { return len(elems(e, "items", "sku")) > 0 }))
		checkCount(t, `items{}.sku IN (a, c)`, count(func(e event) bool { return hasSku("a")(e) || hasSku("c")(e) }))
		checkCount(t, `items{}.qty>=3`, count(func(e event) bool {
			return slices.ContainsFunc(elems(e, "items", "qty"), func(v any) bool { return num(v) >= 3 })
		}))
		checkCount(t, `| where items{}.price < 2`, count(func(e event) bool {
			return slices.ContainsFunc(elems(e, "items", "price"), func(v any) bool { return num(v) < 2 })
		}))
		checkCount(t, `events{}.name=exception`, count(func(e event) bool { return slices.Contains(elems(e, "events", "name"), any("exception")) }))
	})

	t.Run("stats_by", func(t *testing.T) {
		want := map[string]int{}
		for _, e := range inWindow {
			seen := map[string]bool{}
			for _, v := range elems(e, "items", "sku") {
				if s := fmt.Sprint(v); !seen[s] {
					seen[s] = true
					want[s]++
				}
			}
		}
		r := search(t, `| stats count by items{}.sku`)
		got := map[string]int{}
		for _, row := range r.Data {
			n, _ := strconv.Atoi(fmt.Sprint(row["count"]))
			got[fmt.Sprint(row["items{}.sku"])] = n
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("stats count by items{}.sku: %v, want %v", got, want)
		}
		// span events: per service, the events of spans with an exception event
		wantSvc := map[string]int{}
		for _, e := range inWindow {
			if slices.Contains(elems(e, "events", "name"), any("exception")) {
				wantSvc[e["service"].(string)]++
			}
		}
		r = search(t, `events{}.name=exception | stats count by service`)
		gotSvc := map[string]int{}
		for _, row := range r.Data {
			n, _ := strconv.Atoi(fmt.Sprint(row["count"]))
			gotSvc[fmt.Sprint(row["service"])] = n
		}
		if fmt.Sprint(gotSvc) != fmt.Sprint(wantSvc) {
			t.Errorf("by service: %v, want %v", gotSvc, wantSvc)
		}
	})

	t.Run("aggregates", func(t *testing.T) {
		var qty, price, n float64
		skus := map[string]bool{}
		maxPrice := 0.0
		for _, e := range inWindow {
			for _, v := range elems(e, "items", "qty") {
				qty += num(v)
			}
			for _, v := range elems(e, "items", "price") {
				price += num(v)
				maxPrice = max(maxPrice, num(v))
			}
			for _, v := range elems(e, "items", "sku") {
				n++
				skus[fmt.Sprint(v)] = true
			}
		}
		r := search(t, `| stats sum(items{}.qty) AS q, avg(items{}.price) AS p, max(items{}.price) AS mx, count(items{}.sku) AS n, dc(items{}.sku) AS d, values(items{}.sku) AS v`)
		row := r.Data[0]
		var sorted []string
		for s := range skus {
			sorted = append(sorted, s)
		}
		sort.Strings(sorted)
		for col, want := range map[string]float64{"q": qty, "p": price / n, "mx": maxPrice, "n": n, "d": float64(len(skus))} {
			if got := num(row[col]); fmt.Sprintf("%.9g", got) != fmt.Sprintf("%.9g", want) {
				t.Errorf("%s: %v, want %v", col, row[col], want)
			}
		}
		if fmt.Sprint(row["v"]) != fmt.Sprint(sorted) {
			t.Errorf("values: %v, want %v", row["v"], sorted)
		}
		// by a scalar field
		want := map[string]float64{}
		for _, e := range inWindow {
			if c, ok := e["customer"].(string); ok {
				for _, v := range elems(e, "items", "qty") {
					want[c] += num(v)
				}
			}
		}
		r = search(t, `| stats sum(items{}.qty) AS q by customer`)
		for _, row := range r.Data {
			c := fmt.Sprint(row["customer"])
			if w, ok := want[c]; ok && w != 0 && num(row["q"]) != w {
				t.Errorf("%s: %v, want %v", c, row["q"], w)
			}
		}
	})

	t.Run("table", func(t *testing.T) {
		r := search(t, `items{}.sku=* | table order_id, items{}.sku, items{}.qty | sort num(order_id)`)
		var want []event
		for _, e := range inWindow {
			if len(elems(e, "items", "sku")) > 0 {
				want = append(want, e)
			}
		}
		sort.Slice(want, func(i, j int) bool { return want[i]["order_id"].(int64) < want[j]["order_id"].(int64) })
		if len(r.Data) != len(want) {
			t.Fatalf("%d rows, want %d", len(r.Data), len(want))
		}
		for i, row := range r.Data {
			if g, w := fmt.Sprint(row["items{}.sku"]), fmt.Sprint(elems(want[i], "items", "sku")); g != w {
				t.Errorf("row %d: skus %s, want %s", i, g, w)
			}
			var q []string
			for _, v := range elems(want[i], "items", "qty") {
				q = append(q, fmt.Sprint(v))
			}
			if g, w := fmt.Sprint(row["items{}.qty"]), "["+strings.Join(q, " ")+"]"; g != w {
				t.Errorf("row %d: qty %s, want %s", i, g, w)
			}
		}
	})

	t.Run("fields_rename", func(t *testing.T) {
		r := search(t, `order_id=7 | fields order_id, items{}.sku`)
		var e event
		for _, x := range inWindow {
			if x["order_id"] == int64(7) {
				e = x
			}
		}
		if len(r.Data) != 1 || fmt.Sprint(r.Data[0]["items{}.sku"]) != fmt.Sprint(elems(e, "items", "sku")) {
			t.Errorf("fields: %v, want skus %v", r.Data, elems(e, "items", "sku"))
		}
		withSku := count(func(e event) bool { return len(elems(e, "items", "sku")) > 0 })
		// field statistics describe the expanded field
		r, err := run(`items{}.sku=* | mvexpand items{}.sku`, func(r *Request) { r.IncludeFieldStatistics = true })
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(r.FieldStats, func(f FieldStatistic) bool { return f.Field == "items{}.sku" })
		if i < 0 || r.FieldStats[i].Type != "string" || r.FieldStats[i].NonNullRows != uint64(r.Rows) || withSku == 0 {
			t.Errorf("field statistics: %+v, want strings in %d rows", r.FieldStats, r.Rows)
		}
		want := count(func(e event) bool { return slices.Contains(elems(e, "items", "sku"), any("c")) })
		if got := one(t, `| rename items{}.sku AS sku | stats count(eval(sku="c")) AS n`, "n"); fmt.Sprint(got) != strconv.Itoa(want) {
			t.Errorf("renamed: %v, want %d", got, want)
		}
	})

	t.Run("mvexpand", func(t *testing.T) {
		want := map[string]int{} // every value, duplicates included
		rows := 0                // a row per value; an event without values stays one row
		for _, e := range inWindow {
			vs := elems(e, "items", "sku")
			rows += max(1, len(vs))
			for _, v := range vs {
				want[fmt.Sprint(v)]++
			}
		}
		if got := one(t, `| mvexpand items{}.sku | stats count`, "count"); fmt.Sprint(got) != strconv.Itoa(rows) {
			t.Errorf("rows: %v, want %d", got, rows)
		}
		r := search(t, `| mvexpand items{}.sku | stats count by items{}.sku`)
		got := map[string]int{}
		for _, row := range r.Data {
			n, _ := strconv.Atoi(fmt.Sprint(row["count"]))
			got[fmt.Sprint(row["items{}.sku"])] = n
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("count by value: %v, want %v", got, want)
		}
		var e event
		for _, x := range inWindow {
			if len(elems(x, "items", "sku")) >= 3 {
				e = x
				break
			}
		}
		r = search(t, fmt.Sprintf(`order_id=%d | mvexpand items{}.qty | where items{}.qty > 0 | table items{}.qty`, e["order_id"]))
		var gotQ, wantQ []string
		for _, row := range r.Data {
			gotQ = append(gotQ, fmt.Sprint(row["items{}.qty"]))
		}
		for _, v := range elems(e, "items", "qty") {
			wantQ = append(wantQ, fmt.Sprint(v))
		}
		if fmt.Sprint(gotQ) != fmt.Sprint(wantQ) {
			t.Errorf("values of order %v in order: %v, want %v", e["order_id"], gotQ, wantQ)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, spl := range []string{
			`| eval s=items{}.sku`,
			`| chart count over customer by items{}.sku`,
			`| where items{}.sku = items{}.qty`,
			`| stats latest(items{}.sku)`,
			`| mvexpand items{}.sku limit=2`,
		} {
			_, err := run(spl)
			es, ok := AsErrors(err)
			if !ok || es.Code() != string(CodeUnsupported) {
				t.Errorf("%s: %v, want %s", spl, err, CodeUnsupported)
			}
		}
	})
}

// genOrderEvents makes orders with line items and spans with events, in the e2e window.
func genOrderEvents() []event {
	r := rand.New(rand.NewPCG(25, 1))
	var out []event
	for i := 0; i < 300; i++ {
		e := event{"_time": e2eStart.Add(time.Duration(i) * time.Minute), "order_id": int64(i)}
		if i%10 < 8 {
			e["customer"] = []string{"acme", "globex", "initech"}[r.IntN(3)]
			e["sourcetype"] = "orders"
			switch i % 13 {
			case 0: // no items
			case 1:
				e["items"] = []any{}
			default:
				var items []any
				for j := r.IntN(4) + 1; j > 0; j-- {
					it := map[string]any{"sku": []string{"a", "b", "c", "d"}[r.IntN(4)], "qty": int64(r.IntN(5) + 1)}
					if r.IntN(2) == 0 {
						it["price"] = int64(r.IntN(5) + 1)
					} else {
						it["price"] = float64(r.IntN(40)+1) / 8
					}
					items = append(items, it)
				}
				e["items"] = items
			}
		} else {
			e["sourcetype"] = "spans"
			e["service"] = []string{"checkout", "cart"}[r.IntN(2)]
			var spanEvents []any
			for j := r.IntN(3); j > 0; j-- {
				spanEvents = append(spanEvents, map[string]any{"name": []string{"exception", "retry", "cache.miss"}[r.IntN(3)], "time_unix_nano": int64(1704067200000000000 + i)})
			}
			if spanEvents != nil {
				e["events"] = spanEvents
			}
		}
		e["_raw"] = fmt.Sprintf("event %d", i)
		out = append(out, e)
	}
	return out
}

// elems returns the values of key in the elements of the array of objects at arr.
func elems(e event, arr, key string) []any {
	var out []any
	items, _ := e[arr].([]any)
	for _, it := range items {
		if v, ok := it.(map[string]any)[key]; ok {
			out = append(out, v)
		}
	}
	return out
}

func num(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
	return f
}
