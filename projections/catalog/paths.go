package catalog

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// EvPathsSeen records leaf paths of a table's documents and engine types newly seen in
// them. The schema of a table is the union of its events, so appends never conflict and
// need no expected version: every node that sees a new type appends it, and a repeat is
// harmless.
const EvPathsSeen = "table.paths_seen"

// pathsStream is the stream of a table's path schema, one per table so that ingest on
// many partitions never contends with the table's own stream.
func pathsStream(table uuid.UUID) string { return "table_paths-" + table.String() }

// PathsSeen is the event data of EvPathsSeen: path -> engine types (as the engine's
// distinctJSONPathsAndTypes names them).
type PathsSeen struct {
	TableID uuid.UUID           `json:"table_id"`
	Paths   map[string][]string `json:"paths"`
}

// pathsModel keeps the path schema of every table.
type pathsModel struct {
	paths map[uuid.UUID]map[string][]string // table id -> path -> sorted types
}

func (m *Model) applyPaths(e es.Event) (bool, error) {
	if e.Type != EvPathsSeen {
		return false, nil
	}
	v, err := decode[PathsSeen](e)
	if err != nil {
		return true, err
	}
	if m.paths == nil {
		m.paths = map[uuid.UUID]map[string][]string{}
	}
	// Copy on write: readers hold the previous map without the lock.
	next := maps.Clone(m.paths[v.TableID])
	if next == nil {
		next = map[string][]string{}
	}
	for p, types := range v.Paths {
		merged := slices.Clone(next[p])
		for _, t := range types {
			if !slices.Contains(merged, t) {
				merged = append(merged, t)
			}
		}
		sort.Strings(merged)
		next[p] = merged
	}
	m.paths[v.TableID] = next
	return true, nil
}

// Paths returns the path schema of a table: each leaf path seen in its documents with
// the engine types seen there. The map must not be changed.
func (m *Model) Paths(table uuid.UUID) map[string][]string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.paths[table]
}

// RecordPaths adds paths and types to a table's schema. Only pairs the model does not
// hold yet are appended; when none are new it writes nothing.
func (s *Service) RecordPaths(ctx context.Context, table uuid.UUID, seen map[string][]string) error {
	if _, ok := s.model.TableByID(table); !ok {
		return fmt.Errorf("%w: table %s", ErrNotFound, table)
	}
	known := s.model.Paths(table)
	fresh := map[string][]string{}
	for p, types := range seen {
		for _, t := range types {
			if !slices.Contains(known[p], t) && !slices.Contains(fresh[p], t) {
				fresh[p] = append(fresh[p], t)
			}
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	return s.retry(ctx, func() (uint64, error) {
		return s.append(ctx, pathsStream(table), es.Any(), newEvent(EvPathsSeen, PathsSeen{TableID: table, Paths: fresh}))
	})
}
