package promread

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/google/uuid"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"

	"github.com/svc-data/svc/query/promstore"
	"github.com/svc-data/svc/query/sqlquote"
)

// Exemplars reads exemplars from the target of each call's context (WithTarget).
type Exemplars struct{}

// ContextExemplars returns the storage.ExemplarQueryable of the request's target.
func ContextExemplars() Exemplars { return Exemplars{} }

// ExemplarQuerier implements storage.ExemplarQueryable.
func (Exemplars) ExemplarQuerier(ctx context.Context) (storage.ExemplarQuerier, error) {
	q := ContextQueryable()
	t, err := q.target(ctx)
	if err != nil {
		return nil, err
	}
	return &exemplarQuerier{ctx: ctx, t: t}, nil
}

type exemplarQuerier struct {
	ctx context.Context
	t   Target
}

// Select implements storage.ExemplarQuerier: the exemplars between start and end of the
// series any of the matcher sets selects, by series labels.
func (e *exemplarQuerier) Select(start, end int64, sets ...[]*labels.Matcher) ([]exemplar.QueryResult, error) {
	qr := &querier{q: New(e.t), mint: start, maxt: end}
	byID := map[uuid.UUID]*exemplar.QueryResult{}
	for _, ms := range sets {
		ss, sel, err := qr.loadSeries(e.ctx, e.t, ms, start, end)
		if err != nil {
			return nil, err
		}
		if len(ss) == 0 {
			continue
		}
		want := map[uuid.UUID]labels.Labels{}
		for _, s := range ss {
			if byID[s.id] == nil {
				want[s.id] = s.labels
			}
		}
		sql := fmt.Sprintf("SELECT id, toUnixTimestamp64Milli(timestamp), reinterpretAsUInt64(value), labels FROM %s "+
			"WHERE id IN (SELECT id FROM (%s)) AND timestamp >= %s AND timestamp <= %s ORDER BY id, timestamp",
			table(e.t.Database, promstore.ExemplarsTable), sel, timeLiteral(start), timeLiteral(end))
		rows, err := qr.stream(e.ctx, e.t, sql)
		if err != nil {
			if missing(err) {
				continue
			}
			return nil, err
		}
		for rows.Next() {
			v := rows.Values()
			id, _ := v[0].(uuid.UUID)
			ls, ok := want[id]
			if !ok {
				continue
			}
			ts, _ := v[1].(int64)
			bits, _ := v[2].(uint64)
			m, _ := v[3].(map[string]string)
			r := byID[id]
			if r == nil {
				r = &exemplar.QueryResult{SeriesLabels: ls}
				byID[id] = r
			}
			r.Exemplars = append(r.Exemplars, exemplar.Exemplar{Labels: labels.FromMap(m), Value: math.Float64frombits(bits), Ts: ts, HasTs: true})
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	out := make([]exemplar.QueryResult, 0, len(byID))
	for _, r := range byID {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return labels.Compare(out[i].SeriesLabels, out[j].SeriesLabels) < 0 })
	return out, nil
}

// Metadata is one metric family's metadata.
type Metadata struct {
	Type string `json:"type"`
	Help string `json:"help"`
	Unit string `json:"unit"`
}

// MetricMetadata reads the metrics-metadata table: every family's metadata, or metric's
// alone when named, at most limit families (negative: no limit), by name.
func MetricMetadata(ctx context.Context, t Target, metric string, limit int) (map[string][]Metadata, error) {
	where := "1"
	if metric != "" {
		where = "metric_family_name = " + sqlquote.String(metric)
	}
	lim := ""
	if limit >= 0 {
		lim = fmt.Sprintf(" LIMIT %d", limit)
	}
	sql := fmt.Sprintf("SELECT metric_family_name, type, unit, help FROM %s FINAL WHERE %s ORDER BY metric_family_name%s",
		table(t.Database, promstore.MetricsTable), where, lim)
	qr := &querier{q: New(t)}
	rows, err := qr.stream(ctx, t, sql)
	out := map[string][]Metadata{}
	if err != nil {
		if missing(err) {
			return out, nil
		}
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		v := rows.Values()
		name, _ := v[0].(string)
		typ, _ := v[1].(string)
		unit, _ := v[2].(string)
		help, _ := v[3].(string)
		out[name] = append(out[name], Metadata{Type: typ, Help: help, Unit: unit})
	}
	return out, rows.Err()
}
