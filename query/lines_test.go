package query_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/svc-data/svc/infra/clickhouse/chclient"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/format"
)

// rowByRow renders a result the way the API does without the engine's encoding: every
// value decoded (Native) and written by the format writer.
func rowByRow(t *testing.T, c *chclient.Client, name, sql string) []byte {
	t.Helper()
	rows, err := c.Stream(context.Background(), sql, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	w, _ := format.New(name, bw, nil)
	if err := w.Begin(rows.Columns()); err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		if err := w.Row(rows.Values()); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	_ = w.End(format.Stats{})
	bw.Flush()
	return b.Bytes()
}

// spliced renders a result from the engine's own encoding, as the API serves JSONEachRow.
func spliced(t *testing.T, c *chclient.Client, name, sql string, settings map[string]string) ([]byte, bool) {
	t.Helper()
	ls, err := c.StreamLines(context.Background(), sql, query.LinesFormat, query.Options{Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	var lines [][]byte
	for {
		l, err := ls.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, bytes.Clone(l))
	}
	if len(lines) < 2 {
		t.Fatalf("%d lines: no header", len(lines))
	}
	out, ok, err := query.SpliceLines(name, lines[0], lines[1], lines[2:])
	if err != nil {
		t.Fatal(err)
	}
	return out, ok
}

// The rewrite of the engine's lines writes the same bytes as decoding and encoding every
// value, for every type it serves and the strings the two encoders escape differently.
func TestSplicedRowsMatchRowByRow(t *testing.T) {
	url, _ := chtest.Engine(t)
	c := chtest.Client(t, url)
	const sql = `SELECT number AS n, toInt64(number) - 9223372036854775807 - 1 AS i64, toUInt64(18446744073709551615 - number) AS u64,
		toInt8(-128 + number) AS i8, toUInt32(number * 7) AS u32, number % 2 = 1 AS b, CAST(if(number % 3 = 0, NULL, number) AS Nullable(Int16)) AS ni,
		arrayElement(['', 'plain', 'quote " back \\ slash /', 'ctl \b \f \n \r \t \x01 \x7f', 'utf8 é ü 😀 \u2028 \u2029', 'bad \xff\xfe utf8', '{"json":1}'], number % 7 + 1) AS s,
		CAST(if(number % 4 = 0, NULL, concat('v', toString(number))) AS Nullable(String)) AS ns,
		toLowCardinality(toString(number % 5)) AS lc, CAST(if(number % 5 = 0, NULL, number % 2 = 0) AS Nullable(Bool)) AS nb,
		'key "quoted"' AS ` + "`odd \"name\"/é`" + `
		FROM numbers(100000)`
	for _, name := range []string{"JSONEachRow", "JSON"} {
		want := rowByRow(t, c, name, sql)
		for _, quote := range []string{"0", "1"} {
			got, ok := spliced(t, c, name, sql, map[string]string{"output_format_json_quote_64bit_integers": quote, "output_format_json_escape_forward_slashes": quote})
			if !ok {
				t.Fatal("types not served from the engine's encoding")
			}
			if !bytes.Equal(got, want) {
				wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
				for i := range min(len(wl), len(gl)) {
					if !bytes.Equal(wl[i], gl[i]) {
						at := 0
						for at < min(len(wl[i]), len(gl[i])) && wl[i][at] == gl[i][at] {
							at++
						}
						t.Fatalf("%s, quote %s: line %d differs at byte %d:\n got %.300q\nwant %.300q", name, quote, i, at, gl[i][max(0, at-100):], wl[i][max(0, at-100):])
					}
				}
				t.Fatalf("%s, quote %s: %d lines, want %d", name, quote, len(gl), len(wl))
			}
		}
	}
	// Other types run row by row.
	for _, sql := range []string{"SELECT 1.5 AS f", "SELECT now() AS t", "SELECT [1] AS a", "SELECT toInt128(1) AS i", "SELECT 1 AS n, toDecimal32(1, 2) AS d"} {
		if _, ok := spliced(t, c, "JSON", sql, nil); ok {
			t.Errorf("%s: served from the engine's encoding", sql)
		}
	}
}

// An engine error after the first rows ends the lines with the engine's classified error.
func TestLinesEndWithTheEnginesError(t *testing.T) {
	url, _ := chtest.Engine(t)
	c := chtest.Client(t, url)
	ls, err := c.StreamLines(context.Background(), "SELECT number, throwIf(number = 400000, 'stop here') FROM numbers(1000000) SETTINGS max_block_size = 1000",
		query.LinesFormat, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	n := 0
	for {
		_, err = ls.Next()
		if err != nil {
			break
		}
		n++
	}
	ex, ok := engineerr.As(err)
	if !ok || ex.Code != 395 || !bytes.Contains([]byte(ex.Message), []byte("stop here")) || n < 2 {
		t.Fatalf("after %d lines: %v (%#v)", n, err, ex)
	}
}
