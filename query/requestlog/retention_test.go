package requestlog_test

import (
	"context"
	"strings"
	"testing"

	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query/requestlog"
)

// TestRequestLogRetention: the log's table keeps entries the configured days
// (SVC_REQUEST_LOG_DAYS); a table made by an earlier version (INTERVAL 30 DAY) is left as
// it is at the default and changed when the setting differs.
func TestRequestLogRetention(t *testing.T) {
	url, _ := chtest.Engine(t)
	e := chtest.Client(t, url)
	ctx := context.Background()
	ttl := func() string {
		t.Helper()
		full, err := e.QueryStrings(ctx, "SELECT engine_full FROM system.tables WHERE database = '_svc' AND name = 'request_log'")
		if err != nil || len(full) != 1 {
			t.Fatal(full, err)
		}
		return full[0]
	}
	mutations := func() string {
		t.Helper()
		n, err := e.QueryStrings(ctx, "SELECT toString(count()) FROM system.mutations WHERE database = '_svc' AND table = 'request_log'")
		if err != nil || len(n) != 1 {
			t.Fatal(n, err)
		}
		return n[0]
	}
	if err := e.Exec(ctx, "CREATE DATABASE IF NOT EXISTS _svc"); err != nil {
		t.Fatal(err)
	}
	// As the previous version made it.
	if err := e.Exec(ctx, "CREATE TABLE _svc.request_log (id String, created_at DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY created_at TTL toDateTime(created_at) + INTERVAL 30 DAY"); err != nil {
		t.Fatal(err)
	}
	if err := requestlog.Schema(ctx, e, 30); err != nil {
		t.Fatal(err)
	}
	if got := ttl(); !strings.Contains(got, "TTL toDateTime(created_at) + toIntervalDay(30) ") || mutations() != "0" {
		t.Fatalf("at the default: %s, %s mutations", got, mutations())
	}
	if err := requestlog.Schema(ctx, e, 7); err != nil {
		t.Fatal(err)
	}
	if got := ttl(); !strings.Contains(got, "TTL toDateTime(created_at) + toIntervalDay(7) ") {
		t.Fatalf("7 days: %s", got)
	}
}
