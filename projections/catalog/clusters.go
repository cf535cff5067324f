package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// Cluster phases. A cluster's phase is control-plane state (events in the cluster's
// stream); every node reconciles its own engine and consumers toward it.
const (
	// PhaseProvisioning: created; the engine, schema, topics, consumer and `default`
	// database are being brought up.
	PhaseProvisioning = "provisioning"
	// PhaseReady: the engine serves queries and the consumer lands rows.
	PhaseReady = "ready"
	// PhaseStopping: a stop was requested; consumers drain, then the engine stops.
	PhaseStopping = "stopping"
	// PhaseStopped: no engine and no consumer run; ingestion is still accepted into
	// Kafka and lands on resume.
	PhaseStopped = "stopped"
	// PhaseResuming: a resume was requested (or a query woke an idle cluster).
	PhaseResuming = "resuming"
	// PhaseDeleting: a delete was requested; engines stop and data and topics are removed.
	PhaseDeleting = "deleting"
	// PhaseFailed: bringing the cluster up failed; Message says why. Nodes keep retrying
	// with backoff, and a resume retries at once.
	PhaseFailed = "failed"
)

// Cluster lifecycle event types.
const (
	EvClusterPhaseChanged       = "cluster.phase_changed"
	EvClusterRenamed            = "cluster.renamed"
	EvClusterIdleTimeoutChanged = "cluster.idle_timeout_changed"
	EvClusterDeleted            = "cluster.deleted"
	// EvClusterUsed records that a node saw the cluster in use (queries, rows landed) up
	// to At, on a stream of its own (clusterUseStream) so it never races a lifecycle
	// decision made at the cluster stream's version.
	EvClusterUsed = "cluster.used"
	// EvClusterNameReleased frees a deleted cluster's name in its organization's stream.
	EvClusterNameReleased = "organization.cluster_name_released"
)

// ClusterPhaseChanged records a lifecycle transition of a cluster.
type ClusterPhaseChanged struct {
	ID      uuid.UUID `json:"id"`
	Phase   string    `json:"phase"`
	Message string    `json:"message,omitempty"`
	// Idle is set when the idle timeout stopped the cluster, so a query may wake it.
	Idle bool      `json:"idle,omitempty"`
	At   time.Time `json:"at"`
}

// ClusterUsed records a use of a cluster seen on one node: the idle timeout counts use on
// every node, not only the one deciding (Cluster.LastUsedAt).
type ClusterUsed struct {
	ID uuid.UUID `json:"id"`
	At time.Time `json:"at"`
}

func clusterUseStream(id uuid.UUID) string { return "cluster-use-" + id.String() }

// RecordClusterUse records that this node saw cluster id in use up to at. Nodes call it
// at most every quarter of the idle timeout while the cluster is used, so another node
// deciding idleness sees the use within that (DESIGN.md, Cluster lifecycle).
func (s *Service) RecordClusterUse(ctx context.Context, id uuid.UUID, at time.Time) error {
	_, err := s.append(ctx, clusterUseStream(id), es.Any(), newEvent(EvClusterUsed, ClusterUsed{ID: id, At: at.UTC()}))
	return err
}

// ClusterRenamed records a new name; the name was claimed first in the organization's stream.
type ClusterRenamed struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// ClusterIdleTimeoutChanged records a new idle timeout in minutes (0 disables).
type ClusterIdleTimeoutChanged struct {
	ID      uuid.UUID `json:"id"`
	Minutes int       `json:"minutes"`
}

// ClusterDeleted records that a cluster's engines, data and topics are gone.
type ClusterDeleted struct {
	ID uuid.UUID `json:"id"`
}

// ClusterNameReleased frees the name a deleted cluster held.
type ClusterNameReleased struct {
	OrgID     uuid.UUID `json:"org_id"`
	ClusterID uuid.UUID `json:"cluster_id"`
}

// CanPause reports whether a stop may be requested now.
func (c *Cluster) CanPause() bool { return c.phase() == PhaseReady }

// CanResume reports whether a resume may be requested now.
func (c *Cluster) CanResume() bool { return c.phase() == PhaseStopped || c.phase() == PhaseFailed }

// Running reports whether nodes should run the cluster's engine and consumer.
func (c *Cluster) Running() bool {
	switch c.phase() {
	case PhaseProvisioning, PhaseReady, PhaseResuming, PhaseFailed:
		return true
	}
	return false
}

func (c *Cluster) phase() string {
	if c.Phase == "" {
		return PhaseProvisioning
	}
	return c.Phase
}

// PhaseName is the cluster's phase, provisioning for a cluster without lifecycle events.
func (c *Cluster) PhaseName() string { return c.phase() }

// applyCluster folds cluster lifecycle events; it reports whether it knew the type.
func (m *Model) applyCluster(e es.Event) (bool, error) {
	replace := func(id uuid.UUID, change func(*Cluster)) {
		if old := m.clusters[id]; old != nil {
			c := *old
			change(&c)
			m.clusters[id] = &c
		}
	}
	switch e.Type {
	case EvClusterPhaseChanged:
		v, err := decode[ClusterPhaseChanged](e)
		if err != nil {
			return true, err
		}
		replace(v.ID, func(c *Cluster) { c.Phase, c.Message, c.IdleStopped, c.PhaseAt = v.Phase, v.Message, v.Idle, v.At })
	case EvClusterUsed:
		v, err := decode[ClusterUsed](e)
		if err != nil {
			return true, err
		}
		replace(v.ID, func(c *Cluster) {
			if v.At.After(c.LastUsedAt) {
				c.LastUsedAt = v.At
			}
		})
	case EvClusterRenamed:
		v, err := decode[ClusterRenamed](e)
		if err != nil {
			return true, err
		}
		replace(v.ID, func(c *Cluster) { c.Name = v.Name })
	case EvClusterIdleTimeoutChanged:
		v, err := decode[ClusterIdleTimeoutChanged](e)
		if err != nil {
			return true, err
		}
		replace(v.ID, func(c *Cluster) { c.IdleTimeoutMinutes = v.Minutes })
	case EvClusterDeleted:
		v, err := decode[ClusterDeleted](e)
		if err != nil {
			return true, err
		}
		delete(m.clusters, v.ID)
	case EvClusterNameReleased:
	default:
		return false, nil
	}
	return true, nil
}

// orgClusterNames is the organization's stream as far as cluster names go: its exact
// version and the name each cluster holds. Names are decided here, never on the read
// model, which may lag another node's append.
type orgClusterNames struct {
	version uint64
	names   map[uuid.UUID]string
}

func (s *Service) loadClusterNames(ctx context.Context, org uuid.UUID) (*orgClusterNames, error) {
	st := &orgClusterNames{names: map[uuid.UUID]string{}}
	live := false
	it := s.store.ReadStream(ctx, orgStream(org), 0)
	defer it.Close()
	for it.Next(ctx) {
		e := it.Event()
		st.version = e.Version
		switch e.Type {
		case EvOrganizationCreated:
			live = true
		case EvOrganizationDeleted:
			live = false
		case EvClusterNamed:
			v, err := decode[ClusterNamed](e)
			if err != nil {
				return nil, err
			}
			st.names[v.ClusterID] = v.Name
		case EvClusterNameReleased:
			v, err := decode[ClusterNameReleased](e)
			if err != nil {
				return nil, err
			}
			delete(st.names, v.ClusterID)
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	if !live {
		return nil, fmt.Errorf("%w: organization %s", ErrNotFound, org)
	}
	return st, nil
}

// holder returns the cluster holding name (case-insensitively), if any.
func (st *orgClusterNames) holder(name string) (uuid.UUID, bool) {
	for id, n := range st.names {
		if strings.EqualFold(n, name) {
			return id, true
		}
	}
	return uuid.Nil, false
}

func validClusterName(name string) error {
	if name == "" || len(name) > 64 {
		return invalid("name", "cluster name must be 1 to 64 characters")
	}
	if err := ValidateOrganizationName(name); err != nil {
		return invalid("name", "cluster name %q may contain only letters, digits, '.', '_' and '-'", name)
	}
	return nil
}

// clusterState is the cluster aggregate as its stream says.
type clusterState struct {
	version uint64
	exists  bool
	deleted bool
	org     uuid.UUID
	name    string
	phase   string
	idle    bool
}

func (s *Service) loadCluster(ctx context.Context, id uuid.UUID) (*clusterState, error) {
	st := &clusterState{phase: PhaseProvisioning}
	it := s.store.ReadStream(ctx, clusterStream(id), 0)
	defer it.Close()
	for it.Next(ctx) {
		e := it.Event()
		st.version, st.exists = e.Version, true
		switch e.Type {
		case EvClusterCreated:
			v, err := decode[ClusterCreated](e)
			if err != nil {
				return nil, err
			}
			st.org, st.name = v.OrgID, v.Name
		case EvClusterPhaseChanged:
			v, err := decode[ClusterPhaseChanged](e)
			if err != nil {
				return nil, err
			}
			st.phase, st.idle = v.Phase, v.Idle
		case EvClusterRenamed:
			v, err := decode[ClusterRenamed](e)
			if err != nil {
				return nil, err
			}
			st.name = v.Name
		case EvClusterDeleted:
			st.deleted = true
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	if !st.exists || st.deleted {
		return nil, fmt.Errorf("%w: cluster %s", ErrNotFound, id)
	}
	return st, nil
}

// transition moves cluster id to phase `to` when its phase is one of from; in phase `to`
// already it writes nothing; in any other phase it answers ErrConflict.
func (s *Service) transition(ctx context.Context, id uuid.UUID, to string, from []string, message string, idle bool) (*Cluster, error) {
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadCluster(ctx, id)
		if err != nil {
			return 0, err
		}
		if st.phase == to {
			return 0, nil
		}
		if !slices.Contains(from, st.phase) {
			return 0, fmt.Errorf("%w: cluster %q is %s; it cannot become %s from there", ErrConflict, st.name, st.phase, to)
		}
		return s.append(ctx, clusterStream(id), es.Exact(st.version), newEvent(EvClusterPhaseChanged,
			ClusterPhaseChanged{ID: id, Phase: to, Message: message, Idle: idle, At: s.now()}))
	})
	if err != nil {
		return nil, err
	}
	c, ok := s.model.Cluster(id)
	if !ok {
		return nil, fmt.Errorf("%w: cluster %s", ErrNotFound, id)
	}
	return c, nil
}

// StopCluster requests a stop of a ready cluster (idle: the idle timeout asked).
func (s *Service) StopCluster(ctx context.Context, id uuid.UUID, idle bool) (*Cluster, error) {
	if c, ok := s.model.Cluster(id); ok && c.phase() == PhaseStopped {
		return c, nil
	}
	return s.transition(ctx, id, PhaseStopping, []string{PhaseReady}, "", idle)
}

// ResumeCluster requests a resume of a stopped (or failed) cluster; a cluster that is
// stopping, provisioning or deleting answers ErrConflict.
func (s *Service) ResumeCluster(ctx context.Context, id uuid.UUID) (*Cluster, error) {
	if c, ok := s.model.Cluster(id); ok && c.phase() == PhaseReady {
		return c, nil
	}
	return s.transition(ctx, id, PhaseResuming, []string{PhaseStopped, PhaseFailed}, "", false)
}

// RequestClusterDelete marks a cluster deleting; nodes then stop it and remove its data.
func (s *Service) RequestClusterDelete(ctx context.Context, id uuid.UUID) (*Cluster, error) {
	return s.transition(ctx, id, PhaseDeleting, []string{PhaseProvisioning, PhaseReady, PhaseStopping, PhaseStopped,
		PhaseResuming, PhaseFailed}, "", false)
}

// ClusterStarted records that a node brought the cluster up.
func (s *Service) ClusterStarted(ctx context.Context, id uuid.UUID) (*Cluster, error) {
	return s.transition(ctx, id, PhaseReady, []string{PhaseProvisioning, PhaseResuming, PhaseFailed}, "", false)
}

// ClusterFailed records that bringing the cluster up failed, with why.
func (s *Service) ClusterFailed(ctx context.Context, id uuid.UUID, message string) (*Cluster, error) {
	return s.transition(ctx, id, PhaseFailed, []string{PhaseProvisioning, PhaseResuming}, message, false)
}

// ClusterStopped records that a stopping cluster's engine and consumers stopped.
func (s *Service) ClusterStopped(ctx context.Context, id uuid.UUID) (*Cluster, error) {
	idle := false
	if st, err := s.loadCluster(ctx, id); err == nil {
		idle = st.idle
	}
	return s.transition(ctx, id, PhaseStopped, []string{PhaseStopping}, "", idle)
}

// ClusterDeleteDone records that a deleting cluster's engines, data and topics are gone,
// and frees its name.
func (s *Service) ClusterDeleteDone(ctx context.Context, id uuid.UUID) error {
	var org uuid.UUID
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadCluster(ctx, id)
		if err != nil {
			return 0, err
		}
		if st.phase != PhaseDeleting {
			return 0, fmt.Errorf("%w: cluster %q is %s, not deleting", ErrConflict, st.name, st.phase)
		}
		org = st.org
		return s.append(ctx, clusterStream(id), es.Exact(st.version), newEvent(EvClusterDeleted, ClusterDeleted{ID: id}))
	})
	if err != nil {
		return err
	}
	return s.retry(ctx, func() (uint64, error) {
		names, err := s.loadClusterNames(ctx, org)
		if err != nil {
			return 0, err
		}
		if _, held := names.names[id]; !held {
			return 0, nil
		}
		return s.append(ctx, orgStream(org), es.Exact(names.version), newEvent(EvClusterNameReleased, ClusterNameReleased{OrgID: org, ClusterID: id}))
	})
}

// The idle timeout rule: 0 (never idle) or MinIdleTimeout to MaxIdleTimeout minutes. It
// is checked here for the API's create and update and for svcd's default
// (SVC_CLUSTER_IDLE_TIMEOUT); it lives with the aggregate, the one package all three
// import.
const (
	MinIdleTimeout = 15
	MaxIdleTimeout = 43200
)

// CheckIdleTimeout checks an idle timeout in minutes against the rule; the error is a
// *FieldError on idle_timeout_minutes.
func CheckIdleTimeout(minutes int) error {
	if minutes != 0 && (minutes < MinIdleTimeout || minutes > MaxIdleTimeout) {
		return invalid("idle_timeout_minutes", "idle_timeout_minutes must be 0 (never idle) or 15 to 43,200")
	}
	return nil
}

// ClusterUpdate is a PATCH of a cluster; nil fields stay.
type ClusterUpdate struct {
	Name               *string
	IdleTimeoutMinutes *int
}

// UpdateCluster renames a cluster (the new name claimed in the organization's stream at
// its exact version, as at creation) and changes its idle timeout.
func (s *Service) UpdateCluster(ctx context.Context, id uuid.UUID, u ClusterUpdate) (*Cluster, error) {
	if t := u.IdleTimeoutMinutes; t != nil {
		if err := CheckIdleTimeout(*t); err != nil {
			return nil, err
		}
	}
	if u.Name != nil {
		if err := validClusterName(*u.Name); err != nil {
			return nil, err
		}
		err := s.retry(ctx, func() (uint64, error) {
			st, err := s.loadCluster(ctx, id)
			if err != nil {
				return 0, err
			}
			if st.name == *u.Name {
				return 0, nil
			}
			names, err := s.loadClusterNames(ctx, st.org)
			if err != nil {
				return 0, err
			}
			if h, ok := names.holder(*u.Name); ok && h != id {
				return 0, fmt.Errorf("%w: cluster %q", ErrExists, *u.Name)
			}
			if names.names[id] != *u.Name {
				if _, err := s.append(ctx, orgStream(st.org), es.Exact(names.version),
					newEvent(EvClusterNamed, ClusterNamed{OrgID: st.org, ClusterID: id, Name: *u.Name})); err != nil {
					return 0, err
				}
			}
			return s.append(ctx, clusterStream(id), es.Exact(st.version), newEvent(EvClusterRenamed, ClusterRenamed{ID: id, Name: *u.Name}))
		})
		if err != nil {
			return nil, err
		}
	}
	if t := u.IdleTimeoutMinutes; t != nil {
		err := s.retry(ctx, func() (uint64, error) {
			st, err := s.loadCluster(ctx, id)
			if err != nil {
				return 0, err
			}
			if c, ok := s.model.Cluster(id); ok && c.IdleTimeoutMinutes == *t {
				return 0, nil
			}
			return s.append(ctx, clusterStream(id), es.Exact(st.version), newEvent(EvClusterIdleTimeoutChanged,
				ClusterIdleTimeoutChanged{ID: id, Minutes: *t}))
		})
		if err != nil {
			return nil, err
		}
	}
	c, ok := s.model.Cluster(id)
	if !ok {
		return nil, fmt.Errorf("%w: cluster %s", ErrNotFound, id)
	}
	return c, nil
}
