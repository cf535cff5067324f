package promread

import (
	"math"
	"time"

	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/util/kahansum"
)

// The grid functions compute a range function of one series at every evaluation time of
// a query in one pass over its samples, each with the upstream engine's own arithmetic
// (promql/functions.go of the pinned module), operation by operation in its order, so
// that the answers are Prometheus's to the bit: the window of evaluation time g is the
// samples in (g-range, g], stale markers left out (as a range selection drops them), and
// a time whose window gives no value gets the stale marker, which the upstream engine
// reading the grid as a vector selector takes for no sample.
//
// The upstream engine evaluates a range function by collecting every window's samples
// anew for each evaluation time; these move two indexes along the series instead, and
// keep what a window needs (counter resets, a monotonic queue of its extremes) as they
// go. Only sum and avg, whose compensated sums depend on the order of a window's
// samples, walk each window.

// gridFunc computes one range function over a series' samples (times ts ascending,
// values' bits vs) at p's evaluation times, for a range of r ms.
type gridFunc func(ts []int64, vs []uint64, p Pushdown, r int64) []uint64

var gridFuncs = map[string]gridFunc{
	"rate": func(ts []int64, vs []uint64, p Pushdown, r int64) []uint64 { return rateGrid(ts, vs, p, r, true, true) },
	"increase": func(ts []int64, vs []uint64, p Pushdown, r int64) []uint64 {
		return rateGrid(ts, vs, p, r, true, false)
	},
	"delta": func(ts []int64, vs []uint64, p Pushdown, r int64) []uint64 {
		return rateGrid(ts, vs, p, r, false, false)
	},
	"count_over_time":   countGrid,
	"present_over_time": presentGrid,
	"last_over_time":    lastGrid,
	"max_over_time":     func(ts []int64, vs []uint64, p Pushdown, r int64) []uint64 { return extremeGrid(ts, vs, p, r, true) },
	"min_over_time":     func(ts []int64, vs []uint64, p Pushdown, r int64) []uint64 { return extremeGrid(ts, vs, p, r, false) },
	"sum_over_time":     sumGrid,
	"avg_over_time":     avgGrid,
}

// CanPushDown reports whether function fn over a range selector is computed on the step
// grid by the Queryable (a Pushdown's spec).
func CanPushDown(fn string) bool { return gridFuncs[fn] != nil }

// window walks the evaluation times of p, keeping [lo, hi) the samples of each one's
// window (g-r, g].
type window struct {
	ts     []int64
	p      Pushdown
	r      int64
	k, n   int
	lo, hi int
}

func newWindow(ts []int64, p Pushdown, r int64) *window {
	n, _ := p.steps()
	return &window{ts: ts, p: p, r: r, k: -1, n: n}
}

// next moves to the next evaluation time; entered is called with each sample entering
// the window (before the ones leaving it are dropped).
func (w *window) next(entered func(i int)) bool {
	if w.k++; w.k >= w.n {
		return false
	}
	g := w.p.Start + int64(w.k)*w.p.Step
	for w.hi < len(w.ts) && w.ts[w.hi] <= g {
		if entered != nil {
			entered(w.hi)
		}
		w.hi++
	}
	for w.lo < w.hi && w.ts[w.lo] <= g-w.r {
		w.lo++
	}
	return true
}

func staleGrid(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = value.StaleNaN
	}
	return out
}

// rateGrid is rate (isRate), increase (isCounter) or delta: the upstream engine's
// extrapolatedRate for floats, without start timestamps (the store keeps none).
func rateGrid(ts []int64, vs []uint64, p Pushdown, r int64, isCounter, isRate bool) []uint64 {
	w := newWindow(ts, p, r)
	out := staleGrid(w.n)
	// The counter resets in order (the samples lower than the one before), so that each
	// window adds its own without walking its samples.
	var resets []int
	if isCounter {
		for i := 1; i < len(vs); i++ {
			if math.Float64frombits(vs[i]) < math.Float64frombits(vs[i-1]) {
				resets = append(resets, i)
			}
		}
	}
	rs := 0 // resets[rs:] are after the window's first sample
	for w.next(nil) {
		lo, hi := w.lo, w.hi
		for rs < len(resets) && resets[rs] <= lo {
			rs++
		}
		if hi-lo < 2 {
			continue
		}
		g := p.Start + int64(w.k)*p.Step
		first, lastV := math.Float64frombits(vs[lo]), math.Float64frombits(vs[hi-1])
		firstT, lastT := ts[lo], ts[hi-1]
		numSamplesMinusOne := hi - lo - 1
		result := lastV - first
		for j := rs; j < len(resets) && resets[j] < hi; j++ {
			result += math.Float64frombits(vs[resets[j]-1])
		}
		durationToStart := float64(firstT-(g-r)) / 1000
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
			factor /= rangeSeconds(r)
		}
		out[w.k] = math.Float64bits(result * factor)
	}
	return out
}

// rangeSeconds is a range's seconds as the upstream engine divides a rate by them
// (time.Duration.Seconds).
func rangeSeconds(ms int64) float64 { return time.Duration(ms * int64(time.Millisecond)).Seconds() }

// nonEmptyGrid answers at(w) at every step whose window holds a sample.
func nonEmptyGrid(ts []int64, p Pushdown, r int64, at func(w *window) uint64) []uint64 {
	w := newWindow(ts, p, r)
	out := staleGrid(w.n)
	for w.next(nil) {
		if w.hi > w.lo {
			out[w.k] = at(w)
		}
	}
	return out
}

func countGrid(ts []int64, _ []uint64, p Pushdown, r int64) []uint64 {
	return nonEmptyGrid(ts, p, r, func(w *window) uint64 { return math.Float64bits(float64(w.hi - w.lo)) })
}

func presentGrid(ts []int64, _ []uint64, p Pushdown, r int64) []uint64 {
	return nonEmptyGrid(ts, p, r, func(*window) uint64 { return math.Float64bits(1) })
}

func lastGrid(ts []int64, vs []uint64, p Pushdown, r int64) []uint64 {
	return nonEmptyGrid(ts, p, r, func(w *window) uint64 { return vs[w.hi-1] })
}

// extremeGrid is max_over_time (isMax) or min_over_time. Upstream starts from a window's
// first sample and takes each later one that is greater (less), or any after a NaN: the
// answer is the earliest of the greatest non-NaN samples, or the last sample when all
// are NaN. A queue of the window's non-NaN samples whose values only fall (rise) from
// its front keeps that earliest greatest at the front: a sample entering removes those
// behind it that it beats strictly, so equal ones (0 and -0 among them) stay in order.
func extremeGrid(ts []int64, vs []uint64, p Pushdown, r int64, isMax bool) []uint64 {
	w := newWindow(ts, p, r)
	out := staleGrid(w.n)
	beats := func(a, b float64) bool { return a > b }
	if !isMax {
		beats = func(a, b float64) bool { return a < b }
	}
	var q []int // indexes; q[head:] are in the window or ahead of its start
	head := 0
	enter := func(i int) {
		x := math.Float64frombits(vs[i])
		if math.IsNaN(x) {
			return
		}
		for len(q) > head && beats(x, math.Float64frombits(vs[q[len(q)-1]])) {
			q = q[:len(q)-1]
		}
		if head > 0 && head == len(q) {
			q, head = q[:0], 0
		}
		q = append(q, i)
	}
	for w.next(enter) {
		for head < len(q) && q[head] < w.lo {
			head++
		}
		switch {
		case w.hi == w.lo:
		case head == len(q):
			out[w.k] = vs[w.hi-1]
		default:
			out[w.k] = vs[q[head]]
		}
	}
	return out
}

// Sums of small integers are exact: while every value is an integer of at most
// maxExactValue in magnitude and a window holds at most maxExactWindow of them, each
// partial sum is an integer below 2^53, so every addition of the upstream engine's
// compensated sum is exact, its compensation stays +0 and its sum is the integers' sum,
// in whatever order they are added. Such a series' window sums are then differences of
// its prefix sums (integerPrefix), instead of a walk of each window. Counters, the
// commonest series, are such integers. (-0 is left out: the sign of a zero sum depends
// on the order.)
const (
	maxExactValue  = 1 << 40
	maxExactWindow = 1 << 12
)

// integerPrefix returns the prefix sums of the values (prefix[i] is the sum of the first
// i), or nil when some value is not such a small integer.
func integerPrefix(vs []uint64) []int64 {
	prefix := make([]int64, len(vs)+1)
	for i, b := range vs {
		f := math.Float64frombits(b)
		if f != math.Trunc(f) || math.Abs(f) > maxExactValue || (f == 0 && math.Signbit(f)) {
			return nil // NaN and the infinities fail the first test or the second
		}
		prefix[i+1] = prefix[i] + int64(f)
	}
	return prefix
}

// sumGrid is sum_over_time: Kahan-Neumaier summation of each window's samples in order.
func sumGrid(ts []int64, vs []uint64, p Pushdown, r int64) []uint64 {
	w := newWindow(ts, p, r)
	out := staleGrid(w.n)
	prefix := integerPrefix(vs)
	for w.next(nil) {
		switch {
		case w.hi == w.lo:
		case prefix != nil && w.hi-w.lo <= maxExactWindow:
			out[w.k] = math.Float64bits(float64(prefix[w.hi] - prefix[w.lo]))
		default:
			out[w.k] = math.Float64bits(sumWindow(vs[w.lo:w.hi]))
		}
	}
	return out
}

// sumWindow is upstream's sum_over_time of one window's float samples.
func sumWindow(win []uint64) float64 {
	var sum, c float64
	for _, b := range win {
		sum, c = kahansum.Inc(math.Float64frombits(b), sum, c)
	}
	if math.IsInf(sum, 0) {
		return sum
	}
	return sum + c
}

// avgGrid is avg_over_time: the mean from a compensated sum, switching to an incremental
// mean once the sum would overflow.
func avgGrid(ts []int64, vs []uint64, p Pushdown, r int64) []uint64 {
	w := newWindow(ts, p, r)
	out := staleGrid(w.n)
	prefix := integerPrefix(vs)
	for w.next(nil) {
		switch {
		case w.hi == w.lo:
		case prefix != nil && w.hi-w.lo <= maxExactWindow:
			// The sum is exact and its compensation +0: upstream's sum/count + kahanC/count.
			count := float64(w.hi - w.lo)
			var kahanC float64
			out[w.k] = math.Float64bits(float64(prefix[w.hi]-prefix[w.lo])/count + kahanC/count)
		default:
			out[w.k] = math.Float64bits(avgWindow(vs[w.lo:w.hi]))
		}
	}
	return out
}

// avgWindow is upstream's avg_over_time of one window's float samples (at least one).
func avgWindow(win []uint64) float64 {
	var (
		sum, count      = math.Float64frombits(win[0]), 1.
		mean, kahanC    float64
		incrementalMean bool
	)
	for i, b := range win[1:] {
		f := math.Float64frombits(b)
		count = float64(i + 2)
		if !incrementalMean {
			newSum, newC := kahansum.Inc(f, sum, kahanC)
			if !math.IsInf(newSum, 0) {
				sum, kahanC = newSum, newC
				continue
			}
			incrementalMean = true
			mean = sum / (count - 1)
			kahanC /= (count - 1)
		}
		q := (count - 1) / count
		mean, kahanC = kahansum.Inc(f/count, q*mean, q*kahanC)
	}
	if incrementalMean {
		return mean + kahanC
	}
	return sum/count + kahanC/count
}
