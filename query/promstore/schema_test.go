package promstore_test

import (
	"context"
	"crypto/md5"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query/promstore"
	"github.com/svc-data/svc/query/sqlquote"
)

// TestSchemaOnEngine creates the tables on the real engine, twice (idempotent), and checks
// that the engine's IDExpression over a tags row equals SeriesID of the same labels.
func TestSchemaOnEngine(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := context.Background()
	if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS prom_schema"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, stmt := range promstore.DDL("prom_schema") {
			if err := conn.Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
	var full string
	if err := conn.QueryRow(ctx, "SELECT engine_full FROM system.tables WHERE database = 'prom_schema' AND name = "+sqlquote.String(promstore.DataTable)).Scan(&full); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("index_granularity = %d", promstore.DataGranularity); !strings.Contains(full, want) {
		t.Errorf("%s: %s, want %s", promstore.DataTable, full, want)
	}
	// MetricHash is the engine's cityHash64 of the name, at every length CityHash
	// treats apart (0-16, 17-32, 33-64 bytes, longer).
	for _, name := range []string{"", "up", "http_requests_total", "node_cpu_seconds_total_by_mode", "ünï\xfe" + strings.Repeat("x", 40), strings.Repeat("long_metric_name_", 20)} {
		var got uint64
		if err := conn.QueryRow(ctx, "SELECT cityHash64("+sqlquote.String(name)+")").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := promstore.MetricHash([]byte(name)); got != want {
			t.Errorf("MetricHash(%q) = %d, the engine's cityHash64 %d", name, want, got)
		}
	}
	for _, labels := range [][]promstore.Label{
		{{"__name__", "up"}},
		{{"job", "api"}, {"__name__", "http_requests_total"}, {"instance", "10.0.0.1:9090"}},
		{{"__name__", "x"}, {"le", "+Inf"}, {"path", "ünï\xfe"}},
	} {
		want := promstore.SeriesID(append([]promstore.Label(nil), labels...))
		name, tags := "", "map("
		for _, l := range labels {
			if l.Name == promstore.MetricNameLabel {
				name = l.Value
				continue
			}
			if tags != "map(" {
				tags += ", "
			}
			tags += sqlquote.String(l.Name) + ", " + sqlquote.String(l.Value)
		}
		tags += ")"
		q := fmt.Sprintf("SELECT %s FROM (SELECT %s AS metric_name, CAST(%s, 'Map(LowCardinality(String), String)') AS tags)",
			promstore.IDExpression, sqlquote.String(name), tags)
		var got uuid.UUID
		if err := conn.QueryRow(ctx, q).Scan(&got); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got != want {
			t.Errorf("labels %v: engine id %s, SeriesID %s", labels, got, want)
		}
	}
}

// TestSeriesIDIsTheMD5OfTheSortedLabels: SeriesID against the definition, written out
// with hash.Hash, on label sets of every size around its stack buffer.
func TestSeriesIDIsTheMD5OfTheSortedLabels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		var ls []promstore.Label
		for i, p := range r.Perm(n) {
			ls = append(ls, promstore.Label{Name: fmt.Sprintf("l%02d", p), Value: strings.Repeat("v", i*3)})
		}
		sorted := slices.Clone(ls)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
		h := md5.New()
		for _, l := range sorted {
			h.Write([]byte(l.Name + "\xff" + l.Value + "\xff"))
		}
		var want uuid.UUID
		copy(want[:], h.Sum(nil))
		if got := promstore.SeriesID(ls); got != want {
			t.Fatalf("%d labels: %v, want %v", n, got, want)
		}
	}
}

// TestSchemaKeepingOnEngine: with a retention the timed tables get their TTL, printed by
// the engine exactly as TTL writes it (the app's read-back compares the two), and old
// samples are deleted by it.
func TestSchemaKeepingOnEngine(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := context.Background()
	if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS prom_keep"); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range promstore.DDLKeeping("prom_keep", 30*86400) {
		if err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for _, table := range append([]string{promstore.MetricsTable}, promstore.RetainedTables...) {
		rows, err := conn.Query(ctx, "SELECT engine_full FROM system.tables WHERE database = 'prom_keep' AND name = "+sqlquote.String(table))
		if err != nil {
			t.Fatal(err)
		}
		var full string
		for rows.Next() {
			if err := rows.Scan(&full); err != nil {
				t.Fatal(err)
			}
		}
		rows.Close()
		want := promstore.TableTTL(table, 30*86400)
		if has := strings.Contains(full, " TTL "+want+" SETTINGS "); has != (want != "") || want == "" && strings.Contains(full, " TTL ") {
			t.Errorf("%s: %s", table, full)
		}
	}
	// A series goes with its last samples: the series table deletes by max_time.
	if err := conn.Exec(ctx, "INSERT INTO prom_keep.prometheus_tags VALUES (generateUUIDv4(), 'old', map(), now64(3) - INTERVAL 41 DAY, now64(3) - INTERVAL 40 DAY), "+
		"(generateUUIDv4(), 'live', map(), now64(3) - INTERVAL 40 DAY, now64(3))"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(ctx, "OPTIMIZE TABLE prom_keep.prometheus_tags FINAL"); err != nil {
		t.Fatal(err)
	}
	var names []string
	rows, err := conn.Query(ctx, "SELECT metric_name FROM prom_keep.prometheus_tags ORDER BY metric_name")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	if !slices.Equal(names, []string{"live"}) {
		t.Fatalf("series kept after the TTL: %v, want only the live one", names)
	}
	if err := conn.Exec(ctx, "INSERT INTO prom_keep.prometheus_data (id, timestamp, value) VALUES (generateUUIDv4(), now64(3) - INTERVAL 40 DAY, 1), (generateUUIDv4(), now64(3), 2)"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(ctx, "OPTIMIZE TABLE prom_keep.prometheus_data FINAL"); err != nil {
		t.Fatal(err)
	}
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM prom_keep.prometheus_data").Scan(&n); err != nil || n != 1 {
		t.Fatalf("samples kept: %d %v, want 1", n, err)
	}
}
