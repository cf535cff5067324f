package catalog

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// Retention events, on the database's stream. The retention text is canonical
// (query/tables.ParseRetention validates it); empty keeps rows forever.
const (
	EvTableRetentionChanged    = "table.retention_changed"
	EvDatabaseRetentionChanged = "database.retention_changed"
)

// TableRetentionChanged records a table's new retention; the caller changes the TTL of
// its generations in the engine.
type TableRetentionChanged struct {
	TableID   uuid.UUID `json:"table_id"`
	Database  string    `json:"database"`
	Name      string    `json:"name"`
	Retention string    `json:"retention"`
}

// DatabaseRetentionChanged records the retention tables created in a database from now
// on get when their creation names none.
type DatabaseRetentionChanged struct {
	ClusterID uuid.UUID `json:"cluster_id"`
	Name      string    `json:"name"`
	Retention string    `json:"retention"`
}

func (m *Model) applyRetention(e es.Event) (bool, error) {
	switch e.Type {
	case EvTableRetentionChanged:
		v, err := decode[TableRetentionChanged](e)
		if err != nil {
			return true, err
		}
		m.replaceTable(v.TableID, func(t *Table) { t.Retention = v.Retention })
		return true, nil
	case EvDatabaseRetentionChanged:
		v, err := decode[DatabaseRetentionChanged](e)
		if err != nil {
			return true, err
		}
		k := dbKey{v.ClusterID, v.Name}
		if d := m.databases[k]; d != nil {
			c := *d
			c.Retention = v.Retention
			m.databases[k] = &c
		}
		return true, nil
	}
	return false, nil
}

// ChangeRetention records a table's retention (canonical text, validated by the caller).
// The same retention again writes nothing.
func (s *Service) ChangeRetention(ctx context.Context, cluster uuid.UUID, database, name, retention string) (*Table, error) {
	var id uuid.UUID
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadDatabase(ctx, cluster, database)
		if err != nil {
			return 0, err
		}
		t := st.tables[name]
		if !st.live || t == nil {
			return 0, fmt.Errorf("%w: table %q in database %q", ErrNotFound, name, database)
		}
		id = t.id
		if t.retention == retention {
			return st.position, nil
		}
		return s.append(ctx, databaseStream(cluster, database), st.expected(), newEvent(EvTableRetentionChanged,
			TableRetentionChanged{TableID: t.id, Database: database, Name: name, Retention: retention}))
	})
	if err != nil {
		return nil, err
	}
	t, _ := s.model.TableByID(id)
	return t, nil
}

// SetDatabaseRetention records the default retention of tables created in a database
// from now on (canonical text, validated by the caller); existing tables keep theirs.
func (s *Service) SetDatabaseRetention(ctx context.Context, cluster uuid.UUID, name, retention string) (*Database, error) {
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadDatabase(ctx, cluster, name)
		if err != nil {
			return 0, err
		}
		if !st.live {
			return 0, fmt.Errorf("%w: database %q", ErrNotFound, name)
		}
		if st.retention == retention {
			return st.position, nil
		}
		return s.append(ctx, databaseStream(cluster, name), st.expected(), newEvent(EvDatabaseRetentionChanged,
			DatabaseRetentionChanged{ClusterID: cluster, Name: name, Retention: retention}))
	})
	if err != nil {
		return nil, err
	}
	d, _ := s.model.Database(cluster, name)
	return d, nil
}

// EvAppRetentionChanged records an app's retention setting on the cluster's apps stream:
// the retention of the app's tables in every database of the cluster, existing ones
// (changed by the caller) and those the app creates later.
const EvAppRetentionChanged = "app.retention_changed"

// AppRetentionChanged is an app's new retention setting ("" for none).
type AppRetentionChanged struct {
	ClusterID uuid.UUID `json:"cluster_id"`
	App       string    `json:"app"`
	Retention string    `json:"retention"`
}

// AppRetention is app's retention setting in cluster, "" for none.
func (m *Model) AppRetention(cluster uuid.UUID, app string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.retention[cluster][app]
}

// SetAppRetention records app's retention setting in cluster (canonical text, validated
// by the caller), appended at the apps stream's version; the same setting again writes
// nothing.
func (s *Service) SetAppRetention(ctx context.Context, cluster uuid.UUID, app, retention string) error {
	if _, ok := AppByID(app); !ok {
		return fmt.Errorf("%w: app %q", ErrNotFound, app)
	}
	if _, ok := s.model.Cluster(cluster); !ok {
		return fmt.Errorf("%w: cluster %s", ErrNotFound, cluster)
	}
	return s.retry(ctx, func() (uint64, error) {
		events, err := es.Collect(ctx, s.store.ReadStream(ctx, appsStream(cluster), 0))
		if err != nil {
			return 0, err
		}
		var st appModel
		for _, e := range events {
			if _, err := st.applyTo(e); err != nil {
				return 0, err
			}
		}
		if st.retention[cluster][app] == retention {
			return 0, nil
		}
		exp := es.NoStream()
		if len(events) > 0 {
			exp = es.Exact(events[len(events)-1].Version)
		}
		return s.append(ctx, appsStream(cluster), exp, newEvent(EvAppRetentionChanged,
			AppRetentionChanged{ClusterID: cluster, App: app, Retention: retention}))
	})
}
