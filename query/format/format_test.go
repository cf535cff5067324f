package format

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/chcol"
)

var (
	cols = []Column{{"n", "Int64"}, {"s", "String"}, {"t", "DateTime64(3)"}, {"a", "Array(String)"},
		{"m", "Map(String, Int64)"}, {"d", "Dynamic"}, {"z", "Nullable(Float64)"}}
	when = time.Date(2026, 11, 21, 5, 30, 0, 123e6, time.UTC)
	rows = [][]any{
		{int64(7), "plain", when, []string{"x", "y,z"}, map[string]int64{"k": 1}, chcol.NewDynamicWithType(int64(200), "Int64"), ptr(1.5)},
		{int64(-9007199254740993), "tab\there \"quoted\", comma\nline", when, []string{}, map[string]int64{},
			chcol.NewDynamicWithType("ok", "String"), (*float64)(nil)},
		{int64(0), "nan", when, []string{"'"}, map[string]int64{"a b": 2}, chcol.Dynamic{}, ptr(math.NaN())},
	}
)

func ptr[T any](v T) *T { return &v }

func render(t *testing.T, name string, fail error) string {
	t.Helper()
	var out bytes.Buffer
	bw := bufio.NewWriter(&out)
	w, err := New(name, bw, []string{"a hint"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Begin(cols); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Row(r); err != nil {
			t.Fatal(err)
		}
	}
	if fail != nil {
		w.Fail(fail)
	} else if err := w.End(Stats{Elapsed: 1500 * time.Microsecond, RowsRead: 3, BytesRead: 99}); err != nil {
		t.Fatal(err)
	}
	bw.Flush()
	return out.String()
}

func TestJSONParsesBack(t *testing.T) {
	var got struct {
		Meta       []Column         `json:"meta"`
		Data       []map[string]any `json:"data"`
		Rows       int              `json:"rows"`
		Statistics map[string]any   `json:"statistics"`
		Hints      []string         `json:"hints"`
	}
	out := render(t, "JSON", nil)
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if got.Rows != 3 || len(got.Data) != 3 || len(got.Meta) != len(cols) || got.Hints[0] != "a hint" {
		t.Fatalf("shape: %s", out)
	}
	r := got.Data[1]
	if r["n"].(json.Number).String() != "-9007199254740993" || r["s"] != "tab\there \"quoted\", comma\nline" || r["z"] != nil {
		t.Fatalf("row 1: %v", r)
	}
	if got.Data[0]["t"] != "2026-11-21 05:30:00.123" || got.Data[0]["d"].(json.Number).String() != "200" {
		t.Fatalf("row 0: %v", got.Data[0])
	}
	if got.Data[2]["z"] != nil || got.Data[2]["d"] != nil {
		t.Fatalf("NaN and empty Dynamic must be null: %v", got.Data[2])
	}
	if got.Statistics["rows_read"].(json.Number).String() != "3" || got.Statistics["elapsed"].(json.Number).String() != "0.0015" {
		t.Fatalf("statistics %v", got.Statistics)
	}
}

func TestJSONCompactAndEachRowParseBack(t *testing.T) {
	var compact struct {
		Data [][]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(render(t, "JSONCompact", nil)), &compact); err != nil || len(compact.Data) != 3 || compact.Data[1][1] != "tab\there \"quoted\", comma\nline" {
		t.Fatalf("compact: %v %v", err, compact)
	}
	lines := strings.Split(strings.TrimSpace(render(t, "JSONEachRow", nil)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || len(m) != len(cols) {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	kinds := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(render(t, "JSONEachRowWithProgress", nil)), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil || len(m) != 1 {
			t.Fatalf("line %q: %v", l, err)
		}
		for k := range m {
			kinds[k]++
		}
	}
	if kinds["meta"] != 1 || kinds["row"] != 3 || kinds["progress"] != 1 || kinds["statistics"] != 1 {
		t.Fatalf("record kinds %v", kinds)
	}
}

func TestCSVAndTSVParseBack(t *testing.T) {
	for _, name := range []string{"CSV", "CSVWithNames"} {
		recs, err := csv.NewReader(strings.NewReader(render(t, name, nil))).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "CSVWithNames" {
			if recs[0][0] != "n" || recs[0][6] != "z" {
				t.Fatalf("header %v", recs[0])
			}
			recs = recs[1:]
		}
		if len(recs) != 3 || recs[1][1] != "tab\there \"quoted\", comma\nline" || recs[0][3] != "['x','y,z']" || recs[1][6] != `\N` {
			t.Fatalf("%s rows %q", name, recs)
		}
	}
	for _, name := range []string{"TSV", "TSVWithNames", "TabSeparated"} {
		out := render(t, name, nil)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if name == "TSVWithNames" {
			lines = lines[1:]
		}
		if len(lines) != 3 {
			t.Fatalf("%s: %d lines in %q", name, len(lines), out)
		}
		cells := strings.Split(lines[1], "\t")
		if len(cells) != len(cols) || cells[1] != `tab\there "quoted", comma\nline` || cells[6] != `\N` {
			t.Fatalf("%s cells %q", name, cells)
		}
	}
}

func TestFailMarksTheOutput(t *testing.T) {
	boom := errors.New("Code: 241. memory limit exceeded")
	var m map[string]any
	if err := json.Unmarshal([]byte(render(t, "JSON", boom)), &m); err != nil || m["exception"] == nil || m["rows"].(float64) != 3 {
		t.Fatalf("JSON fail: %v %v", err, m)
	}
	lines := strings.Split(strings.TrimSpace(render(t, "JSONEachRow", boom)), "\n")
	if !strings.Contains(lines[len(lines)-1], `"exception"`) {
		t.Fatalf("JSONEachRow fail: %q", lines)
	}
}

func TestUnknownFormat(t *testing.T) {
	var ue *UnknownError
	if _, err := New("Parquet", bufio.NewWriter(&bytes.Buffer{}), nil); !errors.As(err, &ue) {
		t.Fatalf("unknown format: %v", err)
	}
}
