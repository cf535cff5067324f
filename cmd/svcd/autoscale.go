package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/clusters"
)

// Autoscaling inside a cluster's bounds: the rule is clusters.Decide (DESIGN.md,
// "Sizes"); every Config.AutoscaleInterval the node counts the statements running on
// each ready cluster's engine (system.processes, initial queries: the query API's, the
// consumer's inserts, internal reads) and records the move the rule calls for.

// autoscale runs until ctx ends, checking every cluster running on this node.
func (n *node) autoscale(ctx context.Context) {
	t := time.NewTicker(n.cfg.AutoscaleInterval)
	defer t.Stop()
	states := map[uuid.UUID]*clusters.ScaleState{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		seen := map[uuid.UUID]bool{}
		for _, id := range n.runningIDs() {
			seen[id] = true
			if states[id] == nil {
				states[id] = &clusters.ScaleState{}
			}
			if err := n.checkLoad(ctx, id, states[id]); err != nil && ctx.Err() == nil {
				n.log.Warn("autoscale check", "cluster", id, "err", err)
			}
		}
		for id := range states {
			if !seen[id] {
				delete(states, id)
			}
		}
	}
}

// SetInflight gives the node the count of queries it runs per cluster (query.Runner.Running).
func (n *node) SetInflight(f func(uuid.UUID) int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.inflight = f
}

// running counts the statements running on a cluster's engine: the engine's initial
// queries (query API, consumer inserts, internal reads) and at least the queries this
// node streams. An engine whose connections are all busy does not answer within a
// second: that is saturation, counted as its pool size.
func (n *node) running(ctx context.Context, id uuid.UUID, c *catalog.Cluster) (int, error) {
	n.mu.Lock()
	f := n.inflight
	n.mu.Unlock()
	running := 0
	if f != nil {
		running = f(id)
	}
	eng, err := n.engines.client(id)
	if err != nil {
		return 0, nil // restarting
	}
	qctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	rows, err := eng.QueryStrings(qctx, "SELECT toString(count()) FROM system.processes WHERE is_initial_query AND query_id != queryID()")
	switch {
	case qctx.Err() != nil && ctx.Err() == nil:
		return max(running, clusters.LimitsFor(c).PoolOr(n.cfg.EnginePool)), nil
	case err != nil || len(rows) != 1:
		return 0, fmt.Errorf("count running statements: %v", err)
	}
	engine, err := strconv.Atoi(rows[0])
	if err != nil {
		return 0, err
	}
	return max(running, engine), nil
}

// checkLoad observes one cluster and records a resize when the rule calls for one.
func (n *node) checkLoad(ctx context.Context, id uuid.UUID, st *clusters.ScaleState) error {
	c, ok := n.model.Cluster(id)
	if !ok || !clusters.Autoscales(c) {
		*st = clusters.ScaleState{}
		return nil
	}
	running, err := n.running(ctx, id, c)
	if err != nil {
		return err
	}
	to, move := clusters.Decide(c.Size, c.MinSize, c.MaxSize, running, st)
	if !move {
		return nil
	}
	reason := clusters.ResizeReason(c.Size, to, running)
	if err := n.cat.ResizeCluster(ctx, id, c.Size, to, reason); err != nil {
		if errors.Is(err, catalog.ErrConflict) {
			return nil // another node moved it, or it is no longer ready
		}
		return err
	}
	n.log.Info("cluster autoscaled", "cluster", id, "from_cores", c.Size.CPUCores, "to_cores", to.CPUCores, "reason", reason)
	select {
	case n.kick <- struct{}{}:
	default:
	}
	return nil
}

// runningIDs are the clusters running on this node now.
func (n *node) runningIDs() []uuid.UUID {
	n.mu.Lock()
	defer n.mu.Unlock()
	ids := make([]uuid.UUID, 0, len(n.runs))
	for id := range n.runs {
		ids = append(ids, id)
	}
	return ids
}
