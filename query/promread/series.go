package promread

import (
	"fmt"
	"math"
	"slices"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/util/annotations"
)

type fsample struct {
	t int64
	f float64
}

type hsample struct {
	t int64
	h *histogram.FloatHistogram
}

// seriesSet is a storage.SeriesSet over series read whole, sorted by labels.
type seriesSet struct {
	series   []*series
	i        int
	warnings annotations.Annotations
}

func (s *seriesSet) Next() bool {
	if s.i >= len(s.series) {
		return false
	}
	s.i++
	return true
}

func (s *seriesSet) At() storage.Series                { return s.series[s.i-1] }
func (*seriesSet) Err() error                          { return nil }
func (s *seriesSet) Warnings() annotations.Annotations { return s.warnings }
func (s *series) Labels() labels.Labels                { return s.labels }
func (s *series) Iterator(chunkenc.Iterator) chunkenc.Iterator {
	return &iterator{s: s, fi: -1, hi: -1}
}

// iterator walks a series' float samples and histograms merged by time. At one timestamp
// holding both, the float wins (a stale marker written over a histogram series is a
// float).
type iterator struct {
	s      *series
	fi, hi int  // positions of the current sample in floats and hists
	onHist bool // the current sample is hists[hi]
	done   bool
}

func (it *iterator) Next() chunkenc.ValueType {
	if it.done {
		return chunkenc.ValNone
	}
	// Advance past the current sample.
	if it.fi < 0 && it.hi < 0 {
		it.fi, it.hi = 0, 0
	} else if it.onHist {
		it.hi++
	} else {
		it.fi++
	}
	return it.pick()
}

// pick makes the earlier of floats[fi] and hists[hi] current.
func (it *iterator) pick() chunkenc.ValueType {
	fs, hs := it.s.floats, it.s.hists
	// A histogram at the same time as a float is dropped.
	for it.hi < len(hs) && it.fi < len(fs) && hs[it.hi].t == fs[it.fi].t {
		it.hi++
	}
	switch {
	case it.fi < len(fs) && (it.hi >= len(hs) || fs[it.fi].t < hs[it.hi].t):
		it.onHist = false
		return chunkenc.ValFloat
	case it.hi < len(hs):
		it.onHist = true
		return chunkenc.ValFloatHistogram
	}
	it.done = true
	return chunkenc.ValNone
}

func (it *iterator) Seek(t int64) chunkenc.ValueType {
	if it.done {
		return chunkenc.ValNone
	}
	if it.fi < 0 && it.hi < 0 {
		it.fi, it.hi = 0, 0
		if it.pick() == chunkenc.ValNone {
			return chunkenc.ValNone
		}
	}
	if it.AtT() >= t {
		return it.valueType()
	}
	for it.fi < len(it.s.floats) && it.s.floats[it.fi].t < t {
		it.fi++
	}
	for it.hi < len(it.s.hists) && it.s.hists[it.hi].t < t {
		it.hi++
	}
	return it.pick()
}

func (it *iterator) valueType() chunkenc.ValueType {
	if it.onHist {
		return chunkenc.ValFloatHistogram
	}
	return chunkenc.ValFloat
}

func (it *iterator) At() (int64, float64) {
	s := it.s.floats[it.fi]
	return s.t, s.f
}

func (*iterator) AtHistogram(*histogram.Histogram) (int64, *histogram.Histogram) {
	panic("promread: AtHistogram on a float histogram series") // Next never answers ValHistogram
}

func (it *iterator) AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	s := it.s.hists[it.hi]
	if fh == nil {
		return s.t, s.h.Copy()
	}
	s.h.CopyTo(fh)
	return s.t, fh
}

func (it *iterator) AtT() int64 {
	if it.onHist {
		return it.s.hists[it.hi].t
	}
	return it.s.floats[it.fi].t
}

// AtST is the start timestamp, which the store does not keep: 0, unknown.
func (*iterator) AtST() int64 { return 0 }
func (*iterator) Err() error  { return nil }

// histogramsOf rebuilds a series' native histograms from selectSQL's histogram arrays
// (timestamps, hints, schemas, zero thresholds, zero counts, counts, sums as bits; span
// offsets and lengths, buckets, positive then negative; custom values), ordered by time.
func histogramsOf(v []any) ([]hsample, error) {
	ts, _ := v[0].([]int64)
	if len(ts) == 0 {
		return nil, nil
	}
	hints, _ := v[1].([]uint8)
	schemas, _ := v[2].([]int32)
	var bits [4][]uint64
	for i := range bits {
		bits[i], _ = v[3+i].([]uint64)
	}
	po, _ := v[7].([][]int32)
	pl, _ := v[8].([][]uint32)
	pb, _ := v[9].([][]float64)
	no, _ := v[10].([][]int32)
	nl, _ := v[11].([][]uint32)
	nb, _ := v[12].([][]float64)
	cv, _ := v[13].([][]float64)
	n := len(ts)
	for _, l := range []int{len(hints), len(schemas), len(bits[0]), len(bits[1]), len(bits[2]), len(bits[3]), len(po), len(pl), len(pb), len(no), len(nl), len(nb), len(cv)} {
		if l != n {
			return nil, fmt.Errorf("histogram arrays of unequal length (%d, %d): unexpected column types %T", n, l, v[7])
		}
	}
	spans := func(offs []int32, lens []uint32) []histogram.Span {
		if len(offs) == 0 {
			return nil
		}
		out := make([]histogram.Span, len(offs))
		for j := range offs {
			out[j] = histogram.Span{Offset: offs[j], Length: lens[j]}
		}
		return out
	}
	orNil := func(f []float64) []float64 {
		if len(f) == 0 {
			return nil
		}
		return f
	}
	out := make([]hsample, n)
	for i := range n {
		out[i] = hsample{t: ts[i], h: &histogram.FloatHistogram{
			CounterResetHint: histogram.CounterResetHint(hints[i]),
			Schema:           schemas[i],
			ZeroThreshold:    math.Float64frombits(bits[0][i]),
			ZeroCount:        math.Float64frombits(bits[1][i]),
			Count:            math.Float64frombits(bits[2][i]),
			Sum:              math.Float64frombits(bits[3][i]),
			PositiveSpans:    spans(po[i], pl[i]),
			PositiveBuckets:  orNil(pb[i]),
			NegativeSpans:    spans(no[i], nl[i]),
			NegativeBuckets:  orNil(nb[i]),
			CustomValues:     orNil(cv[i]),
		}}
	}
	slices.SortStableFunc(out, func(a, b hsample) int { return cmpInt(a.t, b.t) })
	return out, nil
}
