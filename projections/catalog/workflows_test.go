package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/uuid"

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

// TestWorkflowUpdateRules: an update keeps the workflow's organization and creation time,
// may not take another workflow's name, and reaches only a workflow of its own cluster.
func TestWorkflowUpdateRules(t *testing.T) {
	ctx := context.Background()
	svc, b := bootstrapped(t)
	org, cl := b.Organization.ID, b.Cluster.ID
	save := func(w catalog.Workflow) (*catalog.Workflow, error) { return svc.SaveWorkflow(ctx, w) }
	a, err := save(catalog.Workflow{OrgID: org, ClusterID: cl, Name: "a", Database: "default", SQL: "SELECT 1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := save(catalog.Workflow{OrgID: org, ClusterID: cl, Name: "b", Database: "default", SQL: "SELECT 1"}); err != nil {
		t.Fatal(err)
	}
	up := *a
	up.Name = "b"
	if _, err := save(up); !errors.Is(err, catalog.ErrExists) {
		t.Errorf("renaming onto another workflow's name: %v", err)
	}
	up.Name, up.OrgID, up.SQL = "a", uuid.New(), "SELECT 2"
	got, err := save(up)
	if err != nil {
		t.Fatal(err)
	}
	if got.OrgID != org || !got.CreatedAt.Equal(a.CreatedAt) || got.Revision != 2 || got.SQL != "SELECT 2" {
		t.Errorf("updated: %+v", got)
	}
	other, err := svc.CreateCluster(ctx, org, "other")
	if err != nil {
		t.Fatal(err)
	}
	moved := *got
	moved.ClusterID = other.ID
	if _, err := save(moved); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("updating through another cluster: %v", err)
	}
	if err := svc.DeleteWorkflow(ctx, other.ID, a.ID); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("deleting through another cluster: %v", err)
	}
	missing := *got
	missing.ID = uuid.New()
	if _, err := save(missing); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("updating a missing workflow: %v", err)
	}
}
