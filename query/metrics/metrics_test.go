package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query/metrics"
)

// Against the real engine: observations come back whole, filtered, in range; a dense
// range keeps every n-th observation; the baseline is the latest one before the range.
func TestStoreAndReadObservations(t *testing.T) {
	url, _ := chtest.Engine(t)
	eng := chtest.Client(t, url)
	ctx := context.Background()
	if err := metrics.Schema(ctx, eng); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second).Add(123456789) // inside the 30-day TTL
	var pts []metrics.Point
	for i := range 25 {
		for _, table := range []string{"a", "b"} {
			pts = append(pts, metrics.Point{Name: metrics.TableRows, Unit: "{row}", Kind: metrics.Gauge, Time: t0.Add(time.Duration(i) * time.Second),
				Attrs: map[string]string{"database": "default", "table": table}, Int: int64(1_000_000_000_000 + i)})
		}
		pts = append(pts, metrics.Point{Name: metrics.CPUAllocated, Unit: "{cpu}", Kind: metrics.Gauge, Time: t0.Add(time.Duration(i) * time.Second),
			Double: 1.5, IsDouble: true})
	}
	if err := metrics.Insert(ctx, eng, pts); err != nil {
		t.Fatal(err)
	}
	q := metrics.Query{Names: []string{metrics.TableRows}, Filters: map[string]string{"table": "a"},
		From: t0.Add(5 * time.Second), To: t0.Add(15 * time.Second)}
	got, err := metrics.Read(ctx, eng, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || !got[0].Time.Equal(t0.Add(5*time.Second)) || got[0].Int != 1_000_000_000_005 || got[9].Int != 1_000_000_000_014 || got[0].Attrs["table"] != "a" {
		t.Fatalf("range [5s, 15s) of table a: %d points, first %+v", len(got), got[0])
	}
	q.Baseline = true
	got, _ = metrics.Read(ctx, eng, q)
	if len(got) != 11 || got[0].Int != 1_000_000_000_004 {
		t.Fatalf("with baseline: %d points, first %+v", len(got), got)
	}
	// Dense: 25 observations, at most 10 kept: every 3rd, each a real observation.
	got, _ = metrics.Read(ctx, eng, metrics.Query{Names: []string{metrics.CPUAllocated}, From: t0, To: t0.Add(time.Hour), Limit: 10})
	if len(got) != 9 || !got[1].Time.Equal(t0.Add(3*time.Second)) || !got[1].IsDouble || got[1].Double != 1.5 {
		t.Fatalf("sampled: %d points %+v", len(got), got)
	}
	if got, _ := metrics.Read(ctx, eng, metrics.Query{Names: []string{metrics.ConsumerLag}, From: t0, To: t0.Add(time.Hour)}); len(got) != 0 {
		t.Fatalf("missing observations must be absent, got %+v", got)
	}
}
