package edge

import "github.com/svc-data/svc/projections/catalog"

// ClusterSizes are the size catalog's sizes, smallest first: the steps autoscaling moves
// along inside a cluster's bounds.
func ClusterSizes() []catalog.ClusterSize {
	out := make([]catalog.ClusterSize, len(sizeCatalog.Sizes))
	for i, e := range sizeCatalog.Sizes {
		out[i] = catalog.ClusterSize{CPUCores: e.CPUCores, MemoryGiB: e.MemoryGiB}
	}
	return out
}
