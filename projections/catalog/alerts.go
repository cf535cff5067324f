package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// Alert definitions: one stream per organization, so names stay unique per cluster and
// the per-organization limit holds under concurrent commands (every command appends at
// the stream's exact version). An alert's state transitions and deliveries are on a
// stream of their own (AlertStateStream), appended at its exact version too, so a
// retried or concurrent evaluation cannot record one transition twice.
const (
	EvAlertCreated = "alert.created"
	EvAlertUpdated = "alert.updated"
	EvAlertDeleted = "alert.deleted"

	// State stream events.
	EvAlertTransitioned   = "alert.transitioned"
	EvAlertDelivered      = "alert.delivered"
	EvAlertDeliveryFailed = "alert.delivery_failed"
)

// MaxAlertsPerOrg bounds the alerts of an organization, disabled ones included.
const MaxAlertsPerOrg = 1000

func alertStream(org uuid.UUID) string { return "alerts-" + org.String() }

// AlertStateStream is the stream of an alert's transitions and deliveries.
func AlertStateStream(id uuid.UUID) string { return "alert-state-" + id.String() }

// Destination types.
const (
	DestWebhook   = "webhook"
	DestSlack     = "slack"
	DestPagerDuty = "pagerduty"
)

// Alert is a saved alert definition. Created and updated events carry the whole record;
// destination secrets are sealed by the alerts domain before they get here.
type Alert struct {
	ID        uuid.UUID `json:"id"`
	OrgID     uuid.UUID `json:"org_id"`
	ClusterID uuid.UUID `json:"cluster_id"`
	Name      string    `json:"name"`
	Language  string    `json:"language"` // sql, promql, spl
	Database  string    `json:"database"`
	Query     string    `json:"query"`
	// Earliest and Latest are an SPL alert's time window, relative to the evaluation
	// (empty: the defaults, the interval up to the evaluation).
	Earliest        string             `json:"earliest,omitempty"`
	Latest          string             `json:"latest,omitempty"`
	IntervalSeconds int                `json:"interval_seconds"`
	Of              string             `json:"of"` // value or row_count
	Op              string             `json:"op"`
	Threshold       float64            `json:"threshold"`
	ForSeconds      int                `json:"for_seconds"`
	Labels          map[string]string  `json:"labels"`
	Annotations     map[string]string  `json:"annotations"`
	Destinations    []AlertDestination `json:"destinations"`
	Enabled         bool               `json:"enabled"`
	SilencedUntil   *time.Time         `json:"silenced_until,omitempty"`
	// ManagedBy names the tool that owns the alert (svc alert apply sets it, and prunes
	// only alerts it owns); empty for alerts made by hand.
	ManagedBy string    `json:"managed_by,omitempty"`
	Revision  int       `json:"revision"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// AlertDestination is where an alert's notifications go. The URL, the webhook's HMAC
// secret and PagerDuty's routing key are sealed (AES-GCM, bound to the destination id).
type AlertDestination struct {
	ID   uuid.UUID `json:"id"`
	Type string    `json:"type"`
	// Name is the caller's name for it (unique in the alert; optional).
	Name             string `json:"name,omitempty"`
	SealedURL        string `json:"sealed_url,omitempty"`
	SealedSecret     string `json:"sealed_secret,omitempty"`
	SealedRoutingKey string `json:"sealed_routing_key,omitempty"`
}

type alertDeleted struct {
	ID        uuid.UUID `json:"id"`
	OrgID     uuid.UUID `json:"org_id"`
	ClusterID uuid.UUID `json:"cluster_id"`
}

// AlertTransition is one state change of one group of an alert (group "" is the alert
// as a whole: its no_data and error states).
type AlertTransition struct {
	AlertID  uuid.UUID         `json:"alert_id"`
	Revision int               `json:"revision"`
	Group    string            `json:"group"`
	Labels   map[string]string `json:"labels"`
	From     string            `json:"from"`
	To       string            `json:"to"`
	Value    *float64          `json:"value,omitempty"`
	// ActiveAt is when the condition started holding (pending and firing).
	ActiveAt *time.Time `json:"active_at,omitempty"`
	At       time.Time  `json:"at"`
	Error    string     `json:"error,omitempty"`
	// Notify says whether destinations are told (firing and resolved, unless silenced).
	Notify   bool   `json:"notify"`
	Silenced bool   `json:"silenced,omitempty"`
	Summary  string `json:"summary,omitempty"`
	// Annotations are the alert's annotations with this transition's values filled in.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// AlertDelivery records one destination's answer to one transition (by the
// transition's version in the state stream).
type AlertDelivery struct {
	AlertID       uuid.UUID `json:"alert_id"`
	Transition    uint64    `json:"transition"`
	DestinationID uuid.UUID `json:"destination_id"`
	Type          string    `json:"type"`
	Attempts      int       `json:"attempts"`
	At            time.Time `json:"at"`
	Error         string    `json:"error,omitempty"`
}

type alertModel struct {
	alerts map[uuid.UUID]*Alert
}

func (m *Model) applyAlert(e es.Event) (bool, error) {
	switch e.Type {
	case EvAlertCreated, EvAlertUpdated:
		v, err := decode[Alert](e)
		if err != nil {
			return true, err
		}
		if m.alerts == nil {
			m.alerts = map[uuid.UUID]*Alert{}
		}
		m.alerts[v.ID] = &v
	case EvAlertDeleted:
		v, err := decode[alertDeleted](e)
		if err != nil {
			return true, err
		}
		delete(m.alerts, v.ID)
	case EvAlertTransitioned, EvAlertDelivered, EvAlertDeliveryFailed:
		// Read from the alert's stream by the alerts domain; nothing to project here.
	default:
		return false, nil
	}
	return true, nil
}

// Alert returns an alert by id.
func (m *Model) Alert(id uuid.UUID) (*Alert, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	a, ok := m.alerts[id]
	return a, ok
}

// Alerts returns a cluster's alerts by name; cluster zero returns every cluster's.
func (m *Model) Alerts(cluster uuid.UUID) []*Alert {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*Alert
	for _, a := range m.alerts {
		if cluster == uuid.Nil || a.ClusterID == cluster {
			out = append(out, a)
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

// foldAlerts is an organization's alerts as its stream says, and the stream's version.
func (s *Service) foldAlerts(ctx context.Context, org uuid.UUID) (map[uuid.UUID]Alert, es.Expected, error) {
	events, err := es.Collect(ctx, s.store.ReadStream(ctx, alertStream(org), 0))
	if err != nil {
		return nil, es.Expected{}, err
	}
	out := map[uuid.UUID]Alert{}
	for _, e := range events {
		switch e.Type {
		case EvAlertCreated, EvAlertUpdated:
			a, err := decode[Alert](e)
			if err != nil {
				return nil, es.Expected{}, err
			}
			out[a.ID] = a
		case EvAlertDeleted:
			d, err := decode[alertDeleted](e)
			if err != nil {
				return nil, es.Expected{}, err
			}
			delete(out, d.ID)
		}
	}
	if len(events) == 0 {
		return out, es.NoStream(), nil
	}
	return out, es.Exact(events[len(events)-1].Version), nil
}

// SaveAlert creates a (ID zero) or replaces the saved alert of that id. Names are unique
// within the cluster and an organization holds at most MaxAlertsPerOrg.
func (s *Service) SaveAlert(ctx context.Context, a Alert) (*Alert, error) {
	create := a.ID == uuid.Nil
	if create {
		a.ID = uuid.New()
	}
	err := s.retryJitter(ctx, func() (uint64, error) {
		cur, exp, err := s.foldAlerts(ctx, a.OrgID)
		if err != nil {
			return 0, err
		}
		now := s.now()
		typ := EvAlertUpdated
		if create {
			if len(cur) >= MaxAlertsPerOrg {
				return 0, fmt.Errorf("%w: an organization holds at most %d alerts, disabled ones included; delete one first",
					ErrLimit, MaxAlertsPerOrg)
			}
			a.CreatedAt, a.UpdatedAt, a.Revision, typ = now, now, 1, EvAlertCreated
		} else {
			old, ok := cur[a.ID]
			if !ok {
				return 0, fmt.Errorf("%w: alert %s", ErrNotFound, a.ID)
			}
			a.CreatedAt, a.OrgID, a.ClusterID, a.UpdatedAt, a.Revision = old.CreatedAt, old.OrgID, old.ClusterID, now, old.Revision+1
		}
		for _, o := range cur {
			if o.ID != a.ID && o.ClusterID == a.ClusterID && o.Name == a.Name {
				return 0, fmt.Errorf("%w: alert %q", ErrExists, a.Name)
			}
		}
		return s.append(ctx, alertStream(a.OrgID), exp, newEvent(typ, a))
	})
	if err != nil {
		return nil, err
	}
	out, _ := s.model.Alert(a.ID)
	return out, nil
}

// DeleteAlert deletes an alert of org; its state stream stays (history of a deleted
// alert is not served).
func (s *Service) DeleteAlert(ctx context.Context, org, id uuid.UUID) error {
	return s.retryJitter(ctx, func() (uint64, error) {
		cur, exp, err := s.foldAlerts(ctx, org)
		if err != nil {
			return 0, err
		}
		a, ok := cur[id]
		if !ok {
			return 0, fmt.Errorf("%w: alert %s", ErrNotFound, id)
		}
		return s.append(ctx, alertStream(org), exp, newEvent(EvAlertDeleted, alertDeleted{ID: id, OrgID: org, ClusterID: a.ClusterID}))
	})
}

// AlertEvent is one event of an alert's state stream.
type AlertEvent struct {
	Version    uint64
	Type       string
	Transition *AlertTransition
	Delivery   *AlertDelivery
}

// AlertState reads an alert's state stream and its version (for AppendAlertState).
func (s *Service) AlertState(ctx context.Context, id uuid.UUID) ([]AlertEvent, es.Expected, error) {
	return s.AlertStateFrom(ctx, id, 0)
}

// AlertStateFrom reads an alert's state stream from version from (inclusive) and the
// stream's version: a caller that folded versions below from reads only what is new.
// With from > 0 and nothing new, the version is from-1 (the caller saw it).
func (s *Service) AlertStateFrom(ctx context.Context, id uuid.UUID, from uint64) ([]AlertEvent, es.Expected, error) {
	events, err := es.Collect(ctx, s.store.ReadStream(ctx, AlertStateStream(id), from))
	if err != nil {
		return nil, es.Expected{}, err
	}
	out := make([]AlertEvent, 0, len(events))
	for _, e := range events {
		ae := AlertEvent{Version: e.Version, Type: e.Type}
		switch e.Type {
		case EvAlertTransitioned:
			var t AlertTransition
			if err := json.Unmarshal(e.Data, &t); err != nil {
				return nil, es.Expected{}, err
			}
			ae.Transition = &t
		case EvAlertDelivered, EvAlertDeliveryFailed:
			var d AlertDelivery
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return nil, es.Expected{}, err
			}
			ae.Delivery = &d
		default:
			continue
		}
		out = append(out, ae)
	}
	if len(events) == 0 {
		if from > 0 {
			return out, es.Exact(from - 1), nil
		}
		return out, es.NoStream(), nil
	}
	return out, es.Exact(events[len(events)-1].Version), nil
}

// AppendAlertTransitions records transitions at the state stream's exact version exp:
// es.ErrConcurrency when another evaluation recorded first (the caller re-reads).
func (s *Service) AppendAlertTransitions(ctx context.Context, id uuid.UUID, exp es.Expected, ts []AlertTransition) error {
	if len(ts) == 0 {
		return nil
	}
	evs := make([]es.NewEvent, len(ts))
	for i, t := range ts {
		evs[i] = newEvent(EvAlertTransitioned, t)
	}
	_, err := s.store.Append(ctx, AlertStateStream(id), exp, evs...)
	return err
}

// AppendAlertDelivery records one destination's answer to a transition.
func (s *Service) AppendAlertDelivery(ctx context.Context, d AlertDelivery) error {
	typ := EvAlertDelivered
	if d.Error != "" {
		typ = EvAlertDeliveryFailed
	}
	_, err := s.store.Append(ctx, AlertStateStream(d.AlertID), es.Any(), newEvent(typ, d))
	return err
}
