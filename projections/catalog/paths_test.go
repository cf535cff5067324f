package catalog_test

import (
	"context"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/svc-data/svc/projections/catalog"
)

func TestPathSchemaIsTheUnionOfRecordedPathsAndSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	svc, closeStore := open(t, path)
	b, err := svc.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := svc.CreateTable(ctx, catalog.NewTable{Cluster: b.Cluster.ID, Database: "default", Name: "events"})
	if err != nil {
		t.Fatal(err)
	}
	// Nodes recording at once never lose a type.
	var wg sync.WaitGroup
	for _, seen := range []map[string][]string{
		{"bytes": {"Int64"}, "user.id": {"Int64"}},
		{"bytes": {"Float64"}},
		{"tags": {"Array(Nullable(String))"}, "bytes": {"Int64"}},
	} {
		wg.Go(func() {
			if err := svc.RecordPaths(ctx, tbl.ID, seen); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	want := map[string][]string{"bytes": {"Float64", "Int64"}, "user.id": {"Int64"}, "tags": {"Array(Nullable(String))"}}
	if got := svc.Model().Paths(tbl.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("schema %v, want %v", got, want)
	}
	// Nothing new: nothing appended.
	pos := svc.Model().Position()
	if err := svc.RecordPaths(ctx, tbl.ID, map[string][]string{"bytes": {"Int64"}}); err != nil {
		t.Fatal(err)
	}
	if svc.Model().Position() != pos {
		t.Fatal("recording known paths appended an event")
	}
	closeStore()
	svc2, close2 := open(t, path)
	defer close2()
	if got := svc2.Model().Paths(tbl.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("rebuilt schema %v, want %v", got, want)
	}
}
