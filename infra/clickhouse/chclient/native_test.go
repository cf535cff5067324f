package chclient_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chclient"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query/engineerr"
)

// TestInsertRowsStoresWhatJSONAsObjectStores inserts the same documents with InsertRows
// (a Native block of JSON text) and as JSONAsObject, the engine's text format for them,
// and checks that both tables hold the same documents with the same path types: the
// timestamp and number inference, duplicate paths, escapes, blank lines, and columns
// with typed paths. A second
// InsertRows under the same token inserts nothing.
func TestInsertRowsStoresWhatJSONAsObjectStores(t *testing.T) {
	const typed = "JSON(_time DateTime64(3, 'UTC'), _raw String, host String, source String, sourcetype String, index String)"
	c, ctx := engineWith(t, "CREATE DATABASE d",
		"CREATE TABLE d.native (doc JSON) ENGINE = MergeTree ORDER BY tuple() SETTINGS non_replicated_deduplication_window = 100",
		"CREATE TABLE d.text (doc JSON) ENGINE = MergeTree ORDER BY tuple()",
		"CREATE TABLE d.typed_native (doc "+typed+") ENGINE = MergeTree ORDER BY tuple()",
		"CREATE TABLE d.typed_text (doc "+typed+") ENGINE = MergeTree ORDER BY tuple()")
	docs := []string{
		`{"n":-1,"_time":"2026-11-21 05:01:02.123","_raw":"line","host":"h","index":"main"}`,
		`{"n":-2,"_time":1763701262123,"_raw":"line 2","source":"s"}`,
		`{"n":0,"ts":"2026-11-21 05:01:02.123","user":{"id":1,"plan":"pro"},"tags":["a","b"],"f":1.5}`,
		`{"n":1,"ts":"2026-11-21T05:01:02Z","user":{"id":18446744073709551615},"f":2,"x":null}`,
		`{"n":2,"a":1,"a":2,"s":"quote \" backslash \\ tab \t unicode \u00e9 \ud83d\ude00"}`,
		`{"n":3,"a.b":1,"a":{"b":2,"c":[1,2.5]},"empty":{},"arr":[[1],[2,3]]}`,
		``,
		`{"n":4,"big":1234567890123456789,"neg":-1e-7,"bool":true,"d":"2026-11-21"}`,
		`{"n":5}`,
	}
	var rows strings.Builder
	for _, d := range docs {
		rows.WriteString(d + "\n")
	}
	if err := c.Exec(ctx, "INSERT INTO d.text SETTINGS type_json_skip_duplicated_paths = 1 FORMAT JSONAsObject\n"+rows.String()); err != nil {
		t.Fatal("text:", err)
	}
	if err := c.InsertRows(ctx, "d", "native", "", "tok", []byte(rows.String())); err != nil {
		t.Fatal(err)
	}
	if err := c.InsertRows(ctx, "d", "native", "", "tok", []byte(rows.String())); err != nil {
		t.Fatal(err)
	}
	// A row the engine cannot type is rejected as from text, so the consumer isolates it.
	bad := "{\"n\":6}\n{\"big\":12345678901234567890123}\n"
	if err := c.InsertRows(ctx, "d", "native", "", "bad", []byte(bad)); !errors.Is(err, engineerr.Permanent) {
		t.Errorf("a number beyond every integer type: %v, want rejected", err)
	}
	if err := c.Exec(ctx, "INSERT INTO d.text FORMAT JSONAsObject\n"+bad); !errors.Is(err, engineerr.Permanent) {
		t.Errorf("the same as JSONAsObject: %v, want rejected", err)
	}
	read := func(table string) []string {
		out, err := c.QueryStrings(ctx, fmt.Sprintf(
			"SELECT concat(toJSONString(doc), ' ', toString(JSONAllPathsWithTypes(doc))) FROM d.%s ORDER BY doc.n.:Int64", table))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	native, text := read("native"), read("text")
	if len(native) != 8 {
		t.Fatalf("InsertRows twice under one token stored %d rows, want 8: %q", len(native), native)
	}
	// A column with typed paths (the log-search layout) takes the same rows as text does;
	// here the rows come in parts, a document each, as the consumer passes record values.
	var parts [][]byte
	for _, d := range docs {
		parts = append(parts, []byte(d+"\n"))
	}
	if err := c.InsertRows(ctx, "d", "typed_native", typed, "tok", parts...); err != nil {
		t.Fatal("typed:", err)
	}
	if err := c.Exec(ctx, "INSERT INTO d.typed_text SETTINGS type_json_skip_duplicated_paths = 1 FORMAT JSONAsObject\n"+rows.String()); err != nil {
		t.Fatal("typed text:", err)
	}
	if err := c.InsertRows(ctx, "d", "typed_native", typed, "bad", []byte(`{"_time":"not a time"}`+"\n")); !errors.Is(err, engineerr.Permanent) {
		t.Errorf("a typed path's value that does not parse: %v, want rejected", err)
	}
	native, text = append(native, read("typed_native")...), append(text, read("typed_text")...)
	for i := range native {
		if i >= len(text) || native[i] != text[i] {
			t.Errorf("row %d:\n native %s\n text   %s", i, native[i], text[min(i, len(text)-1)])
		}
	}
}

// engineWith starts an engine, runs stmts on it and returns a client, closed when the
// test ends.
func engineWith(t *testing.T, stmts ...string) (*chclient.Client, context.Context) {
	t.Helper()
	c := chtest.Client(t, chtest.Start(t, clickhouse.ProcessConfig{}).URL())
	ctx := context.Background()
	for _, stmt := range stmts {
		if err := c.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	return c, ctx
}

// TestInsertFormatRowBinaryOpeningWithSemicolon inserts RowBinary rows whose first byte
// is ';' (a UUID's first byte, as a Prometheus series id can be), which the engine would
// read as an excessive end of statement before the data, and reads them back.
func TestInsertFormatRowBinaryOpeningWithSemicolon(t *testing.T) {
	c, ctx := engineWith(t, "CREATE DATABASE d", "CREATE TABLE d.t (id UUID, v Float64) ENGINE = MergeTree ORDER BY id")
	var data []byte
	for _, v := range []byte{';', ' ', '\n'} {
		id := [16]byte{0: v, 9: 1} // the first row opens the data with the byte ;
		data = append(data, id[:]...)
		data = append(data, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f) // 1.0
	}
	if err := c.InsertFormat(ctx, "d", "t", "id, v", "RowBinary", "tok", data); err != nil {
		t.Fatal(err)
	}
	got, err := c.QueryStrings(ctx, "SELECT concat(toString(id), ' ', toString(v)) FROM d.t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"00000000-0000-000a-0000-000000000100 1", "00000000-0000-0020-0000-000000000100 1", "00000000-0000-003b-0000-000000000100 1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
}
