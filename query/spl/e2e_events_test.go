package spl

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/query/sqlquote"
)

// The end-to-end tests ingest a generated event set into a table shaped as
// logsearch_events (two generations behind a Merge view), run searches
// through Search on the real engine, and compare the responses with
// results computed here in Go from the same events, following the rules
// documented in docs/spl.md. Nothing here runs the compiler's SQL to get
// an expected value.

// testEngine is the engine plus DDL/DML for setting up data.
type testEngine interface {
	Engine
	Exec(ctx context.Context, sql string) error
}

// event is one generated event: JSON-typed values (int64, float64, string,
// bool, []any, map[string]any); absent fields are absent keys.
type event map[string]any

var (
	e2eStart  = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	e2eEnd    = e2eStart.Add(24 * time.Hour)
	e2eEvents = 12500 // more than MaxOutputRows, to prove truncation
)

func (e event) time() time.Time { return e["_time"].(time.Time) }

// genEvents makes n events with unique millisecond times across the day,
// plus a few outside the window.
func genEvents(n int) []event {
	r := rand.New(rand.NewPCG(42, 7))
	pick := func(xs ...any) any { return xs[r.IntN(len(xs))] }
	step := int64(86400000) / int64(n)
	var out []event
	for i := 0; i < n; i++ {
		e := event{"_time": e2eStart.Add(time.Duration(int64(i)*step+r.Int64N(step)) * time.Millisecond)}
		out = append(out, e)
	}
	out = append(out, event{"_time": e2eStart.Add(-time.Minute)}, event{"_time": e2eEnd}, event{"_time": e2eEnd.Add(time.Hour)})
	for _, e := range out {
		if r.IntN(20) > 0 {
			e["host"] = pick("web1", "web2", "web3", "db1", "db2", "cache-1")
		}
		switch k := r.IntN(20); {
		case k < 12:
			e["status"] = pick(int64(200), int64(200), int64(302), int64(404), int64(500), int64(503))
		case k < 16:
			e["status"] = pick("200", "404", "500")
		case k < 19:
			e["status"] = int64(201)
		}
		switch k := r.IntN(20); {
		case k < 14:
			e["bytes"] = r.Int64N(100000)
		case k < 16:
			e["bytes"] = float64(r.Int64N(1000000)+1) / 8 // exact binary fractions
		case k < 18:
			e["bytes"] = strconv.Itoa(r.IntN(5000))
		case k < 19:
			e["bytes"] = "n/a"
		}
		if r.IntN(5) > 0 {
			e["user"] = map[string]any{"name": pick("alice", "bob", "Carol", "dave")}
		}
		if r.IntN(10) < 7 {
			e["region"] = pick("us-east", "eu-west", "ap")
		}
		switch k := r.IntN(10); {
		case k < 7:
			e["index"] = "main"
		case k < 9:
			e["index"] = "audit"
		}
		e["sourcetype"] = pick("access_combined", "app_log")
		e["source"] = pick("/var/log/nginx/access.log", "/var/log/app.log")
		e["dur"] = float64(r.IntN(400000)) / 4
		if r.IntN(4) == 0 {
			e["flag"] = r.IntN(2) == 0
		}
		method := pick("GET", "POST", "PUT").(string)
		path := pick("/api/users", "/api/orders", "/login", "/static/app.js").(string)
		e["method"] = method
		raw := fmt.Sprintf("%s %s %v %v", method, path, e["status"], e["bytes"])
		switch r.IntN(12) {
		case 0:
			raw += " ERROR connection refused"
		case 1:
			raw += " Error: timeout after 30s"
		case 2:
			raw += " warning: slow"
		case 3:
			raw += " errors=3"
		}
		e["_raw"] = raw
	}
	return out
}

// ndjson renders events for INSERT ... FORMAT JSONAsObject.
func ndjson(evs []event) string {
	var b strings.Builder
	for _, e := range evs {
		m := map[string]any{}
		for k, v := range e {
			if t, ok := v.(time.Time); ok {
				v = t.Format("2006-01-02 15:04:05.000")
			}
			m[k] = v
		}
		j, _ := json.Marshal(m)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// loadEvents creates database db with logsearch_events shaped as the
// service creates it and inserts evs into two generations.
func loadEvents(t testing.TB, eng testEngine, db string, evs []event) string {
	ctx := context.Background()
	doc := "doc JSON(_time DateTime64(3, 'UTC'), _raw String, host String, source String, sourcetype String, index String)"
	stmts := []string{
		"CREATE DATABASE IF NOT EXISTS " + sqlquote.Ident(db),
		"CREATE TABLE " + sqlquote.Ident(db) + ".logsearch_events__g1 (" + doc + ") ENGINE = MergeTree ORDER BY doc._time",
		"CREATE TABLE " + sqlquote.Ident(db) + ".logsearch_events__g2 (" + doc + ") ENGINE = MergeTree ORDER BY doc._time",
		"CREATE TABLE " + sqlquote.Ident(db) + ".logsearch_events (" + doc + ") ENGINE = Merge(" + sqlquote.Ident(db) + ", '^logsearch_events__g[0-9]+$')",
	}
	half := len(evs) / 2
	stmts = append(stmts,
		"INSERT INTO "+sqlquote.Ident(db)+".logsearch_events__g1 FORMAT JSONAsObject\n"+ndjson(evs[:half]),
		"INSERT INTO "+sqlquote.Ident(db)+".logsearch_events__g2 FORMAT JSONAsObject\n"+ndjson(evs[half:]))
	for _, s := range stmts {
		if err := eng.Exec(ctx, s); err != nil {
			t.Fatalf("%.80s: %v", s, err)
		}
	}
	return sqlquote.Ident(db) + ".logsearch_events"
}

// ---- the semantics, independently in Go ----

// get reads a field, following dots into nested objects.
func (e event) get(name string) any {
	if v, ok := e[name]; ok {
		if s, ok := v.(string); ok && s == "" && isBuiltinField(name) {
			return nil
		}
		return v
	}
	var cur any = map[string]any(e)
	for _, part := range strings.Split(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// numOf is the number of a value: numbers, and strings that parse.
func numOf(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// strOf is the text of a value.
func strOf(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	case time.Time:
		return strconv.FormatFloat(float64(x.UnixMilli())/1000, 'f', -1, 64), true
	}
	return fmt.Sprint(v), true
}

func globRegexp(pat string) *regexp.Regexp {
	parts := strings.Split(pat, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("(?is)^" + strings.Join(parts, ".*") + "$")
}

// searchEq is field=value of the search language.
func searchEq(v any, lit string) bool {
	if v == nil {
		return false
	}
	s, _ := strOf(v)
	switch {
	case lit == "*":
		return true
	case strings.Contains(lit, "*"):
		return globRegexp(lit).MatchString(s)
	}
	if f, err := strconv.ParseFloat(lit, 64); err == nil {
		if n, ok := numOf(v); ok && n == f {
			return true
		}
	}
	return strings.EqualFold(s, lit)
}

func isAlnum(r byte) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// hasTerm is a search term against _raw: case-insensitive, whole tokens
// on the sides where the term starts or ends with a letter or digit, *
// matching any characters (ASCII data only).
func hasTerm(raw any, term string) bool {
	s, ok := raw.(string)
	if !ok || s == "" {
		return false
	}
	if strings.Trim(term, "*") == "" {
		return true
	}
	ls, lt := strings.ToLower(s), strings.ToLower(term)
	if !strings.Contains(lt, "*") {
		for i := 0; ; {
			j := strings.Index(ls[i:], lt)
			if j < 0 {
				return false
			}
			j += i
			before := j == 0 || !isAlnum(lt[0]) || !isAlnum(ls[j-1])
			end := j + len(lt)
			after := end == len(ls) || !isAlnum(lt[len(lt)-1]) || !isAlnum(ls[end])
			if before && after {
				return true
			}
			i = j + 1
		}
	}
	// Wildcards: try every start that satisfies the left boundary.
	parts := strings.Split(lt, "*")
	for j := 0; j <= len(ls); j++ {
		if isAlnum(firstByte(term)) && j > 0 && isAlnum(ls[j-1]) {
			continue
		}
		if matchFrom(ls, j, parts, isAlnum(term[len(term)-1]) && term[len(term)-1] != '*') {
			return true
		}
	}
	return false
}

func firstByte(s string) byte {
	if s == "" || s[0] == '*' {
		return '*'
	}
	return s[0]
}

// matchFrom matches parts (separated by *) starting exactly at j.
func matchFrom(s string, j int, parts []string, rightBoundary bool) bool {
	if !strings.HasPrefix(s[j:], parts[0]) {
		return false
	}
	if len(parts) == 1 {
		end := j + len(parts[0])
		return !rightBoundary || end == len(s) || !isAlnum(s[end])
	}
	rest := j + len(parts[0])
	for k := rest; k <= len(s); k++ {
		if matchFrom(s, k, parts[1:], rightBoundary) {
			return true
		}
	}
	return false
}

// inWindow reports whether an event is in the test window.
func inWindow(e event) bool { return !e.time().Before(e2eStart) && e.time().Before(e2eEnd) }

// filter returns the window's events matching pred, newest first.
func filter(evs []event, pred func(event) bool) []event {
	var out []event
	for _, e := range evs {
		if inWindow(e) && pred(e) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].time().After(out[j].time()) })
	return out
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func times(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = fmtTime(e.time())
	}
	return out
}

// naturalLess is the default sort order: numbers (and numeric strings)
// numerically before text in byte order.
func naturalLess(a, b any) bool {
	na, oka := numOf(a)
	nb, okb := numOf(b)
	switch {
	case oka && okb:
		return na < nb
	case oka != okb:
		return oka
	}
	sa, _ := strOf(a)
	sb, _ := strOf(b)
	return sa < sb
}

// ---- responses ----

// result is a response decoded from its JSON form.
type result struct {
	Meta       []Column                   `json:"meta"`
	Data       []map[string]any           `json:"data"`
	Rows       int                        `json:"rows"`
	Timeline   []TimelineBucket           `json:"timeline"`
	ResultKind string                     `json:"result_kind"`
	Truncated  bool                       `json:"truncated"`
	Format     string                     `json:"result_format"`
	Stages     []map[string]any           `json:"stages"`
	FieldStats []FieldStatistic           `json:"field_statistics"`
	Statistics map[string]any             `json:"statistics"`
	Raw        map[string]json.RawMessage `json:"-"`
}

func (r *result) columns() []string {
	out := make([]string, len(r.Meta))
	for i, m := range r.Meta {
		out[i] = m.Name
	}
	return out
}

func (r *result) column(name string) []any {
	out := make([]any, len(r.Data))
	for i, row := range r.Data {
		out[i] = row[name]
	}
	return out
}

// sameValue compares a decoded JSON value with an expected one: numbers
// with a relative tolerance (sums may add in another order), everything
// else exactly.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case int:
		want = float64(w)
	case int64:
		want = float64(w)
	case uint64:
		want = float64(w)
	case []string:
		a := make([]any, len(w))
		for i, s := range w {
			a[i] = s
		}
		want = a
	}
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		if !ok {
			return false
		}
		if w == g {
			return true
		}
		return math.Abs(w-g) <= 1e-9*math.Max(math.Abs(w), math.Abs(g))
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(g[i], w[i]) {
				return false
			}
		}
		return true
	}
	return fmt.Sprint(got) == fmt.Sprint(want) && (got == nil) == (want == nil)
}

// checkRows compares the result rows with the expected rows on the
// expected rows' keys, in order.
func checkRows(t *testing.T, r *result, want []map[string]any) {
	t.Helper()
	if len(r.Data) != len(want) {
		t.Fatalf("got %d rows, want %d\n got: %v\nwant: %v", len(r.Data), len(want), head(r.Data), head(want))
	}
	for i := range want {
		for k, w := range want[i] {
			if g := r.Data[i][k]; !sameValue(g, w) {
				t.Fatalf("row %d column %q: got %v (%T), want %v (%T)\n got row: %v\nwant row: %v", i, k, g, g, w, w, r.Data[i], want[i])
			}
		}
	}
}

func head[T any](xs []T) []T { return xs[:min(len(xs), 5)] }

func checkStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %d: %v\nwant %d: %v", what, len(got), head(got), len(want), head(want))
	}
}
