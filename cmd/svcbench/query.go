package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/svc-data/svc/query"
)

func pct(ds []time.Duration, p float64) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[min(len(ds)-1, int(p*float64(len(ds))))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func benchQuery(ctx context.Context, st *stack, scanRows int) error {
	const n = 300
	var api, direct []time.Duration
	for range n {
		t := time.Now()
		code, body, err := st.post(ctx, "/v1/query", []byte(`{"sql":"SELECT 1"}`), nil)
		if err != nil || code != 200 {
			return fmt.Errorf("SELECT 1 through the API: %d %s %v", code, body, err)
		}
		api = append(api, time.Since(t))
		t = time.Now()
		if _, err := st.direct.QueryStrings(ctx, "SELECT toString(1)"); err != nil {
			return err
		}
		direct = append(direct, time.Since(t))
	}
	// A table of scanRows rows, loaded with INSERT ... SELECT through the API.
	if code, b, err := st.post(ctx, "/v1/tables", []byte(`{"name":"scan"}`), nil); err != nil || code != 200 {
		return fmt.Errorf("create scan table: %d %s %v", code, b, err)
	}
	ins := fmt.Sprintf(`{"sql":"INSERT INTO scan SELECT number AS id, concat('name-', toString(number)) AS name, number %% 97 AS bucket FROM numbers(%d) SETTINGS max_execution_time = 600"}`, scanRows)
	if code, b, err := st.post(ctx, "/v1/query", []byte(ins), nil); err != nil || code != 200 {
		return fmt.Errorf("load scan table: %d %s %v", code, b, err)
	}
	// Through the API, streamed as JSONEachRow and read whole.
	t := time.Now()
	req, _ := http.NewRequestWithContext(ctx, "POST", st.url+"/v1/query", strings.NewReader(`{"sql":"SELECT id, name, bucket FROM scan","format":"JSONEachRow"}`))
	req.Header.Set("Authorization", "Bearer "+st.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	bytesRead, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		return fmt.Errorf("scan through the API: %d %v", resp.StatusCode, err)
	}
	apiScan := time.Since(t)
	// The same scan on the engine directly: same columns, same engine, every value read.
	var orgs struct{ Organizations []struct{ ID string } }
	oreq, _ := http.NewRequest("GET", st.url+"/v1/organizations", nil)
	oreq.Header.Set("Authorization", "Bearer "+st.key)
	oresp, err := http.DefaultClient.Do(oreq)
	if err != nil {
		return err
	}
	json.NewDecoder(oresp.Body).Decode(&orgs)
	oresp.Body.Close()
	engineDB := "o_" + strings.ReplaceAll(orgs.Organizations[0].ID, "-", "") + "__default"
	t = time.Now()
	rows, err := st.direct.Stream(ctx, fmt.Sprintf("SELECT doc.id, doc.name, doc.bucket FROM `%s`.scan", engineDB),
		query.Options{Settings: map[string]string{}})
	if err != nil {
		return err
	}
	count := 0
	for rows.Next() {
		_ = rows.Values()
		count++
	}
	rows.Close()
	directScan := time.Since(t)
	if count != scanRows {
		return fmt.Errorf("direct scan read %d rows, want %d", count, scanRows)
	}
	fmt.Printf("query: %d sequential SELECT 1, and a scan of %d rows (3 columns)\n", n, scanRows)
	table([][]string{
		{"measurement", "API", "direct", "ratio API/direct"},
		{"SELECT 1 p50", ms(pct(api, 0.5)), ms(pct(direct, 0.5)), ratio(float64(pct(api, 0.5)), float64(pct(direct, 0.5)))},
		{"SELECT 1 p99", ms(pct(api, 0.99)), ms(pct(direct, 0.99)), ratio(float64(pct(api, 0.99)), float64(pct(direct, 0.99)))},
		{"scan time", apiScan.Round(time.Millisecond).String(), directScan.Round(time.Millisecond).String(), ratio(float64(apiScan), float64(directScan))},
		{"scan rows/s", fmt.Sprintf("%.0f", float64(scanRows)/apiScan.Seconds()), fmt.Sprintf("%.0f", float64(scanRows)/directScan.Seconds()),
			ratio(float64(scanRows)/apiScan.Seconds(), float64(scanRows)/directScan.Seconds())},
		{"scan MB/s (API body)", fmt.Sprintf("%.1f", mb(bytesRead, apiScan)), "", ""},
	})
	return benchTypedPaths(ctx, st, scanRows)
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
