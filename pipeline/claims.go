package pipeline

import (
	"github.com/google/uuid"

	"github.com/svc-data/svc/query/target"
)

// Homes answers what the consumer checks a record's headers against: the catalog, never
// the record. A record's headers are written by the edge, but anyone who can write to the
// topic could write others; the consumer takes none of them on trust.
type Homes interface {
	// TableHome returns the home of a table; ok is false when there is no such table.
	TableHome(id uuid.UUID) (h target.Home, ok bool)
	// DatabaseHome returns the home of an engine database; ok is false when the catalog
	// has no such database.
	DatabaseHome(engine string) (h target.Home, ok bool)
}

// claim is what the catalog says of what a record's headers claim.
type claim int

const (
	claimHeld    claim = iota // the claimed table (or database) is on this cluster, of the claimed organization
	claimMissing              // no such table or database: deleted since, dropped and counted as such
	claimForged               // the catalog contradicts the headers: dropped and counted as refused
)

// checkClaim is the one rule for a record's headers: the table it names (for a
// Prometheus record, the engine database, whose table id is derived from it) exists on
// the consumer's cluster, in the database and organization the record names. Records
// whose table header is not a table id are left to groupByTable, which skips them.
func checkClaim(homes Homes, cluster uuid.UUID, r *Record) claim {
	org := r.Headers[HeaderOrg]
	db := r.Headers[HeaderDatabase]
	var h target.Home
	var ok bool
	if r.Headers[HeaderFormat] == FormatPrometheus {
		if r.Headers[HeaderTable] != PrometheusTableID(db).String() {
			return claimForged
		}
		if h, ok = homes.DatabaseHome(db); !ok {
			// Not a database of any organization (the engine's own, or one deleted
			// since): never created into, never written.
			return claimMissing
		}
	} else {
		id, err := uuid.Parse(r.Headers[HeaderTable])
		if err != nil {
			return claimHeld
		}
		if h, ok = homes.TableHome(id); !ok {
			return claimMissing
		}
	}
	if h.Cluster != cluster || h.Database != db || h.Org.String() != org {
		return claimForged
	}
	return claimHeld
}
