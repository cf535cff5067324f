package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// EvClusterResized records that autoscaling moved a cluster to another size inside its
// bounds; nodes restart its engine with the new size's limits.
const EvClusterResized = "cluster.resized"

// ClusterResized is a size change: From is the size the decision was made on.
type ClusterResized struct {
	ID     uuid.UUID   `json:"id"`
	From   ClusterSize `json:"from"`
	Size   ClusterSize `json:"size"`
	Reason string      `json:"reason"`
	At     time.Time   `json:"at"`
}

func (m *Model) applyResize(e es.Event) (bool, error) {
	if e.Type != EvClusterResized {
		return false, nil
	}
	v, err := decode[ClusterResized](e)
	if err != nil {
		return true, err
	}
	if old := m.clusters[v.ID]; old != nil {
		c := *old
		c.Size = v.Size
		m.clusters[v.ID] = &c
	}
	return true, nil
}

// within reports whether lo <= z <= hi in both cores and memory.
func within(z, lo, hi ClusterSize) bool {
	return lo.CPUCores <= z.CPUCores && z.CPUCores <= hi.CPUCores && lo.MemoryGiB <= z.MemoryGiB && z.MemoryGiB <= hi.MemoryGiB
}

// ResizeCluster moves a ready cluster from size `from` to `to`, which must lie within its
// autoscaling bounds. It is decided on the cluster's stream at its exact version: when
// the size is no longer `from` (another node resized it first) it answers ErrConflict.
func (s *Service) ResizeCluster(ctx context.Context, id uuid.UUID, from, to ClusterSize, reason string) error {
	return s.retry(ctx, func() (uint64, error) {
		var version uint64
		seen := false
		var size, lo, hi ClusterSize
		phase := PhaseProvisioning
		it := s.store.ReadStream(ctx, clusterStream(id), 0)
		defer it.Close()
		for it.Next(ctx) {
			e := it.Event()
			version, seen = e.Version, true
			switch e.Type {
			case EvClusterCreated:
				v, err := decode[ClusterCreated](e)
				if err != nil {
					return 0, err
				}
				size, lo, hi = v.Size, v.MinSize, v.MaxSize
			case EvClusterResized:
				v, err := decode[ClusterResized](e)
				if err != nil {
					return 0, err
				}
				size = v.Size
			case EvClusterPhaseChanged:
				v, err := decode[ClusterPhaseChanged](e)
				if err != nil {
					return 0, err
				}
				phase = v.Phase
			case EvClusterDeleted:
				return 0, fmt.Errorf("%w: cluster %s", ErrNotFound, id)
			}
		}
		if err := it.Err(); err != nil {
			return 0, err
		}
		switch {
		case !seen:
			return 0, fmt.Errorf("%w: cluster %s", ErrNotFound, id)
		case size != from || phase != PhaseReady:
			return 0, fmt.Errorf("%w: cluster %s is %s at %v cores, not ready at %v", ErrConflict, id, phase, size.CPUCores, from.CPUCores)
		case !within(to, lo, hi):
			return 0, invalid("size", "size %v cores, %v GiB is outside the cluster's autoscaling bounds", to.CPUCores, to.MemoryGiB)
		}
		return s.append(ctx, clusterStream(id), es.Exact(version), newEvent(EvClusterResized,
			ClusterResized{ID: id, From: from, Size: to, Reason: reason, At: s.now()}))
	})
}
