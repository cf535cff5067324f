package tables

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/sqlquote"
)

// PlanInspector tells which table generations committed batch plans still name: a
// replay of such a plan inserts into that generation, so it must keep its rows and its
// deduplication memory until the plan is done.
type PlanInspector interface {
	PendingGenerations(ctx context.Context, cluster uuid.UUID) (map[uuid.UUID][]int, error)
}

// ResortSettle is how long a new generation exists before older ones are re-sorted into
// its key, so that every node's consumers plan into it.
const ResortSettle = 10 * time.Second

// RunResorter re-sorts, every interval, the older generations of the cluster's tables
// into their table's current key, until ctx ends.
func (m *Manager) RunResorter(ctx context.Context, cluster uuid.UUID, plans PlanInspector, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := m.ResortOnce(ctx, cluster, plans); err != nil && ctx.Err() == nil {
			log.Warn("background re-sort failed; will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ResortOnce re-sorts every generation that is due. Each is copied into a staging table
// with the current generation's key and swapped in with EXCHANGE TABLES, which is
// atomic: reads through the read view see the old or the new copy, never both, and
// ingest into the current generation goes on meanwhile.
func (m *Manager) ResortOnce(ctx context.Context, cluster uuid.UUID, plans PlanInspector) error {
	var pending map[uuid.UUID][]int
	for _, d := range m.cat.Model().Databases(cluster) {
		for _, t := range m.cat.Model().Tables(cluster, d.Name) {
			cur, ok := t.Current()
			if !ok || time.Since(cur.CreatedAt) < ResortSettle {
				continue
			}
			for _, g := range t.Generations[:len(t.Generations)-1] {
				if g.PhysicalKey == cur.PhysicalKey {
					continue
				}
				if pending == nil {
					var err error
					if pending, err = plans.PendingGenerations(ctx, cluster); err != nil {
						return fmt.Errorf("read pending batch plans: %w", err)
					}
				}
				if slices.Contains(pending[t.ID], g.N) {
					continue
				}
				if err := m.resort(ctx, t, g, cur.PhysicalKey); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (m *Manager) resort(ctx context.Context, t *catalog.Table, g catalog.Generation, key string) error {
	e, err := m.engines.Engine(t.ClusterID)
	if err != nil {
		return err
	}
	db := sqlquote.Ident(t.Engine)
	gen := db + "." + sqlquote.Ident(catalog.GenerationTable(t.Name, g.N))
	// The staging name does not match the read view's pattern, so its rows are never
	// read twice.
	staging := db + "." + sqlquote.Ident(t.Name+"__s"+strconv.Itoa(g.N))
	settings, err := m.generationSettings(t)
	if err != nil {
		return err
	}
	// On S3 the copy gets the generation's next UUID, which the catalog derives once the
	// re-sort is recorded. When an earlier attempt swapped but did not record, the
	// generation already has it: only the record is missing.
	next := m.uuidClause(t, g.N, g.Resorts+1)
	if next != "" {
		want := catalog.GenerationUUID(t.ID, g.N, g.Resorts+1).String()
		have, err := e.QueryStrings(ctx, fmt.Sprintf("SELECT toString(uuid) FROM system.tables WHERE database = %s AND name = %s",
			sqlquote.String(t.Engine), sqlquote.String(catalog.GenerationTable(t.Name, g.N))))
		if err != nil {
			return err
		}
		if len(have) == 1 && have[0] == want {
			if err := e.Exec(ctx, "DROP TABLE IF EXISTS "+staging+" SYNC"); err != nil {
				return err
			}
			return m.cat.ResortedGeneration(ctx, t.ID, g.N, key)
		}
	}
	steps := []string{
		"DROP TABLE IF EXISTS " + staging + " SYNC",
		fmt.Sprintf("CREATE TABLE %s%s (doc %s) ENGINE = MergeTree ORDER BY (%s)%s SETTINGS %s", staging, next, t.ColumnType, key, ttlClause(t), settings),
		fmt.Sprintf("INSERT INTO %s SELECT doc FROM %s SETTINGS max_execution_time = 0", staging, gen),
	}
	for _, s := range steps {
		if err := e.Exec(ctx, s); err != nil {
			return fmt.Errorf("re-sort %s generation %d: %w", t.Name, g.N, err)
		}
	}
	counts, err := e.QueryStrings(ctx, fmt.Sprintf("SELECT toString((SELECT count() FROM %s) = (SELECT count() FROM %s))", gen, staging))
	if err != nil || len(counts) != 1 || counts[0] != "1" {
		_ = e.Exec(ctx, "DROP TABLE IF EXISTS "+staging+" SYNC")
		return fmt.Errorf("re-sort %s generation %d: the copy does not hold every row (%v); left as it was", t.Name, g.N, err)
	}
	if err := e.Exec(ctx, "EXCHANGE TABLES "+gen+" AND "+staging); err != nil {
		return fmt.Errorf("re-sort %s generation %d: swap: %w", t.Name, g.N, err)
	}
	if err := e.Exec(ctx, "DROP TABLE IF EXISTS "+staging+" SYNC"); err != nil {
		return err
	}
	// The copy has the retention of when it was made; one changed since is applied now.
	if now, ok := m.cat.Model().TableByID(t.ID); ok && now.Retention != t.Retention {
		if err := m.applyTTL(ctx, e, now, g.N); err != nil {
			return err
		}
	}
	return m.cat.ResortedGeneration(ctx, t.ID, g.N, key)
}
