package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/spl"
	"github.com/svc-data/svc/workflows"
)

// Alerts on log searches: a scheduled search as Splunk runs one. The search runs over
// the log-search app's events through the same code path as POST /v1/spl/search, over
// the window [earliest, latest) relative to the evaluation's scheduled time (default:
// the interval up to it, so consecutive evaluations tile time). A search returning
// events is counted (one group, its value the number of events); a statistics result
// is one group per row, named by the BY fields (docs/alerts.md).

// window is an SPL alert's time bounds with the defaults filled in.
func window(a *catalog.Alert) (earliest, latest string) {
	earliest, latest = a.Earliest, a.Latest
	if earliest == "" {
		earliest = "-" + strconv.Itoa(a.IntervalSeconds) + "s"
	}
	if latest == "" {
		latest = "now"
	}
	return earliest, latest
}

// observeSearch runs an SPL alert's search at the evaluation's time and computes a
// value per group.
func (s *Service) observeSearch(ctx context.Context, a *catalog.Alert, x workflows.Execution, at time.Time) result {
	if s.search == nil {
		return result{err: errors.New("log search is not configured on this node")}
	}
	if !s.model.AppInstalled(a.ClusterID, catalog.AppLogsearch) {
		return result{err: errors.New("the log search app is not installed in this cluster; install it, or disable the alert")}
	}
	earliest, latest := window(a)
	shape, err := spl.Analyze(a.Query, earliest, latest)
	if err != nil {
		return result{err: err}
	}
	text := a.Query
	if shape.Kind == spl.ResultEvents {
		// The number of events, exactly (not the 10,000 a search returns).
		if text, err = spl.WithCount(a.Query, "value"); err != nil {
			return result{err: err}
		}
		shape.Keys = []string{}
	}
	resp, err := s.search.Search(ctx, a.OrgID, a.ClusterID, a.Database, spl.Request{SPL: text,
		Earliest: spl.TimeBound(earliest), Latest: spl.TimeBound(latest), Now: at,
		QueryID: "alert-" + x.RunID + "-" + strconv.Itoa(x.Attempt)})
	if err != nil {
		return result{err: err}
	}
	groups := map[string]observed{}
	add := func(labels map[string]string, v float64) {
		groups[groupKey(labels)] = observed{labels: labels, value: v}
	}
	if a.Of == "row_count" && shape.Kind == spl.ResultStatistics {
		add(map[string]string{}, float64(len(resp.Data)))
		return result{groups: groups}
	}
	if len(resp.Data) == 0 {
		return result{groups: groups, noData: a.Op != OpAny}
	}
	for i, row := range resp.Data {
		labels, v, err := searchRowValue(resp.Meta, row, shape.Keys)
		if err != nil {
			return result{err: fmt.Errorf("result row %d: %v", i+1, err)}
		}
		add(labels, v)
	}
	return result{groups: groups}
}

// searchRowValue splits a statistics row into its group's labels (the key columns, as
// text; every column but the value's for a table, as for SQL) and its value (the column
// named value, else the last numeric column that is not a key).
func searchRowValue(meta []spl.Column, row spl.Row, keys []string) (map[string]string, float64, error) {
	if keys == nil {
		raw, err := row.MarshalJSON()
		if err != nil {
			return nil, 0, err
		}
		return rowValue(raw)
	}
	isKey := map[string]bool{}
	labels := map[string]string{}
	for _, k := range keys {
		isKey[k] = true
		if v, ok := row.Get(k); ok {
			labels[k] = labelText(v)
		}
	}
	vi := ""
	for _, c := range meta {
		if c.Name == "value" {
			vi = c.Name
		}
	}
	if vi == "" {
		for i := len(meta) - 1; i >= 0; i-- {
			if v, _ := row.Get(meta[i].Name); !isKey[meta[i].Name] && isNumber(v) {
				vi = meta[i].Name
				break
			}
		}
	}
	if vi == "" {
		return nil, 0, errors.New("no numeric column to compare (name it value with AS, or use condition.of row_count)")
	}
	v, _ := row.Get(vi)
	f, ok := number(v)
	if !ok {
		return nil, 0, fmt.Errorf("column %s is not a number", vi)
	}
	return labels, f, nil
}

func isNumber(v any) bool {
	_, ok := number(v)
	return ok
}

// number reads a result value as a float: the engine's numbers, or their text (64-bit
// integers may come quoted).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	case float64:
		return x, !math.IsNaN(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0, false
	}
	return numberJSON(b)
}

// labelText is a key column's value as a label: text as it is, anything else as JSON.
func labelText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s
	}
	if string(b) == "null" {
		return ""
	}
	return string(b)
}
