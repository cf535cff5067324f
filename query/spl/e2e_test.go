package spl

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

type e2eEnv struct {
	eng   testEngine
	table string
	evs   []event
}

func (env *e2eEnv) search(t *testing.T, spl string, mod ...func(*Request)) *result {
	t.Helper()
	r, err := env.try(spl, mod...)
	if err != nil {
		if es, ok := AsErrors(err); ok {
			t.Fatalf("%s:\n%s", spl, es.Render())
		}
		t.Fatalf("%s: %v", spl, err)
	}
	return r
}

func (env *e2eEnv) try(spl string, mod ...func(*Request)) (*result, error) {
	req := Request{SPL: spl, Earliest: "1704067200", Latest: "1704153600", Table: env.table, Now: e2eEnd.Add(30 * time.Minute)}
	for _, m := range mod {
		m(&req)
	}
	resp, err := Search(context.Background(), env.eng, req)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	var r result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (env *e2eEnv) where(pred func(event) bool) []event { return filter(env.evs, pred) }

func TestE2E(t *testing.T) {
	eng := openTestEngine(t)
	env := &e2eEnv{eng: eng, evs: genEvents(e2eEvents)}
	env.table = loadEvents(t, eng, "spl_e2e", env.evs)
	all := env.where(func(event) bool { return true })

	t.Run("events", func(t *testing.T) { testEvents(t, env, all) })
	t.Run("where", func(t *testing.T) { testWhere(t, env) })
	t.Run("eval", func(t *testing.T) { testEval(t, env) })
	t.Run("functions", func(t *testing.T) { testFunctions(t, env) })
	t.Run("fields", func(t *testing.T) { testFields(t, env) })
	t.Run("stats", func(t *testing.T) { testStats(t, env, all) })
	t.Run("chart", func(t *testing.T) { testChart(t, env, all) })
	t.Run("timechart", func(t *testing.T) { testTimechart(t, env, all) })
	t.Run("order", func(t *testing.T) { testOrder(t, env, all) })
	t.Run("stages", func(t *testing.T) { testStages(t, env, all) })
	t.Run("field_statistics", func(t *testing.T) { testFieldStatistics(t, env) })
	t.Run("window", func(t *testing.T) { testWindow(t, env) })
	t.Run("errors", func(t *testing.T) { testErrors(t, env) })
	t.Run("quoting", func(t *testing.T) { testQuoting(t, eng) })
	t.Run("folded_as_separate", func(t *testing.T) { testFoldedAsSeparate(t, env) })
	t.Run("golden_inputs_run", func(t *testing.T) {
		files, _ := filepath.Glob("testdata/compile/*.spl")
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			env.search(t, stripComments(string(b)), func(r *Request) { r.IncludeFieldStatistics = true })
		}
	})
}

func testEvents(t *testing.T, env *e2eEnv, all []event) {
	f := func(spl string, pred func(event) bool) {
		t.Helper()
		want := env.where(pred)
		r := env.search(t, spl)
		if r.ResultKind != "events" || r.Format != "native_columns" {
			t.Fatalf("%s: kind %q format %q", spl, r.ResultKind, r.Format)
		}
		got := make([]string, len(r.Data))
		for i, row := range r.Data {
			got[i], _ = row["_time"].(string)
		}
		w := times(want)
		if len(w) > MaxOutputRows {
			w = w[:MaxOutputRows]
		}
		checkStrings(t, spl, got, w)
		if r.Truncated != (len(want) > MaxOutputRows) {
			t.Fatalf("%s: truncated %v with %d events", spl, r.Truncated, len(want))
		}
	}
	f(`*`, func(event) bool { return true })
	f(``, func(event) bool { return true })
	f(`error`, func(e event) bool { return hasTerm(e.get("_raw"), "error") })
	f(`ERROR timeout`, func(e event) bool { return hasTerm(e.get("_raw"), "error") && hasTerm(e.get("_raw"), "timeout") })
	f(`"connection refused"`, func(e event) bool { return hasTerm(e.get("_raw"), "connection refused") })
	f(`err*`, func(e event) bool { return hasTerm(e.get("_raw"), "err*") })
	f(`*ders`, func(e event) bool { return hasTerm(e.get("_raw"), "*ders") })
	f(`/api/users`, func(e event) bool { return hasTerm(e.get("_raw"), "/api/users") })
	f(`status=404`, func(e event) bool { return searchEq(e.get("status"), "404") })
	f(`host=web*`, func(e event) bool { return searchEq(e.get("host"), "web*") })
	f(`host=WEB1`, func(e event) bool { return searchEq(e.get("host"), "web1") })
	f(`status!=200`, func(e event) bool { return e.get("status") != nil && !searchEq(e.get("status"), "200") })
	f(`NOT status=200`, func(e event) bool { return !searchEq(e.get("status"), "200") })
	f(`bytes>50000`, func(e event) bool { n, ok := numOf(e.get("bytes")); return ok && n > 50000 })
	f(`bytes<=10`, func(e event) bool { n, ok := numOf(e.get("bytes")); return ok && n <= 10 })
	f(`host<"db2"`, func(e event) bool { s, ok := strOf(e.get("host")); return ok && s < "db2" })
	f(`sourcetype=app_log status IN (404, 500) OR host=db*`, func(e event) bool {
		return searchEq(e.get("sourcetype"), "app_log") &&
			(searchEq(e.get("status"), "404") || searchEq(e.get("status"), "500") || searchEq(e.get("host"), "db*"))
	})
	f(`index=*`, func(event) bool { return true })
	f(`index=audit`, func(e event) bool { return searchEq(e.get("index"), "audit") })
	f(`region=*`, func(e event) bool { return e.get("region") != nil })
	f(`user.name=CAROL`, func(e event) bool { return searchEq(e.get("user.name"), "carol") })
	f(`flag=true`, func(e event) bool { return searchEq(e.get("flag"), "true") })
	f(`* | search host=db1 bytes>100`, func(e event) bool {
		n, ok := numOf(e.get("bytes"))
		return searchEq(e.get("host"), "db1") && ok && n > 100
	})
	f(`(method=GET OR method=PUT) NOT (status=200 OR status=302)`, func(e event) bool {
		return (searchEq(e.get("method"), "GET") || searchEq(e.get("method"), "PUT")) &&
			!(searchEq(e.get("status"), "200") || searchEq(e.get("status"), "302"))
	})

	// Event rows carry every field of the document, flattened.
	r := env.search(t, `host=db2 user.name=*`)
	want := env.where(func(e event) bool { return searchEq(e.get("host"), "db2") && e.get("user.name") != nil })
	cols := r.columns()
	if !slices.Equal(cols[:6], []string{"_time", "_raw", "host", "source", "sourcetype", "index"}) || !slices.Contains(cols, "user.name") || !slices.Contains(cols, "bytes") {
		t.Fatalf("event columns %v", cols)
	}
	var rows []map[string]any
	for _, e := range want {
		rows = append(rows, map[string]any{"_raw": e["_raw"], "host": e["host"], "user.name": e.get("user.name"), "bytes": e["bytes"], "status": e["status"], "index": e["index"], "dur": e["dur"]})
	}
	checkRows(t, r, rows)
}

// compareGo is a comparison of the eval language: numeric when both sides
// are numbers or numeric strings, otherwise text; null when either is.
func compareGo(a, b any, op string) (bool, bool) {
	if a == nil || b == nil {
		return false, false
	}
	na, oka := numOf(a)
	nb, okb := numOf(b)
	var c int
	if oka && okb {
		c = cmpFloat(na, nb)
	} else {
		sa, _ := strOf(a)
		sb, _ := strOf(b)
		c = strings.Compare(sa, sb)
	}
	switch op {
	case "=":
		return c == 0, true
	case "!=":
		return c != 0, true
	case "<":
		return c < 0, true
	case "<=":
		return c <= 0, true
	case ">":
		return c > 0, true
	case ">=":
		return c >= 0, true
	}
	panic(op)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func testWhere(t *testing.T, env *e2eEnv) {
	f := func(spl string, pred func(event) bool) {
		t.Helper()
		r := env.search(t, spl+" | head 10000")
		want := times(env.where(pred))
		checkStrings(t, spl, anyStrings(r.column("_time")), want[:min(len(want), MaxOutputRows)])
	}
	f(`* | where status >= 500 AND host != "db1"`, func(e event) bool {
		a, ok := compareGo(e.get("status"), 500.0, ">=")
		b, ok2 := compareGo(e.get("host"), "db1", "!=")
		return ok && ok2 && a && b
	})
	f(`* | where like(host, "web%") OR isnull(region)`, func(e event) bool {
		s, ok := strOf(e.get("host"))
		return ok && strings.HasPrefix(s, "web") || e.get("region") == nil
	})
	f(`* | where bytes > dur`, func(e event) bool { v, ok := compareGo(e.get("bytes"), e.get("dur"), ">"); return ok && v })
	f(`* | where NOT status = 200`, func(e event) bool { v, ok := compareGo(e.get("status"), 200.0, "="); return ok && !v })
	f(`* | where method IN ("GET", "PUT") AND len(_raw) > 20`, func(e event) bool {
		m := e.get("method")
		return (m == "GET" || m == "PUT") && len(e.get("_raw").(string)) > 20
	})
	f(`* | where match(_raw, "^P[A-Z]+ /api") XOR status = 200`, func(e event) bool {
		raw := e.get("_raw").(string)
		a := strings.HasPrefix(raw, "POST /api") || strings.HasPrefix(raw, "PUT /api")
		b, ok := compareGo(e.get("status"), 200.0, "=")
		return ok && a != b
	})
}

func anyStrings(xs []any) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i], _ = x.(string)
	}
	return out
}

func roundHalfAway(x float64, d int) float64 {
	p := math.Pow10(d)
	return math.Copysign(math.Floor(math.Abs(x)*p+0.5)/p, x)
}

func testEval(t *testing.T, env *e2eEnv) {
	r := env.search(t, `* | eval kb=round(bytes/1024, 2), big=if(bytes > 50000, "big", "small"), who=coalesce(user.name, host, "nobody"), tag=lower(method) . ":" . status, n=len(_raw), half=dur/2, neg=-dur, ok=case(status=200, "yes", status=404, "missing") | table _time, kb, big, who, tag, n, half, neg, ok`)
	if r.ResultKind != "statistics" || len(r.Timeline) != 0 {
		t.Fatalf("table is transforming: %s, timeline %d", r.ResultKind, len(r.Timeline))
	}
	checkStrings(t, "columns", r.columns(), []string{"_time", "kb", "big", "who", "tag", "n", "half", "neg", "ok"})
	var want []map[string]any
	for _, e := range env.where(func(event) bool { return true })[:MaxOutputRows] {
		row := map[string]any{"_time": fmtTime(e.time())}
		if n, ok := numOf(e.get("bytes")); ok {
			row["kb"] = roundHalfAway(n/1024, 2)
		} else {
			row["kb"] = nil
		}
		if v, ok := compareGo(e.get("bytes"), 50000.0, ">"); ok && v {
			row["big"] = "big"
		} else {
			row["big"] = "small"
		}
		switch {
		case e.get("user.name") != nil:
			row["who"] = e.get("user.name")
		case e.get("host") != nil:
			row["who"] = e.get("host")
		default:
			row["who"] = "nobody"
		}
		if s, ok := strOf(e.get("status")); ok {
			row["tag"] = strings.ToLower(e["method"].(string)) + ":" + s
		} else {
			row["tag"] = nil
		}
		row["n"] = float64(len(e["_raw"].(string)))
		row["half"] = e["dur"].(float64) / 2
		row["neg"] = -e["dur"].(float64)
		ok200, _ := compareGo(e.get("status"), 200.0, "=")
		ok404, _ := compareGo(e.get("status"), 404.0, "=")
		switch {
		case ok200:
			row["ok"] = "yes"
		case ok404:
			row["ok"] = "missing"
		default:
			row["ok"] = nil
		}
		want = append(want, row)
	}
	checkRows(t, r, want)
}

func testFields(t *testing.T, env *e2eEnv) {
	sel := func(e event) bool { return searchEq(e.get("status"), "500") }
	evs := env.where(sel)

	r := env.search(t, `status=500 | fields host, user.*`)
	checkStrings(t, "fields with a wildcard", r.columns(), []string{"_time", "_raw", "host", "user.name"})
	var want []map[string]any
	for _, e := range evs {
		want = append(want, map[string]any{"_time": fmtTime(e.time()), "host": e.get("host"), "user.name": e.get("user.name")})
	}
	checkRows(t, r, want)

	r = env.search(t, `status=500 | fields + host, bytes, nosuch`)
	checkStrings(t, "exact fields", r.columns(), []string{"_time", "_raw", "host", "bytes"})
	want = nil
	for _, e := range evs {
		want = append(want, map[string]any{"host": e.get("host"), "bytes": e.get("bytes")})
	}
	checkRows(t, r, want)

	r = env.search(t, `status=500 | table host, status, nosuch`)
	checkStrings(t, "table", r.columns(), []string{"host", "status", "nosuch"})
	want = nil
	for _, e := range evs {
		want = append(want, map[string]any{"host": e.get("host"), "status": e.get("status"), "nosuch": nil})
	}
	checkRows(t, r, want)

	r = env.search(t, `status=500 | table u*, dur`)
	checkStrings(t, "table with a wildcard", r.columns(), []string{"user.name", "dur"})

	r = env.search(t, `status=500 | rename host AS server, user.* AS u_* | table server, u_name, host, user.name`)
	want = nil
	for _, e := range evs {
		want = append(want, map[string]any{"server": e.get("host"), "u_name": e.get("user.name"), "host": nil, "user.name": nil})
	}
	checkRows(t, r, want)

	r = env.search(t, `status=500 | eval host=null(), extra="x" | fields host, extra, bytes`)
	checkStrings(t, "eval null() removes a field", r.columns(), []string{"_time", "_raw", "extra", "bytes"})

	r = env.search(t, `status=500 | rename host AS server | fields server`)
	checkStrings(t, "renamed then kept", r.columns(), []string{"_time", "_raw", "server"})

	r = env.search(t, `* | stats count BY host | rename count AS n, host AS h | fields h, n`)
	checkStrings(t, "renamed table", r.columns(), []string{"h", "n"})
}

// group groups the window's events by the text form of key fields,
// dropping events without one of them, in the natural order of the keys.
func group(evs []event, fields ...string) ([][]any, map[string][]event) {
	groups := map[string][]event{}
	var keys [][]any
	for _, e := range evs {
		var k []any
		var parts []string
		for _, f := range fields {
			v := e.get(f)
			if v == nil {
				k = nil
				break
			}
			s, _ := strOf(v)
			k = append(k, s)
			parts = append(parts, s)
		}
		if k == nil {
			continue
		}
		id := strings.Join(parts, "\x00")
		if _, ok := groups[id]; !ok {
			keys = append(keys, k)
		}
		groups[id] = append(groups[id], e)
	}
	sort.Slice(keys, func(i, j int) bool {
		for n := range keys[i] {
			a, b := keys[i][n], keys[j][n]
			if naturalLess(a, b) {
				return true
			}
			if naturalLess(b, a) {
				return false
			}
		}
		return false
	})
	return keys, groups
}

func keyID(k []any) string {
	parts := make([]string, len(k))
	for i, v := range k {
		parts[i] = v.(string)
	}
	return strings.Join(parts, "\x00")
}

// Aggregates in Go.
func aggCount(evs []event) any { return float64(len(evs)) }
func aggCountOf(f string) func([]event) any {
	return func(evs []event) any {
		n := 0
		for _, e := range evs {
			if e.get(f) != nil {
				n++
			}
		}
		return float64(n)
	}
}
func aggDC(f string) func([]event) any {
	return func(evs []event) any {
		seen := map[string]bool{}
		for _, e := range evs {
			if s, ok := strOf(e.get(f)); ok {
				seen[s] = true
			}
		}
		return float64(len(seen))
	}
}
func aggSum(f string) func([]event) any {
	return func(evs []event) any {
		s, n := 0.0, 0
		for _, e := range evs {
			if v, ok := numOf(e.get(f)); ok {
				s += v
				n++
			}
		}
		if n == 0 {
			return nil
		}
		return s
	}
}
func aggAvg(f string) func([]event) any {
	return func(evs []event) any {
		s, n := 0.0, 0
		for _, e := range evs {
			if v, ok := numOf(e.get(f)); ok {
				s += v
				n++
			}
		}
		if n == 0 {
			return nil
		}
		return s / float64(n)
	}
}
func aggMinMax(f string, max bool) func([]event) any {
	return func(evs []event) any {
		var best any
		numeric := false
		for _, e := range evs {
			if n, ok := numOf(e.get(f)); ok {
				if !numeric || (max && n > best.(float64)) || (!max && n < best.(float64)) {
					best = n
				}
				numeric = true
			}
		}
		if numeric {
			return best
		}
		for _, e := range evs {
			if s, ok := strOf(e.get(f)); ok {
				if best == nil || (max && s > best.(string)) || (!max && s < best.(string)) {
					best = s
				}
			}
		}
		return best
	}
}
func aggValues(f string) func([]event) any {
	return func(evs []event) any {
		seen := map[string]bool{}
		out := []string{}
		for _, e := range evs {
			if s, ok := strOf(e.get(f)); ok && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
		sort.Strings(out)
		return out
	}
}
func aggAt(f string, latest bool) func([]event) any {
	return func(evs []event) any {
		var best event
		for _, e := range evs {
			if e.get(f) == nil {
				continue
			}
			if best == nil || (latest && e.time().After(best.time())) || (!latest && e.time().Before(best.time())) {
				best = e
			}
		}
		if best == nil {
			return nil
		}
		v := best.get(f)
		if i, ok := v.(int64); ok {
			return float64(i)
		}
		return v
	}
}
func aggCountIf(pred func(event) bool) func([]event) any {
	return func(evs []event) any {
		n := 0
		for _, e := range evs {
			if pred(e) {
				n++
			}
		}
		return float64(n)
	}
}

func testStats(t *testing.T, env *e2eEnv, all []event) {
	r := env.search(t, `* | stats count, count(bytes) AS nb, dc(status), sum(bytes), avg(bytes), min(bytes), max(bytes), values(method), earliest(status), latest(status), max(user.name) BY host`)
	checkStrings(t, "stats columns", r.columns(), []string{"host", "count", "nb", "dc(status)", "sum(bytes)", "avg(bytes)", "min(bytes)", "max(bytes)", "values(method)", "earliest(status)", "latest(status)", "max(user.name)"})
	keys, groups := group(all, "host")
	var want []map[string]any
	for _, k := range keys {
		g := groups[keyID(k)]
		want = append(want, map[string]any{
			"host": k[0], "count": aggCount(g), "nb": aggCountOf("bytes")(g), "dc(status)": aggDC("status")(g),
			"sum(bytes)": aggSum("bytes")(g), "avg(bytes)": aggAvg("bytes")(g), "min(bytes)": aggMinMax("bytes", false)(g),
			"max(bytes)": aggMinMax("bytes", true)(g), "values(method)": aggValues("method")(g),
			"earliest(status)": aggAt("status", false)(g), "latest(status)": aggAt("status", true)(g),
			"max(user.name)": aggMinMax("user.name", true)(g),
		})
	}
	checkRows(t, r, want)

	r = env.search(t, `* | stats count(eval(status>=500)) AS errors, c BY host, region`)
	keys, groups = group(all, "host", "region")
	want = nil
	for _, k := range keys {
		g := groups[keyID(k)]
		want = append(want, map[string]any{"host": k[0], "region": k[1], "c": aggCount(g),
			"errors": aggCountIf(func(e event) bool { v, ok := compareGo(e.get("status"), 500.0, ">="); return ok && v })(g)})
	}
	checkRows(t, r, want)

	r = env.search(t, `* | stats count`)
	checkRows(t, r, []map[string]any{{"count": float64(len(all))}})

	r = env.search(t, `* | stats distinct_count(host) AS d, mean(dur) AS m`)
	checkRows(t, r, []map[string]any{{"d": aggDC("host")(all), "m": aggAvg("dur")(all)}})

	// Grouping by a field holding both 404 and "404": one group, in
	// numeric order.
	r = env.search(t, `* | stats avg(dur) AS a, dc(region) BY status`)
	keys, groups = group(all, "status")
	want = nil
	for i, k := range keys {
		g := groups[keyID(k)]
		want = append(want, map[string]any{"a": aggAvg("dur")(g), "dc(region)": aggDC("region")(g)})
		if s, _ := strOf(r.Data[min(i, len(r.Data)-1)]["status"]); s != k[0] {
			t.Fatalf("status group %d: got %v, want %v", i, r.Data[i]["status"], k[0])
		}
	}
	checkRows(t, r, want)

	r = env.search(t, `* | stats sum(dur) AS s BY method | eval m=s/1000 | where m > 0 | sort -s`)
	keys, groups = group(all, "method")
	sort.SliceStable(keys, func(i, j int) bool {
		return aggSum("dur")(groups[keyID(keys[i])]).(float64) > aggSum("dur")(groups[keyID(keys[j])]).(float64)
	})
	want = nil
	for _, k := range keys {
		s := aggSum("dur")(groups[keyID(k)]).(float64)
		want = append(want, map[string]any{"method": k[0], "s": s, "m": s / 1000})
	}
	checkRows(t, r, want)
}

// pivotGo computes a chart: rows by rowKey, series by split with the
// spec's ranking, OTHER and NULL.
type pivotGo struct {
	rowField string
	rowKey   func(event) (any, bool) // display value, present
	split    string
	aggs     []func([]event) any
	names    []string
	limit    int
	bottom   bool
	useOther bool
	useNull  bool
	rows     []any // explicit rows (time buckets), nil: from the data
	zero     []bool
}

func (p pivotGo) compute(evs []event) (cols []string, out []map[string]any) {
	type rowT struct {
		key any
		evs []event
	}
	var rows []*rowT
	byKey := map[string]*rowT{}
	for _, e := range evs {
		k, ok := p.rowKey(e)
		if !ok {
			continue
		}
		if !p.useNull && p.split != "" && e.get(p.split) == nil {
			continue
		}
		ks, _ := strOf(k)
		if tt, ok := k.(time.Time); ok {
			ks = fmtTime(tt)
		}
		r := byKey[ks]
		if r == nil {
			r = &rowT{key: k}
			byKey[ks] = r
			rows = append(rows, r)
		}
		r.evs = append(r.evs, e)
	}
	if p.rows != nil {
		rows = nil
		for _, k := range p.rows {
			ks := fmtTime(k.(time.Time))
			r := byKey[ks]
			if r == nil {
				r = &rowT{key: k}
			}
			rows = append(rows, r)
		}
	} else {
		sort.Slice(rows, func(i, j int) bool { return naturalLess(rows[i].key, rows[j].key) })
	}
	// Series ranking.
	score := map[string]float64{}
	var values []string
	hasNull := false
	for _, r := range rows {
		bySeries := map[string][]event{}
		for _, e := range r.evs {
			s, ok := strOf(e.get(p.split))
			if !ok {
				hasNull = true
				continue
			}
			if _, seen := score[s]; !seen {
				values = append(values, s)
				score[s] = 0
			}
			bySeries[s] = append(bySeries[s], e)
		}
		for s, g := range bySeries {
			if len(p.aggs) == 1 {
				if f, ok := p.aggs[0](g).(float64); ok {
					score[s] += f
				}
			} else {
				score[s] += float64(len(g))
			}
		}
	}
	sort.Slice(values, func(i, j int) bool {
		a, b := score[values[i]], score[values[j]]
		if a != b {
			return (a > b) != p.bottom
		}
		return values[i] < values[j]
	})
	more := false
	if p.limit > 0 && len(values) > p.limit {
		values, more = values[:p.limit], true
	}
	sort.Strings(values)
	type series struct {
		label string
		in    func(event) bool
	}
	var ss []series
	kept := map[string]bool{}
	for _, v := range values {
		v := v
		kept[v] = true
		ss = append(ss, series{v, func(e event) bool { s, ok := strOf(e.get(p.split)); return ok && s == v }})
	}
	if hasNull && p.useNull {
		ss = append(ss, series{"NULL", func(e event) bool { return e.get(p.split) == nil }})
	}
	if more && p.useOther {
		ss = append(ss, series{"OTHER", func(e event) bool { s, ok := strOf(e.get(p.split)); return ok && !kept[s] }})
	}
	cols = []string{p.rowField}
	if p.split == "" {
		for _, r := range rows {
			row := map[string]any{p.rowField: fmtTime(r.key.(time.Time))}
			for i, agg := range p.aggs {
				v := agg(r.evs)
				if len(r.evs) == 0 && !(p.zero != nil && p.zero[i]) {
					v = nil
				}
				row[p.names[i]] = v
			}
			out = append(out, row)
		}
		return append(cols, p.names...), out
	}
	for i := range p.aggs {
		for _, s := range ss {
			name := s.label
			if len(p.aggs) > 1 {
				name = p.names[i] + ":" + s.label
			}
			cols = append(cols, name)
		}
	}
	for _, r := range rows {
		row := map[string]any{p.rowField: r.key}
		if tt, ok := r.key.(time.Time); ok {
			row[p.rowField] = fmtTime(tt)
		}
		c := 1
		for i, agg := range p.aggs {
			for _, s := range ss {
				var g []event
				for _, e := range r.evs {
					if s.in(e) {
						g = append(g, e)
					}
				}
				v := agg(g)
				if len(g) == 0 && !(p.zero != nil && p.zero[i]) {
					v = nil
				}
				row[cols[c]] = v
				c++
			}
		}
		out = append(out, row)
	}
	return cols, out
}

func field(f string) func(event) (any, bool) {
	return func(e event) (any, bool) {
		v := e.get(f)
		if v == nil {
			return nil, false
		}
		s, _ := strOf(v)
		return s, true
	}
}

func checkPivot(t *testing.T, r *result, cols []string, want []map[string]any, rowIsText bool) {
	t.Helper()
	checkStrings(t, "chart columns", r.columns(), cols)
	if rowIsText {
		for _, row := range r.Data {
			row[cols[0]], _ = strOf(jsonToGo(row[cols[0]]))
		}
	}
	checkRows(t, r, want)
}

// jsonToGo turns a decoded JSON number into int64 when whole.
func jsonToGo(v any) any {
	if f, ok := v.(float64); ok && f == math.Trunc(f) {
		return int64(f)
	}
	return v
}

func testChart(t *testing.T, env *e2eEnv, all []event) {
	count := []func([]event) any{aggCount}
	yes := []bool{true}
	cols, want := pivotGo{rowField: "host", rowKey: field("host"), split: "region", aggs: count, zero: yes, limit: 10, useOther: true, useNull: true}.compute(all)
	checkPivot(t, env.search(t, `* | chart count OVER host BY region`), cols, want, true)

	cols, want = pivotGo{rowField: "host", rowKey: field("host"), split: "region", aggs: count, zero: yes, limit: 2, useOther: true, useNull: true}.compute(all)
	checkPivot(t, env.search(t, `* | chart limit=2 count BY host region`), cols, want, true)

	cols, want = pivotGo{rowField: "host", rowKey: field("host"), split: "region", aggs: count, zero: yes, limit: 2, useOther: true, useNull: true}.compute(all)
	checkPivot(t, env.search(t, `* | chart limit=top2 count BY host region`), cols, want, true)

	avgDur := []func([]event) any{aggAvg("dur")}
	cols, want = pivotGo{rowField: "region", rowKey: field("region"), split: "host", aggs: avgDur, limit: 1, bottom: true}.compute(all)
	checkPivot(t, env.search(t, `* | chart limit=bottom1 useother=f usenull=f avg(dur) OVER region BY host`), cols, want, true)

	cols, want = pivotGo{rowField: "method", rowKey: field("method"), split: "sourcetype", aggs: []func([]event) any{aggCount, aggAvg("dur")},
		names: []string{"count", "d"}, zero: []bool{true, false}, limit: 10, useOther: true, useNull: true}.compute(all)
	checkPivot(t, env.search(t, `* | chart count, avg(dur) AS d OVER method BY sourcetype`), cols, want, true)

	cols, want = pivotGo{rowField: "method", rowKey: field("method"), split: "host", aggs: count, zero: yes, limit: 0, useOther: true, useNull: true}.compute(all)
	checkPivot(t, env.search(t, `* | chart limit=0 count OVER method BY host`), cols, want, true)

	cols, want = pivotGo{rowField: "method", rowKey: field("method"), split: "host", aggs: count, zero: yes, limit: 3, useOther: false, useNull: false}.compute(all)
	checkPivot(t, env.search(t, `* | chart limit=3 useother=false usenull=false count OVER method BY host`), cols, want, true)

	// Without a split field chart is stats by the row field.
	keys, groups := group(all, "host")
	var rows []map[string]any
	for _, k := range keys {
		rows = append(rows, map[string]any{"host": k[0], "n": aggCount(groups[keyID(k)])})
	}
	r := env.search(t, `* | chart count AS n BY host`)
	checkStrings(t, "columns", r.columns(), []string{"host", "n"})
	checkRows(t, r, rows)
}

func buckets(from, to time.Time, span time.Duration, origin int64) []any {
	var out []any
	for b := BucketStart(from, span.Milliseconds(), origin); b.Before(to); b = b.Add(span) {
		out = append(out, b)
	}
	return out
}

func bucketOf(span time.Duration, origin int64) func(event) (any, bool) {
	return func(e event) (any, bool) { return BucketStart(e.time(), span.Milliseconds(), origin), true }
}

func testTimechart(t *testing.T, env *e2eEnv, all []event) {
	count := []func([]event) any{aggCount}
	yes := []bool{true}
	tc := func(spl string, p pivotGo, evs []event) {
		t.Helper()
		p.rowField = "_time"
		cols, want := p.compute(evs)
		r := env.search(t, spl)
		checkStrings(t, spl+": columns", r.columns(), cols)
		checkRows(t, r, want)
	}
	span := func(d time.Duration, cont bool) pivotGo {
		p := pivotGo{rowKey: bucketOf(d, 0), aggs: count, names: []string{"count"}, zero: yes, limit: 10, useOther: true, useNull: true}
		if cont {
			p.rows = buckets(e2eStart, e2eEnd, d, 0)
		}
		return p
	}
	tc(`* | timechart span=1h count`, span(time.Hour, true), all)
	tc(`* | timechart count`, span(15*time.Minute, true), all)      // 100 bins over a day: 15m
	tc(`* | timechart bins=10 count`, span(3*time.Hour, true), all) // 3h gives 8 buckets
	tc(`* | timechart span=2d count`, span(48*time.Hour, true), all)
	p := span(7*24*time.Hour, true)
	p.rowKey, p.rows = bucketOf(7*24*time.Hour, weekOrigin), buckets(e2eStart, e2eEnd, 7*24*time.Hour, weekOrigin)
	tc(`* | timechart span=1w count`, p, all)

	sel := env.where(func(e event) bool { return searchEq(e.get("status"), "503") })
	tc(`status=503 | timechart span=1m cont=false count`, span(time.Minute, false), sel)
	p = span(10*time.Minute, true)
	p.aggs, p.names, p.zero = []func([]event) any{aggSum("bytes")}, []string{"sum(bytes)"}, nil
	tc(`status=503 | timechart span=10m sum(bytes)`, p, sel)

	p = span(30*time.Minute, true)
	p.split, p.limit = "region", 2
	p.aggs, p.names, p.zero = []func([]event) any{aggCount, aggAvg("dur")}, []string{"count", "avg(dur)"}, []bool{true, false}
	tc(`* | timechart span=30m count, avg(dur) BY region limit=2`, p, all)

	p = span(6*time.Hour, true)
	p.split, p.useNull = "region", false
	tc(`* | timechart span=6h count BY region usenull=f`, p, all)

	p = span(6*time.Hour, true)
	p.split, p.limit, p.useOther = "host", 2, false
	p.aggs, p.zero = []func([]event) any{aggMinMax("dur", true)}, nil
	tc(`* | timechart span=6h useother=false limit=2 max(dur) BY host`, p, all)

	// Without cont, 1s buckets are fine: only observed ones come back.
	r := env.search(t, `* | timechart span=1s cont=false count`)
	if !r.Truncated || r.Rows != MaxOutputRows {
		t.Fatalf("1s buckets: %d rows, truncated %v", r.Rows, r.Truncated)
	}
}

func testOrder(t *testing.T, env *e2eEnv, all []event) {
	// sort: natural order, descending reverses it, missing values last,
	// ties keep the previous order (newest first).
	sorted := func(key func(event) any, desc bool) []event {
		out := slices.Clone(all)
		sort.SliceStable(out, func(i, j int) bool {
			a, b := key(out[i]), key(out[j])
			if (a == nil) != (b == nil) {
				return b == nil
			}
			if a == nil {
				return false
			}
			if desc {
				return naturalLess(b, a)
			}
			return naturalLess(a, b)
		})
		return out
	}
	get := func(f string) func(event) any { return func(e event) any { return e.get(f) } }
	f := func(spl string, want []event) {
		t.Helper()
		r := env.search(t, spl)
		checkStrings(t, spl, anyStrings(r.column("_time")), times(want))
	}
	f(`* | sort -bytes | head 5`, sorted(get("bytes"), true)[:5])
	f(`* | sort bytes | head 5`, sorted(get("bytes"), false)[:5])
	f(`* | sort 3 host`, sorted(get("host"), false)[:3])
	f(`* | sort num(bytes) | head 4`, sorted(func(e event) any {
		if n, ok := numOf(e.get("bytes")); ok {
			return n
		}
		return nil
	}, false)[:4])
	f(`* | sort str(status) | head 4`, sorted(func(e event) any {
		if s, ok := strOf(e.get("status")); ok {
			return "s" + s // text order, never numeric
		}
		return nil
	}, false)[:4])
	f(`* | sort host, -dur | head 6`, func() []event {
		out := slices.Clone(all)
		sort.SliceStable(out, func(i, j int) bool {
			a, b := out[i].get("host"), out[j].get("host")
			if (a == nil) != (b == nil) {
				return b == nil
			}
			if a != b {
				return a != nil && naturalLess(a, b)
			}
			return out[i]["dur"].(float64) > out[j]["dur"].(float64)
		})
		return out[:6]
	}())
	f(`* | sort dur desc | head 2`, sorted(get("dur"), true)[:2])
	f(`* | head 7`, all[:7])
	f(`* | head limit=3`, all[:3])
	f(`* | sort limit=4 auto(bytes)`, sorted(get("bytes"), false)[:4])
	f(`* | head`, all[:10])

	// dedup keeps the first rows (newest) per combination.
	dedup := func(n int, keepEmpty bool, fields ...string) []event {
		seen := map[string]int{}
		var out []event
		for _, e := range all {
			var parts []string
			missing := false
			for _, fl := range fields {
				s, ok := strOf(e.get(fl))
				missing = missing || !ok
				parts = append(parts, s)
			}
			if missing {
				if keepEmpty {
					out = append(out, e)
				}
				continue
			}
			k := strings.Join(parts, "\x00")
			if seen[k] < n {
				seen[k]++
				out = append(out, e)
			}
		}
		return out
	}
	f(`* | dedup host`, dedup(1, false, "host"))
	f(`* | dedup 2 host, region`, dedup(2, false, "host", "region"))
	f(`* | dedup 2 host region keepempty=true | head 10000`, dedup(2, true, "host", "region"))
	f(`* | dedup status`, dedup(1, false, "status"))
}

func testStages(t *testing.T, env *e2eEnv, all []event) {
	n500 := len(env.where(func(e event) bool { return searchEq(e.get("status"), "500") }))
	r := env.search(t, `* | search status=500 | head 3 | stats count`)
	type st struct {
		rows      any
		truncated bool
		kept      any
	}
	want := []st{{float64(MaxOutputRows), true, nil}, {float64(n500), false, nil}, {3.0, false, 3 / float64(n500) * 100}, {1.0, false, 100 / 3.0}}
	if len(r.Stages) != 4 {
		t.Fatalf("stages: %v", r.Stages)
	}
	for i, w := range want {
		s := r.Stages[i]
		if !sameValue(s["output_rows"], w.rows) || s["truncated"] != w.truncated || !sameValue(s["kept_percent"], w.kept) {
			t.Fatalf("stage %d: %v, want %+v", i, s, w)
		}
		if w.kept != nil {
			prev := r.Stages[i-1]["output_rows"].(float64)
			if !sameValue(s["affected_rows"], prev-s["output_rows"].(float64)) || !sameValue(s["affected_percent"], 100-w.kept.(float64)) {
				t.Fatalf("stage %d affected: %v", i, s)
			}
		}
	}
	if r.Statistics["rows_read"].(float64) < float64(len(all)) || r.Statistics["bytes_read"].(float64) <= 0 || r.Statistics["elapsed"].(float64) <= 0 {
		t.Fatalf("statistics: %v", r.Statistics)
	}
	if r.Stages[1]["command"] != "search" || r.Stages[1]["expression"] != "status=500" || r.Stages[3]["command"] != "stats" {
		t.Fatalf("stage names: %v", r.Stages)
	}
	// Growth (a count above the previous one) has no percentages.
	r = env.search(t, `status=503 | head 2 | dedup host keepempty=true | stats count BY method`)
	if r.Stages[3]["kept_percent"] != nil && r.Stages[3]["output_rows"].(float64) > r.Stages[2]["output_rows"].(float64) {
		t.Fatalf("growth has percentages: %v", r.Stages[3])
	}
	// Only the first 12 stages are measured.
	r = env.search(t, `* | search a | search b | search c | search d | search e | search f | search g | search h | search i | search j | search k | search l | search m`)
	if len(r.Stages) != 14 || r.Stages[11]["output_rows"] == nil || r.Stages[12]["output_rows"] != nil || r.Stages[13]["output_rows"] != nil {
		t.Fatalf("measured stages: %v", r.Stages)
	}
	// A result of exactly the cap is not truncated.
	r = env.search(t, `* | head 10000`)
	if r.Truncated || r.Stages[1]["truncated"] != false || !sameValue(r.Stages[1]["output_rows"], float64(MaxOutputRows)) {
		t.Fatalf("exactly 10000: truncated %v, stage %v", r.Truncated, r.Stages[1])
	}
	// The timeline of an event search covers the window, zero-filled.
	r = env.search(t, `status=503 host=db1`)
	sel := env.where(func(e event) bool { return searchEq(e.get("status"), "503") && searchEq(e.get("host"), "db1") })
	bs := buckets(e2eStart, e2eEnd, 15*time.Minute, 0)
	if len(r.Timeline) != len(bs) {
		t.Fatalf("timeline has %d buckets, want %d", len(r.Timeline), len(bs))
	}
	total := uint64(0)
	for i, b := range r.Timeline {
		var n uint64
		for _, e := range sel {
			if BucketStart(e.time(), (15 * time.Minute).Milliseconds(), 0).Equal(bs[i].(time.Time)) {
				n++
			}
		}
		if b.Time != fmtTime(bs[i].(time.Time)) || b.Count != n || b.SpanSeconds != 900 {
			t.Fatalf("timeline bucket %d: %+v, want %s %d", i, b, fmtTime(bs[i].(time.Time)), n)
		}
		total += n
	}
	if total != uint64(len(sel)) {
		t.Fatalf("timeline total %d, want %d", total, len(sel))
	}
	if r := env.search(t, `* | stats count`); len(r.Timeline) != 0 || r.ResultKind != "statistics" {
		t.Fatalf("transforming search has a timeline")
	}
}

func testFieldStatistics(t *testing.T, env *e2eEnv) {
	pred := func(e event) bool { return searchEq(e.get("host"), "db1") && searchEq(e.get("method"), "PUT") }
	sel := env.where(pred)
	r := env.search(t, `host=db1 method=PUT`, func(r *Request) { r.IncludeFieldStatistics = true })
	stats := map[string]FieldStatistic{}
	for _, f := range r.FieldStats {
		stats[f.Field] = f
	}
	for _, field := range []string{"_raw", "host", "index", "bytes", "status", "user.name", "region", "dur", "flag"} {
		got, ok := stats[field]
		if !ok {
			t.Fatalf("no statistics for %s", field)
		}
		counts := map[string]uint64{}
		nonNull := uint64(0)
		classes := map[string]bool{}
		sources := map[string]bool{}
		for _, e := range sel {
			v := e.get(field)
			if v == nil {
				continue
			}
			nonNull++
			s, _ := strOf(v)
			counts[s]++
			switch x := v.(type) {
			case bool:
				classes["boolean"] = true
			case int64, float64:
				classes["number"] = true
			case string:
				if _, ok := numOf(x); ok {
					classes["number"] = true
				} else {
					classes["string"] = true
				}
			}
			if ix, ok := e.get("index").(string); ok {
				sources[ix] = true
			} else {
				sources["logsearch_events"] = true
			}
		}
		var top []ValueCount
		for v, n := range counts {
			top = append(top, ValueCount{v, n})
		}
		sort.Slice(top, func(i, j int) bool {
			if top[i].Count != top[j].Count {
				return top[i].Count > top[j].Count
			}
			return top[i].Value < top[j].Value
		})
		top = top[:min(len(top), FieldTopValues)]
		typ := "mixed"
		if len(classes) == 1 {
			for c := range classes {
				typ = c
			}
		}
		var srcs []string
		for s := range sources {
			srcs = append(srcs, s)
		}
		sort.Strings(srcs)
		want := FieldStatistic{Field: field, Type: typ, TotalRows: uint64(len(sel)), NonNullRows: nonNull,
			Coverage: float64(nonNull) / float64(len(sel)) * 100, DistinctCount: uint64(len(counts)), TopValues: top, Sources: srcs}
		if field == "_raw" || field == "host" || field == "index" {
			want.Type = "string"
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Fatalf("field %s:\n got %s\nwant %s", field, g, w)
		}
	}
	if r := env.search(t, `host=db1 | stats count`, func(r *Request) { r.IncludeFieldStatistics = true }); r.FieldStats != nil {
		t.Fatal("a transforming search has field statistics")
	}
}

func testWindow(t *testing.T, env *e2eEnv) {
	now := e2eEnd.Add(30 * time.Minute)
	f := func(earliest, latest TimeBound, from, to time.Time, hasFrom bool) {
		t.Helper()
		r := env.search(t, `* | stats count`, func(r *Request) { r.Earliest, r.Latest = earliest, latest })
		n := 0
		for _, e := range env.evs {
			if (!hasFrom || !e.time().Before(from)) && e.time().Before(to) {
				n++
			}
		}
		checkRows(t, r, []map[string]any{{"count": float64(n)}})
	}
	f("-2h", "now", now.Add(-2*time.Hour), now, true)
	f("-90m", "-30m", now.Add(-90*time.Minute), now.Add(-30*time.Minute), true)
	f("-1d", "", now.Add(-24*time.Hour), now, true)
	f("", "", now.Add(-24*time.Hour), now, true)
	f("0", "", time.Time{}, now, false)
	f("1704067200.5", "1704070800", e2eStart.Add(500*time.Millisecond), e2eStart.Add(time.Hour), true)

	// All time: the timeline starts at the first event.
	r := env.search(t, `*`, func(r *Request) { r.Earliest, r.Latest = "0", "" })
	first := env.evs[len(env.evs)-3].time() // generated before the window
	if len(r.Timeline) == 0 || r.Timeline[0].Time > fmtTime(first) || r.Timeline[len(r.Timeline)-1].Time >= fmtTime(now) {
		t.Fatalf("all-time timeline: %v ... %v", r.Timeline[:1], r.Timeline[len(r.Timeline)-1:])
	}
	sum := uint64(0)
	for _, b := range r.Timeline {
		sum += b.Count
	}
	if sum != uint64(len(env.evs)-1) { // all but the event after now
		t.Fatalf("all-time timeline counts %d events", sum)
	}
}

func testErrors(t *testing.T, env *e2eEnv) {
	f := func(spl string, mod func(*Request), want string) {
		t.Helper()
		var mods []func(*Request)
		if mod != nil {
			mods = append(mods, mod)
		}
		_, err := env.try(spl, mods...)
		es, ok := AsErrors(err)
		if !ok || es.StatusCode() != 400 || !strings.Contains(es.Error(), want) {
			t.Fatalf("%s: got %v, want a 400 containing %q", spl, err, want)
		}
	}
	f(`* | timechart span=1s count`, nil, "86400 buckets")
	f(`* | chart limit=0 count OVER method BY _raw`, nil, "more than 100 values")
	f(`* | chart limit=50 count, avg(dur), max(dur) OVER method BY _raw`, nil, "153 series columns")
	f(`* | eval v="method" | chart count OVER method BY v`, nil, `colliding output name "method"`)
	f(`* | eval v=if(region="ap", "NULL", region) | chart count OVER method BY v`, nil, `colliding output name "NULL"`)
	f(`* | transaction host`, nil, `command "transaction" is not supported`)
	f(`*`, func(r *Request) { r.Earliest = "+1h" }, "must be negative")
	f(`*`, func(r *Request) { r.Earliest, r.Latest = "1704153600", "1704067200" }, "must be before latest")
	f(`*`, func(r *Request) { r.Earliest = "-1h@h" }, "snapping")
}

// testQuoting runs field names and values that need escaping through
// every place the compiler writes them into SQL.
func testQuoting(t *testing.T, eng testEngine) {
	evs := []event{
		{"_time": e2eStart.Add(time.Second), "_raw": `it's a "quote" \ back`, "host": "h'1", "we`ird": "x'y\\z", "sp ace": int64(1), "quo'te": "a:b", "nl\nkey": "v"},
		{"_time": e2eStart.Add(2 * time.Second), "_raw": "plain", "host": "h`2", "we`ird": "New York", "sp ace": int64(2), "quo'te": "a,b"},
	}
	env := &e2eEnv{eng: eng, evs: evs}
	env.table = loadEvents(t, eng, "spl_e2e_quote", evs)
	r := env.search(t, `"it's a \"quote\"" | table 'we`+"`"+`ird', "sp ace", "quo'te", host`)
	checkRows(t, r, []map[string]any{{"we`ird": "x'y\\z", "sp ace": 1.0, "quo'te": "a:b", "host": "h'1"}})
	r = env.search(t, `* | where 'we`+"`"+`ird' = "x'y\\z" OR host="h`+"`"+`2" | rename "quo'te" AS "q'" | table "q'"`)
	checkRows(t, r, []map[string]any{{"q'": "a,b"}, {"q'": "a:b"}})
	r = env.search(t, `* | chart count, max('sp ace') AS "m'" OVER host BY 'we`+"`"+`ird'`)
	checkStrings(t, "series names", r.columns(), []string{"host", `count:"New York"`, `count:"x'y\\z"`, `m':"New York"`, `m':"x'y\\z"`})
	checkRows(t, r, []map[string]any{
		{"host": "h'1", `count:"New York"`: 0.0, `count:"x'y\\z"`: 1.0, `m':"x'y\\z"`: 1.0},
		{"host": "h`2", `count:"New York"`: 1.0, `m':"New York"`: 2.0, `m':"x'y\\z"`: nil},
	})
	r = env.search(t, "host=\"h'1\" | stats count BY \"nl\nkey\", \"quo'te\"")
	checkRows(t, r, []map[string]any{{"nl\nkey": "v", "quo'te": "a:b", "count": 1.0}})
	r = env.search(t, `host="h'1"`, func(r *Request) { r.IncludeFieldStatistics = true })
	if !slices.Contains(r.columns(), "we`ird") || !slices.Contains(r.columns(), "nl\nkey") {
		t.Fatalf("event columns %v", r.columns())
	}
	if len(r.FieldStats) == 0 {
		t.Fatal("no field statistics")
	}
}

func testFunctions(t *testing.T, env *e2eEnv) {
	r := env.search(t, `* | eval a=substr(method, 2, 2), b=replace(_raw, "^([A-Z]+) ", "\\1_"), c=upper(host), d=trim(method, "GP"), `+
		`e=tonumber(status), f=tostring(dur), g=typeof(status), h=if(isnum(bytes), "num", "not"), i=abs(-dur) + floor(dur) - ceil(dur), `+
		`j=pow(2, 3) + log(100) + exp(0) + ln(1), k=sqrt(dur), l=nullif(method, "GET"), m=strftime(_time, "%Y-%m-%d %H:%M:%S"), `+
		`n=md5(method), o=if(match(_raw, "^GET"), 1, 0), p=substr(method, -2) | table a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p | head 2000`)
	var want []map[string]any
	re := regexp.MustCompile(`^([A-Z]+) `)
	for _, e := range env.where(func(event) bool { return true })[:2000] {
		method, raw, dur := e["method"].(string), e["_raw"].(string), e["dur"].(float64)
		row := map[string]any{"a": method[1:3], "b": re.ReplaceAllString(raw, "${1}_"), "d": strings.Trim(method, "GP"),
			"f": strconv.FormatFloat(dur, 'f', -1, 64), "i": dur + math.Floor(dur) - math.Ceil(dur), "j": 8.0 + 2 + 1 + 0,
			"k": math.Sqrt(dur), "m": e.time().Format("2006-01-02 15:04:05"), "n": fmt.Sprintf("%x", md5.Sum([]byte(method))),
			"p": method[len(method)-2:]}
		if h, ok := e.get("host").(string); ok {
			row["c"] = strings.ToUpper(h)
		} else {
			row["c"] = nil
		}
		if n, ok := numOf(e.get("status")); ok {
			row["e"] = n
		} else {
			row["e"] = nil
		}
		switch e.get("status").(type) {
		case int64:
			row["g"] = "Number"
		case string:
			row["g"] = "String"
		default:
			row["g"] = "Invalid"
		}
		row["h"] = "not"
		if _, ok := numOf(e.get("bytes")); ok {
			row["h"] = "num"
		}
		row["l"] = method
		if method == "GET" {
			row["l"] = nil
		}
		row["o"] = 0.0
		if strings.HasPrefix(raw, "GET") {
			row["o"] = 1.0
		}
		want = append(want, row)
	}
	checkRows(t, r, want)
}
