package promread

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql/parser/posrange"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/annotations"
)

// PushdownLabel is the label name of the one matcher of a pushed-down selection: the
// PromQL query's function over a range selector is replaced (query/promapi) by a vector
// selector {__svc_pushdown__="<key>"}, and the Queryable answers it with the function's
// values on the query's step grid, computed in the engine (Pushdown.Specs[key]).
const PushdownLabel = "__svc_pushdown__"

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

// ErrHistogramsInReach is returned by a pushed-down selection some of whose series have
// native histogram samples in reach: the grid functions read floats only, so the query is
// evaluated again without the push-down (promapi), as the upstream engine evaluates it.
var ErrHistogramsInReach = errors.New("promread: native histograms in reach of a pushed-down selection")

// readPushdownSeries reads the series the matchers ms select (sel, their seriesSQL;
// where, their whereSQL) and whether any has native histogram samples between mint and
// maxt, in one statement (flaggedSeriesSQL). A database whose histograms table is gone
// (dropped by SQL) has none: its series are read alone.
func (qr *querier) readPushdownSeries(ctx context.Context, t Target, sel, where string, ms []*labels.Matcher, mint, maxt int64) ([]*series, bool, error) {
	out, hists, err := qr.scanSeries(ctx, t, flaggedSeriesSQL(t.Database, sel, idsSQL(t.Database, where), mint, maxt), ms, true)
	if missing(err) { // the tags table (then none), or the histograms table alone
		out, err = qr.readSeries(ctx, t, sel, ms)
	}
	return out, hists, err
}

// selectPushdown answers the synthetic selector of spec: the series the spec's matchers
// select, without their metric name (the functions drop it), each with a sample at every
// evaluation time of p (the stale marker where the function has no value), sorted by
// labels. Two statements run at once: the series with whether any has native histograms
// in reach (then ErrHistogramsInReach), and their float samples there.
func (qr *querier) selectPushdown(ctx context.Context, t Target, p Pushdown, s Spec) storage.SeriesSet {
	grid := gridFuncs[s.Func]
	if grid == nil {
		return storage.ErrSeriesSet(fmt.Errorf("promread: %s is not computed on the step grid", s.Func))
	}
	_, last := p.steps()
	mint := p.Start - s.Range + 1 // windows are (g-range, g]
	sel, err := seriesSQL(t.Database, s.Matchers, mint, last)
	if err != nil {
		return storage.ErrSeriesSet(err)
	}
	where, err := whereSQL(s.Matchers)
	if err != nil {
		return storage.ErrSeriesSet(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg         sync.WaitGroup
		byID       map[rowBinaryID]*series
		hists      bool
		seriesErr  error
		seriesRead = make(chan struct{})
	)
	wg.Go(func() {
		defer close(seriesRead)
		var all []*series
		if all, hists, seriesErr = qr.readPushdownSeries(ctx, t, sel, where, s.Matchers, mint, last); seriesErr != nil || hists {
			cancel()
			return
		}
		byID = make(map[rowBinaryID]*series, len(all))
		for _, ser := range all {
			byID[rowBinaryIDOf(ser.id)] = ser
		}
	})
	limit := t.MaxSamples
	if limit <= 0 {
		limit = DefaultMaxSamples
	}
	n := 0
	var out []*series
	var annos annotations.Annotations
	floatsErr := qr.readFloats(ctx, t, s.Matchers, mint, last, true, func(id rowBinaryID, ts []int64, vs []uint64) error {
		<-seriesRead
		if seriesErr != nil || hists {
			return seriesErr
		}
		ser := byID[id]
		if ser == nil {
			return nil // the matchers refused it in Go
		}
		bits := grid(ts, vs, p, s.Range)
		anyValue := false
		for _, x := range bits {
			if x != value.StaleNaN {
				anyValue = true
				break
			}
		}
		if !anyValue {
			return nil
		}
		if n += len(bits); n > limit {
			return ErrTooManySamples
		}
		if err := t.Budget.charge(int64(len(bits)) * floatSampleBytes); err != nil {
			return err
		}
		if name := ser.labels.Get(labels.MetricName); (s.Func == "rate" || s.Func == "increase") && !counterName(name) {
			annos.Add(annotations.NewPossibleNonCounterInfo(name, s.Pos))
		}
		if !s.KeepName {
			ser.labels = ser.labels.DropMetricName()
		}
		ser.floats = make([]fsample, len(bits))
		for i, x := range bits {
			ser.floats[i] = fsample{t: p.Start + int64(i)*p.Step, f: math.Float64frombits(x)}
		}
		out = append(out, ser)
		return nil
	})
	if floatsErr != nil {
		cancel()
	}
	wg.Wait()
	if hists {
		return storage.ErrSeriesSet(ErrHistogramsInReach)
	}
	if err := firstCause(seriesErr, floatsErr); err != nil {
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
