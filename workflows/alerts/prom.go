package alerts

import (
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// The Prometheus app's /rules and /alerts in Prometheus's own shape (what Grafana
// reads): every PromQL alert of the database is an alerting rule in a group of its own.

// RuleGroup is one group of /api/v1/rules.
type RuleGroup struct {
	Name           string    `json:"name"`
	File           string    `json:"file"`
	Interval       float64   `json:"interval"`
	Limit          int       `json:"limit"`
	Rules          []Rule    `json:"rules"`
	LastEvaluation time.Time `json:"lastEvaluation"`
	EvaluationTime float64   `json:"evaluationTime"`
}

// Rule is an alerting rule.
type Rule struct {
	State          string            `json:"state"`
	Name           string            `json:"name"`
	Query          string            `json:"query"`
	Duration       float64           `json:"duration"`
	KeepFiringFor  float64           `json:"keepFiringFor"`
	Labels         map[string]string `json:"labels"`
	Annotations    map[string]string `json:"annotations"`
	Alerts         []PromAlert       `json:"alerts"`
	Health         string            `json:"health"`
	LastError      string            `json:"lastError,omitempty"`
	Type           string            `json:"type"`
	LastEvaluation time.Time         `json:"lastEvaluation"`
	EvaluationTime float64           `json:"evaluationTime"`
}

// PromAlert is one active (pending or firing) series of a rule.
type PromAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	ActiveAt    *time.Time        `json:"activeAt,omitempty"`
	Value       string            `json:"value"`
}

// Rules returns the cluster's PromQL alerts over database as rule groups.
func (s *Service) Rules(ctx context.Context, cluster uuid.UUID, database string) []RuleGroup {
	out := []RuleGroup{}
	for _, a := range s.model.Alerts(cluster) {
		if a.Language != LangPromQL || a.Database != database {
			continue
		}
		r := Rule{State: StateInactive, Name: a.Name, Query: a.Query, Duration: float64(a.ForSeconds), Labels: a.Labels,
			Annotations: a.Annotations, Alerts: []PromAlert{}, Health: "unknown", Type: "alerting"}
		if st, exp, err := s.stateOf(ctx, a.ID); err == nil {
			switch st.health {
			case StateError:
				r.Health, r.LastError = "err", "the last evaluation failed; see GET /v1/alerts/"+a.ID.String()+"/history"
			default:
				if !exp.IsNoStream() {
					r.Health = "ok"
				}
			}
			for _, key := range st.keys() {
				g := st.groups[key]
				if g.State != StatePending && g.State != StateFiring {
					continue
				}
				if g.State == StateFiring || r.State == StateInactive {
					r.State = g.State
				}
				v := ""
				if g.Value != nil {
					v = strconv.FormatFloat(*g.Value, 'e', -1, 64)
				}
				ann := map[string]string{}
				if g.Tr != nil && g.Tr.Annotations != nil {
					ann = g.Tr.Annotations
				}
				r.Alerts = append(r.Alerts, PromAlert{Labels: g.Labels, Annotations: ann, State: g.State, ActiveAt: g.ActiveAt, Value: v})
			}
		}
		out = append(out, RuleGroup{Name: a.Name, File: "svc", Interval: float64(a.IntervalSeconds), Rules: []Rule{r}})
	}
	return out
}
