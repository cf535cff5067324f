package promread

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExactIntegerSums wants the prefix-sum path of sum_over_time and avg_over_time to
// answer every window exactly as the upstream engine's compensated sums over its samples
// do (sumWindow, avgWindow), for integer series up to the path's bounds and past them:
// values near maxExactValue, windows longer than maxExactWindow, and series the path
// refuses (fractions, -0, NaN, values too large).
func TestExactIntegerSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	series := map[string]func(i int) float64{
		"small counter":   func(i int) float64 { return float64(i * 3) },
		"gauge":           func(i int) float64 { return float64(rng.IntN(2001) - 1000) },
		"near the bound":  func(i int) float64 { return float64(maxExactValue - rng.IntN(3)) },
		"past the bound":  func(i int) float64 { return float64(maxExactValue + 1 + rng.IntN(3)) },
		"fractions":       func(i int) float64 { return float64(i) / 3 },
		"negative zeros":  func(i int) float64 { return math.Copysign(0, -1) * float64(i%2) },
		"NaN":             func(i int) float64 { return [3]float64{1, math.NaN(), 2}[i%3] },
		"large negatives": func(i int) float64 { return -float64(maxExactValue) },
	}
	for name, value := range series {
		const n = 12_000
		ts := make([]int64, n)
		vs := make([]uint64, n)
		for i := range n {
			ts[i] = int64(i) * 1000
			vs[i] = math.Float64bits(value(i))
		}
		for _, r := range []int64{999, 60_000, 5_000_000, 12_000_000} { // windows of 1, 60, 5,000 and up to 12,000 samples
			p := Pushdown{Start: 0, End: int64(n) * 1000, Step: 7_000}
			sums, avgs := sumGrid(ts, vs, p, r), avgGrid(ts, vs, p, r)
			w := newWindow(ts, p, r)
			for w.next(nil) {
				if w.hi == w.lo {
					continue
				}
				win := vs[w.lo:w.hi]
				if want := math.Float64bits(sumWindow(win)); sums[w.k] != want {
					t.Fatalf("%s, range %d, step %d: sum %v, upstream's %v", name, r, w.k, math.Float64frombits(sums[w.k]), math.Float64frombits(want))
				}
				if want := math.Float64bits(avgWindow(win)); avgs[w.k] != want {
					t.Fatalf("%s, range %d, step %d: avg %v, upstream's %v", name, r, w.k, math.Float64frombits(avgs[w.k]), math.Float64frombits(want))
				}
			}
		}
	}
}
