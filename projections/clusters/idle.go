package clusters

import (
	"time"

	"github.com/svc-data/svc/projections/catalog"
)

// Idle reports whether a ready cluster last used (queried, or rows landed) at last has
// been idle for its timeout at now; minute is how long one minute of idle timeout lasts
// (a minute, shorter in tests). A timeout of 0 never idles, and a cluster not yet used
// on this node is not idle.
func Idle(c *catalog.Cluster, last, now time.Time, minute time.Duration) bool {
	return c.IdleTimeoutMinutes != 0 && !last.IsZero() && now.Sub(last) >= time.Duration(c.IdleTimeoutMinutes)*minute
}

// Ingestion wakes an idle-stopped cluster (DESIGN.md, "Cluster lifecycle"): idleness
// means no query and no ingestion, so rows arriving are activity like a query. Every
// node checks each idle-stopped cluster's ingest topic (at most every WakeCheckEvery,
// one idle minute in tests) for records its consumer group has not committed, whatever
// path wrote them (HTTP, HEC, OTLP, Firehose, URL imports), and resumes the cluster
// when there are. The rows then land within the engine start, instead of waiting for
// the next query; the ingest answer itself never waits for the engine (Kafka holds the
// rows durably). A cluster an administrator stopped stays stopped.
const WakeCheckEvery = 5 * time.Second

// WakeCheckInterval is how often a node looks at an idle-stopped cluster's topic.
func WakeCheckInterval(minute time.Duration) time.Duration { return min(WakeCheckEvery, minute) }

// Wakeable reports whether activity resumes c: the idle timeout stopped it. A cluster
// an administrator stopped, or one not stopped, is not woken.
func Wakeable(c *catalog.Cluster) bool {
	return c.IdleStopped && c.PhaseName() == catalog.PhaseStopped
}

// WakesOnIngest reports whether records waiting in c's ingest topic (not committed by
// its consumer group) resume it.
func WakesOnIngest(c *catalog.Cluster, waiting int64) bool { return Wakeable(c) && waiting > 0 }
