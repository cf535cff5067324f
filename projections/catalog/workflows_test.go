package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/svc-data/svc/projections/catalog"
)

// TestWorkflowNamesAndLimitHoldUnderConcurrency: concurrent creates on one cluster's
// stream: one name wins once, and the cluster never holds more than 100 workflows.
func TestWorkflowNamesAndLimitHoldUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	svc, closeStore := open(t, filepath.Join(t.TempDir(), "events.db"))
	defer closeStore()
	b, err := svc.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	wf := func(name string) catalog.Workflow {
		return catalog.Workflow{OrgID: b.Organization.ID, ClusterID: b.Cluster.ID, Name: name, Database: "default", SQL: "SELECT 1"}
	}
	run := func(n int, name func(int) string) (ok, exists, limit int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, err := svc.SaveWorkflow(ctx, wf(name(i)))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case errors.Is(err, catalog.ErrExists):
					exists++
				case errors.Is(err, catalog.ErrLimit):
					limit++
				default:
					t.Errorf("create %s: %v", name(i), err)
				}
			})
		}
		wg.Wait()
		return ok, exists, limit
	}
	if ok, exists, _ := run(8, func(int) string { return "same" }); ok != 1 || exists != 7 {
		t.Fatalf("8 creates of one name: %d created, %d refused as existing", ok, exists)
	}
	if ok, _, limit := run(120, func(i int) string { return fmt.Sprintf("w%03d", i) }); ok != 99 || limit != 21 {
		t.Fatalf("120 creates beside 1 workflow: %d created, %d refused at the limit", ok, limit)
	}
	if n := len(svc.Model().Workflows(b.Cluster.ID)); n != catalog.MaxWorkflowsPerCluster {
		t.Fatalf("the cluster holds %d workflows", n)
	}
	// Revisions count changes; a deleted workflow frees its name and a place.
	w := svc.Model().Workflows(b.Cluster.ID)[0]
	next := *w
	next.SQL = "SELECT 2"
	got, err := svc.SaveWorkflow(ctx, next)
	if err != nil || got.Revision != 2 || !got.CreatedAt.Equal(w.CreatedAt) {
		t.Fatalf("update: %+v %v", got, err)
	}
	if err := svc.DeleteWorkflow(ctx, b.Cluster.ID, w.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteWorkflow(ctx, b.Cluster.ID, w.ID); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := svc.SaveWorkflow(ctx, wf(w.Name)); err != nil {
		t.Fatalf("create in the freed place: %v", err)
	}
}
