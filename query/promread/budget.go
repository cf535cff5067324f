package promread

import (
	"fmt"
	"sync/atomic"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
)

// A Budget bounds the bytes of series and samples that queries materialise from the
// engine: one per query, whose parent (when set) is its organization's, charged at the
// same time, so that an organization's queries together hold no more than its budget.
// It is safe for concurrent use.
type Budget struct {
	name   string // "query" or "organization", in the refusal
	limit  int64
	used   atomic.Int64
	parent *Budget
}

// NewBudget returns a budget of limit bytes (0: unlimited) under parent (may be nil).
func NewBudget(name string, limit int64, parent *Budget) *Budget {
	return &Budget{name: name, limit: limit, parent: parent}
}

// Used is the bytes charged and not released.
func (b *Budget) Used() int64 { return b.used.Load() }

// charge takes n bytes from b and its parents, or none and an error when one of them
// would go past its limit.
func (b *Budget) charge(n int64) error {
	if b == nil || n <= 0 {
		return nil
	}
	for c := b; c != nil; c = c.parent {
		if v := c.used.Add(n); c.limit > 0 && v > c.limit {
			for u := b; u != c.parent; u = u.parent {
				u.used.Add(-n)
			}
			return fmt.Errorf("%w", promql.ErrTooManySamplesRead(fmt.Sprintf(
				"storage: the samples this %s loads from the engine would take more than its budget of %d MiB; narrow the time range or the series selected, or use a larger step",
				c.name, c.limit>>20)))
		}
	}
	return nil
}

// Release gives back to b's parents what b holds (at the end of its query); b is not
// used after.
func (b *Budget) Release() {
	if b == nil {
		return
	}
	n := b.used.Swap(0)
	for c := b.parent; c != nil; c = c.parent {
		c.used.Add(-n)
	}
}

// Bytes a series and its samples take in memory, as charged to a Budget.
const (
	floatSampleBytes = 16 // fsample
	seriesBytes      = 96 // series, its slice headers and its place in the result
)

func labelBytes(ls labels.Labels) int64 { return int64(ls.ByteSize()) }

func histogramBytes(hs []hsample) int64 {
	var n int64
	for _, h := range hs {
		n += 16 + int64(h.h.Size())
	}
	return n
}
