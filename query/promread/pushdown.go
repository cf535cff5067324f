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

// maxGridResets is the most counter resets a series' grid is computed with in the
// engine: each evaluation time adds the resets in its window in order, and the engine
// copies a series' resets to every evaluation time to do so. A series with more (a
// gauge read as a counter) comes back as its samples and the grid is computed in Go
// (rateGrid), with the same arithmetic.
const maxGridResets = 64

// gridSQL computes spec's function for the series sel selects on p's evaluation times,
// one row per series with samples in reach: id, name, tags and the values' IEEE 754
// bits, a step without a value (the function has none there) as the stale marker, so
// that the upstream engine reading the grid as a vector selector finds nothing there;
// and, for a series with more than maxGridResets resets (rate, increase), no grid but its
// samples' times and values' bits, for rateGrid.
//
// Each series' samples in reach are read in time order as arrays T (ms) and V, stale
// markers left out (Prometheus drops them from range selections). For each evaluation
// time g, the window (g-range, g] is the samples l+1..h (1-based) where h counts the
// samples at or before g and l those at or before g-range. Both, and the window's last
// and first sample, come for every g at once, without copying the series per g: the
// samples' and the grid's times sorted together (a sample before a grid time at the same
// instant), counted cumulatively, and filled forward (the last sample at or before g)
// or backward (the first after g-range). The functions are then the upstream engine's
// (extrapolatedRate, ...), operation by operation in its order.
func gridSQL(db, sel string, p Pushdown, s Spec) string {
	n, last := p.steps()
	step := max(p.Step, 1)
	r := s.Range
	stale := fmt.Sprintf("toUInt64(%d)", value.StaleNaN)
	// out is the values' bits; cols are the columns it reads, named.
	var out string
	var stages []string
	rawT, rawV := "CAST([], 'Array(Int64)')", "CAST([], 'Array(UInt64)')"
	switch s.Func {
	case "rate", "increase", "delta":
		res := "arrayMap((l, f) -> l.3 - f.3, LAST, FIRST)"
		toStart := "DS1"
		if s.Func != "delta" {
			// Counter resets in the window after its first sample, added in order: the
			// value before each drop.
			// (RC and RT are cut to none for a series with too many, whose grid is
			// computed in Go: the engine copies them to every step. Conditions on arrays
			// are arrayResize, not if(), which costs seconds on these arrays.)
			res = "arrayMap((l, f) -> arrayFold((acc, c) -> acc + c, arrayFilter((c, t) -> t > f.2 AND t <= l.2, RCX, RTX), l.3 - f.3), LAST, FIRST)"
			// Counters cannot go below zero: extrapolate at most to the zero point.
			toStart = "arrayMap((ds1, res, si, f) -> if(res > 0 AND f.3 >= 0 AND si * (f.3 / res) < ds1, si * (f.3 / res), ds1), DS1, RES, SI, FIRST)"
			many := "length(RT) > " + strconv.Itoa(maxGridResets)
			rawT = "arrayResize(T, if(" + many + ", length(T), 0))"
			rawV = "arrayResize(arrayMap(v -> reinterpretAsUInt64(v), V), if(" + many + ", length(V), 0))"
		}
		factor := "if(si != 0, (si + ds + de) / si, 1.)"
		if s.Func == "rate" {
			factor = "(" + factor + ") / " + strconv.FormatFloat(rangeSeconds(r), 'g', -1, 64)
		}
		// One stage per subquery: the engine does not share a lambda expression used by
		// several aliases, and recomputed them (8 s instead of 2 on 300 series x 1 day).
		stages = []string{
			fmt.Sprintf("%s AS RES, arrayMap((l, f) -> (l.2 - f.2) / 1000, LAST, FIRST) AS SI, "+
				"arrayMap((f, g) -> (f.2 - (g - %d)) / 1000, FIRST, G) AS DS0, arrayMap((l, g) -> (g - l.2) / 1000, LAST, G) AS DE0", res, r),
			"arrayMap((si, h, l) -> si / (h - l - 1), SI, HI, LO) AS A",
			"arrayMap((ds0, a) -> if(ds0 >= a * 1.1, a / 2, ds0), DS0, A) AS DS1, arrayMap((de0, a) -> if(de0 >= a * 1.1, a / 2, de0), DE0, A) AS DE",
			toStart + " AS DS",
		}
		out = fmt.Sprintf("arrayMap((h, l, res, si, ds, de) -> if(h - l < 2, %s, reinterpretAsUInt64(res * (%s))), HI, LO, RES, SI, DS, DE)", stale, factor)
	case "count_over_time":
		out = fmt.Sprintf("arrayMap((h, l) -> if(h - l < 1, %s, reinterpretAsUInt64(toFloat64(h - l))), HI, LO)", stale)
	case "last_over_time":
		out = fmt.Sprintf("arrayMap((h, l, x) -> if(h - l < 1, %s, reinterpretAsUInt64(x.3)), HI, LO, LAST)", stale)
	}
	inRange := fmt.Sprintf("id IN (SELECT id FROM (%s)) AND timestamp > %s AND timestamp <= %s AND reinterpretAsUInt64(value) != %d",
		sel, timeLiteral(p.Start-r), timeLiteral(last), value.StaleNaN)
	samples := fmt.Sprintf("SELECT id, arraySort(groupArray(t)) AS T, arraySort((v, t) -> t, groupArray(value), groupArray(t)) AS V "+
		"FROM (SELECT id, toUnixTimestamp64Milli(timestamp) AS t, value FROM %s WHERE %s) GROUP BY id", table(db, promstore.DataTable), inRange)
	// AH[i] counts the evaluation times before sample i (g < T[i]), AL[i] those before
	// T[i]+range, both from arithmetic on the grid (start + k*step), clamped to [0, n].
	// Sample i is the window's last for the CH[i] = AH[i+1]-AH[i] times from T[i] on
	// (AH[len+1] = n), and the first for the times whose window starts between T[i-1]
	// and T[i]: CL[i-1] of them (AL[1] for the first sample). Repeating each sample that
	// many times gives every time's last and first sample and their counts HI and LO in
	// one pass over the series, without sorting or capturing an array in a lambda (the
	// engine copies a captured array for every element).
	count := func(shift int64) string {
		return fmt.Sprintf("arrayMap(t -> greatest(toInt64(0), least(toInt64(%[4]d), intDiv(t + %[1]d - %[2]d + %[3]d - 1, %[3]d))), T)", shift, p.Start, step, n)
	}
	counts := func(a string) string {
		return fmt.Sprintf("arrayMap((a, b) -> b - a, %[1]s, arrayPushBack(arrayPopFront(%[1]s), toInt64(%[2]d)))", a, n)
	}
	none := "(toInt64(0), toInt64(0), 0., toUInt8(0))"
	counted := fmt.Sprintf("SELECT id, T, V, G, "+
		"arrayConcat(arrayWithConstant(AH[1], toInt64(0)), arrayFlatten(arrayMap((i, c) -> arrayWithConstant(c, toInt64(i)), arrayEnumerate(T), CH))) AS HI, "+
		"arrayConcat(arrayWithConstant(AL[1], toInt64(0)), arrayFlatten(arrayMap((i, c) -> arrayWithConstant(c, toInt64(i)), arrayEnumerate(T), CL))) AS LO, "+
		"arrayConcat(arrayWithConstant(AH[1], %[6]s), arrayFlatten(arrayMap((t, v, c) -> arrayWithConstant(c, (t, t, v, toUInt8(1))), T, V, CH))) AS LAST, "+
		"arrayConcat(arrayFlatten(arrayMap((t, v, c) -> arrayWithConstant(c, (t, t, v, toUInt8(1))), T, V, arrayPushFront(arrayPopBack(CL), AL[1]))), arrayWithConstant(CL[-1], %[6]s)) AS FIRST, "+
		"arrayPushFront(arrayPopBack(V), V[1]) AS PV, "+
		"arrayFilter((t, v, pv) -> v < pv, T, V, PV) AS RT, "+
		"arrayFilter((pv, v) -> v < pv, PV, V) AS RC, "+
		"arrayResize(RT, if(length(RT) > %[5]d, 0, length(RT))) AS RTX, arrayResize(RC, if(length(RT) > %[5]d, 0, length(RC))) AS RCX "+
		"FROM (SELECT *, %[3]s AS CH, %[4]s AS CL "+
		"FROM (SELECT id, T, V, G, %[1]s AS AH, %[2]s AS AL "+
		"FROM (SELECT id, T, V, arrayMap(k -> toInt64(%[7]d) + toInt64(k) * %[8]d, range(%[9]d)) AS G FROM (%[10]s))))",
		count(0), count(r), counts("AH"), counts("AL"), maxGridResets, none, p.Start, step, n, samples)
	for _, st := range stages {
		counted = "SELECT *, " + st + " FROM (" + counted + ")"
	}
	return fmt.Sprintf("SELECT s.id, s.metric_name, s.tags, g.out, g.rt, g.rv "+
		"FROM (%s) AS s INNER JOIN (SELECT id, %s AS out, %s AS rt, %s AS rv FROM (%s)) AS g ON g.id = s.id "+
		"SETTINGS compile_expressions = 0, short_circuit_function_evaluation = 'force_enable'",
		sel, out, rawT, rawV, counted)
}

func ser0(id any) string { return ser0id(id).String() }

func ser0id(id any) uuid.UUID { u, _ := id.(uuid.UUID); return u }

// rateGrid is rate, increase or delta of the samples (times ts in order, values' bits
// vs, stale markers left out) on p's evaluation times, as gridSQL computes them in the
// engine: the upstream engine's extrapolatedRate for floats (no start timestamps).
func rateGrid(ts []int64, vs []uint64, p Pushdown, s Spec) []uint64 {
	n, _ := p.steps()
	out := make([]uint64, n)
	isCounter, isRate := s.Func != "delta", s.Func == "rate"
	lo, hi := 0, 0 // the window is samples lo..hi-1
	for k := range n {
		g := p.Start + int64(k)*p.Step
		for hi < len(ts) && ts[hi] <= g {
			hi++
		}
		for lo < hi && ts[lo] <= g-s.Range {
			lo++
		}
		out[k] = value.StaleNaN
		if hi-lo < 2 {
			continue
		}
		first, lastV := math.Float64frombits(vs[lo]), math.Float64frombits(vs[hi-1])
		firstT, lastT := ts[lo], ts[hi-1]
		numSamplesMinusOne := hi - lo - 1
		result := lastV - first
		if isCounter {
			for i := lo + 1; i < hi; i++ {
				if prev := math.Float64frombits(vs[i-1]); math.Float64frombits(vs[i]) < prev {
					result += prev
				}
			}
		}
		durationToStart := float64(firstT-(g-s.Range)) / 1000
		durationToEnd := float64(g-lastT) / 1000
		sampledInterval := float64(lastT-firstT) / 1000
		averageDurationBetweenSamples := sampledInterval / float64(numSamplesMinusOne)
		extrapolationThreshold := averageDurationBetweenSamples * 1.1
		if durationToStart >= extrapolationThreshold {
			durationToStart = averageDurationBetweenSamples / 2
		}
		if isCounter {
			durationToZero := durationToStart
			if result > 0 && first >= 0 {
				durationToZero = sampledInterval * (first / result)
			}
			if durationToZero < durationToStart {
				durationToStart = durationToZero
			}
		}
		if durationToEnd >= extrapolationThreshold {
			durationToEnd = averageDurationBetweenSamples / 2
		}
		factor := 1.0
		if sampledInterval != 0 {
			factor = (sampledInterval + durationToStart + durationToEnd) / sampledInterval
		}
		if isRate {
			factor /= rangeSeconds(s.Range)
		}
		out[k] = math.Float64bits(result * factor)
	}
	return out
}

// rangeSeconds is a range's seconds as the upstream engine divides a rate by them
// (time.Duration.Seconds).
func rangeSeconds(ms int64) float64 { return time.Duration(ms * int64(time.Millisecond)).Seconds() }

// selectPushdown answers the synthetic selector of spec: the series the spec's matchers
// select, without their metric name (the functions drop it), each with a sample at every
// evaluation time of p (the stale marker where the function has no value), sorted by
// labels.
func (qr *querier) selectPushdown(ctx context.Context, t Target, p Pushdown, s Spec) storage.SeriesSet {
	_, last := p.steps()
	sel, named, none, err := qr.namedSeries(ctx, t, s.Matchers, p.Start-s.Range+1, last)
	if err != nil {
		return storage.ErrSeriesSet(err)
	}
	if none {
		return &seriesSet{}
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
		var ls labels.Labels
		if named != nil {
			// Read, verified and charged for by namedSeries.
			ls = named[ser0id(v[0])]
		} else if ls = labelsOf(&b, v[1], v[2]); !matchesAll(s.Matchers, ls) {
			continue
		}
		bits, _ := v[3].([]uint64)
		if rt, _ := v[4].([]int64); len(rt) > 0 {
			rv, _ := v[5].([]uint64)
			if len(rv) != len(rt) {
				return storage.ErrSeriesSet(fmt.Errorf("series %s: %d timestamps, %d values", ser0(v[0]), len(rt), len(rv)))
			}
			bits = rateGrid(rt, rv, p, s)
		}
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
		charge := int64(len(bits)) * floatSampleBytes
		if named == nil {
			charge += seriesBytes + labelBytes(ls)
		}
		if err := t.Budget.charge(charge); err != nil {
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
