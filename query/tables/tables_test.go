package tables_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query/tables"
)

// engine is a throwaway real engine through the service's own client: the automatic key,
// type inference and path listing are statements the engine answers, so they are tested
// against it.
func engine(t *testing.T) tables.Engine {
	t.Helper()
	url, _ := chtest.Engine(t)
	return chtest.Client(t, url)
}

func rowsOf(lines ...string) [][]byte {
	out := make([][]byte, len(lines))
	for i, l := range lines {
		out[i] = []byte(l)
	}
	return out
}

// TestChooseKey follows the automatic sorting key rule of autokey.go on samples the
// real engine types.
func TestChooseKey(t *testing.T) {
	e := engine(t)
	ctx := context.Background()
	f := func(name, columnType string, sample [][]byte, want string) {
		t.Helper()
		got, err := tables.ChooseKey(ctx, e, columnType, sample)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Errorf("%s: key %q, want %q", name, got, want)
		}
	}
	logs := func(n int, row func(i int) string) [][]byte {
		var out [][]byte
		for i := range n {
			out = append(out, []byte(row(i)))
		}
		return out
	}
	f("empty sample", "JSON", nil, "")
	// A preferred time name and a preferred dimension of few values.
	f("service and timestamp", "JSON", logs(40, func(i int) string {
		return fmt.Sprintf(`{"timestamp":"2026-01-02 03:04:%02d","service_name":"svc-%d","msg":"m%d"}`, i%60, i%3, i)
	}), "service_name, timestamp")
	// Only a time path: the key is the time alone.
	f("time only", "JSON", logs(20, func(i int) string {
		return fmt.Sprintf(`{"ts":"2026-01-02 03:04:%02d","id":"u%d"}`, i, i)
	}), "ts")
	// A String of many values is no dimension, and a time in under half the rows is no time.
	f("neither", "JSON", logs(20, func(i int) string {
		if i < 5 {
			return fmt.Sprintf(`{"time":"2026-01-02 03:04:%02d","user":"u%d"}`, i, i)
		}
		return fmt.Sprintf(`{"user":"u%d"}`, i)
	}), "")
	// Without a preferred name, the dimension with fewest values wins; a dotted name is
	// kept as a path, a segment that needs quoting is quoted.
	f("fewest values", "JSON", logs(40, func(i int) string {
		return fmt.Sprintf(`{"region":"r%d","tier":"t%d","when":"2026-01-02 03:04:05"}`, i%4, i%2)
	}), "tier, when")
	f("quoted segment", "JSON", logs(40, func(i int) string {
		return fmt.Sprintf(`{"app-name":"a%d","when":"2026-01-02 03:04:05"}`, i%2)
	}), "`app-name`, when")
	// The log search table declares its dimensions: _time and the declared Strings.
	f("log search", tables.LogSearchColumnType, logs(20, func(i int) string {
		return fmt.Sprintf(`{"_time":"2026-01-02 03:04:%02d","_raw":"line %d","host":"h1","source":"s","sourcetype":"st","index":"main"}`, i, i)
	}), "host, _time")
}

func TestInferTypes(t *testing.T) {
	e := engine(t)
	ctx := context.Background()
	sample := rowsOf(`{"n":1,"x":1.5,"s":"a","mixed":1,"t":"2026-01-02 03:04:05"}`,
		`{"n":2,"x":2,"s":"b","mixed":2.5}`,
		`{"n":3,"s":"c","mixed":"word"}`)
	got, err := tables.InferTypes(ctx, e, "JSON(s String)", []string{"n", "x", "s", "t", "absent"}, sample)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"n":      "Int64",
		"x":      "Float64", // integers and floats mixed read as Float64
		"s":      "",        // declared by the column: keeps its type
		"t":      "DateTime",
		"absent": "String", // never in the sample
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("types %v, want %v", got, want)
	}
	if got, err := tables.InferTypes(ctx, e, "JSON", nil, sample); err != nil || len(got) != 0 {
		t.Errorf("no paths: %v %v", got, err)
	}
}

func TestDominant(t *testing.T) {
	f := func(counts []string, want string) {
		t.Helper()
		if got := tables.Dominant(counts); got != want {
			t.Errorf("dominant(%q) = %q, want %q", counts, got, want)
		}
	}
	f(nil, "String")
	f([]string{"None\t5"}, "String")
	f([]string{"Int64\t3", "None\t9"}, "Int64")
	f([]string{"Int64\t3", "Float64\t1"}, "Float64")
	f([]string{"String\t2", "Int64\t5"}, "Int64")
	f([]string{"String\t5", "Int64\t5"}, "Int64") // a tie goes to the name first in order
}

func TestPathsOfSkipsRowsTheEngineCannotRead(t *testing.T) {
	e := engine(t)
	ctx := context.Background()
	got, err := tables.PathsOf(ctx, e, "JSON", rowsOf(`{"a":1,"b":{"c":"x"}}`, `{"a":"word"}`, `not json`, `{"d":[1,2]}`))
	if err != nil {
		t.Fatal(err)
	}
	for path, types := range got {
		slices.Sort(types)
		got[path] = types
	}
	want := map[string][]string{"a": {"Int64", "String"}, "b.c": {"String"}, "d": {"Array(Nullable(Int64))"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paths %v, want %v", got, want)
	}
}

// TestPathsOfElementsOfArraysOfObjects: the paths inside the elements of arrays of
// objects are recorded under the array's path, items[].sku, and so on into arrays of
// objects inside elements (docs/typing.md, "Arrays of objects").
func TestPathsOfElementsOfArraysOfObjects(t *testing.T) {
	e := engine(t)
	got, err := tables.PathsOf(context.Background(), e, "JSON", rowsOf(
		`{"items":[{"sku":"a","qty":2,"price":1.5},{"sku":"b","qty":1,"price":3,"tags":[{"k":"x"}]}]}`,
		`{"items":[], "odd key":[{"v":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for path, types := range got {
		slices.Sort(types)
		got[path] = types
	}
	want := map[string][]string{
		"items":            {"Array(JSON(max_dynamic_types=16, max_dynamic_paths=256))"}, // [] takes the batch's element type
		"items[].sku":      {"String"},
		"items[].qty":      {"Int64"},
		"items[].price":    {"Float64", "Int64"},
		"items[].tags":     {"Array(JSON(max_dynamic_types=8, max_dynamic_paths=64))"},
		"items[].tags[].k": {"String"},
		"odd key":          {"Array(JSON(max_dynamic_types=16, max_dynamic_paths=256))"},
		"odd key[].v":      {"Bool"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paths %v,\nwant %v", got, want)
	}
}

func TestAddPathLines(t *testing.T) {
	seen := map[string][]string{"a": {"Int64"}}
	tables.AddPathLines(seen, []string{"a\tInt64\tString", "b.c\tString", "a\tString"})
	want := map[string][]string{"a": {"Int64", "String"}, "b.c": {"String"}}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("%v, want %v", seen, want)
	}
}

func TestQuotePath(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := tables.QuotePath(in); got != want {
			t.Errorf("quotePath(%q) = %q, want %q", in, got, want)
		}
	}
	f("a", "a")
	f("user.id", "user.id")
	f("_time", "_time")
	f("a1.b_2", "a1.b_2")
	f("app-name", "`app-name`")
	f("1st", "`1st`")
	f("@timestamp", "`@timestamp`")
	f("a.b c", "a.`b c`")
}

func TestSampleSourceIsBounded(t *testing.T) {
	big := strings.Repeat("x", tables.MaxSampleBytes/2)
	rows := rowsOf(`{"a":"`+big+`"}`, `{"b":"`+big+`"}`, `{"c":1}`)
	src := tables.SampleSource("JSON", rows)
	if !strings.Contains(src, `"a"`) || strings.Contains(src, `"c"`) || len(src) > tables.MaxSampleBytes+1024 {
		t.Errorf("a sample of %d bytes from rows of %d: the bound is %d", len(src), 2*len(big), tables.MaxSampleBytes)
	}
	// The first row is always taken, however large.
	if src := tables.SampleSource("JSON", rowsOf(`{"a":"`+strings.Repeat("y", tables.MaxSampleBytes)+`"}`)); !strings.Contains(src, `"a"`) {
		t.Error("a single large row was left out")
	}
}
