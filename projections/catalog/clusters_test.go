package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/eventstore/boltstore"
	"github.com/svc-data/svc/projections/catalog"
)

// twoNodes is two services on one store, standing for two nodes: each has its own read
// model, which lags the other's appends (no projector runs; CatchUp brings one up to
// date). The first bootstraps; the second has caught up with that.
func twoNodes(t *testing.T) ([]*catalog.Service, []*catalog.Projector, *catalog.Bootstrap) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "events.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var nodes []*catalog.Service
	var projs []*catalog.Projector
	for range 2 {
		m := catalog.NewModel()
		projs = append(projs, catalog.NewProjector(st, m, 0, nil))
		nodes = append(nodes, catalog.NewService(st, m, projs[len(projs)-1]))
	}
	b, err := nodes[0].EnsureBootstrap(context.Background(), catalog.BootstrapConfig{Organization: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := projs[1].CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	return nodes, projs, b
}

// Eight concurrent creates of one name on two nodes: exactly one wins.
func TestClusterNamesAreUniqueInTheOrganizationsStream(t *testing.T) {
	ctx := context.Background()
	nodes, _, b := twoNodes(t)
	for round := range 5 {
		name := fmt.Sprintf("c%d", round)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Go(func() {
				_, err := nodes[i%2].CreateCluster(ctx, b.Organization.ID, name)
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		ok, exists := 0, 0
		for err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, catalog.ErrExists):
				exists++
			default:
				t.Fatal(err)
			}
		}
		if ok != 1 || exists != 7 {
			t.Fatalf("round %d: %d creates of %q succeeded, %d conflicted", round, ok, name, exists)
		}
	}
	// Case-insensitively too, and a rename onto a taken name conflicts.
	if _, err := nodes[1].CreateCluster(ctx, b.Organization.ID, "C0"); !errors.Is(err, catalog.ErrExists) {
		t.Fatalf("create C0: %v", err)
	}
	c, err := nodes[1].CreateCluster(ctx, b.Organization.ID, "other")
	if err != nil {
		t.Fatal(err)
	}
	taken := "c1"
	if _, err := nodes[0].UpdateCluster(ctx, c.ID, catalog.ClusterUpdate{Name: &taken}); !errors.Is(err, catalog.ErrExists) {
		t.Fatalf("rename onto a taken name: %v", err)
	}
}

func TestClusterLifecycleTransitions(t *testing.T) {
	ctx := context.Background()
	svc, closeStore := open(t, filepath.Join(t.TempDir(), "events.db"))
	defer closeStore()
	b, err := svc.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.CreateCluster(ctx, b.Organization.ID, "c")
	if err != nil {
		t.Fatal(err)
	}
	id := c.ID
	phase := func(want string, canPause, canResume bool) {
		t.Helper()
		c, _ := svc.Model().Cluster(id)
		if c.PhaseName() != want || c.CanPause() != canPause || c.CanResume() != canResume {
			t.Fatalf("phase %s pause %v resume %v, want %s %v %v", c.PhaseName(), c.CanPause(), c.CanResume(), want, canPause, canResume)
		}
	}
	conflict := func(err error) {
		t.Helper()
		if !errors.Is(err, catalog.ErrConflict) {
			t.Fatalf("want a conflict, got %v", err)
		}
	}
	phase(catalog.PhaseProvisioning, false, false)
	_, err = svc.StopCluster(ctx, id, false)
	conflict(err)
	must := func(_ *catalog.Cluster, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(svc.ClusterFailed(ctx, id, "engine exited"))
	phase(catalog.PhaseFailed, false, true)
	if c, _ := svc.Model().Cluster(id); c.Message != "engine exited" {
		t.Fatalf("message %q", c.Message)
	}
	must(svc.ClusterStarted(ctx, id))
	phase(catalog.PhaseReady, true, false)
	must(svc.ResumeCluster(ctx, id)) // ready: nothing to do
	must(svc.StopCluster(ctx, id, false))
	phase(catalog.PhaseStopping, false, false)
	_, err = svc.ResumeCluster(ctx, id)
	conflict(err)
	must(svc.StopCluster(ctx, id, false)) // stopping already
	must(svc.ClusterStopped(ctx, id))
	phase(catalog.PhaseStopped, false, true)
	must(svc.StopCluster(ctx, id, false)) // stopped already
	must(svc.ResumeCluster(ctx, id))
	phase(catalog.PhaseResuming, false, false)
	_, err = svc.StopCluster(ctx, id, false)
	conflict(err)
	must(svc.ClusterStarted(ctx, id))
	idle := 30
	must(svc.UpdateCluster(ctx, id, catalog.ClusterUpdate{IdleTimeoutMinutes: &idle}))
	bad := 14
	if _, err := svc.UpdateCluster(ctx, id, catalog.ClusterUpdate{IdleTimeoutMinutes: &bad}); !errors.Is(err, catalog.ErrInvalid) {
		t.Fatalf("idle 14: %v", err)
	}
	must(svc.RequestClusterDelete(ctx, id))
	phase(catalog.PhaseDeleting, false, false)
	_, err = svc.ResumeCluster(ctx, id)
	conflict(err)
	if err := svc.ClusterDeleteDone(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, ok := svc.Model().Cluster(id); ok {
		t.Fatal("deleted cluster still in the model")
	}
	// The name is free again.
	if _, err := svc.CreateCluster(ctx, b.Organization.ID, "c"); err != nil {
		t.Fatal(err)
	}
}

// TestClusterNameRules: names are checked, unique within their organization only, and a
// rename frees the old name; renaming to the current name appends nothing.
func TestClusterNameRules(t *testing.T) {
	ctx := context.Background()
	svc, b := bootstrapped(t)
	org := b.Organization.ID
	var fe *catalog.FieldError
	for _, bad := range []string{"", "a b", "a/b", strings.Repeat("c", 65), uuid.NewString()} {
		if _, err := svc.CreateCluster(ctx, org, bad); !errors.As(err, &fe) || fe.Field != "name" {
			t.Errorf("cluster name %q: %v", bad, err)
		}
	}
	if _, err := svc.CreateCluster(ctx, uuid.New(), "c"); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("a cluster of a missing organization: %v", err)
	}
	other, err := svc.CreateOrganization(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateCluster(ctx, other.ID, b.Cluster.Name); err != nil {
		t.Errorf("the name of another organization's cluster: %v", err)
	}
	c, err := svc.CreateCluster(ctx, org, "c")
	if err != nil {
		t.Fatal(err)
	}
	name := "c"
	pos := svc.Model().Position()
	if got, err := svc.UpdateCluster(ctx, c.ID, catalog.ClusterUpdate{Name: &name}); err != nil || got.Name != "c" || svc.Model().Position() != pos {
		t.Errorf("renaming to the current name: %+v %v, position %d -> %d", got, err, pos, svc.Model().Position())
	}
	bad := "a b"
	if _, err := svc.UpdateCluster(ctx, c.ID, catalog.ClusterUpdate{Name: &bad}); !errors.As(err, &fe) || fe.Field != "name" {
		t.Errorf("renaming to an invalid name: %v", err)
	}
	name = "d"
	if got, err := svc.UpdateCluster(ctx, c.ID, catalog.ClusterUpdate{Name: &name}); err != nil || got.Name != "d" {
		t.Fatalf("rename: %+v %v", got, err)
	}
	if _, err := svc.CreateCluster(ctx, org, "c"); err != nil {
		t.Errorf("the name a rename freed: %v", err)
	}
	if _, err := svc.UpdateCluster(ctx, uuid.New(), catalog.ClusterUpdate{Name: &name}); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("renaming a missing cluster: %v", err)
	}
}

// A generation another node made is answered with the generation, not the lagging read
// model's table without it: the first batches of a new table's partitions race to make
// generation 1 on different nodes, and the loser's batch plan named generation 0 (which
// never exists), stalling its partition for good (found by TestNetworkPartition).
func TestCreateGenerationMadeByAnotherNode(t *testing.T) {
	ctx := context.Background()
	nodes, projs, b := twoNodes(t)
	tbl, err := nodes[0].CreateTable(ctx, catalog.NewTable{Cluster: b.Cluster.ID, Database: "default", Name: "events"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := projs[1].CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[0].CreateGeneration(ctx, tbl.ID, 1, "", "doc.i", "i"); err != nil {
		t.Fatal(err)
	}
	// Node 1 has not applied node 0's generation yet when it asks for the same one.
	got, err := nodes[1].CreateGeneration(ctx, tbl.ID, 1, "", "doc.i", "i")
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := got.Current(); !ok || g.N != 1 {
		t.Fatalf("generation 1 made by another node answered as %+v (ok %v), want generation 1", g, ok)
	}
}
