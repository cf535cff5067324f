// Package alerts is the alert API's domain: definitions and state transitions as
// control-plane events, evaluations scheduled by the workflow engine (Temporal, on a
// task queue of their own), conditions per group or series, and notifications to
// webhooks, Slack and PagerDuty through the egress policy. See docs/alerts.md.
package alerts

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/egress"
	"github.com/svc-data/svc/query/spl"
	"github.com/svc-data/svc/workflows"
)

// Sample is one series of a PromQL instant vector.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// PromQuerier evaluates a PromQL expression at one instant over a logical database of
// a cluster, as the organization.
type PromQuerier interface {
	Instant(ctx context.Context, org, cluster uuid.UUID, database, expr string, at time.Time) ([]Sample, error)
}

// Searcher runs a log search over a logical database of a cluster, as the API's
// POST /v1/spl/search does (query/splsearch).
type Searcher interface {
	Search(ctx context.Context, org, cluster uuid.UUID, database string, req spl.Request) (*spl.Response, error)
}

// Permit says whether the caller may save an alert whose query is in language (one of
// LangSQL, LangPromQL, LangSPL): the edge answers with the rule of that language's own
// endpoint. A nil Permit permits everything.
type Permit func(language string) error

// Config configures the alert service.
type Config struct {
	// Egress is the address policy for destinations (the workflow sinks').
	Egress egress.Policy
	// HTTPAttempts bounds attempts of one delivery per evaluation. Default 3.
	HTTPAttempts int
	// HTTPBackoff is the first retry's delay, doubled each time. Default 1s.
	HTTPBackoff time.Duration
	// HTTPTimeout bounds one attempt. Default 10s.
	HTTPTimeout time.Duration
	// ResyncEvery is the schedule reconciler's period. Default 30s.
	ResyncEvery time.Duration
	Logger      *slog.Logger
}

func (c *Config) validate() {
	if c.HTTPAttempts <= 0 {
		c.HTTPAttempts = 3
	}
	if c.HTTPBackoff <= 0 {
		c.HTTPBackoff = time.Second
	}
	if c.HTTPTimeout <= 0 {
		c.HTTPTimeout = 10 * time.Second
	}
	if c.ResyncEvery <= 0 {
		c.ResyncEvery = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Service is the alert API's domain.
type Service struct {
	cfg    Config
	model  *catalog.Model
	cmds   *catalog.Service
	engine workflows.Engine
	query  workflows.Querier
	prom   PromQuerier
	search Searcher
	sealer *workflows.Sealer

	mu      sync.Mutex
	orphans map[uuid.UUID]bool

	health workflows.Health
	states stateCache
	evals  evalStats
	// running holds the alerts this node is evaluating (a tick skips them); slots bounds
	// how many at once (maxParallel).
	running sync.Map
	slots   chan struct{}
}

// New returns the service; a nil engine is a disabled service (workflows.ErrDisabled).
// A nil prom or search refuses alerts in PromQL or SPL.
func New(cfg Config, model *catalog.Model, cmds *catalog.Service, engine workflows.Engine, q workflows.Querier, prom PromQuerier, search Searcher, sealer *workflows.Sealer) *Service {
	cfg.validate()
	return &Service{cfg: cfg, model: model, cmds: cmds, engine: engine, query: q, prom: prom, search: search, sealer: sealer,
		slots: make(chan struct{}, maxParallel)}
}

// Available answers nil when the service is enabled and its engine answers.
func (s *Service) Available(ctx context.Context) error {
	if s == nil {
		return workflows.ErrDisabled
	}
	return s.health.Check(ctx, s.engine)
}

// Alert returns an alert of the cluster.
func (s *Service) Alert(cluster, id uuid.UUID) (*catalog.Alert, bool) {
	a, ok := s.model.Alert(id)
	if !ok || a.ClusterID != cluster {
		return nil, false
	}
	return a, true
}

// Create saves a new alert from a create body and schedules its evaluation. may
// decides whether the caller may query in the alert's language.
func (s *Service) Create(ctx context.Context, org, cluster uuid.UUID, body []byte, may Permit) (View, error) {
	a := catalog.Alert{OrgID: org, ClusterID: cluster, Enabled: true, IntervalSeconds: DefaultInterval,
		Labels: map[string]string{}, Annotations: map[string]string{}, Destinations: []catalog.AlertDestination{}}
	if err := s.apply(ctx, body, true, &a); err != nil {
		return View{}, err
	}
	if may != nil {
		if err := may(a.Language); err != nil {
			return View{}, err
		}
	}
	out, err := s.cmds.SaveAlert(ctx, a)
	if err != nil {
		return View{}, err
	}
	s.syncSchedule(ctx, out)
	return s.View(ctx, out), nil
}

// Update applies a PATCH body; may is as for Create (asked of the saved language).
func (s *Service) Update(ctx context.Context, a *catalog.Alert, body []byte, may Permit) (View, error) {
	next := *a
	next.Destinations = append([]catalog.AlertDestination(nil), a.Destinations...)
	if err := s.apply(ctx, body, false, &next); err != nil {
		return View{}, err
	}
	if may != nil {
		if err := may(next.Language); err != nil {
			return View{}, err
		}
	}
	out, err := s.cmds.SaveAlert(ctx, next)
	if err != nil {
		return View{}, err
	}
	s.syncSchedule(ctx, out)
	return s.View(ctx, out), nil
}

// Silence holds an alert's notifications until until (zero: lifts the silence).
// Transitions are still recorded, marked silenced.
func (s *Service) Silence(ctx context.Context, a *catalog.Alert, until *time.Time) (View, error) {
	next := *a
	next.SilencedUntil = until
	out, err := s.cmds.SaveAlert(ctx, next)
	if err != nil {
		return View{}, err
	}
	return s.View(ctx, out), nil
}

// Delete removes a and its schedule.
func (s *Service) Delete(ctx context.Context, a *catalog.Alert) error {
	if err := s.cmds.DeleteAlert(ctx, a.OrgID, a.ID); err != nil {
		return err
	}
	s.forget(a.ID)
	return nil
}

// List returns the cluster's alerts.
func (s *Service) List(ctx context.Context, cluster uuid.UUID) []View {
	out := []View{}
	for _, a := range s.model.Alerts(cluster) {
		out = append(out, s.View(ctx, a))
	}
	return out
}

// syncSchedule makes sure a saved alert is evaluated: the tick exists (TickID).
func (s *Service) syncSchedule(ctx context.Context, _ *catalog.Alert) { s.syncTick(ctx) }

// scheduleOffset shifts an alert's evaluations within its interval by a stable amount
// (whole seconds from its id), as Prometheus shifts each rule group by a hash: alerts
// with one interval are spread over it instead of all evaluating in the same second.
func scheduleOffset(id uuid.UUID, interval time.Duration) time.Duration {
	secs := int64(interval / time.Second)
	if secs <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write(id[:])
	return time.Duration(h.Sum64()%uint64(secs)) * time.Second
}

// Reconcile makes the engine's schedules on the alerts' queue what the alerts need: the
// tick while there are alerts, nothing else (a schedule of one alert, as deployments
// before the tick made them, is deleted as an orphan).
func (s *Service) Reconcile(ctx context.Context) error {
	if s.engine == nil {
		return nil
	}
	live := map[uuid.UUID]bool{}
	for _, a := range s.model.Alerts(uuid.Nil) {
		live[a.ID] = true
	}
	s.states.mu.Lock()
	maps.DeleteFunc(s.states.alerts, func(id uuid.UUID, _ *cachedState) bool { return !live[id] })
	s.states.mu.Unlock()
	if len(live) > 0 {
		s.syncTick(ctx)
	}
	ids, err := s.engine.Schedules(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The tick of no alerts may be one another node needs a moment from now: it is
	// deleted on the second pass that finds no alert, like any orphan.
	s.orphans, err = workflows.SweepOrphans(ctx, ids, s.orphans, func(id uuid.UUID) bool {
		return id == TickID && (len(live) > 0 || len(s.model.Alerts(uuid.Nil)) > 0)
	}, s.engine.DeleteSchedule)
	return err
}

// RunReconciler resyncs at start and then periodically until ctx ends.
func (s *Service) RunReconciler(ctx context.Context) {
	for {
		if err := s.Reconcile(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("alert schedules resync failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.cfg.ResyncEvery):
		}
	}
}

// View is an alert as the API returns it: no URL, secret or routing key.
type View struct {
	ID              uuid.UUID         `json:"id"`
	Name            string            `json:"name"`
	Query           map[string]string `json:"query"`
	IntervalSeconds int               `json:"interval_seconds"`
	Condition       ConditionView     `json:"condition"`
	For             string            `json:"for"`
	ForSeconds      int               `json:"for_seconds"`
	Labels          map[string]string `json:"labels"`
	Annotations     map[string]string `json:"annotations"`
	Destinations    []DestinationView `json:"destinations"`
	Enabled         bool              `json:"enabled"`
	SilencedUntil   *time.Time        `json:"silenced_until"`
	ManagedBy       *string           `json:"managed_by"`
	State           string            `json:"state"`
	Groups          []GroupView       `json:"groups"`
	Revision        int               `json:"revision"`
	CreatedAt       time.Time         `json:"created_at"`
	UpdatedAt       time.Time         `json:"updated_at"`
}

// ConditionView is the saved condition.
type ConditionView struct {
	Of        string  `json:"of"`
	Op        string  `json:"op"`
	Threshold float64 `json:"threshold"`
}

// DestinationView says what is configured, never the values.
type DestinationView struct {
	ID                   uuid.UUID `json:"id"`
	Type                 string    `json:"type"`
	Name                 string    `json:"name,omitempty"`
	URLConfigured        bool      `json:"url_configured"`
	SecretConfigured     bool      `json:"secret_configured,omitempty"`
	RoutingKeyConfigured bool      `json:"routing_key_configured,omitempty"`
}

// GroupView is the current state of one group or series.
type GroupView struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	Value    *float64          `json:"value"`
	ActiveAt *time.Time        `json:"active_at"`
	Since    time.Time         `json:"since"`
}

// View renders a with its current state (read from its state stream; a failed read
// shows state "unknown").
func (s *Service) View(ctx context.Context, a *catalog.Alert) View {
	v := View{ID: a.ID, Name: a.Name, Query: map[string]string{"database": a.Database, a.Language: a.Query},
		IntervalSeconds: a.IntervalSeconds, Condition: ConditionView{Of: a.Of, Op: a.Op, Threshold: a.Threshold},
		For: (time.Duration(a.ForSeconds) * time.Second).String(), ForSeconds: a.ForSeconds, Labels: a.Labels, Annotations: a.Annotations,
		Destinations: []DestinationView{}, Enabled: a.Enabled, SilencedUntil: a.SilencedUntil, Groups: []GroupView{},
		Revision: a.Revision, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	if a.ManagedBy != "" {
		v.ManagedBy = &a.ManagedBy
	}
	if a.Language == LangSPL {
		v.Query["earliest"], v.Query["latest"] = window(a)
	}
	for _, d := range a.Destinations {
		v.Destinations = append(v.Destinations, DestinationView{ID: d.ID, Type: d.Type, Name: d.Name, URLConfigured: d.SealedURL != "",
			SecretConfigured: d.SealedSecret != "", RoutingKeyConfigured: d.SealedRoutingKey != ""})
	}
	st, _, err := s.stateOf(ctx, a.ID)
	if err != nil {
		v.State = "unknown"
		return v
	}
	v.State = st.overall()
	for _, key := range st.keys() {
		g := st.groups[key]
		if g.State == StateInactive {
			continue
		}
		v.Groups = append(v.Groups, GroupView{Labels: g.Labels, State: g.State, Value: g.Value, ActiveAt: g.ActiveAt, Since: g.Since})
	}
	return v
}

// HistoryEntry is one recorded transition or delivery, newest first.
type HistoryEntry struct {
	ID            string            `json:"id"`
	Type          string            `json:"event_type"`
	At            time.Time         `json:"at"`
	Revision      int               `json:"revision,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	From          string            `json:"from,omitempty"`
	To            string            `json:"to,omitempty"`
	Value         *float64          `json:"value,omitempty"`
	Silenced      bool              `json:"silenced,omitempty"`
	Notify        bool              `json:"notify,omitempty"`
	Transition    string            `json:"transition_id,omitempty"`
	DestinationID *uuid.UUID        `json:"destination_id,omitempty"`
	Destination   string            `json:"destination_type,omitempty"`
	Attempts      int               `json:"attempts,omitempty"`
	Error         string            `json:"error,omitempty"`
}

// ErrBadLimit is an invalid history limit.
var ErrBadLimit = errors.New("limit must be a whole number from 1 to 1000")

// History returns up to limit entries of a's history, newest first.
func (s *Service) History(ctx context.Context, a *catalog.Alert, limit int) ([]HistoryEntry, error) {
	if limit < 1 || limit > 1000 {
		return nil, invalid("limit", "%v", ErrBadLimit)
	}
	events, _, err := s.cmds.AlertState(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	out := []HistoryEntry{}
	for i := len(events) - 1; i >= 0 && len(out) < limit; i-- {
		e := events[i]
		h := HistoryEntry{ID: transitionID(a.ID, e.Version), Type: e.Type}
		if t := e.Transition; t != nil {
			h.At, h.Revision, h.Labels, h.From, h.To, h.Value, h.Silenced, h.Notify, h.Error =
				t.At, t.Revision, t.Labels, t.From, t.To, t.Value, t.Silenced, t.Notify, t.Error
		}
		if d := e.Delivery; d != nil {
			id := d.DestinationID
			h.At, h.Transition, h.DestinationID, h.Destination, h.Attempts, h.Error =
				d.At, transitionID(a.ID, d.Transition), &id, d.Type, d.Attempts, d.Error
		}
		out = append(out, h)
	}
	return out, nil
}
