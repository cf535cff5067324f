package alerts

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/es"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/statement"
	"github.com/svc-data/svc/workflows"
)

// Group states, and the alert's health (group "").
const (
	StateInactive = "inactive"
	StatePending  = "pending"
	StateFiring   = "firing"
	StateResolved = "resolved"
	StateNoData   = "no_data"
	StateError    = "error"
	StateOK       = "ok"
)

// maxDeliveryFailures bounds how many evaluations retry one transition's delivery.
const maxDeliveryFailures = 3

// maxResult bounds a query's result read by an evaluation.
const maxResult = 8 << 20

var _ workflows.Evaluator = (*Service)(nil)

func transitionID(alert uuid.UUID, version uint64) string {
	return alert.String() + "/" + strconv.FormatUint(version, 10)
}

// groupState is one group's last transition.
type groupState struct {
	State    string
	Labels   map[string]string
	Value    *float64
	ActiveAt *time.Time
	Since    time.Time
	// Last is the version of the group's last transition.
	Last uint64
	Tr   *catalog.AlertTransition
}

type state struct {
	groups map[string]*groupState
	health string
	// delivered and failed count each (transition, destination)'s answers, for the
	// groups' latest transitions only (the only ones notified).
	delivered map[dkey]bool
	failed    map[dkey]int
}

// dkey is one transition (its version) and one destination.
type dkey struct {
	version uint64
	dest    uuid.UUID
}

func newState() *state {
	return &state{groups: map[string]*groupState{}, health: StateOK, delivered: map[dkey]bool{}, failed: map[dkey]int{}}
}

func fold(events []catalog.AlertEvent) *state {
	st := newState()
	st.apply(events)
	return st
}

// apply folds events (the stream's next ones) into st. Delivery answers of transitions
// no group holds any more are dropped: nothing reads them, and so the state stays as
// large as the groups, however long the stream.
func (st *state) apply(events []catalog.AlertEvent) {
	for _, e := range events {
		switch {
		case e.Transition != nil:
			t := e.Transition
			if t.Group == "" && (t.To == StateOK || t.To == StateNoData || t.To == StateError) {
				st.health = t.To
				continue
			}
			st.groups[t.Group] = &groupState{State: t.To, Labels: t.Labels, Value: t.Value, ActiveAt: t.ActiveAt, Since: t.At, Last: e.Version, Tr: t}
		case e.Delivery != nil:
			k := dkey{e.Delivery.Transition, e.Delivery.DestinationID}
			if e.Type == catalog.EvAlertDelivered {
				st.delivered[k] = true
			} else {
				st.failed[k]++
			}
		}
	}
	if len(st.delivered)+len(st.failed) > 2*len(st.groups) {
		live := map[uint64]bool{}
		for _, g := range st.groups {
			live[g.Last] = true
		}
		maps.DeleteFunc(st.delivered, func(k dkey, _ bool) bool { return !live[k.version] })
		maps.DeleteFunc(st.failed, func(k dkey, _ int) bool { return !live[k.version] })
	}
}

// clone copies st's maps (the group states themselves are never changed, only replaced).
func (st *state) clone() *state {
	return &state{groups: maps.Clone(st.groups), health: st.health, delivered: maps.Clone(st.delivered), failed: maps.Clone(st.failed)}
}

func (st *state) keys() []string { return slices.Sorted(maps.Keys(st.groups)) }

// overall is the alert's state: its health when not ok, else its most urgent group's.
func (st *state) overall() string {
	if st.health == StateNoData || st.health == StateError {
		return st.health
	}
	best := StateInactive
	rank := map[string]int{StateInactive: 0, StateResolved: 1, StatePending: 2, StateFiring: 3}
	for _, g := range st.groups {
		if rank[g.State] > rank[best] {
			best = g.State
		}
	}
	return best
}

// result is one evaluation's outcome: the groups whose value was computed, or an error.
type result struct {
	groups map[string]observed
	noData bool
	err    error
}

type observed struct {
	labels map[string]string
	value  float64
}

// Evaluate runs one execution of the alerts' queue: a tick (TickID) evaluates the alerts
// due at its second; an alert's own schedule (made before the tick) evaluates it.
func (s *Service) Evaluate(ctx context.Context, x workflows.Execution) error {
	if x.WorkflowID == TickID {
		return s.evaluateTick(ctx, x)
	}
	return s.evaluate(ctx, x.WorkflowID, x)
}

// evaluate runs one evaluation of alert id: the query, the condition per group, the
// transitions (recorded at the state stream's exact version, before anything is sent),
// then the notifications of transitions not delivered yet, each recorded once answered.
func (s *Service) evaluate(ctx context.Context, id uuid.UUID, x workflows.Execution) error {
	a, ok := s.model.Alert(id)
	if !ok {
		return nil // deleted since it was scheduled
	}
	now := time.Now().UTC()
	// The query's instant is the scheduled time, as a Prometheus rule group evaluates at
	// its slot's timestamp: a late or retried evaluation asks about the same moment.
	at := now
	if !x.ScheduledAt.IsZero() {
		at = x.ScheduledAt.UTC()
	}
	res := s.observe(ctx, a, x, at)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	defer func() { s.evals.record(x.ScheduledAt, x.StartedAt, time.Now(), res.err != nil) }()
	var st *state
	for attempt := 0; ; attempt++ {
		var exp es.Expected
		var err error
		if st, exp, err = s.stateOf(ctx, a.ID); err != nil {
			return fmt.Errorf("read alert state: %w", err)
		}
		ts := transitions(a, st, res, now)
		err = s.cmds.AppendAlertTransitions(ctx, a.ID, exp, ts)
		if errors.Is(err, es.ErrConcurrency) && attempt < 10 {
			continue
		}
		if err != nil {
			return fmt.Errorf("record alert transitions: %w", err)
		}
		if len(ts) > 0 {
			if st, _, err = s.stateOf(ctx, a.ID); err != nil {
				return fmt.Errorf("read alert state: %w", err)
			}
		}
		break
	}
	s.notify(ctx, a, st)
	return nil
}

// observe runs the alert's query at instant at and computes a value per group.
func (s *Service) observe(ctx context.Context, a *catalog.Alert, x workflows.Execution, at time.Time) result {
	groups := map[string]observed{}
	add := func(labels map[string]string, v float64) {
		groups[groupKey(labels)] = observed{labels: labels, value: v}
	}
	switch a.Language {
	case LangPromQL:
		if s.prom == nil {
			return result{err: errors.New("the Prometheus query API is not configured on this node")}
		}
		samples, err := s.prom.Instant(ctx, a.OrgID, a.ClusterID, a.Database, a.Query, at)
		if err != nil {
			return result{err: err}
		}
		if a.Of == "row_count" {
			add(map[string]string{}, float64(len(samples)))
			break
		}
		for _, smp := range samples {
			l := maps.Clone(smp.Labels)
			if l == nil {
				l = map[string]string{}
			}
			add(l, smp.Value)
		}
		if len(samples) == 0 {
			return result{groups: groups, noData: a.Op != OpAny}
		}
	case LangSPL:
		return s.observeSearch(ctx, a, x, at)
	default:
		rows, err := s.runSQL(ctx, a, x)
		if err != nil {
			return result{err: err}
		}
		if a.Of == "row_count" {
			add(map[string]string{}, float64(len(rows)))
			break
		}
		if len(rows) == 0 {
			return result{groups: groups, noData: a.Op != OpAny}
		}
		for i, r := range rows {
			labels, v, err := rowValue(r)
			if err != nil {
				return result{err: fmt.Errorf("row %d: %v", i+1, err)}
			}
			add(labels, v)
		}
	}
	return result{groups: groups}
}

// runSQL runs the saved SQL as the organization through the query layer.
func (s *Service) runSQL(ctx context.Context, a *catalog.Alert, x workflows.Execution) ([]json.RawMessage, error) {
	qid := "alert-" + x.RunID + "-" + strconv.Itoa(x.Attempt)
	res, err := s.query.Run(ctx, query.Request{OrgID: a.OrgID, ClusterID: a.ClusterID, Principal: statement.WorkflowRun(),
		Database: a.Database, SQL: a.Query, Format: "JSONEachRow", QueryID: qid})
	if err != nil {
		return nil, err
	}
	return workflows.JSONRows(res, maxResult, "aggregate in the query")
}

// numberJSON reads a JSON value as a float: a number, or a number's text (64-bit
// integers arrive quoted).
func numberJSON(v json.RawMessage) (float64, bool) {
	var n json.Number
	if json.Unmarshal(v, &n) == nil {
		f, err := n.Float64()
		return f, err == nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	return 0, false
}

// rowValue splits a row into its value (the column named value, else the last numeric
// column) and its group labels (every other column, as text).
func rowValue(raw json.RawMessage) (map[string]string, float64, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, 0, errors.New("not a JSON object")
	}
	type col struct {
		name string
		raw  json.RawMessage
	}
	var cols []col
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, 0, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, 0, err
		}
		cols = append(cols, col{k.(string), v})
	}
	vi := -1
	for i, c := range cols {
		if c.name == "value" {
			vi = i
		}
	}
	if vi < 0 {
		for i := len(cols) - 1; i >= 0; i-- {
			if _, ok := numberJSON(cols[i].raw); ok {
				vi = i
				break
			}
		}
	}
	if vi < 0 {
		return nil, 0, errors.New("no numeric column to compare (name it value, or use condition.of row_count)")
	}
	v, ok := numberJSON(cols[vi].raw)
	if !ok {
		return nil, 0, fmt.Errorf("column %s is not a number", cols[vi].name)
	}
	labels := map[string]string{}
	for i, c := range cols {
		if i == vi {
			continue
		}
		var s string
		if json.Unmarshal(c.raw, &s) != nil {
			s = string(c.raw)
		}
		labels[c.name] = s
	}
	return labels, v, nil
}

func groupKey(labels map[string]string) string {
	b, _ := json.Marshal(labels) // keys sorted
	return string(b)
}

func holds(op string, v, thr float64) bool {
	switch op {
	case OpAny:
		return true
	case ">":
		return v > thr
	case ">=":
		return v >= thr
	case "<":
		return v < thr
	case "<=":
		return v <= thr
	case "==":
		return v == thr
	case "!=":
		return v != thr
	}
	return false
}

// transitions is what this evaluation changes: per group, inactive or resolved ->
// pending -> firing (after `for`) -> resolved; pending -> inactive when the condition
// clears first; and the alert's health (ok, no_data, error).
func transitions(a *catalog.Alert, st *state, res result, now time.Time) []catalog.AlertTransition {
	var out []catalog.AlertTransition
	silenced := a.SilencedUntil != nil && now.Before(*a.SilencedUntil)
	health := StateOK
	switch {
	case res.err != nil:
		health = StateError
	case res.noData:
		health = StateNoData
	}
	if health != st.health {
		t := catalog.AlertTransition{AlertID: a.ID, Revision: a.Revision, Labels: map[string]string{}, From: st.health, To: health, At: now}
		if res.err != nil {
			t.Error = res.err.Error()
		}
		out = append(out, t)
	}
	if res.err != nil {
		return out // groups keep their states while the query fails
	}
	mk := func(key string, labels map[string]string, from, to string, v *float64, activeAt *time.Time) catalog.AlertTransition {
		t := catalog.AlertTransition{AlertID: a.ID, Revision: a.Revision, Group: key, Labels: labels, From: from, To: to,
			Value: v, ActiveAt: activeAt, At: now}
		if to == StateFiring || to == StateResolved {
			t.Notify, t.Silenced = !silenced, silenced
			val := 0.0
			if v != nil {
				val = *v
			}
			t.Annotations = map[string]string{}
			for k, text := range a.Annotations {
				t.Annotations[k] = expand(text, labels, val)
			}
		}
		return t
	}
	for _, key := range slices.Sorted(maps.Keys(res.groups)) {
		o := res.groups[key]
		labels := maps.Clone(o.labels)
		for k, text := range a.Labels {
			labels[k] = expand(text, o.labels, o.value)
		}
		v := o.value
		g := st.groups[key]
		cur := StateInactive
		if g != nil {
			cur = g.State
		}
		if holds(a.Op, o.value, a.Threshold) {
			switch cur {
			case StateInactive, StateResolved:
				at := now
				if a.ForSeconds == 0 {
					out = append(out, mk(key, labels, cur, StateFiring, &v, &at))
				} else {
					out = append(out, mk(key, labels, cur, StatePending, &v, &at))
				}
			case StatePending:
				if g.ActiveAt != nil && !now.Before(g.ActiveAt.Add(time.Duration(a.ForSeconds)*time.Second)) {
					out = append(out, mk(key, labels, cur, StateFiring, &v, g.ActiveAt))
				}
			}
			continue
		}
		switch cur {
		case StatePending:
			out = append(out, mk(key, labels, cur, StateInactive, &v, nil))
		case StateFiring:
			out = append(out, mk(key, labels, cur, StateResolved, &v, nil))
		}
	}
	// Groups the query no longer returns: their condition no longer holds.
	for _, key := range st.keys() {
		if _, seen := res.groups[key]; seen {
			continue
		}
		g := st.groups[key]
		switch g.State {
		case StatePending:
			out = append(out, mk(key, g.Labels, g.State, StateInactive, nil, nil))
		case StateFiring:
			out = append(out, mk(key, g.Labels, g.State, StateResolved, nil, nil))
		}
	}
	return out
}

// notify delivers each group's latest transition that is to be notified, to every
// destination that has not answered it yet (and failed fewer than maxDeliveryFailures
// evaluations), and records each answer. The transition was recorded first, so a
// retried or restarted evaluation finds it and a delivered one is never sent again.
func (s *Service) notify(ctx context.Context, a *catalog.Alert, st *state) {
	for _, key := range st.keys() {
		g := st.groups[key]
		if g.Tr == nil || !g.Tr.Notify {
			continue
		}
		for _, d := range a.Destinations {
			k := dkey{g.Last, d.ID}
			if st.delivered[k] || st.failed[k] >= maxDeliveryFailures {
				continue
			}
			attempts, err := s.deliver(ctx, a, d, g.Last, g.Tr)
			rec := catalog.AlertDelivery{AlertID: a.ID, Transition: g.Last, DestinationID: d.ID, Type: d.Type, Attempts: attempts, At: time.Now().UTC()}
			if err != nil {
				rec.Error = err.Error()
			}
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			if err := s.cmds.AppendAlertDelivery(rctx, rec); err != nil {
				s.cfg.Logger.Warn("record alert delivery", "alert_id", a.ID, "err", err)
			}
			cancel()
		}
	}
}

// Notification is the generic webhook's body.
type Notification struct {
	AlertID      uuid.UUID         `json:"alert_id"`
	AlertName    string            `json:"alert_name"`
	Revision     int               `json:"revision"`
	TransitionID string            `json:"transition_id"`
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	Value        *float64          `json:"value"`
	ActiveAt     *time.Time        `json:"active_at"`
	At           time.Time         `json:"at"`
}

// Sign is the X-Svc-Signature of a webhook body: "sha256=" and the hex HMAC-SHA256 of
// the body under the destination's secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func (s *Service) deliver(ctx context.Context, a *catalog.Alert, d catalog.AlertDestination, version uint64, t *catalog.AlertTransition) (int, error) {
	url, err := s.sealer.Open(d.SealedURL, d.ID.String()+"/url")
	if err != nil {
		return 0, errors.New("the destination's URL cannot be read (was SVC_SECRET_KEY changed?); update the destination")
	}
	tid := transitionID(a.ID, version)
	n := Notification{AlertID: a.ID, AlertName: a.Name, Revision: t.Revision, TransitionID: tid, Status: t.To,
		Labels: t.Labels, Annotations: t.Annotations, Value: t.Value, ActiveAt: t.ActiveAt, At: t.At}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	headers := map[string]string{"Idempotency-Key": tid + "/" + d.ID.String()}
	var body []byte
	switch d.Type {
	case catalog.DestWebhook:
		body, _ = json.Marshal(n)
		if d.SealedSecret != "" {
			secret, err := s.sealer.Open(d.SealedSecret, d.ID.String()+"/secret")
			if err != nil {
				return 0, errors.New("the destination's secret cannot be read; update the destination")
			}
			headers["X-Svc-Signature"] = Sign(secret, body)
		}
	case catalog.DestSlack:
		body, _ = json.Marshal(map[string]string{"text": slackText(n)})
	case catalog.DestPagerDuty:
		key, err := s.sealer.Open(d.SealedRoutingKey, d.ID.String()+"/routing_key")
		if err != nil {
			return 0, errors.New("the destination's routing key cannot be read; update the destination")
		}
		action := "trigger"
		if t.To == StateResolved {
			action = "resolve"
		}
		sum := sha256.Sum256([]byte(t.Group))
		severity := t.Labels["severity"]
		switch severity {
		case "critical", "error", "warning", "info":
		default:
			severity = "error"
		}
		body, _ = json.Marshal(map[string]any{"routing_key": key, "event_action": action,
			// One incident per group: its trigger and its resolve share the key.
			"dedup_key": a.ID.String() + "-" + hex.EncodeToString(sum[:8]),
			"payload": map[string]any{"summary": summary(n), "source": "svc", "severity": severity,
				"custom_details": map[string]any{"labels": n.Labels, "annotations": n.Annotations, "value": n.Value, "transition_id": tid}}})
	default:
		return 0, fmt.Errorf("unknown destination type %q", d.Type)
	}
	return s.post(ctx, url, headers, body)
}

func summary(n Notification) string {
	if s := n.Annotations["summary"]; s != "" {
		return s
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(n.Labels)) {
		parts = append(parts, k+"="+n.Labels[k])
	}
	s := n.AlertName
	if len(parts) > 0 {
		s += " {" + strings.Join(parts, ", ") + "}"
	}
	return s
}

func slackText(n Notification) string {
	status := "[FIRING]"
	if n.Status == StateResolved {
		status = "[RESOLVED]"
	}
	text := status + " " + summary(n)
	if d := n.Annotations["description"]; d != "" {
		text += "\n" + d
	}
	return text
}

// post sends body with bounded retries; the URL passes the egress policy, checked
// again on the address dialed. Redirects are not followed.
func (s *Service) post(ctx context.Context, raw string, headers map[string]string, body []byte) (int, error) {
	u, err := s.cfg.Egress.Check(ctx, raw)
	if err != nil {
		return 0, errors.New("the destination's URL is not allowed by the egress policy (SVC_URL_IMPORT_ALLOW); update the destination")
	}
	dialer := s.cfg.Egress.Dialer(u.Hostname())
	cl := &http.Client{Timeout: s.cfg.HTTPTimeout,
		Transport:     &http.Transport{DialContext: dialer.DialContext, Proxy: nil, MaxIdleConns: 1},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer cl.CloseIdleConnections()
	backoff := s.cfg.HTTPBackoff
	var last error
	for attempt := 1; attempt <= s.cfg.HTTPAttempts; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
		if err != nil {
			return attempt, errors.New("the destination's URL is not valid")
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "svc-alerts/1")
		resp, err := cl.Do(req)
		retry := true
		if err != nil {
			// The error quotes the URL, a secret: say only what happened.
			last = errors.New("POST to the destination failed (network error)")
		} else {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if resp.StatusCode < 300 {
				return attempt, nil
			}
			last = fmt.Errorf("the destination answered %d", resp.StatusCode)
			retry = resp.StatusCode >= 500 || resp.StatusCode == 429 || resp.StatusCode == 408
		}
		if !retry || attempt == s.cfg.HTTPAttempts || ctx.Err() != nil {
			return attempt, last
		}
		select {
		case <-ctx.Done():
			return attempt, last
		case <-time.After(backoff):
		}
		backoff *= 2
	}
	return s.cfg.HTTPAttempts, last
}
