package main

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/clusters"
)

// Ingestion wakes an idle-stopped cluster: the rule is clusters.WakesOnIngest
// (DESIGN.md, "Cluster lifecycle"); this node looks at each idle-stopped cluster's
// ingest topic at most every clusters.WakeCheckInterval for records its consumer group
// has not committed.

// wakeOnIngest resumes an idle-stopped cluster whose consumer has rows waiting.
func (n *node) wakeOnIngest(ctx context.Context, c *catalog.Cluster) {
	if !clusters.Wakeable(c) || !n.wakeCheckDue(c.ID) {
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
	if !clusters.WakesOnIngest(c, waiting) {
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
	every := clusters.WakeCheckInterval(n.idleMinute)
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
