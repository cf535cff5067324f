package alerts

import (
	"math"
	"sync"
	"time"
)

// LagBuckets are the upper bounds, in seconds, of the evaluation histograms: 1 ms to
// about 6 minutes, each 25% wider than the one before (a quantile read from them is
// within that much).
var LagBuckets = func() []float64 {
	var b []float64
	for v := 0.001; v < 400; v *= 1.25 {
		b = append(b, math.Round(v*1e6)/1e6)
	}
	return b
}()

// Histogram is a cumulative histogram over LagBuckets (Prometheus's shape: Counts[i]
// evaluations took at most LagBuckets[i]; Count includes those beyond the last).
type Histogram struct {
	Counts []uint64
	Count  uint64
	Sum    float64
}

func (h *Histogram) observe(v float64) {
	if h.Counts == nil {
		h.Counts = make([]uint64, len(LagBuckets))
	}
	for i, ub := range LagBuckets {
		if v <= ub {
			h.Counts[i]++
		}
	}
	h.Count++
	h.Sum += v
}

func (h Histogram) clone() Histogram {
	h.Counts = append([]uint64(nil), h.Counts...)
	return h
}

// EvalStats counts this node's evaluations: Lag is the scheduled time to the
// evaluation done (transitions recorded, notifications answered), Duration the
// execution's start to done; Failed counts evaluations whose query failed.
type EvalStats struct {
	Lag, Duration Histogram
	Failed        uint64
}

type evalStats struct {
	mu sync.Mutex
	s  EvalStats
}

func (e *evalStats) record(scheduled, started, done time.Time, failed bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !scheduled.IsZero() {
		e.s.Lag.observe(done.Sub(scheduled).Seconds())
	}
	if !started.IsZero() {
		e.s.Duration.observe(done.Sub(started).Seconds())
	}
	if failed {
		e.s.Failed++
	}
}

// EvaluationStats returns this node's evaluation counters (GET /metrics shows them).
func (s *Service) EvaluationStats() EvalStats {
	s.evals.mu.Lock()
	defer s.evals.mu.Unlock()
	return EvalStats{Lag: s.evals.s.Lag.clone(), Duration: s.evals.s.Duration.clone(), Failed: s.evals.s.Failed}
}
