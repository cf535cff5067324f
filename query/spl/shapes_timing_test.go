package spl

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestShapesTiming (SVC_SPL_TIMING=<events>) is a measurement, not a check: the issue's
// five search shapes over a day of web-log events, median of 5.
func TestShapesTiming(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SVC_SPL_TIMING"))
	if n == 0 {
		t.Skip("a measurement: set SVC_SPL_TIMING=<events>")
	}
	eng := openTestEngine(t)
	ctx := context.Background()
	now := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	doc := "doc JSON(_time DateTime64(3, 'UTC'), _raw String, host String, source String, sourcetype String, index String)"
	extra := os.Getenv("SVC_SPL_TIMING_DDL")
	order := "doc._time"
	if o := os.Getenv("SVC_SPL_TIMING_ORDER"); o != "" {
		order = o
	}
	for _, s := range []string{
		"CREATE DATABASE IF NOT EXISTS tm",
		"CREATE TABLE tm.logsearch_events__g1 (" + doc + extra + ") ENGINE = MergeTree ORDER BY (" + order + ") SETTINGS allow_nullable_key = 1",
		"CREATE TABLE tm.logsearch_events (" + doc + ") ENGINE = Merge('tm', '^logsearch_events__g[0-9]+$')",
	} {
		if err := eng.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for from := 0; from < n; from += 100_000 {
		if err := eng.Exec(ctx, timingLogSQL(now.Unix(), from, min(100_000, n-from))); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Exec(ctx, "OPTIMIZE TABLE tm.logsearch_events__g1 FINAL"); err != nil {
		t.Log(err)
	}
	if f := os.Getenv("SVC_SPL_TIMING_RAW"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var stmts []string
		for _, sql := range strings.Split(string(b), "\n;\n") {
			if sql = strings.TrimSpace(sql); sql != "" {
				stmts = append(stmts, sql)
			}
		}
		// Statements take turns, round after round, so that the machine's load falls on
		// each alike.
		ms := make([][]float64, len(stmts))
		for round := range 7 {
			for i, sql := range stmts {
				if round > 0 && !strings.HasPrefix(sql, "SELECT") && !strings.HasPrefix(sql, "WITH") {
					continue
				}
				start := time.Now()
				if _, err := eng.Query(ctx, sql, ""); err != nil {
					t.Fatal(sql, err)
				}
				if round > 0 {
					ms[i] = append(ms[i], float64(time.Since(start).Microseconds())/1000)
				}
			}
		}
		for i, sql := range stmts {
			if len(ms[i]) > 0 {
				slices.Sort(ms[i])
				fmt.Printf("%8.1f ms (median of %d, interleaved): %.200s\n", ms[i][len(ms[i])/2], len(ms[i]), sql)
			}
		}
		return
	}
	// The path schema svcd passes (query.TypedPaths: the paths beyond the declared ones).
	paths := map[string][]string{"status": {"Int64"}, "method": {"String"}, "path": {"String"},
		"bytes": {"Int64"}, "duration_ms": {"Float64"}, "clientip": {"String"}}
	shapes := []string{
		`upstream | stats count`,
		`* | stats count BY status`,
		`status=503 | timechart span=1h count`,
		`status>=500 | stats avg(bytes) BY host`,
		`host=web-03 GET | head 100`,
		`sourcetype=access_combined`,
	}
	if s := os.Getenv("SVC_SPL_TIMING_SHAPES"); s != "" {
		shapes = strings.Split(s, ";")
	}
	for _, spl := range shapes {
		var ms []float64
		var rows int
		var st Statistics
		if os.Getenv("SVC_SPL_TIMING_SQL") != "" {
			logEng := EngineFunc(func(ctx context.Context, sql, id string) (*Result, error) {
				start := time.Now()
				r, err := eng.Query(ctx, sql, id)
				fmt.Printf("  %.1f ms: %s\n", float64(time.Since(start).Microseconds())/1000, sql)
				if err == nil && os.Getenv("SVC_SPL_TIMING_SQL") == "explain" {
					e, _ := eng.Query(ctx, "EXPLAIN indexes=1, actions=0 "+sql, "")
					for _, row := range e.Rows {
						fmt.Println("    ", row[0])
					}
				}
				return r, err
			})
			if _, err := Search(ctx, logEng, Request{SPL: spl, Earliest: "-24h", Latest: "now", Table: "`tm`.`logsearch_events`", Now: now, Paths: paths}); err != nil {
				t.Fatal(err)
			}
		}
		for range 6 {
			start := time.Now()
			r, err := Search(ctx, eng, Request{SPL: spl, Earliest: "-24h", Latest: "now", Table: "`tm`.`logsearch_events`", Now: now, Paths: paths})
			if err != nil {
				t.Fatal(spl, err)
			}
			ms = append(ms, float64(time.Since(start).Microseconds())/1000)
			rows = r.Rows
			st = r.Statistics
		}
		ms = ms[1:]
		slices.Sort(ms)
		fmt.Printf("%-40s %8.1f ms  rows %5d  read %8d rows %10d bytes\n", spl, ms[len(ms)/2], rows, st.RowsRead, st.BytesRead)
	}
}

func timingLogSQL(now int64, from, n int) string {
	return fmt.Sprintf(`INSERT INTO tm.logsearch_events__g1 SELECT CAST(tuple(t, raw, host, source, sourcetype, '', status, method, path, bytes, duration_ms, clientip) AS Tuple(_time DateTime64(3, 'UTC'), _raw String, host String, source String, sourcetype String, index String, status Int64, method String, path String, bytes Int64, duration_ms Float64, clientip String))::JSON(_time DateTime64(3, 'UTC'), _raw String, host String, source String, sourcetype String, index String) FROM (
	SELECT number, cityHash64(number) AS h, cityHash64(number, 1) AS g, number %% 20 = 0 AS incident, number %% 20 = 1 AS err,
		toDateTime64(%d, 3, 'UTC') - toIntervalMillisecond(if(incident, 21600000 + h %% 1200000, h %% 86400000)) AS t,
		concat('web-', leftPad(toString(g %% 12 + 1), 2, '0')) AS host,
		if(err, '/var/log/nginx/error.log', '/var/log/nginx/access.log') AS source,
		if(err, 'nginx_error', 'access_combined') AS sourcetype,
		['GET', 'GET', 'GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE', 'HEAD'][g %% 10 + 1] AS method,
		concat('/api/v1/', ['users', 'orders', 'items', 'cart', 'search', 'login', 'health'][intDiv(g, 10) %% 7 + 1], '/', toString(intDiv(h, 7) %% 5000)) AS path,
		multiIf(incident, 503, h %% 100 < 80, 200, h %% 100 < 88, 304, h %% 100 < 94, 404, h %% 100 < 97, 302, h %% 100 < 99, 500, 403) AS status,
		intDiv(g, 70) %% 50000 AS bytes,
		round(exp((intDiv(h, 13) %% 1000) / 125) / 10, 1) AS duration_ms,
		IPv4NumToString(toUInt32(intDiv(g, 3) %% 4294967296)) AS clientip,
		['Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) Safari/605.1.15',
			'curl/8.5.0', 'Go-http-client/1.1', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5) Mobile/15E148'][intDiv(g, 11) %% 5 + 1] AS ua,
		if(err, concat(formatDateTime(t, '%%Y/%%m/%%d %%H:%%i:%%S'), ' [error] ', toString(h %% 30000), '#0: *', toString(number),
				' upstream timed out (110: Connection timed out) while reading response header from upstream, client: ', clientip,
				', request: "', method, ' ', path, ' HTTP/1.1"'),
			concat(clientip, ' - - [', formatDateTime(t, '%%d/%%b/%%Y:%%H:%%i:%%S +0000'), '] "', method, ' ', path, ' HTTP/1.1" ',
				toString(status), ' ', toString(bytes), ' "-" "', ua, '" ', toString(duration_ms))) AS raw
	FROM numbers(%d, %d))`, now, from, n)
}
