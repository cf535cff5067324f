package main

import "testing"

// TestEventStoreURLPicksTheAdapterByScheme: SVC_EVENTSTORE_URL's parsed scheme, in any
// case, decides PostgreSQL; everything else stays EventStoreDB's.
func TestEventStoreURLPicksTheAdapterByScheme(t *testing.T) {
	for raw, want := range map[string]bool{
		"postgres://svc@127.0.0.1:5432/svc":                   true,
		"postgresql://u:p@db.internal/events?sslmode=require": true,
		"POSTGRES://svc@127.0.0.1/svc":                        true,
		"esdb://localhost:2113?tls=false":                     false,
		"kurrentdb://localhost:2113":                          false,
		"esdb://host/?x=postgres://":                          false,
		"http://postgres:5432":                                false,
	} {
		if got := isPostgresURL(raw); got != want {
			t.Errorf("isPostgresURL(%q) = %v, want %v", raw, got, want)
		}
	}
}
