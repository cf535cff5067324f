package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/svc-data/svc/infra/eventstore/boltstore"
	"github.com/svc-data/svc/projections/es"
	"github.com/svc-data/svc/projections/es/estest"
)

func TestConformance(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.db")
	open := func(t *testing.T) es.Store {
		s, err := boltstore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	estest.Run(t, estest.Factory{Open: open, Reopen: open})
}
