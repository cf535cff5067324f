package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/pipeline/hec"
	"github.com/svc-data/svc/pipeline/rows"
)

// TestHECFastPathWritesTheReferenceRows: for every body the fast path (pipeline/hec) takes,
// its rows are the reference decoder's, as JSON values; every body it leaves (errors,
// case-folded names, non-string built-ins, blank events, ...) is the reference's to answer.
func TestHECFastPathWritesTheReferenceRows(t *testing.T) {
	now := time.Date(2026, 11, 28, 1, 2, 3, 456e6, time.UTC)
	m := hecMeta{host: "10.0.0.1", source: "http:hec", index: "main"}
	bodies := []struct {
		body string
		fast bool
	}{
		{`{"event": "hello"}`, true},
		{`{"time": 1700000000.123, "event": "a"}{"time": "1700000001", "event": "b"} {"event":"c","time":null}`, true},
		{`{"event": {"a": 1, "b": {"c": [1, 2]}, "host": "x"}, "host": "h", "source": "s", "sourcetype": "st", "index": "i"}`, true},
		{`{"event": {"a": 1, "a": 2}, "fields": {"a": 3, "z": "q", "_time": 5}}`, true},
		{"{\"event\": {\"x\" :  [1, 2, 3] ,\n\"y\": \"a b\"}}", true},
		{`{"event": 42}{"event": [1, "x"]}{"event": true}{"event": null}`, true},
		{`{"event": "esc \"q\" \u00e9 \ud800 <&> \u2028", "host": "h\u00e9", "fields": {"k\u00e9y": "v"}}`, true},
		{`{"event": "x", "host": null, "fields": null, "extra": {"ignored": 1}}`, true},
		// Event strings taken as they came, and those decoded first.
		{`{"event": "GET \/a \"q\" \\ \b\f\n\r\t \u0041\u00E9\u20ac tab\tend"}`, true},
		{`{"event": "\ud83d\ude00 pair"}{"event": "\u0000 nul"}{"event": "\"\""}{"event": "é"}`, true},
		{`{"event": " \t "}`, false},
		{`{"event": "x", "fields": {"a": 1}, "fields": {"b": 2}}`, false}, // the reference merges them
		{`{"event": "x", "host": "a", "host": null}`, false},              // the reference resets it
		{`{"Event": "x"}`, false},
		{`{"event": "x", "HOST": "y"}`, false},
		{`{"event": "x", "host": 5}`, false},
		{`{"event": "  "}`, false},
		{`{"time": 1}`, false},
		{`{"event": "x", "time": "soon"}`, false},
		{`{"event": "x", "fields": [1]}`, false},
		{`{"event": "x"} 5`, false},
		{`[{"event": "x"}]`, false},
		{``, false},
		{"{\"event\": \"bad \xff utf-8\"}", false},
		{`{"event": {"a\"b": 1}}`, false},
		{`{"event": "x"`, false},
	}
	// Generated bodies: events mixing every member kind.
	r := rand.New(rand.NewPCG(27, 1))
	for range 50 {
		var b strings.Builder
		for range r.IntN(6) + 1 {
			ev := map[string]any{"time": float64(1.7e9) + float64(r.IntN(1e6))/1000}
			switch r.IntN(3) {
			case 0:
				ev["event"] = fmt.Sprintf("line %d <%d> \"q\"", r.IntN(100), r.IntN(9))
			case 1:
				ev["event"] = map[string]any{"n": r.IntN(100), "s": "v", "host": "dropped", "nested": map[string]any{"k": []any{1, "two"}}}
			default:
				ev["event"] = r.Float64()
			}
			if r.IntN(2) == 0 {
				ev["fields"] = map[string]any{"status": 200 + r.IntN(5), "n": "x", "index": "dropped"}
			}
			if r.IntN(2) == 0 {
				ev["host"] = fmt.Sprintf("web-%d", r.IntN(3))
			}
			j, _ := json.Marshal(ev)
			b.Write(j)
			b.WriteString(" \n"[r.IntN(2):])
		}
		bodies = append(bodies, struct {
			body string
			fast bool
		}{b.String(), true})
	}
	for _, c := range bodies {
		var fast, ref rows.Buffer
		ok, err := hec.AppendEvents([]byte(c.body), hec.Meta{Host: m.host, Source: m.source, Sourcetype: m.sourcetype, Index: m.index}, now, &fast)
		if err != nil || ok != c.fast {
			t.Fatalf("%q: fast path took it %v (%v), want %v", c.body, ok, err, c.fast)
		}
		refErr := referenceHECEvents([]byte(c.body), m, now, &ref)
		if !ok {
			if len(fast.B) != 0 || fast.Rows != 0 {
				t.Fatalf("%q: the fast path left rows behind", c.body)
			}
			continue
		}
		if refErr != nil {
			t.Fatalf("%q: the fast path took a body the reference refuses: %v", c.body, refErr)
		}
		if fast.Rows != ref.Rows || !sameRows(t, fast.B, ref.B) {
			t.Fatalf("%q:\nfast %s\n ref %s", c.body, fast.B, ref.B)
		}
	}
}

// sameRows compares newline-separated JSON rows as values.
func sameRows(t *testing.T, a, b []byte) bool {
	t.Helper()
	ra, rb := bytes.Split(bytes.TrimSuffix(a, []byte("\n")), []byte("\n")), bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		var x, y any
		if err := json.Unmarshal(ra[i], &x); err != nil {
			t.Fatalf("fast row %d is not JSON: %v: %s", i, err, ra[i])
		}
		if err := json.Unmarshal(rb[i], &y); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}
