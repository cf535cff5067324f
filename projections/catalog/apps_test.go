package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/eventstore/boltstore"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/es"
)

func countEvents(t *testing.T, _ *catalog.Service, path string) int {
	t.Helper()
	st, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	evs, err := es.Collect(context.Background(), st.ReadAll(context.Background(), 0))
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

func TestAppsAreIdempotentEventsPerCluster(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	svc, closeStore := open(t, path)
	b, err := svc.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme", Token: "svck_apps_test"})
	if err != nil {
		t.Fatal(err)
	}
	m := svc.Model()
	for _, a := range catalog.Apps {
		if m.AppInstalled(b.Cluster.ID, a.ID) {
			t.Fatalf("a new cluster has %s installed", a.ID)
		}
	}
	if err := svc.SetApp(ctx, b.Cluster.ID, "nope", true); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("unknown app: %v", err)
	}
	if err := svc.SetApp(ctx, b.Cluster.ID, catalog.AppOpenTelemetry, false); err != nil {
		t.Fatal(err)
	}
	closeStore()
	n0 := countEvents(t, svc, path)
	svc, closeStore = open(t, path)
	m = svc.Model()
	for range 3 {
		if err := svc.SetApp(ctx, b.Cluster.ID, catalog.AppOpenTelemetry, true); err != nil {
			t.Fatal(err)
		}
	}
	if !m.AppInstalled(b.Cluster.ID, catalog.AppOpenTelemetry) || m.AppInstalled(b.Cluster.ID, catalog.AppLogsearch) {
		t.Fatal("install did not apply")
	}
	for range 2 {
		if err := svc.SetApp(ctx, b.Cluster.ID, catalog.AppOpenTelemetry, false); err != nil {
			t.Fatal(err)
		}
	}
	if m.AppInstalled(b.Cluster.ID, catalog.AppOpenTelemetry) {
		t.Fatal("uninstall did not apply")
	}
	closeStore()
	if n := countEvents(t, svc, path); n != n0+2 {
		t.Fatalf("%d events written by 3 installs and 2 uninstalls, want 2 (repeats write nothing)", n-n0)
	}
}

// TestAdoptAppsUpgradesOldDataDirectories writes the events of a data directory made
// before apps existed, then starts on it: the cluster that used log search gets the
// logsearch app, the other nothing, and adoption happens once.
func TestAdoptAppsUpgradesOldDataDirectories(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	st, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	org, used, unused := uuid.New(), uuid.New(), uuid.New()
	put := func(stream, typ string, v any) {
		data, _ := json.Marshal(v)
		if _, err := st.Append(ctx, stream, es.Any(), es.NewEvent{ID: uuid.New(), Type: typ, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	put("organization-"+org.String(), catalog.EvOrganizationCreated, catalog.OrganizationCreated{ID: org, Name: "old", CreatedAt: now})
	for _, c := range []uuid.UUID{used, unused} {
		put("cluster-"+c.String(), catalog.EvClusterCreated, map[string]any{"id": c, "org_id": org, "name": c.String()[:8], "created_at": now})
	}
	put("saved_search-x", catalog.EvSavedSearchCreated, catalog.SavedSearch{ID: uuid.New(), OrgID: org, ClusterID: used, Name: "s", SPL: "x"})
	st.Close()

	svc, closeStore := open(t, path)
	if err := svc.AdoptApps(ctx); err != nil {
		t.Fatal(err)
	}
	m := svc.Model()
	if !m.AppInstalled(used, catalog.AppLogsearch) || m.AppInstalled(used, catalog.AppOpenTelemetry) || m.AppInstalled(unused, catalog.AppLogsearch) {
		t.Fatal("adoption: logsearch belongs to the cluster with saved searches only")
	}
	if err := svc.SetApp(ctx, used, catalog.AppLogsearch, false); err != nil {
		t.Fatal(err)
	}
	closeStore()
	n := countEvents(t, svc, path)
	svc, closeStore = open(t, path)
	if err := svc.AdoptApps(ctx); err != nil {
		t.Fatal(err)
	}
	if svc.Model().AppInstalled(used, catalog.AppLogsearch) {
		t.Fatal("a second start adopted again over the uninstall")
	}
	closeStore()
	if countEvents(t, svc, path) != n {
		t.Fatal("a second AdoptApps wrote events")
	}
}
