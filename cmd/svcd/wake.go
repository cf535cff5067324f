package main

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
)

// Ingestion wakes an idle-stopped cluster (DESIGN.md, "Cluster lifecycle"): idleness
// means no query and no ingestion, so rows arriving are activity like a query. Every
// node checks each idle-stopped cluster's ingest topic (at most every wakeCheckEvery,
// one idle minute in tests) for records its consumer group has not committed, whatever
// path wrote them (HTTP, HEC, OTLP, Firehose, URL imports), and resumes the cluster
// when there are. The rows then land within the engine start, instead of waiting for
// the next query; the ingest answer itself never waits for the engine (Kafka holds the
// rows durably). A cluster an administrator stopped stays stopped.
const wakeCheckEvery = 5 * time.Second

// wakeOnIngest resumes an idle-stopped cluster whose consumer has rows waiting.
func (n *node) wakeOnIngest(ctx context.Context, c *catalog.Cluster) {
	if !c.IdleStopped || c.PhaseName() != catalog.PhaseStopped || !n.wakeCheckDue(c.ID) {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lag, err := n.ops.Lag(lctx, c.ID)
	if err != nil {
		n.log.Warn("check ingestion of an idle cluster", "cluster", c.ID, "err", err)
		return
	}
	var waiting int64
	for _, l := range lag {
		waiting += l.Lag
	}
	if waiting == 0 {
		return
	}
	n.log.Info("ingestion wakes idle cluster", "cluster", c.ID, "records_waiting", waiting)
	if _, err := n.cat.ResumeCluster(ctx, c.ID); err != nil && !errors.Is(err, catalog.ErrConflict) {
		n.log.Error("resume idle cluster for ingestion", "cluster", c.ID, "err", err)
		return
	}
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// wakeCheckDue throttles wakeOnIngest per cluster.
func (n *node) wakeCheckDue(id uuid.UUID) bool {
	every := min(wakeCheckEvery, n.idleMinute)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.wakeChecked == nil {
		n.wakeChecked = map[uuid.UUID]time.Time{}
	}
	if time.Since(n.wakeChecked[id]) < every {
		return false
	}
	n.wakeChecked[id] = time.Now()
	return true
}
