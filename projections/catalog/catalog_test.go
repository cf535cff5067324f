package catalog_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/svc-data/svc/infra/eventstore/boltstore"
	"github.com/svc-data/svc/projections/catalog"
)

func open(t *testing.T, path string) (*catalog.Service, func()) {
	t.Helper()
	st, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m := catalog.NewModel()
	p := catalog.NewProjector(st, m, 0, nil)
	if _, err := p.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	return catalog.NewService(st, m, p), func() { st.Close() }
}

func TestBootstrapSurvivesRestartAndRebuildsIdentically(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	svc, closeStore := open(t, path)
	b, err := svc.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme", Token: "svck_fixed_token_for_test"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Token != "svck_fixed_token_for_test" {
		t.Fatalf("bootstrap token %q", b.Token)
	}
	if _, err := svc.CreateTable(ctx, catalog.NewTable{Cluster: b.Cluster.ID, Database: "default", Name: "events", SortingKey: "user.id"}); err != nil {
		t.Fatal(err)
	}
	tbl, _ := svc.Model().Table(b.Cluster.ID, "default", "events")
	if _, err := svc.CreateGeneration(ctx, tbl.ID, 1, "user.id", "doc.user.id.:Int64", ""); err != nil {
		t.Fatal(err)
	}
	before := snapshot(svc.Model(), b)
	closeStore()

	svc2, close2 := open(t, path)
	defer close2()
	b2, err := svc2.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme", Token: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if b2.Token != "" || b2.Organization.ID != b.Organization.ID {
		t.Fatalf("second bootstrap created something: %+v", b2)
	}
	if after := snapshot(svc2.Model(), b); !reflect.DeepEqual(before, after) {
		t.Fatalf("rebuilt model differs:\n%+v\n%+v", before, after)
	}
	k, ok := svc2.Model().APIKeyByHash(catalog.HashToken("svck_fixed_token_for_test"))
	if !ok || k.Permission != catalog.PermAdmin {
		t.Fatalf("admin key not found after restart")
	}
}

type snap struct {
	Orgs   []catalog.Organization
	DBs    []catalog.Database
	Tables []catalog.Table
	Keys   []catalog.APIKey
}

func snapshot(m *catalog.Model, b *catalog.Bootstrap) snap {
	var s snap
	for _, o := range m.Organizations() {
		s.Orgs = append(s.Orgs, *o)
	}
	for _, d := range m.Databases(b.Cluster.ID) {
		s.DBs = append(s.DBs, *d)
		for _, t := range m.Tables(b.Cluster.ID, d.Name) {
			s.Tables = append(s.Tables, *t)
		}
	}
	for _, k := range m.APIKeys(b.Cluster.ID) {
		s.Keys = append(s.Keys, *k)
	}
	return s
}

func TestConcurrentCommandsOnOneAggregateLoseNothing(t *testing.T) {
	ctx := context.Background()
	svc, closeStore := open(t, filepath.Join(t.TempDir(), "events.db"))
	defer closeStore()
	b, err := svc.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			if _, err := svc.CreateTable(ctx, catalog.NewTable{Cluster: b.Cluster.ID, Database: "default", Name: n}); err != nil {
				t.Errorf("create %s: %v", n, err)
			}
		})
	}
	// The same name created twice at once: exactly one wins.
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			_, err := svc.CreateTable(ctx, catalog.NewTable{Cluster: b.Cluster.ID, Database: "default", Name: "dup"})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	var ok, exists int
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
	if ok != 1 || exists != 1 {
		t.Fatalf("duplicate create: %d succeeded, %d conflicted", ok, exists)
	}
	if got := len(svc.Model().Tables(b.Cluster.ID, "default")); got != len(names)+1 {
		t.Fatalf("%d tables, want %d", got, len(names)+1)
	}
}
