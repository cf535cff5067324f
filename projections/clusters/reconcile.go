package clusters

import (
	"time"

	"github.com/svc-data/svc/projections/catalog"
)

// Then is what a node's reconciler does for a cluster after starting or stopping what
// runs on the node.
type Then int

const (
	// ThenNothing: nothing more this round.
	ThenNothing Then = iota
	// ThenRecordStarted: the cluster runs here and is not ready yet: record it started.
	ThenRecordStarted
	// ThenCheckIdle: the cluster is ready: stop it when its idle timeout passed (Idle).
	ThenCheckIdle
	// ThenRecordStopped: the cluster is stopping and nothing runs here: record it stopped.
	ThenRecordStopped
	// ThenDelete: the cluster is deleting: remove its databases, keys, data and topics.
	ThenDelete
	// ThenCheckWake: the cluster is stopped: ingestion may wake it (WakesOnIngest).
	ThenCheckWake
)

// Plan is one reconcile round of one cluster on one node, in the order the node runs it:
// stop, remove, start, then Then.
type Plan struct {
	// Stop: stop what runs here (drain the consumer, then stop the engine).
	Stop bool
	// Resized: the stop is a restart with the new size's limits (autoscaling).
	Resized bool
	// Remove: the cluster is gone: remove its local data.
	Remove bool
	// Start: bring up engine, schema, topics, `default` database and consumer. A
	// failure ends the round (the node backs off; RecordsFailure says whether the
	// failure becomes the cluster's phase).
	Start bool
	Then  Then
}

// LocalRun is what runs on this node for a cluster.
type LocalRun struct {
	Running bool
	// Limits are what the running engine was started with.
	Limits EngineLimits
}

// PlanReconcile decides a reconcile round: c is the cluster as the control plane
// records it (nil when it no longer exists), local what runs here, and due whether a
// (re)start may be tried now: asked for now, or the backoff after the last failure is
// over.
func PlanReconcile(c *catalog.Cluster, local LocalRun, due bool) Plan {
	switch {
	case c == nil:
		return Plan{Stop: local.Running, Remove: true}
	case c.Running():
		var p Plan
		running := local.Running
		if running && local.Limits != LimitsFor(c) {
			p.Stop, p.Resized, running = true, true, false
		}
		if !running {
			if !due {
				return p
			}
			p.Start = true
		}
		if c.PhaseName() != catalog.PhaseReady {
			p.Then = ThenRecordStarted
		} else {
			p.Then = ThenCheckIdle
		}
		return p
	default: // stopping, stopped, deleting
		p := Plan{Stop: local.Running}
		switch c.PhaseName() {
		case catalog.PhaseStopping:
			p.Then = ThenRecordStopped
		case catalog.PhaseDeleting:
			p.Then = ThenDelete
		case catalog.PhaseStopped:
			p.Then = ThenCheckWake
		}
		return p
	}
}

// RecordsFailure reports whether a failed start becomes the cluster's phase (failed,
// with the reason): not when it already failed, nor when it is ready (another node runs
// it; this node retries on its own).
func RecordsFailure(c *catalog.Cluster) bool {
	return c.PhaseName() != catalog.PhaseFailed && c.PhaseName() != catalog.PhaseReady
}

// Backoff spaces a node's retries of a cluster that did not start: 1 s after the first
// failure, doubling to at most 30 s.
type Backoff struct {
	next  time.Time
	delay time.Duration
}

const (
	firstRetry = time.Second
	lastRetry  = 30 * time.Second
)

// Due reports whether a retry may run at now; a nil Backoff (no failure) is always due.
func (b *Backoff) Due(now time.Time) bool { return b == nil || now.After(b.next) }

// Failed records a failure at now and returns the backoff (a new one when b is nil).
func (b *Backoff) Failed(now time.Time) *Backoff {
	if b == nil {
		b = &Backoff{delay: firstRetry}
	} else {
		b.delay = min(2*b.delay, lastRetry)
	}
	b.next = now.Add(b.delay)
	return b
}
