package catalog

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// Saved searches of the log-search app.
const (
	EvSavedSearchCreated = "saved_search.created"
	EvSavedSearchUpdated = "saved_search.updated"
	EvSavedSearchDeleted = "saved_search.deleted"
)

func searchStream(id uuid.UUID) string { return "saved_search-" + id.String() }

// Visibilities of saved searches.
const (
	VisibilityPrivate = "private"
	VisibilityShared  = "shared"
)

// SavedSearch is a saved log search: its text, time window, visualization and who may
// see it. Created and updated events carry the complete record.
type SavedSearch struct {
	ID            uuid.UUID `json:"id"`
	OrgID         uuid.UUID `json:"org_id"`
	ClusterID     uuid.UUID `json:"cluster_id"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	SPL           string    `json:"spl"`
	Earliest      string    `json:"earliest"`
	Latest        string    `json:"latest"`
	Database      string    `json:"database"`
	Visualization string    `json:"visualization"` // table or chart
	SpanMinutes   *int      `json:"span_minutes"`
	KeepResults   bool      `json:"keep_results"`
	Visibility    string    `json:"visibility"`
	CreatedBy     uuid.UUID `json:"created_by"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	Revision      int       `json:"revision"`
}

type searchModel struct {
	searches map[uuid.UUID]*SavedSearch
}

func (m *Model) applySearch(e es.Event) (bool, error) {
	switch e.Type {
	case EvSavedSearchCreated, EvSavedSearchUpdated:
		v, err := decode[SavedSearch](e)
		if err != nil {
			return true, err
		}
		if m.searches == nil {
			m.searches = map[uuid.UUID]*SavedSearch{}
		}
		m.searches[v.ID] = &v
	case EvSavedSearchDeleted:
		v, err := decode[struct {
			ID uuid.UUID `json:"id"`
		}](e)
		if err != nil {
			return true, err
		}
		delete(m.searches, v.ID)
	default:
		return false, nil
	}
	return true, nil
}

// SavedSearch returns a saved search by id.
func (m *Model) SavedSearch(id uuid.UUID) (*SavedSearch, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.searches[id]
	return s, ok
}

// SavedSearches returns a cluster's saved searches of an organization, most recently
// updated first.
func (m *Model) SavedSearches(org, cluster uuid.UUID) []*SavedSearch {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*SavedSearch
	for _, s := range m.searches {
		if s.OrgID == org && s.ClusterID == cluster {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].UpdatedAt.Equal(out[j].UpdatedAt) {
			return out[i].UpdatedAt.After(out[j].UpdatedAt)
		}
		return out[i].ID.String() < out[j].ID.String()
	})
	return out
}

// SaveSearch creates a search (ID zero) or replaces one at its current revision.
func (s *Service) SaveSearch(ctx context.Context, ss SavedSearch) (*SavedSearch, error) {
	now := s.now()
	if ss.ID == uuid.Nil {
		ss.ID, ss.CreatedAt, ss.UpdatedAt, ss.Revision = uuid.New(), now, now, 1
		err := s.retry(ctx, func() (uint64, error) {
			return s.append(ctx, searchStream(ss.ID), es.NoStream(), newEvent(EvSavedSearchCreated, ss))
		})
		if err != nil {
			return nil, err
		}
		out, _ := s.model.SavedSearch(ss.ID)
		return out, nil
	}
	err := s.retry(ctx, func() (uint64, error) {
		events, err := es.Collect(ctx, s.store.ReadStream(ctx, searchStream(ss.ID), 0))
		if err != nil {
			return 0, err
		}
		if len(events) == 0 || events[len(events)-1].Type == EvSavedSearchDeleted {
			return 0, fmt.Errorf("%w: saved search %s", ErrNotFound, ss.ID)
		}
		cur, err := decode[SavedSearch](events[len(events)-1])
		if err != nil {
			return 0, err
		}
		ss.CreatedAt, ss.CreatedBy, ss.OrgID, ss.ClusterID = cur.CreatedAt, cur.CreatedBy, cur.OrgID, cur.ClusterID
		ss.UpdatedAt, ss.Revision = now, cur.Revision+1
		return s.append(ctx, searchStream(ss.ID), es.Exact(events[len(events)-1].Version), newEvent(EvSavedSearchUpdated, ss))
	})
	if err != nil {
		return nil, err
	}
	out, _ := s.model.SavedSearch(ss.ID)
	return out, nil
}

// DeleteSearch deletes a saved search.
func (s *Service) DeleteSearch(ctx context.Context, id uuid.UUID) error {
	return s.retry(ctx, func() (uint64, error) {
		events, err := es.Collect(ctx, s.store.ReadStream(ctx, searchStream(id), 0))
		if err != nil {
			return 0, err
		}
		if len(events) == 0 || events[len(events)-1].Type == EvSavedSearchDeleted {
			return 0, fmt.Errorf("%w: saved search %s", ErrNotFound, id)
		}
		return s.append(ctx, searchStream(id), es.Exact(events[len(events)-1].Version),
			newEvent(EvSavedSearchDeleted, map[string]uuid.UUID{"id": id}))
	})
}
