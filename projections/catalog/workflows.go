package catalog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// Workflow definitions: one stream per cluster, so that names stay unique and the
// per-cluster limit holds under concurrent commands (every command appends at the
// stream's exact version).
const (
	EvWorkflowCreated = "workflow.created"
	EvWorkflowUpdated = "workflow.updated"
	EvWorkflowDeleted = "workflow.deleted"
)

// MaxWorkflowsPerCluster is the spec's limit, paused and manual-only workflows included.
const MaxWorkflowsPerCluster = 100

// ErrLimit means a per-cluster limit was reached.
var ErrLimit = errors.New("limit reached")

func workflowStream(cluster uuid.UUID) string { return "workflows-" + cluster.String() }

// Sink types.
const (
	SinkHTTP  = "http"
	SinkTable = "table"
)

// Workflow is a saved workflow definition. Created and updated events carry the whole
// record; sink secrets are sealed by the workflows domain before they get here.
type Workflow struct {
	ID              uuid.UUID      `json:"id"`
	OrgID           uuid.UUID      `json:"org_id"`
	ClusterID       uuid.UUID      `json:"cluster_id"`
	Name            string         `json:"name"`
	Description     *string        `json:"description"`
	Database        string         `json:"database"`
	SQL             string         `json:"sql"`
	IntervalSeconds *int           `json:"interval_seconds"`
	Enabled         bool           `json:"enabled"`
	Sinks           []WorkflowSink `json:"sinks"`
	Revision        int            `json:"revision"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
}

// WorkflowSink is one destination of a workflow's rows.
type WorkflowSink struct {
	ID   uuid.UUID `json:"id"`
	Type string    `json:"type"`
	// HTTP: the URL and the headers (a JSON object), each sealed (AES-GCM).
	SealedURL     string   `json:"sealed_url,omitempty"`
	SealedHeaders string   `json:"sealed_headers,omitempty"`
	HeaderNames   []string `json:"header_names,omitempty"`
	// Table.
	Database string `json:"database,omitempty"`
	Table    string `json:"table,omitempty"`
}

type workflowDeleted struct {
	ID        uuid.UUID `json:"id"`
	ClusterID uuid.UUID `json:"cluster_id"`
}

type workflowModel struct {
	workflows map[uuid.UUID]*Workflow
}

func (m *Model) applyWorkflow(e es.Event) (bool, error) {
	switch e.Type {
	case EvWorkflowCreated, EvWorkflowUpdated:
		v, err := decode[Workflow](e)
		if err != nil {
			return true, err
		}
		if m.workflows == nil {
			m.workflows = map[uuid.UUID]*Workflow{}
		}
		m.workflows[v.ID] = &v
	case EvWorkflowDeleted:
		v, err := decode[workflowDeleted](e)
		if err != nil {
			return true, err
		}
		delete(m.workflows, v.ID)
	default:
		return false, nil
	}
	return true, nil
}

// Workflow returns a workflow by id.
func (m *Model) Workflow(id uuid.UUID) (*Workflow, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	w, ok := m.workflows[id]
	return w, ok
}

// Workflows returns a cluster's workflows by name; cluster zero returns every cluster's.
func (m *Model) Workflows(cluster uuid.UUID) []*Workflow {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*Workflow
	for _, w := range m.workflows {
		if cluster == uuid.Nil || w.ClusterID == cluster {
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID.String() < out[j].ID.String()
	})
	return out
}

// foldWorkflows is a cluster's workflows as its stream says, and the stream's version.
func (s *Service) foldWorkflows(ctx context.Context, cluster uuid.UUID) (map[uuid.UUID]Workflow, es.Expected, error) {
	events, err := es.Collect(ctx, s.store.ReadStream(ctx, workflowStream(cluster), 0))
	if err != nil {
		return nil, es.Any(), err
	}
	out := map[uuid.UUID]Workflow{}
	for _, e := range events {
		switch e.Type {
		case EvWorkflowCreated, EvWorkflowUpdated:
			w, err := decode[Workflow](e)
			if err != nil {
				return nil, es.Any(), err
			}
			out[w.ID] = w
		case EvWorkflowDeleted:
			d, err := decode[workflowDeleted](e)
			if err != nil {
				return nil, es.Any(), err
			}
			delete(out, d.ID)
		}
	}
	if len(events) == 0 {
		return out, es.NoStream(), nil
	}
	return out, es.Exact(events[len(events)-1].Version), nil
}

// workflowAttempts bounds retries of a workflow command that lost a race on its
// cluster's stream; many writers of one cluster are expected (a script creating 100
// workflows in parallel), so they back off with jitter rather than retrying in step.
const workflowAttempts = 50

func (s *Service) retryJitter(ctx context.Context, cmd func() (uint64, error)) error {
	for i := range workflowAttempts {
		pos, err := cmd()
		if errors.Is(err, es.ErrConcurrency) {
			d := time.Duration(rand.Int64N(int64(time.Millisecond) * int64(min(i+1, 20)*5)))
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
			continue
		}
		if err != nil {
			return err
		}
		return s.proj.WaitFor(ctx, pos)
	}
	return fmt.Errorf("command lost %d races in a row; retry later: %w", workflowAttempts, es.ErrConcurrency)
}

// SaveWorkflow creates w (ID zero) or replaces the saved workflow of that id. Names are
// unique within the cluster and a cluster holds at most MaxWorkflowsPerCluster.
func (s *Service) SaveWorkflow(ctx context.Context, w Workflow) (*Workflow, error) {
	create := w.ID == uuid.Nil
	if create {
		w.ID = uuid.New()
	}
	err := s.retryJitter(ctx, func() (uint64, error) {
		cur, exp, err := s.foldWorkflows(ctx, w.ClusterID)
		if err != nil {
			return 0, err
		}
		now := s.now()
		typ := EvWorkflowUpdated
		if create {
			if len(cur) >= MaxWorkflowsPerCluster {
				return 0, fmt.Errorf("%w: a cluster holds at most %d workflows, paused ones included; delete one first",
					ErrLimit, MaxWorkflowsPerCluster)
			}
			w.CreatedAt, w.UpdatedAt, w.Revision, typ = now, now, 1, EvWorkflowCreated
		} else {
			old, ok := cur[w.ID]
			if !ok {
				return 0, fmt.Errorf("%w: workflow %s", ErrNotFound, w.ID)
			}
			w.CreatedAt, w.OrgID, w.UpdatedAt, w.Revision = old.CreatedAt, old.OrgID, now, old.Revision+1
		}
		for _, o := range cur {
			if o.ID != w.ID && o.Name == w.Name {
				return 0, fmt.Errorf("%w: workflow %q", ErrExists, w.Name)
			}
		}
		return s.append(ctx, workflowStream(w.ClusterID), exp, newEvent(typ, w))
	})
	if err != nil {
		return nil, err
	}
	out, _ := s.model.Workflow(w.ID)
	return out, nil
}

// DeleteWorkflow deletes a workflow of cluster.
func (s *Service) DeleteWorkflow(ctx context.Context, cluster, id uuid.UUID) error {
	return s.retryJitter(ctx, func() (uint64, error) {
		cur, exp, err := s.foldWorkflows(ctx, cluster)
		if err != nil {
			return 0, err
		}
		if _, ok := cur[id]; !ok {
			return 0, fmt.Errorf("%w: workflow %s", ErrNotFound, id)
		}
		return s.append(ctx, workflowStream(cluster), exp, newEvent(EvWorkflowDeleted, workflowDeleted{ID: id, ClusterID: cluster}))
	})
}
