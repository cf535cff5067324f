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
			return s.model.Position(), nil
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
			return s.model.Position(), nil
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
