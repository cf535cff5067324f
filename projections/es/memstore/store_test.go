package memstore_test

import (
	"testing"

	"github.com/svc-data/svc/projections/es"
	"github.com/svc-data/svc/projections/es/estest"
	"github.com/svc-data/svc/projections/es/memstore"
)

func TestConformance(t *testing.T) {
	shared := memstore.New()
	open := func(t *testing.T) es.Store { return shared.Reopen() }
	estest.Run(t, estest.Factory{Open: open, Reopen: open})
}
