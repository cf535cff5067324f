package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"text/template"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/prometheus/common/model"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/spl"
)

// Limits of a definition.
const (
	MaxInterval     = 86_400
	DefaultInterval = 60
	maxName         = 256
	maxQuery        = 1 << 20
	maxDestinations = 16
	maxLabels       = 64
	maxLabelBytes   = 4096
	maxFor          = 7 * 86_400
)

// Query languages.
const (
	LangSQL    = "sql"
	LangPromQL = "promql"
	LangSPL    = "spl"
)

// DefaultPagerDutyURL is PagerDuty's Events API v2 endpoint.
const DefaultPagerDutyURL = "https://events.pagerduty.com/v2/enqueue"

var ops = []string{">", ">=", "<", "<=", "==", "!="}

// OpAny makes every returned group or series active (a Prometheus alerting rule: the
// expression filters); an empty result is then normal, not no_data.
const OpAny = "any"

// FieldError names the request field that is invalid (answered 400). Code, when set,
// is the error code to answer (a search's own, such as spl_syntax_error); Hint helps.
type FieldError struct {
	Field   string
	Message string
	Code    string
	Hint    string
}

func (e *FieldError) Error() string { return e.Message }

func invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

func object(raw []byte, field string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, invalid(field, "%s must be a JSON object", field)
	}
	return m, nil
}

func str(raw json.RawMessage, field string) (string, error) {
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil || s == nil {
		return "", invalid(field, "%s must be a string", field)
	}
	return *s, nil
}

func strMap(raw json.RawMessage, field string) (map[string]string, error) {
	var m map[string]string
	if string(raw) == "null" {
		return map[string]string{}, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalid(field, "%s must be an object of names to string values", field)
	}
	if len(m) > maxLabels {
		return nil, invalid(field, "%s holds at most %d entries", field, maxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !model.LabelName(k).IsValidLegacy() {
			return nil, invalid(field+"."+k, "%s.%s: names are letters, digits and underscores, not starting with a digit", field, k)
		}
		if len(m[k]) > maxLabelBytes {
			return nil, invalid(field+"."+k, "%s.%s is longer than %d bytes", field, k, maxLabelBytes)
		}
		if err := checkTemplate(m[k]); err != nil {
			return nil, invalid(field+"."+k, "%s.%s is not a valid template: %v", field, k, err)
		}
	}
	return m, nil
}

// seconds reads a duration: a number of seconds or a Prometheus duration string ("5m").
func seconds(raw json.RawMessage, field string, lo, hi int) (int, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		if f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
			return 0, invalid(field, "%s must be whole seconds from %d to %d", field, lo, hi)
		}
		return int(f), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, invalid(field, "%s must be seconds or a duration such as \"5m\"", field)
	}
	d, err := model.ParseDuration(s)
	if err != nil || time.Duration(d)%time.Second != 0 || time.Duration(d) < time.Duration(lo)*time.Second || time.Duration(d) > time.Duration(hi)*time.Second {
		return 0, invalid(field, "%s must be a duration of whole seconds from %ds to %ds, such as \"5m\"", field, lo, hi)
	}
	return int(time.Duration(d) / time.Second), nil
}

// apply validates a create (create=true) or PATCH body and copies it onto a: omitted
// fields keep their values.
func (s *Service) apply(ctx context.Context, raw []byte, create bool, a *catalog.Alert) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return invalid("body", "the request body is empty; send a JSON object")
	}
	top, err := object(raw, "body")
	if err != nil {
		return err
	}
	if create {
		for _, f := range []string{"name", "query", "condition"} {
			if _, ok := top[f]; !ok {
				return invalid(f, "%s is required", f)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		v := top[k]
		switch k {
		case "name":
			n, err := str(v, "name")
			if err != nil {
				return err
			}
			a.Name = strings.ToLower(strings.TrimSpace(n))
			if a.Name == "" || len(a.Name) > maxName {
				return invalid("name", "name must be 1 to %d characters after trimming", maxName)
			}
		case "query":
			if err := s.applyQuery(v, a); err != nil {
				return err
			}
		case "interval_seconds":
			if a.IntervalSeconds, err = seconds(v, "interval_seconds", 1, MaxInterval); err != nil {
				return err
			}
		case "condition":
			if err := applyCondition(v, a); err != nil {
				return err
			}
		case "for":
			if a.ForSeconds, err = seconds(v, "for", 0, maxFor); err != nil {
				return err
			}
		case "labels":
			if a.Labels, err = strMap(v, "labels"); err != nil {
				return err
			}
		case "annotations":
			if a.Annotations, err = strMap(v, "annotations"); err != nil {
				return err
			}
		case "enabled":
			var e *bool
			if err := json.Unmarshal(v, &e); err != nil || e == nil {
				return invalid("enabled", "enabled must be true or false")
			}
			a.Enabled = *e
		case "destinations":
			if err := s.applyDestinations(ctx, v, a); err != nil {
				return err
			}
		case "managed_by":
			a.ManagedBy = ""
			if string(v) != "null" {
				m, err := str(v, "managed_by")
				if err != nil {
					return err
				}
				if a.ManagedBy, err = shortName(strings.TrimSpace(m), "managed_by"); err != nil {
					return err
				}
			}
		case "silenced_until":
			if string(v) == "null" {
				a.SilencedUntil = nil
				continue
			}
			var t time.Time
			if err := json.Unmarshal(v, &t); err != nil {
				return invalid("silenced_until", "silenced_until must be an RFC 3339 time or null")
			}
			t = t.UTC()
			a.SilencedUntil = &t
		default:
			return invalid(k, "%q is not an alert field", k)
		}
	}
	return nil
}

func (s *Service) applyQuery(v json.RawMessage, a *catalog.Alert) error {
	q, err := object(v, "query")
	if err != nil {
		return err
	}
	var langs []string
	var window []string
	was := a.Language
	for _, k := range slices.Sorted(maps.Keys(q)) {
		switch k {
		case "database":
			if a.Database, err = str(q[k], "query.database"); err != nil {
				return err
			}
			a.Database = strings.TrimSpace(a.Database)
		case LangSQL, LangPromQL, LangSPL:
			text, err := str(q[k], "query."+k)
			if err != nil {
				return err
			}
			if strings.TrimSpace(text) == "" || len(text) > maxQuery {
				return invalid("query."+k, "query.%s must be 1 byte to 1 MiB", k)
			}
			a.Language, a.Query = k, text
			langs = append(langs, k)
		case "earliest", "latest":
			var b string
			if string(q[k]) != "null" {
				var tb spl.TimeBound
				if err := json.Unmarshal(q[k], &tb); err != nil {
					return invalid("query."+k, "query.%s must be a time bound such as \"-15m\", \"now\" or epoch seconds", k)
				}
				b = strings.TrimSpace(string(tb))
			}
			if k == "earliest" {
				a.Earliest = b
			} else {
				a.Latest = b
			}
			window = append(window, k)
		default:
			return invalid("query."+k, "query.%s is not a query field: database, one of sql, promql or spl, and for spl earliest and latest", k)
		}
	}
	if len(langs) > 1 {
		return invalid("query", "query holds one of sql, promql or spl, not %s", strings.Join(langs, " and "))
	}
	if a.Language == "" {
		return invalid("query", "query needs one of sql, promql or spl")
	}
	if a.Language != was && len(window) == 0 {
		// A search's window does not carry over to another query.
		a.Earliest, a.Latest = "", ""
	}
	if len(window) > 0 && a.Language != LangSPL {
		return invalid("query."+window[0], "query.%s is the time window of a search (query.spl); a %s query names its own", window[0], a.Language)
	}
	if a.Language == LangPromQL && s.prom == nil {
		return invalid("query.promql", "the Prometheus query API is not configured on this node")
	}
	if a.Language == LangSPL {
		if s.search == nil {
			return invalid("query.spl", "log search is not configured on this node")
		}
		if _, err := spl.Analyze(a.Query, a.Earliest, a.Latest); err != nil {
			return splError(err)
		}
	}
	if a.Database == "" {
		a.Database = "default"
	}
	if _, ok := s.model.Database(a.ClusterID, a.Database); !ok {
		return invalid("query.database", "database %q does not exist in this cluster", a.Database)
	}
	return nil
}

// splError is a search's own error (positioned, with its code and hint) as the
// request field it is about: the window's bounds or the search text.
func splError(err error) error {
	es, ok := spl.AsErrors(err)
	if !ok {
		return err
	}
	field := "query.spl"
	if es[0].Bound != "" {
		field = "query." + es[0].Bound
	}
	return &FieldError{Field: field, Code: es.Code(), Message: es.Error(), Hint: es.Hint()}
}

func applyCondition(v json.RawMessage, a *catalog.Alert) error {
	c, err := object(v, "condition")
	if err != nil {
		return err
	}
	of, op, thr := "value", "", json.RawMessage(nil)
	for _, k := range slices.Sorted(maps.Keys(c)) {
		switch k {
		case "of":
			if of, err = str(c[k], "condition.of"); err != nil {
				return err
			}
		case "op":
			if op, err = str(c[k], "condition.op"); err != nil {
				return err
			}
		case "threshold":
			thr = c[k]
		default:
			return invalid("condition."+k, "condition.%s is not a condition field: of, op and threshold", k)
		}
	}
	if of != "value" && of != "row_count" {
		return invalid("condition.of", "condition.of is value (per group or series) or row_count")
	}
	if op == OpAny {
		// Prometheus's semantics: every group or series the query returns is active.
		if thr != nil && string(thr) != "null" {
			return invalid("condition.threshold", "condition.op any takes no threshold")
		}
		a.Of, a.Op, a.Threshold = of, op, 0
		return nil
	}
	if !slices.Contains(ops, op) {
		return invalid("condition.op", "condition.op must be one of %s, or any", strings.Join(ops, " "))
	}
	var f *float64
	if thr == nil || json.Unmarshal(thr, &f) != nil || f == nil || math.IsNaN(*f) || math.IsInf(*f, 0) {
		return invalid("condition.threshold", "condition.threshold must be a number")
	}
	a.Of, a.Op, a.Threshold = of, op, *f
	return nil
}

// applyDestinations replaces the list: destinations with an id keep it and keep their
// sealed URL, secret and routing key unless sent again; those without one are new.
func (s *Service) applyDestinations(ctx context.Context, v json.RawMessage, a *catalog.Alert) error {
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil || list == nil {
		return invalid("destinations", "destinations must be an array")
	}
	if len(list) > maxDestinations {
		return invalid("destinations", "an alert has at most %d destinations", maxDestinations)
	}
	old := map[uuid.UUID]catalog.AlertDestination{}
	for _, d := range a.Destinations {
		old[d.ID] = d
	}
	out := make([]catalog.AlertDestination, 0, len(list))
	seen := map[uuid.UUID]bool{}
	names := map[string]bool{}
	for i, one := range list {
		field := fmt.Sprintf("destinations[%d]", i)
		m, err := object(one, field)
		if err != nil {
			return err
		}
		var d catalog.AlertDestination
		if raw, ok := m["id"]; ok {
			var id uuid.UUID
			if err := json.Unmarshal(raw, &id); err != nil {
				return invalid(field+".id", "%s.id must be the id of one of the alert's destinations", field)
			}
			prev, ok := old[id]
			if !ok || seen[id] {
				return invalid(field+".id", "%s.id is not a destination of this alert; omit id for a new one", field)
			}
			seen[id], d = true, prev
		} else {
			d.ID = uuid.New()
		}
		if raw, ok := m["type"]; ok {
			t, err := str(raw, field+".type")
			if err != nil {
				return err
			}
			if d.Type != "" && t != d.Type {
				return invalid(field+".type", "%s.type cannot change; remove the destination and add a new one", field)
			}
			d.Type = t
		}
		if raw, ok := m["name"]; ok {
			n, err := str(raw, field+".name")
			if err != nil {
				return err
			}
			if d.Name, err = shortName(strings.TrimSpace(n), field+".name"); err != nil {
				return err
			}
		}
		if d.Name != "" && names[d.Name] {
			return invalid(field+".name", "%s.name %q is another destination's; names are unique in an alert", field, d.Name)
		}
		names[d.Name] = d.Name != ""
		allowed := map[string][]string{catalog.DestWebhook: {"url", "secret"}, catalog.DestSlack: {"url"}, catalog.DestPagerDuty: {"url", "routing_key"}}
		keys, ok := allowed[d.Type]
		if !ok {
			return invalid(field+".type", "%s.type must be webhook, slack or pagerduty", field)
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k == "id" || k == "type" || k == "name" {
				continue
			}
			if !slices.Contains(keys, k) {
				return invalid(field+"."+k, "%s.%s is not a field of a %s destination (%s)", field, k, d.Type, strings.Join(keys, ", "))
			}
			val, err := str(m[k], field+"."+k)
			if err != nil {
				return err
			}
			switch k {
			case "url":
				if _, err := s.cfg.Egress.Check(ctx, val); err != nil {
					// The URL is a secret (a Slack hook's is its credential): not quoted.
					return invalid(field+".url", "%s.url is not allowed by the egress policy (public http or https addresses only; an operator can allow more with SVC_URL_IMPORT_ALLOW)", field)
				}
				d.SealedURL = s.sealer.Seal(val, d.ID.String()+"/url")
			case "secret":
				if len(val) < 16 {
					return invalid(field+".secret", "%s.secret must be at least 16 characters", field)
				}
				d.SealedSecret = s.sealer.Seal(val, d.ID.String()+"/secret")
			case "routing_key":
				if strings.TrimSpace(val) == "" {
					return invalid(field+".routing_key", "%s.routing_key must not be empty", field)
				}
				d.SealedRoutingKey = s.sealer.Seal(val, d.ID.String()+"/routing_key")
			}
		}
		switch {
		case d.Type == catalog.DestPagerDuty && d.SealedRoutingKey == "":
			return invalid(field+".routing_key", "%s.routing_key is required for a pagerduty destination", field)
		case d.Type == catalog.DestPagerDuty && d.SealedURL == "":
			d.SealedURL = s.sealer.Seal(DefaultPagerDutyURL, d.ID.String()+"/url")
		case d.SealedURL == "":
			return invalid(field+".url", "%s.url is required for a %s destination", field, d.Type)
		}
		out = append(out, d)
	}
	a.Destinations = out
	return nil
}

// shortName checks a name given to an alert or a destination: at most 128 printable
// characters ("" is no name).
func shortName(s, field string) (string, error) {
	if len(s) > 128 {
		return "", invalid(field, "%s is at most 128 bytes", field)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return "", invalid(field, "%s holds printable characters only", field)
		}
	}
	return s, nil
}

// tmplData is what label and annotation templates see: $labels and $value.
type tmplData struct {
	Labels map[string]string
	Value  float64
}

const tmplHeader = "{{$labels := .Labels}}{{$value := .Value}}"

func checkTemplate(text string) error {
	_, err := template.New("t").Option("missingkey=zero").Parse(tmplHeader + text)
	return err
}

// expand fills a label or annotation template; a template that fails keeps its text
// with the error, so a mistake is visible where it is read.
func expand(text string, labels map[string]string, value float64) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	t, err := template.New("t").Option("missingkey=zero").Parse(tmplHeader + text)
	if err != nil {
		return text
	}
	var b strings.Builder
	if err := t.Execute(&b, tmplData{Labels: labels, Value: value}); err != nil {
		return text + " (template error: " + err.Error() + ")"
	}
	return b.String()
}
