package spl

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// scriptEngine answers the executor's statements by their shape.
type scriptEngine struct {
	main, counts, timeline, paths, stats, top *Result
	// input is the input row count an aggregation ending the search carries
	// in the result statement (the __in column), when it does.
	input any
	seen  []string
	ids   map[string]bool
}

func (e *scriptEngine) Query(_ context.Context, sql, queryID string) (*Result, error) {
	e.seen = append(e.seen, sql)
	if e.ids == nil {
		e.ids = map[string]bool{}
	}
	e.ids[queryID] = true
	pick := func(r *Result) (*Result, error) {
		if r == nil {
			return nil, errors.New("unexpected statement: " + sql)
		}
		return r, nil
	}
	switch {
	case strings.Contains(sql, " AS __n0") || strings.Contains(sql, " AS __in"):
		// The result statement with the stage counts as scalar columns.
		in := strings.Contains(sql, " AS __in")
		if e.main == nil || (e.counts == nil && strings.Contains(sql, " AS __n0")) || (in && e.input == nil) {
			return pick(nil)
		}
		n := strings.Count(sql, " AS __n")
		r := *e.main
		r.Rows = nil
		for _, row := range e.main.Rows {
			row = append([]any{}, row...)
			if in {
				row = append(row, e.input)
			}
			if n > 0 {
				row = append(row, e.counts.Rows[0][:n]...)
			}
			r.Rows = append(r.Rows, row)
		}
		return &r, nil
	case strings.Contains(sql, "(SELECT count() FROM (SELECT 1 FROM"):
		return pick(e.counts)
	case strings.Contains(sql, "AS bucket"):
		return pick(e.timeline)
	case strings.Contains(sql, "JSONAllPaths"):
		return pick(e.paths)
	case strings.Contains(sql, "ARRAY JOIN"):
		return pick(e.top)
	case strings.Contains(sql, "groupUniqArrayIf(100)"):
		return pick(e.stats)
	}
	return pick(e.main)
}

func ptr[T any](v T) *T { return &v }

func TestSearchAssemblesEvents(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 1, 500e6, time.UTC)
	row := func(raw *string, doc string) []any {
		return []any{t0, raw, ptr("web1"), (*string)(nil), nil, ptr("main"), ptr(ptr(3.5)), doc}
	}
	var rows [][]any
	for i := 0; i <= MaxOutputRows; i++ {
		rows = append(rows, row(ptr("GET /"), `{"_raw":"x","host":"web1","status":200,"user":{"name":"a"},"tags":["x"],"big":12345678901234567890}`))
	}
	rows[1] = row(nil, `{"other":true}`)
	eng := &scriptEngine{
		main:     &Result{Columns: []Column{{"o1", "DateTime64(3, 'UTC')"}, {"o2", "Nullable(String)"}}, Rows: rows, Stats: QueryStats{RowsRead: 10, BytesRead: 100}},
		counts:   &Result{Rows: [][]any{{uint64(MaxOutputRows + 1), ptr(uint64(40))}}, Stats: QueryStats{RowsRead: 1}},
		timeline: &Result{Rows: [][]any{{t0, uint64(4)}, {t0.Add(15 * time.Minute), uint64(0)}}},
	}
	resp, err := Search(context.Background(), eng, Request{SPL: `* | eval x=1.5`, Earliest: "1704067200", Latest: "1704153600", Table: "t", QueryID: "q1"})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated || resp.Rows != MaxOutputRows || len(resp.Data) != MaxOutputRows {
		t.Fatalf("truncation: %v %d", resp.Truncated, resp.Rows)
	}
	var names []string
	for _, m := range resp.Meta {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, ","); got != "_time,_raw,host,source,sourcetype,index,x,big,other,status,tags,user.name" {
		t.Fatalf("columns %s", got)
	}
	b, _ := json.Marshal(resp.Data[0])
	want := `{"_time":"2024-01-01T00:00:01.500Z","_raw":"GET /","host":"web1","source":null,"sourcetype":null,"index":"main","x":3.5,"big":12345678901234567890,"other":null,"status":200,"tags":["x"],"user.name":"a"}`
	if string(b) != want {
		t.Fatalf("row:\n got %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(resp.Data[1])
	if !strings.Contains(string(b), `"_raw":null`) || !strings.Contains(string(b), `"other":true`) || !strings.Contains(string(b), `"status":null`) {
		t.Fatalf("sparse row: %s", b)
	}
	if len(resp.Stages) != 2 || *resp.Stages[0].OutputRows != MaxOutputRows || !resp.Stages[0].Truncated ||
		*resp.Stages[1].OutputRows != MaxOutputRows || !resp.Stages[1].Truncated || resp.Stages[1].KeptPercent != nil {
		t.Fatalf("stages: %+v", resp.Stages)
	}
	if len(resp.Timeline) != 2 || resp.Timeline[0].Count != 4 || resp.Timeline[0].Time != "2024-01-01T00:00:01.500Z" || resp.Timeline[0].SpanSeconds != 900 {
		t.Fatalf("timeline: %+v", resp.Timeline)
	}
	// One statement (result and counts), then the timeline.
	if resp.Statistics.RowsRead != 10 || len(eng.seen) != 2 || resp.Statistics.BytesRead != 100 || resp.QueryID != "q1" || len(eng.ids) != 1 {
		t.Fatalf("statistics %+v, query id %q %v", resp.Statistics, resp.QueryID, eng.ids)
	}
	if resp.FieldStatistics != nil {
		t.Fatal("field statistics were not requested")
	}
}

func TestSearchStatisticsAndPercentages(t *testing.T) {
	eng := &scriptEngine{
		main: &Result{Columns: []Column{{"o1", "Nullable(String)"}, {"o2", "Nullable(Float64)"}, {"o3", "Array(String)"}, {"o4", "Nullable(String)"}},
			Rows: [][]any{{ptr("a"), ptr(math.NaN()), []string{"x", "y"}, ptr(`"404"`)}, {nil, math.Inf(1), []string{}, (*string)(nil)}}},
		counts: &Result{Rows: [][]any{{uint64(200), uint64(50), uint64(2)}}},
		input:  uint64(50), // the where stage's rows, counted by the stats
	}
	resp, err := Search(context.Background(), eng, Request{SPL: `x | where a=1 | stats avg(b), values(c), max(d) BY a`, Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(resp.Data)
	if string(b) != `[{"a":"a","avg(b)":null,"values(c)":["x","y"],"max(d)":"404"},{"a":null,"avg(b)":null,"values(c)":[],"max(d)":null}]` {
		t.Fatalf("rows: %s", b)
	}
	if resp.ResultKind != ResultStatistics || len(resp.Timeline) != 0 || resp.Meta[3].Type != "Dynamic" || resp.Meta[1].Type != "Nullable(Float64)" {
		t.Fatalf("kind %s timeline %v meta %v", resp.ResultKind, resp.Timeline, resp.Meta)
	}
	s := resp.Stages
	if *s[1].KeptPercent != 25 || *s[1].AffectedRows != 150 || *s[1].AffectedPercent != 75 || *s[2].KeptPercent != 4 {
		t.Fatalf("stages %+v %+v", *s[1].KeptPercent, *s[2].KeptPercent)
	}
	if !strings.HasPrefix(resp.QueryID, "spl-") {
		t.Fatalf("generated query id %q", resp.QueryID)
	}
	// Engine errors come back wrapped, not as user errors.
	eng.main = nil
	_, err = Search(context.Background(), eng, Request{SPL: `x`, Table: "t"})
	if _, ok := AsErrors(err); ok || err == nil || !strings.Contains(err.Error(), "run search") {
		t.Fatalf("engine error: %v", err)
	}
}

func TestSearchFieldStatistics(t *testing.T) {
	eng := &scriptEngine{
		main:     &Result{Rows: nil},
		counts:   &Result{Rows: [][]any{{uint64(3)}}},
		timeline: &Result{},
		paths:    &Result{Rows: [][]any{{"_raw"}, {"status"}}},
	}
	// _time, _raw, host, source, sourcetype, index, status: 7 fields.
	stat := []any{uint64(3)}
	for _, nn := range []uint64{3, 1, 2, 0, 1, 2, 3} {
		stat = append(stat, nn, uint64(1), []string{"string"}, []string{"main"})
	}
	stat[len(stat)-2] = []string{"number", "string"}
	eng.stats = &Result{Rows: [][]any{stat}}
	eng.top = &Result{Rows: [][]any{{uint16(6), ptr("200"), uint64(2)}, {uint16(6), ptr("abc"), uint64(1)}}}
	resp, err := Search(context.Background(), eng, Request{SPL: `x`, Table: "t", IncludeFieldStatistics: true})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(resp.FieldStatistics)
	var got []map[string]any
	json.Unmarshal(b, &got)
	if len(got) != 6 { // fields with no value (source) are left out
		t.Fatalf("fields: %s", b)
	}
	last := got[5]
	if last["field"] != "status" || last["type"] != "mixed" || last["coverage"].(float64) != 100 ||
		len(last["top_values"].([]any)) != 2 || last["total_rows"].(float64) != 3 {
		t.Fatalf("status statistics: %v", last)
	}
}
