package main

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// Arrays of objects as paths (issue 25, docs/typing.md "Arrays of objects"): the answers
// are computed here from the rows sent.

type lineItem struct {
	SKU   string
	Qty   int64
	Price float64 // whole prices travel as integers: items[].price mixes Int64 and Float64
	NoPay bool    // the item has no price
}

type order struct {
	ID    int64
	Items []lineItem
}

func (o order) json() string {
	var items []string
	for _, it := range o.Items {
		price := ""
		if !it.NoPay {
			price = fmt.Sprintf(`,"price":%s`, jsonNumber(it.Price))
		}
		items = append(items, fmt.Sprintf(`{"sku":%q,"qty":%d%s}`, it.SKU, it.Qty, price))
	}
	return fmt.Sprintf(`{"id":%d,"customer":"c%d","items":[%s]}`, o.ID, o.ID%7, strings.Join(items, ","))
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func orders(n int) []order {
	skus := []string{"a", "b", "c", "d", "e"}
	var out []order
	for i := range n {
		o := order{ID: int64(i + 1)}
		for j := range i % 4 { // some orders have no items
			it := lineItem{SKU: skus[(i+j*3)%len(skus)], Qty: int64((i*j)%5 + 1), Price: float64((i+j)%9 + 1)}
			if (i+j)%3 == 0 {
				it.Price += 0.25
			}
			it.NoPay = (i+j)%11 == 0
			o.Items = append(o.Items, it)
		}
		out = append(out, o)
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func TestArraysOfObjectsInOrderLineItems(t *testing.T) {
	s := svcdtest.Start(t)
	os := orders(400)
	var lines []string
	for _, o := range os {
		lines = append(lines, o.json())
	}
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "orders"})
	ingest(t, s, "orders", lines)
	s.WaitCount("orders", len(os), 2*time.Minute)

	qtyBySKU := map[string]int64{}
	var revenue float64
	for _, o := range os {
		for _, it := range o.Items {
			qtyBySKU[it.SKU] += it.Qty
			if !it.NoPay {
				revenue += float64(it.Qty) * it.Price
			}
		}
	}

	// ARRAY JOIN items AS it: it.sku and it.qty are typed (String, Int64).
	d := s.Query("SELECT it.sku AS sku, sum(it.qty) AS q FROM orders ARRAY JOIN items AS it GROUP BY it.sku ORDER BY sku")
	if len(d) != len(qtyBySKU) {
		t.Fatalf("ARRAY JOIN groups: %v, want %v", d, qtyBySKU)
	}
	for _, row := range d {
		if sku := row["sku"].(string); num(t, row["q"]) != float64(qtyBySKU[sku]) {
			t.Errorf("sum(it.qty) of %s = %v, want %d", sku, row["q"], qtyBySKU[sku])
		}
	}
	// The form without an alias names the element by the path.
	d = s.Query("SELECT sum(items.qty) AS q FROM orders ARRAY JOIN items WHERE items.sku = 'a'")
	if num(t, d[0]["q"]) != float64(qtyBySKU["a"]) {
		t.Errorf("ARRAY JOIN items: %v, want %d", d, qtyBySKU["a"])
	}

	// arrayJoin(items) AS it in a subquery; it.price mixes Int64 and Float64 and reads as
	// Float64, items without a price are skipped by sum.
	d = s.Query("SELECT sum(it.qty * it.price) AS v FROM (SELECT arrayJoin(items) AS it FROM orders)")
	if !near(num(t, d[0]["v"]), revenue) {
		t.Errorf("sum(it.qty * it.price) = %v, want %v", d[0]["v"], revenue)
	}
	var bigQty int64
	for _, o := range os {
		for _, it := range o.Items {
			if it.Qty > 1 {
				bigQty += it.Qty
			}
		}
	}
	d = s.Query("SELECT sum(it.qty) AS q FROM (SELECT arrayJoin(arrayFilter(x -> x.qty > 1, items)) AS it FROM orders)")
	if num(t, d[0]["q"]) != float64(bigQty) {
		t.Errorf("arrayJoin(arrayFilter(...)): %v, want %d", d, bigQty)
	}

	// Lambdas over the items of each order.
	d = s.Query("SELECT id, arrayMap(x -> x.price * x.qty, items) AS lines, arrayExists(x -> x.sku = 'a', items) AS has_a, " +
		"arraySum(x -> x.qty, items) AS n, arraySum(x -> x.price * x.qty, items) AS total, " +
		"arraySum(arrayMap(x -> x.price * x.qty, items)) AS total2 FROM orders ORDER BY id")
	if len(d) != len(os) {
		t.Fatalf("lambda rows: %d, want %d", len(d), len(os))
	}
	for i, o := range os {
		row := d[i]
		var n int64
		var total float64
		hasA := false
		var want []any
		for _, it := range o.Items {
			n += it.Qty
			hasA = hasA || it.SKU == "a"
			if it.NoPay {
				want = append(want, nil)
				continue
			}
			total += float64(it.Qty) * it.Price
			want = append(want, float64(it.Qty)*it.Price)
		}
		got, _ := row["lines"].([]any)
		if len(got) != len(want) {
			t.Fatalf("order %d: arrayMap = %v, want %v", o.ID, row["lines"], want)
		}
		for j := range got {
			if (got[j] == nil) != (want[j] == nil) || got[j] != nil && !near(num(t, got[j]), want[j].(float64)) {
				t.Fatalf("order %d: arrayMap = %v, want %v", o.ID, got, want)
			}
		}
		if num(t, row["n"]) != float64(n) || !near(num(t, row["total"]), total) || !near(num(t, row["total2"]), total) {
			t.Fatalf("order %d: arraySum = %v, %v, %v, want %d, %v", o.ID, row["n"], row["total"], row["total2"], n, total)
		}
		if (num(t, row["has_a"]) == 1) != hasA {
			t.Fatalf("order %d: arrayExists = %v, want %v", o.ID, row["has_a"], hasA)
		}
	}

	// DESCRIBE and GET /v1/tables/{t} list the element paths with their types.
	d = s.Query("DESCRIBE TABLE orders")
	described := map[string]string{}
	for _, row := range d {
		described[row["name"].(string)] = row["type"].(string)
	}
	var table struct {
		Columns []struct{ Name, Type string }
	}
	s.Must(200, "GET", "/v1/tables/orders", nil).JSON(t, &table)
	listed := map[string]string{}
	for _, c := range table.Columns {
		listed[c.Name] = c.Type
	}
	for name, typ := range map[string]string{"items[].sku": "Nullable(String)", "items[].qty": "Nullable(Int64)", "items[].price": "Nullable(Float64)"} {
		if described[name] != typ || listed[name] != typ {
			t.Errorf("%s: DESCRIBE %q, GET /v1/tables %q, want %s", name, described[name], listed[name], typ)
		}
	}

	// A row policy over element paths: keys of its role see only the orders with an item
	// of sku 'a' and more than 2 of it, in a plain count and through ARRAY JOIN alike.
	for _, sql := range []string{
		"CREATE ROLE a_buyers",
		"GRANT SELECT ON default.orders TO a_buyers",
		"CREATE ROW POLICY has_a ON default.orders FOR SELECT USING arrayExists(x -> x.sku = 'a' AND x.qty > 2, items) TO a_buyers",
	} {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql})
	}
	buyer, _ := createKey(t, s, map[string]any{"name": "a-buyers", "database_roles": []string{"a_buyers"}})
	var withA int
	qtyWithA := int64(0)
	for _, o := range os {
		has := false
		for _, it := range o.Items {
			has = has || it.SKU == "a" && it.Qty > 2
		}
		if !has {
			continue
		}
		withA++
		for _, it := range o.Items {
			qtyWithA += it.Qty
		}
	}
	if withA == 0 || withA == len(os) {
		t.Fatalf("the data must have orders with and without sku a: %d of %d", withA, len(os))
	}
	asBuyer := func(sql string) []map[string]any {
		t.Helper()
		var res struct{ Data []map[string]any }
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql}, "Authorization", "Bearer "+buyer).JSON(t, &res)
		return res.Data
	}
	if d := asBuyer("SELECT count() AS n FROM orders"); num(t, d[0]["n"]) != float64(withA) {
		t.Errorf("row policy over items: the key counts %v orders, want %d", d[0]["n"], withA)
	}
	if d := asBuyer("SELECT sum(it.qty) AS q FROM orders ARRAY JOIN items AS it"); num(t, d[0]["q"]) != float64(qtyWithA) {
		t.Errorf("row policy over items, ARRAY JOIN: %v, want %d", d, qtyWithA)
	}

	// INSERT ... SELECT records the element paths of what it wrote.
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "orders_copy"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "INSERT INTO orders_copy SELECT * FROM orders"})
	d = s.Query("SELECT sum(it.qty) AS q FROM orders_copy ARRAY JOIN items AS it WHERE it.sku = 'b'")
	if num(t, d[0]["q"]) != float64(qtyBySKU["b"]) {
		t.Errorf("copied rows: %v, want %d", d, qtyBySKU["b"])
	}
}

func TestArraysOfObjectsInOTLPSpanEvents(t *testing.T) {
	s, admin := otlpSetup(t)
	key := "Bearer " + s.AdminKey
	s.Must(200, "PUT", "/v1/apps/opentelemetry"+appScope, nil, "Authorization", admin)
	names := []string{"cache.miss", "retry", "exception"}
	events := map[string]int{}
	retries := map[string]int64{}
	withException := 0
	var spans []string
	for i := range 120 {
		var evs []string
		exc := false
		for j := range i % 4 {
			name := names[(i+j)%len(names)]
			events[name]++
			exc = exc || name == "exception"
			attrs := fmt.Sprintf(`{"key":"attempt","value":{"intValue":"%d"}}`, j+1)
			retries[name] += int64(j + 1)
			evs = append(evs, fmt.Sprintf(`{"timeUnixNano":"%d","name":%q,"attributes":[%s]}`, 1700000000000000000+i*1000+j, name, attrs))
		}
		if exc {
			withException++
		}
		spans = append(spans, fmt.Sprintf(`{"traceId":"%032x","spanId":"%016x","name":"op","startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000000000009","events":[%s]}`,
			i+1, i+1, strings.Join(evs, ",")))
	}
	body := `{"resourceSpans":[{"scopeSpans":[{"spans":[` + strings.Join(spans, ",") + `]}]}]}`
	s.Must(200, "POST", "/otlp/v1/traces", body, "Authorization", key, "Content-Type", "application/json")
	s.WaitCount("traces", len(spans), 2*time.Minute)

	d := s.Query("SELECT e.name AS name, count() AS n, sum(e.attributes.attempt) AS attempts FROM traces ARRAY JOIN events AS e GROUP BY name ORDER BY name")
	if len(d) != len(events) {
		t.Fatalf("event groups: %v, want %v", d, events)
	}
	for _, row := range d {
		name := row["name"].(string)
		if num(t, row["n"]) != float64(events[name]) || num(t, row["attempts"]) != float64(retries[name]) {
			t.Errorf("%s: %v, want %d events, %d attempts", name, row, events[name], retries[name])
		}
	}
	d = s.Query("SELECT countIf(arrayExists(x -> x.name = 'exception', events)) AS n FROM traces")
	if num(t, d[0]["n"]) != float64(withException) {
		t.Errorf("spans with an exception event: %v, want %d", d, withException)
	}
}

func TestArraysOfObjectsInCloudTrailResources(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "ct"})
	types := []string{"AWS::S3::Object", "AWS::S3::Bucket", "AWS::IAM::Role"}
	byType := map[string]int{}
	withAccount := map[string]int{}
	touchesBucket := 0
	var recs []string
	for i := range 90 {
		var res []string
		bucket := false
		for j := range i%3 + 1 {
			typ := types[(i*2+j)%len(types)]
			byType[typ]++
			bucket = bucket || typ == "AWS::S3::Bucket"
			acct := ""
			if (i+j)%2 == 0 {
				acct = `"accountId":"123456789012",`
				withAccount[typ]++
			}
			res = append(res, fmt.Sprintf(`{%s"type":%q,"ARN":"arn:aws:s3:::b%d/k%d"}`, acct, typ, i, j))
		}
		if bucket {
			touchesBucket++
		}
		recs = append(recs, fmt.Sprintf(`{"eventVersion":"1.08","eventTime":"2023-06-01T12:%02d:00Z","eventSource":"s3.amazonaws.com","eventName":"GetObject","eventID":"e-%d","resources":[%s]}`,
			i%60, i, strings.Join(res, ",")))
	}
	s.Must(202, "POST", "/v1/tables/ct?transform=cloudtrail", `{"Records":[`+strings.Join(recs, ",")+`]}`)
	s.WaitCount("ct", len(recs), 2*time.Minute)

	d := s.Query("SELECT r.type AS type, count() AS n, count(r.accountId) AS acct FROM ct ARRAY JOIN resources AS r GROUP BY type ORDER BY type")
	var got []string
	for _, row := range d {
		got = append(got, fmt.Sprintf("%s %v %v", row["type"], num(t, row["n"]), num(t, row["acct"])))
	}
	var want []string
	for typ, n := range byType {
		want = append(want, fmt.Sprintf("%s %v %v", typ, float64(n), float64(withAccount[typ])))
	}
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("resources by type:\n got %v\nwant %v", got, want)
	}
	d = s.Query("SELECT count() AS n FROM ct WHERE arrayExists(x -> x.type = 'AWS::S3::Bucket', resources)")
	if num(t, d[0]["n"]) != float64(touchesBucket) {
		t.Errorf("records touching a bucket: %v, want %d", d, touchesBucket)
	}
}

// TestArraysOfObjectsInLogSearch: log search reads paths through arrays of objects as
// Splunk's multivalue fields (docs/spl.md "Arrays of objects"), typed from the element
// paths the consumer records for the log-search table: order line items and span events
// sent through the HTTP Event Collector.
func TestArraysOfObjectsInLogSearch(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	installApp(t, s, "logsearch")
	os := orders(200)
	now := time.Now().Unix()
	var b strings.Builder
	for i, o := range os {
		fmt.Fprintf(&b, `{"time": %d, "sourcetype": "orders", "event": %s}`+"\n", now-int64(i), o.json())
	}
	spanNames := []string{"cache.miss", "retry", "exception"}
	withException := 0
	for i := range 60 {
		var evs []string
		exc := false
		for j := range i % 3 {
			name := spanNames[(i+j)%len(spanNames)]
			exc = exc || name == "exception"
			evs = append(evs, fmt.Sprintf(`{"name":%q,"timeUnixNano":"%d"}`, name, 1700000000000000000+i*10+j))
		}
		if exc {
			withException++
		}
		fmt.Fprintf(&b, `{"time": %d, "sourcetype": "spans", "event": {"spanId":"%016x","events":[%s]}}`+"\n", now-int64(i), i+1, strings.Join(evs, ","))
	}
	s.Must(200, "POST", "/services/collector/event", b.String(), "Authorization", "Splunk "+s.AdminKey)
	s.WaitCount("logsearch_events", len(os)+60, 2*time.Minute)

	withB, priceOver8 := 0, 0
	var qty int64
	bySKU := map[string]int{} // orders holding the sku, once per order
	for _, o := range os {
		seen := map[string]bool{}
		b, over := false, false
		for _, it := range o.Items {
			qty += it.Qty
			b = b || it.SKU == "b"
			over = over || (!it.NoPay && it.Price > 8)
			if !seen[it.SKU] {
				seen[it.SKU] = true
				bySKU[it.SKU]++
			}
		}
		if b {
			withB++
		}
		if over {
			priceOver8++
		}
	}
	type answer struct{ Data []map[string]any }
	search := func(spl string) []map[string]any {
		t.Helper()
		var res answer
		s.Must(200, "POST", "/v1/spl/search", map[string]any{"spl": spl, "earliest": "-1h"}).JSON(t, &res)
		return res.Data
	}
	for spl, want := range map[string]int{
		`items{}.sku=b | stats count AS n`:                               withB,
		`sourcetype=orders | where items{}.price > 8 | stats count AS n`: priceOver8,
		`events{}.name=exception | stats count AS n`:                     withException,
	} {
		if d := search(spl); len(d) != 1 || num(t, d[0]["n"]) != float64(want) {
			t.Errorf("%s: %v, want %d", spl, d, want)
		}
	}
	if d := search(`| stats sum(items{}.qty) AS q`); num(t, d[0]["q"]) != float64(qty) {
		t.Errorf("total quantity: %v, want %d", d, qty)
	}
	d := search(`| stats count BY items{}.sku`)
	got := map[string]int{}
	for _, row := range d {
		got[row["items{}.sku"].(string)] = int(num(t, row["count"]))
	}
	if fmt.Sprint(got) != fmt.Sprint(bySKU) {
		t.Errorf("count by sku: %v, want %v", got, bySKU)
	}
}
