package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/edge"
	"github.com/svc-data/svc/projections/catalog"
)

// Autoscaling inside a cluster's bounds (DESIGN.md, "Sizes"): every autoscaleInterval the
// node counts the statements running on each ready cluster's engine (system.processes,
// initial queries: the query API's, the consumer's inserts, internal reads). Saturated
// (running >= the size's cores) for upChecks checks in a row, the cluster moves one size
// up; quiet enough to fit the next smaller size (running < its cores) for downChecks checks
// in a row, one size down; never outside [min_size, max_size]. A move is a
// cluster.resized event; every node's reconciler then restarts the engine with the new
// limits (running statements finish first, the consumer drains, nothing is lost).
const (
	upChecks   = 3
	downChecks = 10
)

// autoscaleInterval is SVC_AUTOSCALE_INTERVAL (default 15s; tests shorten it).
func autoscaleInterval() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("SVC_AUTOSCALE_INTERVAL")); err == nil && d > 0 {
		return d
	}
	return 15 * time.Second
}

// scaleState is the hysteresis of one cluster: consecutive checks calling for a move.
type scaleState struct{ up, down int }

func sizeIndex(sizes []catalog.ClusterSize, z catalog.ClusterSize) int {
	for i, s := range sizes {
		if s == z {
			return i
		}
	}
	return -1
}

func cores(z catalog.ClusterSize) int { return int(math.Ceil(z.CPUCores)) }

// decide updates st with one observation of running statements on a cluster of size
// cur with bounds lo..hi, and returns the size to move to, if any.
func decide(sizes []catalog.ClusterSize, cur, lo, hi catalog.ClusterSize, running int, st *scaleState) (catalog.ClusterSize, bool) {
	i, l, h := sizeIndex(sizes, cur), sizeIndex(sizes, lo), sizeIndex(sizes, hi)
	if i < 0 || l < 0 || h < 0 {
		*st = scaleState{}
		return cur, false
	}
	switch {
	case running >= cores(cur) && i < h:
		st.up, st.down = st.up+1, 0
		if st.up >= upChecks {
			*st = scaleState{}
			return sizes[i+1], true
		}
	case i > l && running < cores(sizes[i-1]):
		st.up, st.down = 0, st.down+1
		if st.down >= downChecks {
			*st = scaleState{}
			return sizes[i-1], true
		}
	default:
		*st = scaleState{}
	}
	return cur, false
}

// autoscale runs until ctx ends, checking every cluster running on this node.
func (n *node) autoscale(ctx context.Context) {
	t := time.NewTicker(autoscaleInterval())
	defer t.Stop()
	states := map[uuid.UUID]*scaleState{}
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
				states[id] = &scaleState{}
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
		return max(running, limitsFor(c).pool(n.cfg.EnginePool)), nil
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
func (n *node) checkLoad(ctx context.Context, id uuid.UUID, st *scaleState) error {
	c, ok := n.model.Cluster(id)
	if !ok || c.PhaseName() != catalog.PhaseReady || c.Size.CPUCores <= 0 || c.MinSize == c.MaxSize {
		*st = scaleState{}
		return nil
	}
	running, err := n.running(ctx, id, c)
	if err != nil {
		return err
	}
	to, move := decide(edge.ClusterSizes(), c.Size, c.MinSize, c.MaxSize, running, st)
	if !move {
		return nil
	}
	reason := fmt.Sprintf("%d statements running on %d cores for %d checks", running, cores(c.Size), upChecks)
	if to.CPUCores < c.Size.CPUCores {
		reason = fmt.Sprintf("fewer than %d statements running for %d checks", cores(to), downChecks)
	}
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
