package query

import (
	"sync/atomic"
	"time"
)

// A tick tells a result's row loop that a second has passed since it last flushed, for
// the price of an atomic load per row: reading the clock on every row cost as much as
// rewriting the row, and reading it every N rows held back a slow result (one row every
// half second) for minutes.
type tick struct {
	due   atomic.Bool
	every time.Duration
	timer *time.Timer
}

func newTick(every time.Duration) *tick {
	t := &tick{every: every}
	t.timer = time.AfterFunc(every, func() { t.due.Store(true) })
	return t
}

// Due reports whether the period has passed since the tick was made or last reset.
func (t *tick) Due() bool { return t.due.Load() }

// Reset starts the next period.
func (t *tick) Reset() {
	t.due.Store(false)
	t.timer.Reset(t.every)
}

// Stop releases the timer.
func (t *tick) Stop() { t.timer.Stop() }
