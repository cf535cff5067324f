package clusters

import (
	"fmt"

	"github.com/svc-data/svc/projections/catalog"
)

// Autoscaling inside a cluster's bounds (DESIGN.md, "Sizes"): every autoscale interval
// the node counts the statements running on each ready cluster's engine. Saturated
// (running >= the size's cores) for UpChecks checks in a row, the cluster moves one size
// up; quiet enough to fit the next smaller size (running < its cores) for DownChecks
// checks in a row, one size down; never outside [min_size, max_size]. A move is a
// cluster.resized event; every node's reconciler then restarts the engine with the new
// limits (running statements finish first, the consumer drains, nothing is lost).
const (
	UpChecks   = 3
	DownChecks = 10
)

// ScaleState is the hysteresis of one cluster: consecutive checks calling for a move.
type ScaleState struct{ up, down int }

// Autoscales reports whether the autoscale rule applies to a cluster now: ready, sized,
// and with room to move.
func Autoscales(c *catalog.Cluster) bool {
	return c.PhaseName() == catalog.PhaseReady && c.Size.CPUCores > 0 && c.MinSize != c.MaxSize
}

// Decide updates st with one observation of running statements on a cluster of size
// cur with bounds lo..hi, and returns the size to move to, if any.
func Decide(cur, lo, hi catalog.ClusterSize, running int, st *ScaleState) (catalog.ClusterSize, bool) {
	sizes := Sizes()
	i, l, h := indexIn(sizes, cur), indexIn(sizes, lo), indexIn(sizes, hi)
	if i < 0 || l < 0 || h < 0 {
		*st = ScaleState{}
		return cur, false
	}
	switch {
	case running >= Cores(cur) && i < h:
		st.up, st.down = st.up+1, 0
		if st.up >= UpChecks {
			*st = ScaleState{}
			return sizes[i+1], true
		}
	case i > l && running < Cores(sizes[i-1]):
		st.up, st.down = 0, st.down+1
		if st.down >= DownChecks {
			*st = ScaleState{}
			return sizes[i-1], true
		}
	default:
		*st = ScaleState{}
	}
	return cur, false
}

// ResizeReason says why Decide moved a cluster from one size to another (the
// cluster.resized event's reason).
func ResizeReason(from, to catalog.ClusterSize, running int) string {
	if to.CPUCores < from.CPUCores {
		return fmt.Sprintf("fewer than %d statements running for %d checks", Cores(to), DownChecks)
	}
	return fmt.Sprintf("%d statements running on %d cores for %d checks", running, Cores(from), UpChecks)
}
