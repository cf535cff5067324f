// Package promread is the Prometheus app's read side: a storage.Queryable for the
// upstream PromQL engine over the promstore tables of one database, translating label
// matchers to SQL on the tags table and streaming series with their float samples and
// native histograms.
package promread

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/promstore"
	"github.com/svc-data/svc/query/sqlquote"
)

// DefaultMaxSamples bounds the samples one Select loads from the engine when the target
// names no bound (the PromQL engine's own max samples bounds what it holds at once).
const DefaultMaxSamples = 50_000_000

// A Target is where a query reads: the promstore tables of one engine database.
type Target struct {
	Engine query.Engine
	// Database is the engine database holding the promstore tables.
	Database string
	// QueryID, when set, prefixes the engine query ids of the statements run (each gets
	// its own suffix), so that they can be found and killed.
	QueryID string
	// MaxSamples bounds the samples one Select loads; 0 is DefaultMaxSamples.
	MaxSamples int
	// Budget, when set, bounds the bytes of series and samples the query's Selects
	// hold, all of them together (and, through its parent, the organization's queries).
	Budget *Budget
}

// ErrTooManySamples is returned when a Select would load more than the target's
// MaxSamples; the API answers it as Prometheus answers too many samples.
var ErrTooManySamples = promql.ErrTooManySamples("storage (narrow the time range or the series selected)")

// Queryable reads a fixed target or, when built by ContextQueryable, the target its
// requests' contexts carry (WithTarget).
type Queryable struct {
	fixed *Target
	// unhashed holds the engine databases found with a data table made before
	// metric_hash, and when (readFloats).
	unhashed sync.Map
}

// New returns the Queryable of one target.
func New(t Target) *Queryable { return &Queryable{fixed: &t} }

// ContextQueryable returns a Queryable reading the target of each call's context, for one
// engine serving many tenants: the HTTP API puts the caller's target in the request.
func ContextQueryable() *Queryable { return &Queryable{} }

type targetKey struct{}

// WithTarget returns ctx carrying t for a ContextQueryable.
func WithTarget(ctx context.Context, t Target) context.Context {
	return context.WithValue(ctx, targetKey{}, t)
}

// errNoTarget is a programming error: a ContextQueryable used without WithTarget.
var errNoTarget = errors.New("promread: no target in the request context")

func (q *Queryable) target(ctx context.Context) (Target, error) {
	if q.fixed != nil {
		return *q.fixed, nil
	}
	t, ok := ctx.Value(targetKey{}).(Target)
	if !ok {
		return Target{}, errNoTarget
	}
	return t, nil
}

// Querier implements storage.Queryable.
func (q *Queryable) Querier(mint, maxt int64) (storage.Querier, error) {
	return &querier{q: q, mint: mint, maxt: maxt}, nil
}

type querier struct {
	q          *Queryable
	mint, maxt int64
	seq        atomic.Int32 // statements run, for their query ids (some run at once)
	// pushdown, when set, answers the query's synthetic selectors (WithPushdown).
	pushdown *Pushdown
}

func (*querier) Close() error { return nil }

// stream runs one statement of the target.
func (qr *querier) stream(ctx context.Context, t Target, sql string) (query.Rows, error) {
	return t.Engine.Stream(ctx, sql, qr.options(t))
}

// options are the next statement's: its own query id under the target's.
func (qr *querier) options(t Target) query.Options {
	opt := query.Options{}
	if t.QueryID != "" {
		opt.QueryID = t.QueryID + "-" + strconv.Itoa(int(qr.seq.Add(1)))
	}
	return opt
}

// missing reports whether err is the engine saying the tables are not there yet (no
// write has reached the database): an empty store, not an error.
func missing(err error) bool {
	return engineerr.IsUnknownTable(err) || engineerr.IsUnknownDatabase(err)
}

// series is one series read from the tags table.
type series struct {
	id     uuid.UUID
	labels labels.Labels
	floats []fsample
	hists  []hsample
}

// loadSeries reads the series the matchers select, verified in Go with the matchers
// themselves (the engine's selection is the push-down; Go's is the definition), sorted
// by labels, and returns the statement that selected them (seriesSQL).
func (qr *querier) loadSeries(ctx context.Context, t Target, ms []*labels.Matcher, mint, maxt int64) ([]*series, string, error) {
	sel, err := seriesSQL(t.Database, ms, mint, maxt)
	if err != nil {
		return nil, "", err
	}
	out, err := qr.readSeries(ctx, t, sel, ms)
	return out, sel, err
}

// readSeries runs sel (seriesSQL) and keeps the series the matchers select, sorted by
// labels.
func (qr *querier) readSeries(ctx context.Context, t Target, sel string, ms []*labels.Matcher) ([]*series, error) {
	out, _, err := qr.scanSeries(ctx, t, sel, ms, false)
	return out, err
}

// scanSeries is readSeries, and with flagged for a statement with a fourth column
// (flaggedSeriesSQL) also whether that column is set for any series it keeps; a flagged
// statement on missing tables returns the engine's error.
func (qr *querier) scanSeries(ctx context.Context, t Target, sql string, ms []*labels.Matcher, flagged bool) ([]*series, bool, error) {
	rows, err := qr.stream(ctx, t, sql)
	if err != nil {
		if missing(err) && !flagged {
			return nil, false, nil
		}
		return nil, false, err
	}
	defer rows.Close()
	var out []*series
	anyFlag := false
	b := labels.NewScratchBuilder(8)
	for rows.Next() {
		v := rows.Values()
		id, _ := v[0].(uuid.UUID)
		ls := labelsOf(&b, v[1], v[2])
		if !matchesAll(ms, ls) {
			continue
		}
		if flagged {
			if f, _ := v[3].(uint8); f != 0 {
				anyFlag = true
			}
		}
		if err := t.Budget.charge(seriesBytes + labelBytes(ls)); err != nil {
			return nil, false, err
		}
		out = append(out, &series{id: id, labels: ls})
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	sort.Slice(out, func(i, j int) bool { return labels.Compare(out[i].labels, out[j].labels) < 0 })
	return out, anyFlag, nil
}

func matchesAll(ms []*labels.Matcher, ls labels.Labels) bool {
	for _, m := range ms {
		if !m.Matches(ls.Get(m.Name)) {
			return false
		}
	}
	return true
}

// errNoPushdown answers a selection naming PushdownLabel that is not one of the query's
// pushed-down selections (a query may not name the label itself).
var errNoPushdown = fmt.Errorf("label %s is reserved", PushdownLabel)

// Select implements storage.Querier: the series the matchers select, sorted by labels
// (always: the engine's query is sorted, whatever sortSeries asks), with their samples in
// the hints' time range, or none when the hints ask for series only.
func (qr *querier) Select(ctx context.Context, _ bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	t, err := qr.q.target(ctx)
	if err != nil {
		return storage.ErrSeriesSet(err)
	}
	if key := pushdownKey(ms); key != "" {
		if qr.pushdown == nil {
			return storage.ErrSeriesSet(errNoPushdown)
		}
		spec, ok := qr.pushdown.Specs[key]
		if !ok {
			return storage.ErrSeriesSet(errNoPushdown)
		}
		return qr.selectPushdown(ctx, t, *qr.pushdown, spec)
	}
	mint, maxt := qr.mint, qr.maxt
	if hints != nil {
		mint, maxt = max(mint, hints.Start), min(maxt, hints.End)
	}
	var ss []*series
	if hints != nil && hints.Func == "series" {
		ss, _, err = qr.loadSeries(ctx, t, ms, mint, maxt)
	} else {
		ss, err = qr.loadWithSamples(ctx, t, ms, mint, maxt)
	}
	if err != nil {
		return storage.ErrSeriesSet(err)
	}
	if hints != nil && hints.Limit > 0 && len(ss) > hints.Limit {
		ss = ss[:hints.Limit]
	}
	return &seriesSet{series: ss}
}

// loadWithSamples reads the series the matchers select with their samples between mint
// and maxt, verified with the matchers and sorted by labels: the series, their floats
// (readFloats) and their native histograms (histogramsSQL), three statements at once.
func (qr *querier) loadWithSamples(ctx context.Context, t Target, ms []*labels.Matcher, mint, maxt int64) ([]*series, error) {
	sel, err := seriesSQL(t.Database, ms, mint, maxt)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg                            sync.WaitGroup
		out                           []*series
		byID                          map[rowBinaryID]*series
		seriesErr, floatsErr, histErr error
		seriesRead                    = make(chan struct{})
		n                             atomic.Int64 // samples loaded, floats and histograms
	)
	limit := int64(t.MaxSamples)
	if limit <= 0 {
		limit = DefaultMaxSamples
	}
	// of is the series of an id, once the series are read (nil for one the matchers
	// refused in Go).
	of := func(id rowBinaryID) (*series, error) {
		<-seriesRead
		return byID[id], seriesErr
	}
	wg.Go(func() {
		defer close(seriesRead)
		if out, seriesErr = qr.readSeries(ctx, t, sel, ms); seriesErr != nil {
			cancel()
			return
		}
		byID = make(map[rowBinaryID]*series, len(out))
		for _, s := range out {
			byID[rowBinaryIDOf(s.id)] = s
		}
	})
	wg.Go(func() {
		floatsErr = qr.readFloats(ctx, t, ms, mint, maxt, false, func(id rowBinaryID, ts []int64, vs []uint64) error {
			s, err := of(id)
			if s == nil || err != nil {
				return err
			}
			if n.Add(int64(len(ts))) > limit {
				return ErrTooManySamples
			}
			if err := t.Budget.charge(int64(len(ts)) * floatSampleBytes); err != nil {
				return err
			}
			s.floats = make([]fsample, len(ts))
			for i := range ts {
				s.floats[i] = fsample{t: ts[i], f: math.Float64frombits(vs[i])}
			}
			return nil
		})
		if floatsErr != nil {
			cancel()
		}
	})
	wg.Go(func() {
		histErr = qr.readHistograms(ctx, t, ms, mint, maxt, func(id uuid.UUID, hs []hsample) error {
			s, err := of(rowBinaryIDOf(id))
			if s == nil || err != nil {
				return err
			}
			if n.Add(int64(len(hs))) > limit {
				return ErrTooManySamples
			}
			if err := t.Budget.charge(histogramBytes(hs)); err != nil {
				return err
			}
			s.hists = hs
			return nil
		})
		if histErr != nil {
			cancel()
		}
	})
	wg.Wait()
	if err := firstCause(seriesErr, floatsErr, histErr); err != nil {
		return nil, err
	}
	return out, nil
}

// firstCause is the first of errs that is not a cancellation (which a statement run at
// once with a failing one gets), else the first error.
func firstCause(errs ...error) error {
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, context.Canceled) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// readHistograms calls each with the native histograms between mint and maxt of every
// series the matchers select in the engine (idsSQL) that has some, ordered by time.
func (qr *querier) readHistograms(ctx context.Context, t Target, ms []*labels.Matcher, mint, maxt int64, each func(uuid.UUID, []hsample) error) error {
	where, err := whereSQL(ms)
	if err != nil {
		return err
	}
	rows, err := qr.stream(ctx, t, histogramsSQL(t.Database, idsSQL(t.Database, where), mint, maxt))
	if err != nil {
		if missing(err) {
			return nil
		}
		return err
	}
	defer rows.Close()
	for rows.Next() {
		v := rows.Values()
		id, _ := v[0].(uuid.UUID)
		hs, err := histogramsOf(v[1:])
		if err != nil {
			return err
		}
		if err := each(id, hs); err != nil {
			return err
		}
	}
	return rows.Err()
}

// labelsOf builds a series' labels from the tags table's metric_name and tags.
func labelsOf(b *labels.ScratchBuilder, name, tags any) labels.Labels {
	n, _ := name.(string)
	m, _ := tags.(map[string]string)
	b.Reset()
	b.Add(promstore.MetricNameLabel, n)
	for k, val := range m {
		if val != "" {
			b.Add(k, val)
		}
	}
	b.Sort()
	return b.Labels()
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// LabelNames implements storage.LabelQuerier: the label names of the series the matchers
// select in the querier's time range, sorted.
func (qr *querier) LabelNames(ctx context.Context, hints *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	t, err := qr.q.target(ctx)
	if err != nil {
		return nil, nil, err
	}
	sel, err := seriesSQL(t.Database, ms, qr.mint, qr.maxt)
	if err != nil {
		return nil, nil, err
	}
	sql := fmt.Sprintf("SELECT DISTINCT name FROM (SELECT arrayJoin(arrayConcat([%s], arrayFilter((k, v) -> v != '', mapKeys(tags), mapValues(tags)))) AS name FROM (%s)) ORDER BY name%s",
		sqlquote.String(promstore.MetricNameLabel), sel, limitSQL(hints))
	names, err := qr.strings(ctx, t, sql)
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(names) // the engine's order is bytes; so is Go's, this only guards it
	return names, nil, nil
}

// LabelValues implements storage.LabelQuerier: the values of label name among the series
// the matchers select in the querier's time range, sorted, empty values left out.
func (qr *querier) LabelValues(ctx context.Context, name string, hints *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	t, err := qr.q.target(ctx)
	if err != nil {
		return nil, nil, err
	}
	sel, err := seriesSQL(t.Database, ms, qr.mint, qr.maxt)
	if err != nil {
		return nil, nil, err
	}
	col := labelColumn(name)
	sql := fmt.Sprintf("SELECT DISTINCT %s AS v FROM (%s) WHERE v != '' ORDER BY v%s", col, sel, limitSQL(hints))
	vals, err := qr.strings(ctx, t, sql)
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(vals)
	return vals, nil, nil
}

func limitSQL(h *storage.LabelHints) string {
	if h == nil || h.Limit <= 0 {
		return ""
	}
	return " LIMIT " + strconv.Itoa(h.Limit)
}

// strings runs a statement of one String column.
func (qr *querier) strings(ctx context.Context, t Target, sql string) ([]string, error) {
	rows, err := qr.stream(ctx, t, sql)
	if err != nil {
		if missing(err) {
			return nil, nil
		}
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		s, _ := rows.Values()[0].(string)
		out = append(out, s)
	}
	return out, rows.Err()
}
