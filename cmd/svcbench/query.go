package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"
)

func pct(ds []time.Duration, p float64) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[min(len(ds)-1, int(p*float64(len(ds))))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// engineRaw posts sql to the engine's HTTP interface as it is and reads the answer
// whole: the engine's own fastest path for a format, with nothing decoded.
func (st *stack) engineRaw(ctx context.Context, sql string) (int64, error) {
	return readWhole(ctx, "engine", st.engine.URL(), "", []byte(sql))
}

// apiRaw posts a query to the API and reads the answer whole.
func (st *stack) apiRaw(ctx context.Context, sql, format string) (int64, error) {
	body, _ := json.Marshal(map[string]string{"sql": sql, "format": format})
	return readWhole(ctx, "API", st.url+"/v1/query", "Bearer "+st.key, body)
}

// readWhole posts body and reads the answer to its end, returning its size.
func readWhole(ctx context.Context, who, url, auth string, body []byte) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("%s answered %d to %.80s", who, resp.StatusCode, body)
	}
	return n, err
}

// benchQuery compares the query API with the engine's own HTTP interface, in the same
// run: SELECT 1 in the API's default format (JSON) against the same statement and format
// posted to the engine, and a scan in JSONEachRow against the engine's fastest direct
// answer of the same rows (JSONEachRow with unquoted 64-bit integers, as the API renders
// them, and Native, the engine's cheapest encoding), each the best of three.
func benchQuery(ctx context.Context, st *stack, scanRows int, pprofDir string) error {
	const n = 300
	var api, direct []time.Duration
	for i := range n + 20 {
		t := time.Now()
		if _, err := st.apiRaw(ctx, "SELECT 1", "JSON"); err != nil {
			return fmt.Errorf("SELECT 1 through the API: %w", err)
		}
		da := time.Since(t)
		t = time.Now()
		if _, err := st.engineRaw(ctx, "SELECT 1 FORMAT JSON"); err != nil {
			return err
		}
		if i >= 20 { // the first requests open connections
			api, direct = append(api, da), append(direct, time.Since(t))
		}
	}
	// With -pprof-dir, svcd is profiled over five seconds of SELECT 1, after the timed loop.
	if err := st.profileWhile(pprofDir, "query select1", func() error {
		_, err := st.apiRaw(ctx, "SELECT 1", "JSON")
		return err
	}); err != nil {
		return fmt.Errorf("SELECT 1 through the API: %w", err)
	}
	// A table of scanRows rows, loaded with INSERT ... SELECT through the API.
	if code, b, err := st.post(ctx, "/v1/tables", []byte(`{"name":"scan"}`), nil); err != nil || code != 200 {
		return fmt.Errorf("create scan table: %d %s %v", code, b, err)
	}
	ins := fmt.Sprintf(`{"sql":"INSERT INTO scan SELECT number AS id, concat('name-', toString(number)) AS name, number %% 97 AS bucket FROM numbers(%d) SETTINGS max_execution_time = 600"}`, scanRows)
	if code, b, err := st.post(ctx, "/v1/query", []byte(ins), nil); err != nil || code != 200 {
		return fmt.Errorf("load scan table: %d %s %v", code, b, err)
	}
	engineDB, err := st.engineDatabase(ctx)
	if err != nil {
		return err
	}
	// The API reads the typed paths (docs/typing.md); the direct statements read the same.
	scanSQL := fmt.Sprintf("SELECT dynamicElement(doc.id, 'Int64') AS id, dynamicElement(doc.name, 'String') AS name, "+
		"dynamicElement(doc.bucket, 'Int64') AS bucket FROM `%s`.scan", engineDB)
	runs := []struct {
		name string
		run  func() (int64, error)
	}{
		{"API JSONEachRow", func() (int64, error) { return st.apiRaw(ctx, "SELECT id, name, bucket FROM scan", "JSONEachRow") }},
		{"engine JSONEachRow", func() (int64, error) {
			return st.engineRaw(ctx, scanSQL+" FORMAT JSONEachRow SETTINGS output_format_json_quote_64bit_integers = 0")
		}},
		{"engine Native", func() (int64, error) { return st.engineRaw(ctx, scanSQL+" FORMAT Native") }},
	}
	best := make([]time.Duration, len(runs))
	size := make([]int64, len(runs))
	for round := range 3 {
		for i := range runs {
			j := (i + round) % len(runs) // rotate the order, so caches favour none
			t := time.Now()
			b, err := runs[j].run()
			if err != nil {
				return fmt.Errorf("%s: %w", runs[j].name, err)
			}
			if d := time.Since(t); best[j] == 0 || d < best[j] {
				best[j] = d
			}
			size[j] = b
		}
	}
	// With -pprof-dir, svcd is profiled over five seconds of API scans, after the timed
	// rounds so that the profile does not slow them.
	if err := st.profileWhile(pprofDir, "query scan", func() error {
		_, err := runs[0].run()
		return err
	}); err != nil {
		return fmt.Errorf("%s: %w", runs[0].name, err)
	}
	rate := func(d time.Duration) float64 { return float64(scanRows) / d.Seconds() }
	fmt.Printf("query: %d sequential SELECT 1 (JSON), and a scan of %d rows (3 columns, best of 3)\n", n, scanRows)
	rows := [][]string{
		{"measurement", "API", "engine direct", "ratio API/direct"},
		{"SELECT 1 p50", ms(pct(api, 0.5)), ms(pct(direct, 0.5)), ratio(float64(pct(api, 0.5)), float64(pct(direct, 0.5)))},
		{"SELECT 1 p99", ms(pct(api, 0.99)), ms(pct(direct, 0.99)), ratio(float64(pct(api, 0.99)), float64(pct(direct, 0.99)))},
	}
	for j := 1; j < len(runs); j++ {
		rows = append(rows, []string{"scan rows/s vs " + runs[j].name, fmt.Sprintf("%.0f", rate(best[0])), fmt.Sprintf("%.0f", rate(best[j])),
			ratio(rate(best[0]), rate(best[j]))})
	}
	for j := range runs {
		rows = append(rows, []string{"scan " + runs[j].name, best[j].Round(time.Millisecond).String(), fmt.Sprintf("%.1f MB/s", mb(size[j], best[j])), ""})
	}
	table(rows)
	if err := benchTypedPaths(ctx, st, scanRows); err != nil {
		return err
	}
	return nil
}

// benchTypedPaths compares aggregates over typed paths (docs/typing.md) with the same
// queries written with explicit casts, both through the API on the scan table: the
// typed path must not be slower than the cast a user would otherwise write.
func benchTypedPaths(ctx context.Context, st *stack, scanRows int) error {
	pairs := []struct{ name, typed, cast string }{
		{"sum", "SELECT sum(bucket) FROM scan", "SELECT sum(bucket::Int64) FROM scan"},
		{"avg", "SELECT avg(id) FROM scan", "SELECT avg(id::Float64) FROM scan"},
		{"GROUP BY", "SELECT bucket, count(), sum(id) FROM scan GROUP BY bucket",
			"SELECT bucket::Int64 AS b, count(), sum(id::Int64) FROM scan GROUP BY b"},
	}
	run := func(sql string) (time.Duration, error) {
		body, _ := json.Marshal(map[string]string{"sql": sql, "format": "JSONEachRow"})
		t := time.Now()
		code, b, err := st.post(ctx, "/v1/query", body, nil)
		if err != nil || code != 200 {
			return 0, fmt.Errorf("%s: %d %s %v", sql, code, b, err)
		}
		return time.Since(t), nil
	}
	rows := [][]string{{"aggregate", "typed path", "explicit cast", "ratio typed/cast"}}
	for _, p := range pairs {
		const rounds = 7
		bestT, bestC := time.Hour, time.Hour
		for i := range rounds {
			// Alternate which runs first, so caches favour neither.
			order := []string{p.typed, p.cast}
			if i%2 == 1 {
				order = []string{p.cast, p.typed}
			}
			for _, q := range order {
				d, err := run(q)
				if err != nil {
					return err
				}
				if q == p.typed {
					bestT = min(bestT, d)
				} else {
					bestC = min(bestC, d)
				}
			}
		}
		rows = append(rows, []string{p.name, ms(bestT), ms(bestC), ratio(float64(bestT), float64(bestC))})
	}
	fmt.Printf("typed paths vs explicit casts over %d rows through the API (best of 7)\n", scanRows)
	table(rows)
	return nil
}
