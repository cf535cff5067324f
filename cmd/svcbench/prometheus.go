package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/svc-data/svc/pipeline/promwrite"
	"github.com/svc-data/svc/query/promstore"
)

// benchPrometheus measures remote-write ingest: samples/s of remote write 1.0 requests
// through the edge until every sample is in prometheus_data, beside the engine's direct
// insert of the same samples into a prometheus_data table of the same layout, in large
// RowBinary batches (the engine's fastest input format for typed columns).
func benchPrometheus(ctx context.Context, st *stack, total, perRequest, workers, series int, pprofDir string) error {
	if _, _, err := st.post(ctx, "/v1/query", []byte(`{"sql":"SELECT 1"}`), nil); err != nil {
		return err
	}
	engineDB, err := st.engineDatabase(ctx)
	if err != nil {
		return err
	}
	if err := st.installApp(ctx, "prometheus"); err != nil {
		return err
	}
	// series series with points samples each, 15 s apart, cut into requests of about
	// perRequest samples the way Prometheus's queues cut them: several series per
	// request, a run of samples each.
	points := max(1, total/series)
	total = points * series
	t0 := time.Now().Add(-24 * time.Hour).UnixMilli()
	perSeries := max(1, min(points, perRequest/min(series, perRequest)))
	var bodies, plains [][]byte
	var bodyBytes int64
	var req prompb.WriteRequest
	n := 0
	flush := func() error {
		raw, err := req.Marshal()
		if err != nil {
			return err
		}
		plains = append(plains, raw)
		b := snappy.Encode(nil, raw)
		bodies = append(bodies, b)
		bodyBytes += int64(len(b))
		req, n = prompb.WriteRequest{}, 0
		return nil
	}
	for p := 0; p < points; p += perSeries {
		for s := range series {
			ts := prompb.TimeSeries{Labels: []prompb.Label{{Name: "__name__", Value: "bench_requests_total"},
				{Name: "instance", Value: fmt.Sprintf("10.0.%d.%d:9090", s/250, s%250)}, {Name: "job", Value: fmt.Sprintf("job%d", s%10)}}}
			for k := p; k < min(points, p+perSeries); k++ {
				ts.Samples = append(ts.Samples, prompb.Sample{Value: float64(k * s), Timestamp: t0 + int64(k)*15000})
			}
			req.Timeseries = append(req.Timeseries, ts)
			n += len(ts.Samples)
			if n >= perRequest {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if n > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	// The direct path's rows: the same samples in RowBinary, in batches of 100,000.
	var direct [][]byte
	var cur []byte
	rows := 0
	for _, plain := range plains {
		b, err := promwrite.DecodePlain(promwrite.V1, plain)
		if err != nil {
			return err
		}
		for _, s := range b.Sections {
			if s.Table == promstore.DataTable {
				cur = append(cur, s.Data...)
				rows += s.Rows
			}
		}
		if rows >= 100_000 {
			direct, cur, rows = append(direct, cur), nil, 0
		}
	}
	if rows > 0 {
		direct = append(direct, cur)
	}

	// Through the edge, workers posting every request (retrying until acknowledged),
	// until every sample is queryable.
	headers := map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "snappy",
		"X-Prometheus-Remote-Write-Version": "0.1.0"}
	run := func(n int, do func(j int) error) error {
		var next atomic.Int64
		var wg sync.WaitGroup
		var failure atomic.Value
		for range workers {
			wg.Go(func() {
				for {
					j := int(next.Add(1)) - 1
					if j >= n || ctx.Err() != nil {
						return
					}
					if err := do(j); err != nil {
						failure.Store(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if e, ok := failure.Load().(error); ok {
			return e
		}
		return ctx.Err()
	}
	profiled := st.profile(pprofDir, "prom-write")
	start := time.Now()
	err = run(len(bodies), func(j int) error {
		for attempt := 0; ; attempt++ {
			code, b, err := st.post(ctx, "/prometheus/api/v1/write", bodies[j], headers)
			if err == nil && code == 204 {
				return nil
			}
			if code >= 400 && code < 500 {
				return fmt.Errorf("remote write: %d %s", code, b)
			}
			if attempt > 100 {
				return fmt.Errorf("remote write: %d %s %v", code, b, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	if err != nil {
		return err
	}
	acked := time.Since(start)
	for {
		c, err := st.direct.QueryStrings(ctx, fmt.Sprintf("SELECT toString(count()) FROM `%s`.%s", engineDB, promstore.DataTable))
		if err == nil && len(c) == 1 && c[0] == fmt.Sprint(total) {
			break
		}
		if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("samples not queryable after 5 minutes (%v, %v)", c, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	edge := time.Since(start)
	<-profiled

	// Direct: the same samples straight into the engine.
	if err := st.direct.Exec(ctx, "CREATE DATABASE IF NOT EXISTS bench_prom"); err != nil {
		return err
	}
	for _, stmt := range promstore.DDL("bench_prom") {
		if err := st.direct.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	dstart := time.Now()
	err = run(len(direct), func(j int) error {
		return st.direct.InsertFormat(ctx, "bench_prom", promstore.DataTable, promwrite.DataColumns, "RowBinary", fmt.Sprintf("d-%d", j), direct[j])
	})
	if err != nil {
		return fmt.Errorf("direct insert: %w", err)
	}
	dt := time.Since(dstart)
	edgeRate, directRate := float64(total)/edge.Seconds(), float64(total)/dt.Seconds()
	fmt.Printf("prometheus remote write: %d samples (%d series × %d points), %d requests of about %d samples, %d concurrent\n",
		total, series, points, len(bodies), perRequest, workers)
	fmt.Println("edge = remote write 1.0 (snappy protobuf) → edge → Kafka (acks=all) → consumer → engine, until every sample is queryable;")
	fmt.Println("direct = the same samples inserted into prometheus_data straight into the same engine (RowBinary, 100,000 per insert); ratio = edge / direct")
	table([][]string{
		{"path", "samples/s", "MB/s (snappy bodies)", "requests/s", "samples/s acknowledged"},
		{"edge", fmt.Sprintf("%.0f", edgeRate), fmt.Sprintf("%.1f", mb(bodyBytes, edge)), fmt.Sprintf("%.0f", float64(len(bodies))/edge.Seconds()),
			fmt.Sprintf("%.0f", float64(total)/acked.Seconds())},
		{"direct", fmt.Sprintf("%.0f", directRate), "", fmt.Sprintf("%.0f inserts", float64(len(direct))/dt.Seconds()), ""},
		{"ratio", ratio(edgeRate, directRate), "", "", ""},
	})
	return nil
}
