package catalog_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/svc-data/svc/projections/catalog"
)

// TestResizeCluster: a resize is decided on the size it was made on (a second node
// deciding from the same size conflicts), only while ready, only inside the bounds; the
// model and a reopened store agree on the size.
func TestResizeCluster(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	svc, closeStore := open(t, path)
	b, err := svc.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	one, two, four := catalog.ClusterSize{CPUCores: 1, MemoryGiB: 4}, catalog.ClusterSize{CPUCores: 2, MemoryGiB: 8}, catalog.ClusterSize{CPUCores: 4, MemoryGiB: 16}
	c, err := svc.CreateClusterWith(ctx, catalog.ClusterCreated{OrgID: b.Organization.ID, Name: "c", Replicas: 1, Size: one, MinSize: one, MaxSize: two})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.ResizeCluster(ctx, c.ID, one, two, "load"); !errors.Is(err, catalog.ErrConflict) {
		t.Fatalf("resize while provisioning: %v", err)
	}
	if _, err := svc.ClusterStarted(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.ResizeCluster(ctx, c.ID, one, four, "load"); err == nil {
		t.Fatal("resized beyond max_size")
	}
	if err := svc.ResizeCluster(ctx, c.ID, one, two, "load"); err != nil {
		t.Fatal(err)
	}
	if err := svc.ResizeCluster(ctx, c.ID, one, two, "load"); !errors.Is(err, catalog.ErrConflict) {
		t.Fatalf("a second resize from the old size: %v", err)
	}
	if got, _ := svc.Model().Cluster(c.ID); got.Size != two {
		t.Fatalf("size %+v", got.Size)
	}
	closeStore()
	svc, closeStore = open(t, path)
	defer closeStore()
	if got, _ := svc.Model().Cluster(c.ID); got.Size != two {
		t.Fatalf("size after reopening %+v", got.Size)
	}
}
