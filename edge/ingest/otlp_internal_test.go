package ingest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/tables"
)

// The traces table declares String paths only, and only members the otlp-traces transform
// writes as strings in every row: a declared path the transform left out would read an empty string
// where it reads NULL in a plain table, and one of another type could refuse a row.
func TestTracesTableDeclaresTheStringsOfEverySpan(t *testing.T) {
	declared := query.DeclaredPaths(tables.TracesColumnType)
	if len(declared) == 0 {
		t.Fatalf("no declared paths in %s", tables.TracesColumnType)
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(tables.TracesColumnType, "JSON("), ")")
	for _, d := range strings.Split(inner, ", ") {
		if !strings.HasSuffix(d, " String") {
			t.Errorf("declared %q: only String paths can take every value a row may hold", d)
		}
	}
	// A bare span (no resource, scope, status, kind or parent) and a full one.
	body := `{"resourceSpans":[
	{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"bare",
		"startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]},
	{"resource":{"attributes":[{"key":"service.name","value":{"intValue":"7"}}]},
	 "scopeSpans":[{"scope":{"name":"lib","version":"1.0"},"spans":[{"traceId":"5b8efff798038103d269b633813fc60c",
		"spanId":"eee19b7ec3c1b175","parentSpanId":"eee19b7ec3c1b174","traceState":"a=b","flags":257,"name":"full",
		"kind":3,"startTimeUnixNano":"1","endTimeUnixNano":"2","status":{"code":2,"message":"boom"}}]}]}]}`
	tr, err := transform.Get("otlp-traces")
	if err != nil {
		t.Fatal(err)
	}
	var b rows.Buffer
	if err := tr.Decode(transform.Request{Body: []byte(body), ContentType: "application/json", MaxBodySize: MaxOTLPBody}, &b); err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range bytes.SplitSeq(bytes.TrimSpace(b.B), []byte("\n")) {
		var row map[string]any
		if err := json.Unmarshal(line, &row); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		n++
		for p := range declared {
			if _, ok := row[p].(string); !ok {
				t.Errorf("row %d: declared %s is %#v, want a string: %s", n, p, row[p], line)
			}
		}
	}
	if n != 2 {
		t.Fatalf("%d rows, want 2: %s", n, b.B)
	}
	if got := OTLPNewTable("traces"); got.ColumnType != tables.TracesColumnType || got.SortingKey != tables.TracesSortingKey {
		t.Errorf("traces' new table %+v", got)
	}
	if got := OTLPNewTable("logs"); got != (NewTable{}) {
		t.Errorf("logs' new table %+v, want plain JSON and the automatic key", got)
	}
}
