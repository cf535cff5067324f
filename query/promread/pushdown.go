package promread

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql/parser/posrange"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/svc-data/svc/query/promstore"
)

// PushdownLabel is the label name of the one matcher of a pushed-down selection: the
// PromQL query's function over a range selector is replaced (query/promapi) by a vector
// selector {__svc_pushdown__="<key>"}, and the Queryable answers it with the function's
// values on the query's step grid, computed in the engine (Pushdown.Specs[key]).
const PushdownLabel = "__svc_pushdown__"

// gridFuncs are the range functions computed in the engine on the step grid, each
// the upstream engine's own arithmetic, operation by operation, in the engine's SQL
// (gridSQL), so that the answers are Prometheus's to the bit: the engine's
// timeSeriesRateToGrid and timeSeriesDeltaToGrid compute the same formulas in another
// order and differ in the last bits (TestPushdownMatchesUpstream found it).
var gridFuncs = map[string]bool{
	"rate": true, "increase": true, "delta": true,
	"count_over_time": true, "last_over_time": true,
}

// CanPushDown reports whether function fn over a range selector is computed in the
// engine on the step grid.
func CanPushDown(fn string) bool { return gridFuncs[fn] }

// A Pushdown is what one query's pushed-down selections compute: the query's evaluation
// times and, by the key of each synthetic selector, its function.
type Pushdown struct {
	// Start and End are the query's first and last evaluation times (ms), Step its step
	// (0 for an instant query, Start == End).
	Start, End, Step int64
	Specs            map[string]Spec
}

// A Spec is one pushed-down function over a range selector.
type Spec struct {
	Func     string // a function CanPushDown reports
	Range    int64  // the range selector's range (ms)
	Matchers []*labels.Matcher
	// Pos is the range selector's position in the query, for the annotations the function
	// adds (rate's "might not be a counter").
	Pos posrange.PositionRange
	// KeepName keeps the metric name on the series: last_over_time keeps it, and
	// histogram_quantile over the series reads it (and drops it from its own answer);
	// otherwise it is dropped, as the function does.
	KeepName bool
}

// steps is the number of evaluation times and the last one.
func (p Pushdown) steps() (int, int64) {
	if p.Step <= 0 || p.End <= p.Start {
		return 1, p.Start
	}
	n := (p.End - p.Start) / p.Step
	return int(n) + 1, p.Start + n*p.Step
}

// WithPushdown returns the Queryable answering p's synthetic selectors (and any other
// selection as q does).
func (q *Queryable) WithPushdown(p Pushdown) storage.Queryable {
	return pushdownQueryable{q: q, p: &p}
}

type pushdownQueryable struct {
	q *Queryable
	p *Pushdown
}

func (pq pushdownQueryable) Querier(mint, maxt int64) (storage.Querier, error) {
	return &querier{q: pq.q, mint: mint, maxt: maxt, pushdown: pq.p}, nil
}

// pushdownKey is the key of a synthetic selector (the value of its PushdownLabel
// matcher), or "" for any other selection.
func pushdownKey(ms []*labels.Matcher) string {
	for _, m := range ms {
		if m.Name == PushdownLabel && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// HasHistograms reports whether any series the matchers select has native histogram
// samples between mint and maxt: the grid functions read floats only, so such a
// selection is left to the upstream engine.
func (q *Queryable) HasHistograms(ctx context.Context, ms []*labels.Matcher, mint, maxt int64) (bool, error) {
	t, err := q.target(ctx)
	if err != nil {
		return false, err
	}
	sel, err := seriesSQL(t.Database, ms, mint, maxt)
	if err != nil {
		return false, err
	}
	qr := &querier{q: q}
	rows, err := qr.stream(ctx, t, fmt.Sprintf("SELECT count() FROM (SELECT 1 FROM %s WHERE id IN (SELECT id FROM (%s)) AND timestamp >= %s AND timestamp <= %s LIMIT 1)",
		table(t.Database, promstore.HistogramsTable), sel, timeLiteral(mint), timeLiteral(maxt)))
	if err != nil {
		if missing(err) {
			return false, nil
		}
		return false, err
	}
	defer rows.Close()
	n := uint64(0)
	if rows.Next() {
		n, _ = rows.Values()[0].(uint64)
	}
	return n > 0, rows.Err()
}

// decimalSeconds is a millisecond duration as a Decimal64(3) of seconds, the grid
// functions' step and window for DateTime64(3) timestamps.
func decimalSeconds(ms int64) string {
	neg := ""
	if ms < 0 {
		neg, ms = "-", -ms
	}
	return fmt.Sprintf("toDecimal64('%s%d.%03d', 3)", neg, ms/1000, ms%1000)
}

// gridSQL computes spec's function for the series sel selects on p's evaluation times,
// one row per series with samples in reach: id, name, tags and the values' IEEE 754
// bits, a step without a value (the function has none there) as the stale marker, so
// that the upstream engine reading the grid as a vector selector finds nothing there.
//
// Each series' samples in reach are read in time order as arrays T (ms) and V, stale
// markers left out (Prometheus drops them from range selections). For each evaluation
// time g, the window (g-range, g] is the samples l+1..h (1-based) where h counts the
// samples at or before g and l those at or before g-range: both are counted at once for
// every g by sorting the samples' and the grid's times together (a sample before a grid
// time at the same instant) and summing. The functions are then the upstream engine's
// (extrapolatedRate, compareOverTime, ...), operation by operation in its order.
func gridSQL(db, sel string, p Pushdown, s Spec) string {
	n, last := p.steps()
	step := max(p.Step, 1)
	r := s.Range
	grid := fmt.Sprintf("arrayMap(k -> toInt64(%d) + toInt64(k) * %d, range(%d))", p.Start, step, n)
	stale := fmt.Sprintf("toUInt64(%d)", value.StaleNaN)
	// out is the values' bits; cols are the columns it reads, named.
	var out, cols string
	switch s.Func {
	case "rate", "increase", "delta":
		res := "V[h] - V[l + 1]"
		toStart := "DS1"
		if s.Func != "delta" {
			// Counter resets, added in order: the value before each drop.
			res = "arrayFold((acc, i) -> acc + V[i - 1], arrayFilter(i -> i > l + 1 AND i <= h, R), V[h] - V[l + 1])"
			// Counters cannot go below zero: extrapolate at most to the zero point.
			toStart = "arrayMap((ds1, res, si, l) -> if(res > 0 AND V[l + 1] >= 0 AND si * (V[l + 1] / res) < ds1, si * (V[l + 1] / res), ds1), DS1, RES, SI, LO)"
		}
		factor := "if(si != 0, (si + ds + de) / si, 1.)"
		if s.Func == "rate" {
			factor = "(" + factor + ") / " + strconv.FormatFloat(time.Duration(r*int64(time.Millisecond)).Seconds(), 'g', -1, 64)
		}
		cols = fmt.Sprintf("arrayMap((h, l) -> %s, HI, LO) AS RES, "+
			"arrayMap((h, l) -> (T[h] - T[l + 1]) / 1000, HI, LO) AS SI, "+
			"arrayMap((si, h, l) -> si / (h - l - 1), SI, HI, LO) AS A, "+
			"arrayMap((l, g) -> (T[l + 1] - (g - %d)) / 1000, LO, G) AS DS0, "+
			"arrayMap((ds0, a) -> if(ds0 >= a * 1.1, a / 2, ds0), DS0, A) AS DS1, "+
			"%s AS DS, "+
			"arrayMap((h, g) -> (g - T[h]) / 1000, HI, G) AS DE0, "+
			"arrayMap((de0, a) -> if(de0 >= a * 1.1, a / 2, de0), DE0, A) AS DE", res, r, toStart)
		out = fmt.Sprintf("arrayMap((h, l, res, si, ds, de) -> if(h - l < 2, %s, reinterpretAsUInt64(res * (%s))), HI, LO, RES, SI, DS, DE)", stale, factor)
	case "count_over_time":
		out = fmt.Sprintf("arrayMap((h, l) -> if(h - l < 1, %s, reinterpretAsUInt64(toFloat64(h - l))), HI, LO)", stale)
	case "last_over_time":
		out = fmt.Sprintf("arrayMap((h, l) -> if(h - l < 1, %s, reinterpretAsUInt64(V[h])), HI, LO)", stale)
	}
	if cols != "" {
		cols = ", " + cols
	}
	inRange := fmt.Sprintf("id IN (SELECT id FROM (%s)) AND timestamp > %s AND timestamp <= %s AND reinterpretAsUInt64(value) != %d",
		sel, timeLiteral(p.Start-r), timeLiteral(last), value.StaleNaN)
	samples := fmt.Sprintf("SELECT id, arraySort(groupArray(t)) AS T, arraySort((v, t) -> t, groupArray(value), groupArray(t)) AS V "+
		"FROM (SELECT id, toUnixTimestamp64Milli(timestamp) AS t, value FROM %s WHERE %s) GROUP BY id", table(db, promstore.DataTable), inRange)
	counted := fmt.Sprintf("SELECT id, T, V, G, "+
		"arrayFilter((c, e) -> bitAnd(e, 1) = 1, arrayCumSum(arrayMap(e -> toInt64(1 - bitAnd(e, 1)), SH)), SH) AS HI, "+
		"arrayFilter((c, e) -> bitAnd(e, 1) = 1, arrayCumSum(arrayMap(e -> toInt64(1 - bitAnd(e, 1)), SL)), SL) AS LO, "+
		"arrayFilter(i -> i > 1 AND V[i] < V[i - 1], arrayEnumerate(V)) AS R "+
		"FROM (SELECT id, T, V, G, arraySort(arrayConcat(arrayMap(t -> t * 2, T), arrayMap(g -> g * 2 + 1, G))) AS SH, "+
		"arraySort(arrayConcat(arrayMap(t -> t * 2, T), arrayMap(g -> (g - %d) * 2 + 1, G))) AS SL "+
		"FROM (SELECT id, T, V, %s AS G FROM (%s)))", r, grid, samples)
	return fmt.Sprintf("SELECT s.id, s.metric_name, s.tags, g.out "+
		"FROM (%s) AS s INNER JOIN (SELECT id%s, %s AS out FROM (%s)) AS g ON g.id = s.id SETTINGS compile_expressions = 0",
		sel, cols, out, counted)
}

// selectPushdown answers the synthetic selector of spec: the series the spec's matchers
// select, without their metric name (the functions drop it), each with a sample at every
// evaluation time of p (the stale marker where the function has no value), sorted by
// labels.
func (qr *querier) selectPushdown(ctx context.Context, t Target, p Pushdown, s Spec) storage.SeriesSet {
	_, last := p.steps()
	sel, err := seriesSQL(t.Database, s.Matchers, p.Start-s.Range+1, last)
	if err != nil {
		return storage.ErrSeriesSet(err)
	}
	rows, err := qr.stream(ctx, t, gridSQL(t.Database, sel, p, s))
	if err != nil {
		if missing(err) {
			return &seriesSet{}
		}
		return storage.ErrSeriesSet(err)
	}
	defer rows.Close()
	limit := t.MaxSamples
	if limit <= 0 {
		limit = DefaultMaxSamples
	}
	n := 0
	var out []*series
	var annos annotations.Annotations
	b := labels.NewScratchBuilder(8)
	for rows.Next() {
		v := rows.Values()
		ls := labelsOf(&b, v[1], v[2])
		if !matchesAll(s.Matchers, ls) {
			continue
		}
		bits, _ := v[3].([]uint64)
		ser := &series{labels: ls}
		if !s.KeepName {
			ser.labels = ls.DropMetricName()
		}
		ser.id, _ = v[0].(uuid.UUID)
		anyValue := false
		for i, x := range bits {
			anyValue = anyValue || x != value.StaleNaN
			ser.floats = append(ser.floats, fsample{t: p.Start + int64(i)*p.Step, f: math.Float64frombits(x)})
		}
		if !anyValue {
			continue
		}
		if n += len(bits); n > limit {
			return storage.ErrSeriesSet(ErrTooManySamples)
		}
		if err := t.Budget.charge(seriesBytes + labelBytes(ls) + int64(len(bits))*floatSampleBytes); err != nil {
			return storage.ErrSeriesSet(err)
		}
		if name := ls.Get(labels.MetricName); (s.Func == "rate" || s.Func == "increase") && !counterName(name) {
			annos.Add(annotations.NewPossibleNonCounterInfo(name, s.Pos))
		}
		out = append(out, ser)
	}
	if err := rows.Err(); err != nil {
		return storage.ErrSeriesSet(err)
	}
	sort.Slice(out, func(i, j int) bool { return labels.Compare(out[i].labels, out[j].labels) < 0 })
	return &seriesSet{series: out, warnings: annos}
}

// counterName is the upstream engine's test of a counter's name for rate and increase
// (without type-and-unit labels).
func counterName(name string) bool {
	for _, suffix := range []string{"_total", "_sum", "_count", "_bucket"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return name == ""
}
