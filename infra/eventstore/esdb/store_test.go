package esdb_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/svc-data/svc/infra/eventstore/esdb"
	"github.com/svc-data/svc/projections/es"
	"github.com/svc-data/svc/projections/es/estest"
)

// TestConformance runs the port's suite against the EventStoreDB named by EVENTSTORE_URL,
// for example esdb://localhost:2113?tls=false (README.md says how to start one). Unset
// skips; set but unreachable fails.
func TestConformance(t *testing.T) {
	url := os.Getenv("EVENTSTORE_URL")
	if url == "" {
		t.Skip("EVENTSTORE_URL is not set; see infra/eventstore/esdb/README.md to run this against an EventStoreDB")
	}
	open := func(t *testing.T) es.Store {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := esdb.Open(ctx, url)
		if err != nil {
			t.Fatalf("EVENTSTORE_URL is set but: %v", err)
		}
		return s
	}
	// Reopen is a second connection to the same server: what the suite checks is that an
	// append is read back through a client that did not write it.
	estest.Run(t, estest.Factory{Open: open, Reopen: open})
}
