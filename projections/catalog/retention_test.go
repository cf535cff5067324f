package catalog_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/svc-data/svc/projections/catalog"
)

// TestRetentionEventsRebuild: the retention of a table, a database's default and an
// app's setting are events, read back identically after a restart; the same value again
// writes nothing; a database made again under the same name starts with no default.
func TestRetentionEventsRebuild(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	svc, closeStore := open(t, path)
	b, err := svc.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme", Token: "svck_fixed_token_for_test"})
	if err != nil {
		t.Fatal(err)
	}
	cl := b.Cluster.ID
	if _, err := svc.CreateTable(ctx, catalog.NewTable{Cluster: cl, Database: "default", Name: "events", Retention: "30d"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ChangeRetention(ctx, cl, "default", "events", "7d"); err != nil {
		t.Fatal(err)
	}
	pos := svc.Model().Position()
	if _, err := svc.ChangeRetention(ctx, cl, "default", "events", "7d"); err != nil || svc.Model().Position() != pos {
		t.Fatalf("the same retention again wrote an event (%v)", err)
	}
	if _, err := svc.SetDatabaseRetention(ctx, cl, "default", "90d"); err != nil {
		t.Fatal(err)
	}
	if err := svc.SetAppRetention(ctx, cl, catalog.AppPrometheus, "14d"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateDatabase(ctx, b.Organization.ID, cl, "scratch", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetDatabaseRetention(ctx, cl, "scratch", "1d"); err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteDatabase(ctx, cl, "scratch"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateDatabase(ctx, b.Organization.ID, cl, "scratch", nil); err != nil {
		t.Fatal(err)
	}
	if d, err := svc.SetDatabaseRetention(ctx, cl, "scratch", "1d"); err != nil || d.Retention != "1d" {
		t.Fatalf("a recreated database's default: %+v %v", d, err)
	}
	closeStore()

	svc, closeStore = open(t, path)
	defer closeStore()
	tb, _ := svc.Model().Table(cl, "default", "events")
	d, _ := svc.Model().Database(cl, "default")
	if tb.Retention != "7d" || d.Retention != "90d" || svc.Model().AppRetention(cl, catalog.AppPrometheus) != "14d" {
		t.Fatalf("rebuilt: table %q, database %q, app %q", tb.Retention, d.Retention, svc.Model().AppRetention(cl, catalog.AppPrometheus))
	}
}
