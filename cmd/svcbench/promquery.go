package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/svc-data/svc/query/promapi"
	"github.com/svc-data/svc/query/promstore"
	"github.com/svc-data/svc/query/sqlquote"
)

// benchPromQuery measures query_range latency of PromQL over series × a day at 15 s
// resolution through svcd's Prometheus API, beside the same PromQL through the same API
// code over Prometheus's in-memory storage (TSDB head) holding the same samples. With ab,
// a second svcd over the same engine and a copy of the first's state runs with the PromQL
// push-down off (the first with it on), and each run queries both in turn, so the load of
// the machine weighs on both medians alike.
func benchPromQuery(ctx context.Context, st *stack, nSeries int, step time.Duration, runs int, ab bool) error {
	if err := st.installApp(ctx, "prometheus"); err != nil {
		return err
	}
	db, err := st.engineDatabase(ctx)
	if err != nil {
		return err
	}
	const (
		t0      = int64(1_700_000_000_000)
		samples = 24 * 3600 / 15
	)
	// The series: x{job="job<n%10>", instance="i<n>"}, a counter rising by n%7+1 per sample.
	// The write part may have left its own series in the same tables: only x is loaded.
	inst := func(n int) string { return fmt.Sprintf("i%d", n) }
	job := func(n int) string { return fmt.Sprintf("job%d", n%10) }
	load := []string{
		fmt.Sprintf(`INSERT INTO %[1]s.%[2]s (id, metric_name, tags, min_time, max_time)
SELECT %[3]s, metric_name, tags, fromUnixTimestamp64Milli(toInt64(%[4]d), 'UTC'), fromUnixTimestamp64Milli(toInt64(%[5]d), 'UTC')
FROM (SELECT 'x' AS metric_name, CAST(map('job', concat('job', toString(number %% 10)), 'instance', concat('i', toString(number))), 'Map(LowCardinality(String), String)') AS tags FROM numbers(%[6]d))`,
			sqlquote.Ident(db), sqlquote.Ident(promstore.TagsTable), promstore.IDExpression, t0, t0+int64(samples-1)*15000, nSeries),
		fmt.Sprintf(`INSERT INTO %[1]s.%[2]s (id, timestamp, value, metric_hash)
SELECT id, fromUnixTimestamp64Milli(toInt64(%[4]d + k.number * 15000), 'UTC'), toFloat64((k.number + 1) * (toUInt64(substring(tags['instance'], 2)) %% 7 + 1)), cityHash64(metric_name)
FROM %[1]s.%[3]s AS s CROSS JOIN numbers(%[5]d) AS k WHERE s.metric_name = 'x' SETTINGS max_execution_time = 600`,
			sqlquote.Ident(db), sqlquote.Ident(promstore.DataTable), sqlquote.Ident(promstore.TagsTable), t0, samples),
	}
	for _, stmt := range promstore.DDL(db) {
		if err := st.direct.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	start := time.Now()
	for _, stmt := range load {
		if err := st.direct.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("load: %w", err)
		}
	}
	fmt.Printf("loaded %d series x %d samples into the engine in %s\n", nSeries, samples, time.Since(start).Round(time.Millisecond))

	// The same samples in Prometheus's TSDB head.
	opts := tsdb.DefaultOptions()
	opts.RetentionDuration = 0
	opts.MinBlockDuration = int64(48 * time.Hour / time.Millisecond)
	opts.MaxBlockDuration = opts.MinBlockDuration
	head, err := tsdb.Open(st.dir+"/tsdb", nil, nil, opts, nil)
	if err != nil {
		return err
	}
	defer head.Close()
	start = time.Now()
	for n := range nSeries {
		app := head.AppenderV2(ctx)
		ls := labels.FromStrings("__name__", "x", "job", job(n), "instance", inst(n))
		var ref storage.SeriesRef
		for k := range samples {
			if ref, err = app.Append(ref, ls, 0, t0+int64(k)*15000, float64((k+1)*(n%7+1)), nil, nil, storage.AppendV2Options{}); err != nil {
				return err
			}
		}
		if err := app.Commit(); err != nil {
			return err
		}
	}
	fmt.Printf("loaded the same into Prometheus's TSDB head in %s\n", time.Since(start).Round(time.Millisecond))
	upstream := promapi.NewOver(promapi.Config{}, head, head)
	defer upstream.Close()

	offURL := ""
	if ab {
		off, url, err := st.pushdownOff(ctx)
		if err != nil {
			return err
		}
		defer func() {
			off.Process.Signal(syscall.SIGTERM)
			off.Wait()
		}()
		offURL = url
	}

	sec := func(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }
	fmt.Printf("\nquery_range over %d series x 1 day (15 s samples), step %s, median of %d\n", nSeries, step, runs)
	if ab {
		fmt.Printf("%-36s %12s %12s %12s %8s %8s\n", "query", "svc", "svc no-push", "prometheus", "ratio", "series")
	} else {
		fmt.Printf("%-36s %12s %12s %8s %8s\n", "query", "svc", "prometheus", "ratio", "series")
	}
	for _, q := range []string{"rate(x[5m])", "sum by (job) (rate(x[5m]))"} {
		form := url.Values{"query": {q}, "start": {sec(t0)}, "end": {sec(t0 + int64(samples-1)*15000)}, "step": {step.String()}}
		var ours, plain, theirs []time.Duration
		var oursBody, theirsBody []byte
		for range runs {
			t := time.Now()
			code, body, err := st.get(ctx, "/prometheus/api/v1/query_range?"+form.Encode())
			if err != nil || code != 200 {
				return fmt.Errorf("%s through svcd: %d %.300s %v", q, code, body, err)
			}
			ours = append(ours, time.Since(t))
			oursBody = body
			if ab {
				t = time.Now()
				code, body, err := st.getFrom(ctx, offURL, "/prometheus/api/v1/query_range?"+form.Encode())
				if err != nil || code != 200 {
					return fmt.Errorf("%s through svcd without push-down: %d %.300s %v", q, code, body, err)
				}
				plain = append(plain, time.Since(t))
				if !sameResult(body, oursBody) {
					return fmt.Errorf("%s: svcd answers differently with and without push-down", q)
				}
			}
			t = time.Now()
			rec := httptest.NewRecorder()
			upstream.Serve(rec, httptest.NewRequest("GET", promapi.Prefix+"/query_range?"+form.Encode(), nil), promapi.Request{})
			if rec.Code != 200 {
				return fmt.Errorf("%s upstream: %d %.300s", q, rec.Code, rec.Body.Bytes())
			}
			theirs = append(theirs, time.Since(t))
			theirsBody = rec.Body.Bytes()
		}
		if !sameResult(oursBody, theirsBody) {
			return fmt.Errorf("%s: svcd and Prometheus answer differently", q)
		}
		var res struct {
			Data struct{ Result []json.RawMessage }
		}
		_ = json.Unmarshal(oursBody, &res)
		o, p := pct(ours, 0.5), pct(theirs, 0.5)
		if ab {
			fmt.Printf("%-36s %12s %12s %12s %8.2f %8d\n", q, ms(o), ms(pct(plain, 0.5)), ms(p), float64(o)/float64(p), len(res.Data.Result))
		} else {
			fmt.Printf("%-36s %12s %12s %8.2f %8d\n", q, ms(o), ms(p), float64(o)/float64(p), len(res.Data.Result))
		}
	}
	return nil
}

// sameResult compares two API answers' data.
func sameResult(a, b []byte) bool {
	var x, y struct{ Data json.RawMessage }
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return string(x.Data) == string(y.Data)
}

// pushdownOff restarts the stack's svcd with the push-down on and starts a second one with
// it off, over the same engine and a copy of the first's state (the same key, organization
// and engine database). It returns the second svcd and its URL.
func (st *stack) pushdownOff(ctx context.Context) (*exec.Cmd, string, error) {
	st.svcd.Process.Signal(syscall.SIGTERM)
	st.svcd.Wait()
	st.svcd = nil
	dir := filepath.Join(st.dir, "svcd")
	if out, err := exec.CommandContext(ctx, "cp", "-a", dir, dir+"-nopushdown").CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("copy svcd's state: %v: %s", err, out)
	}
	var err error
	if st.svcd, st.url, err = st.startSvcd(dir, append(st.env, "SVC_PROMQL_PUSHDOWN=true")...); err != nil {
		return nil, "", err
	}
	return st.startSvcd(dir+"-nopushdown", append(st.env, "SVC_PROMQL_PUSHDOWN=false")...)
}

// get sends a GET with the admin key to the stack's svcd and reads the answer whole.
func (st *stack) get(ctx context.Context, path string) (int, []byte, error) {
	return st.getFrom(ctx, st.url, path)
}

// getFrom sends a GET with the admin key to the svcd at base.
func (st *stack) getFrom(ctx context.Context, base, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+st.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
