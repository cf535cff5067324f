package clusters

import (
	"fmt"
	"math"

	"github.com/svc-data/svc/projections/catalog"
)

// SizeEntry is one size of the catalog as GET /v1/clusters/sizes shows it.
type SizeEntry struct {
	Size      string  `json:"size"`
	CPUCores  float64 `json:"cpu_cores"`
	MemoryGiB float64 `json:"memory_gib"`
}

// ClusterSize is the entry as the catalog records a cluster's size.
func (e SizeEntry) ClusterSize() catalog.ClusterSize {
	return catalog.ClusterSize{CPUCores: e.CPUCores, MemoryGiB: e.MemoryGiB}
}

// SizeCatalog is what clusters may be made of. Each replica of an embedded cluster is
// one engine process on this machine. Its JSON is the answer of GET /v1/clusters/sizes.
type SizeCatalog struct {
	MinReplicas    int         `json:"min_number_of_replicas"`
	MaxReplicas    int         `json:"max_number_of_replicas"`
	Sizes          []SizeEntry `json:"sizes"`
	DefaultMinSize SizeEntry   `json:"default_min_size"`
	DefaultMaxSize SizeEntry   `json:"default_max_size"`
}

var sizeCatalog = SizeCatalog{
	MinReplicas: 1, MaxReplicas: 1,
	Sizes: []SizeEntry{
		{"1 vCPU, 4 GiB", 1, 4}, {"2 vCPU, 8 GiB", 2, 8}, {"4 vCPU, 16 GiB", 4, 16}, {"8 vCPU, 32 GiB", 8, 32},
	},
	DefaultMinSize: SizeEntry{"1 vCPU, 4 GiB", 1, 4},
	DefaultMaxSize: SizeEntry{"8 vCPU, 32 GiB", 8, 32},
}

// Catalog returns the size catalog (a copy: callers cannot change it).
func Catalog() SizeCatalog {
	c := sizeCatalog
	c.Sizes = append([]SizeEntry(nil), sizeCatalog.Sizes...)
	return c
}

// Sizes are the catalog's sizes, smallest first: the steps autoscaling moves along
// inside a cluster's bounds.
func Sizes() []catalog.ClusterSize {
	out := make([]catalog.ClusterSize, len(sizeCatalog.Sizes))
	for i, e := range sizeCatalog.Sizes {
		out[i] = e.ClusterSize()
	}
	return out
}

// SizeIndex is z's position in the catalog's sizes, or -1 when z is not one of them.
func SizeIndex(z catalog.ClusterSize) int {
	return indexIn(Sizes(), z)
}

func indexIn(sizes []catalog.ClusterSize, z catalog.ClusterSize) int {
	for i, s := range sizes {
		if s == z {
			return i
		}
	}
	return -1
}

// Cores are a size's cores rounded up: the engine's max_threads, and the statements
// that saturate it.
func Cores(z catalog.ClusterSize) int { return int(math.Ceil(z.CPUCores)) }

// EngineLimits are a cluster size mapped onto the engine process: max_threads = the
// size's cores (rounded up), a pool of two connections per core (at least 2), and
// max_server_memory_usage = the size's memory. Clusters without a size (the bootstrap
// one) keep the engine's defaults and the configured pool (the zero value).
type EngineLimits struct {
	Threads, Pool int
	Memory        int64
}

// LimitsFor are the engine limits of a cluster's current size.
func LimitsFor(c *catalog.Cluster) EngineLimits {
	if c.Size.CPUCores <= 0 || c.Size.MemoryGiB <= 0 {
		return EngineLimits{}
	}
	cores := Cores(c.Size)
	return EngineLimits{Threads: cores, Pool: max(2, 2*cores), Memory: int64(c.Size.MemoryGiB * (1 << 30))}
}

// PoolOr is the limits' pool, or configured when the limits keep the defaults.
func (l EngineLimits) PoolOr(configured int) int {
	if l.Pool > 0 {
		return l.Pool
	}
	return configured
}

// ShapeError names what of a new cluster's shape the size catalog does not allow.
type ShapeError struct{ Field, Message string }

func (e *ShapeError) Error() string { return e.Message }

// Shape checks a new cluster's replicas, size and autoscaling bounds against the
// catalog and returns the bounds (nil ones take the catalog's defaults): every size is
// a pair of the catalog, and the size falls within the bounds.
func Shape(replicas *int, size, minSize, maxSize *catalog.ClusterSize) (lo, hi catalog.ClusterSize, err *ShapeError) {
	in := func(z *catalog.ClusterSize) bool { return z != nil && SizeIndex(*z) >= 0 }
	switch {
	case replicas == nil || *replicas < sizeCatalog.MinReplicas || *replicas > sizeCatalog.MaxReplicas:
		return lo, hi, &ShapeError{"replicas", fmt.Sprintf("replicas must be %d to %d", sizeCatalog.MinReplicas, sizeCatalog.MaxReplicas)}
	case !in(size):
		return lo, hi, &ShapeError{"size", "size must be a {cpu_cores, memory_gib} pair of the size catalog"}
	}
	lo, hi = sizeCatalog.DefaultMinSize.ClusterSize(), sizeCatalog.DefaultMaxSize.ClusterSize()
	if minSize != nil {
		if !in(minSize) {
			return lo, hi, &ShapeError{"autoscaling", "autoscaling.min_size must be a pair of the size catalog"}
		}
		lo = *minSize
	}
	if maxSize != nil {
		if !in(maxSize) {
			return lo, hi, &ShapeError{"autoscaling", "autoscaling.max_size must be a pair of the size catalog"}
		}
		hi = *maxSize
	}
	l, h, at := SizeIndex(lo), SizeIndex(hi), SizeIndex(*size)
	if l > h || at < l || at > h {
		return lo, hi, &ShapeError{"size", "the initial size must fall within autoscaling min_size and max_size"}
	}
	return lo, hi, nil
}
