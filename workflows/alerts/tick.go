package alerts

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/workflows"
)

// Evaluations are batched per schedule tick: one Temporal schedule, TickID, fires every
// second on the alerts' task queue, and each of its executions evaluates the alerts whose
// slot is that second (every interval_seconds, at the multiples of the interval since
// the epoch shifted by the alert's offset). So Temporal starts one execution a second
// however many alerts there are, where one schedule per alert made it start one per
// alert and evaluation (1,000 alerts at 60 s: 17 a second, Temporal's own CPU the largest
// cost; docs/performance.md).

// TickID is the id of the alerts' one schedule (its executions' WorkflowID).
var TickID = uuid.MustParse("a1e27000-0000-4000-8000-000000000001")

// tickEvery is the tick's period: the resolution of every alert's schedule.
const tickEvery = time.Second

// maxParallel bounds the evaluations ticks run at once on a node (all ticks together:
// a tick that outlasts its second overlaps the next one): one fewer than
// an organization's PromQL slots on a node (promapi.DefaultMaxConcurrentPerOrg), so that
// its own queries still find one while its alerts evaluate.
const maxParallel = 3

// due reports whether a's slot is the second at.
func due(a *catalog.Alert, at time.Time) bool {
	interval := int64(max(a.IntervalSeconds, 1))
	offset := int64(scheduleOffset(a.ID, time.Duration(interval)*time.Second) / time.Second)
	return (at.Unix()-offset)%interval == 0
}

// evaluateTick evaluates, concurrently, every enabled alert due at the tick's second.
// An alert still being evaluated on this node from an earlier slot is skipped, as a
// schedule of its own would skip the overlapping run. Each alert's failures are its own
// (its error state, its history); the tick does not fail for them, so that Temporal
// does not repeat every alert of the tick for one.
func (s *Service) evaluateTick(ctx context.Context, x workflows.Execution) error {
	at := x.ScheduledAt
	if at.IsZero() {
		at = time.Now()
	}
	at = at.UTC().Truncate(tickEvery)
	done := make(chan struct{})
	n := 0
	for _, a := range s.model.Alerts(uuid.Nil) {
		if !a.Enabled || !due(a, at) {
			continue
		}
		if _, busy := s.running.LoadOrStore(a.ID, true); busy {
			continue
		}
		n++
		go func() {
			defer func() { s.running.Delete(a.ID); done <- struct{}{} }()
			// Under load the evaluations wait here, their lag growing (and shown), rather
			// than at the PromQL API's per-organization slots, which refuse after 5 s.
			select {
			case s.slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-s.slots }()
			one := workflows.Execution{WorkflowID: a.ID, RunID: x.RunID + "." + a.ID.String(), Source: x.Source,
				ScheduledAt: at, StartedAt: x.StartedAt, Attempt: x.Attempt}
			if err := s.evaluate(ctx, a.ID, one); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("alert evaluation failed", "alert_id", a.ID, "err", err)
			}
		}()
	}
	for range n {
		<-done
	}
	return ctx.Err()
}

// syncTick makes the alerts' one schedule exist while there are alerts.
func (s *Service) syncTick(ctx context.Context) {
	if err := s.engine.UpsertSchedule(ctx, TickID, workflows.Schedule{Every: tickEvery, Overlap: true}); err != nil {
		s.cfg.Logger.Warn("sync the alerts' schedule", "err", err)
	}
}
