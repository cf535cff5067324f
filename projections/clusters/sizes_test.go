package clusters

import (
	"testing"

	"github.com/svc-data/svc/projections/catalog"
)

// TestSizeCatalog: the sizes are the catalog's, smallest first, the defaults among them,
// and a caller cannot change the catalog through what it gets.
func TestSizeCatalog(t *testing.T) {
	c := Catalog()
	sizes := Sizes()
	if len(sizes) != len(c.Sizes) {
		t.Fatalf("%d sizes, catalog has %d", len(sizes), len(c.Sizes))
	}
	for i := 1; i < len(sizes); i++ {
		if sizes[i].CPUCores <= sizes[i-1].CPUCores {
			t.Fatalf("sizes not smallest first: %v", sizes)
		}
	}
	if SizeIndex(c.DefaultMinSize.ClusterSize()) != 0 || SizeIndex(c.DefaultMaxSize.ClusterSize()) != len(sizes)-1 {
		t.Fatal("defaults are not the smallest and largest sizes")
	}
	if SizeIndex(catalog.ClusterSize{CPUCores: 1, MemoryGiB: 8}) != -1 {
		t.Fatal("a pair outside the catalog was found")
	}
	c.Sizes[0].CPUCores = 99
	if Sizes()[0].CPUCores == 99 {
		t.Fatal("the catalog changed through a copy")
	}
}

// TestLimitsFor: a size maps to max_threads = cores rounded up, two connections per core
// (at least 2) and its memory; no size keeps the engine's defaults and the configured pool.
func TestLimitsFor(t *testing.T) {
	got := LimitsFor(&catalog.Cluster{Size: catalog.ClusterSize{CPUCores: 0.5, MemoryGiB: 2}})
	if want := (EngineLimits{Threads: 1, Pool: 2, Memory: 2 << 30}); got != want {
		t.Fatalf("LimitsFor(0.5 cores) = %+v, want %+v", got, want)
	}
	if got := LimitsFor(&catalog.Cluster{Size: catalog.ClusterSize{CPUCores: 4, MemoryGiB: 16}}); got.Pool != 8 || got.PoolOr(3) != 8 {
		t.Fatalf("LimitsFor(4 cores) = %+v, want a pool of 8", got)
	}
	if none := LimitsFor(&catalog.Cluster{}); none != (EngineLimits{}) || none.PoolOr(3) != 3 {
		t.Fatalf("no size: %+v, want the zero limits and the configured pool", none)
	}
}

// TestShape: a new cluster's shape is checked field by field, in the API's order, and
// bounds not given take the catalog's defaults.
func TestShape(t *testing.T) {
	one, two := 1, 2
	z := func(c float64) *catalog.ClusterSize { return &catalog.ClusterSize{CPUCores: c, MemoryGiB: 4 * c} }
	odd := &catalog.ClusterSize{CPUCores: 3, MemoryGiB: 12}
	cases := []struct {
		name           string
		replicas       *int
		size, min, max *catalog.ClusterSize
		field          string // "" when allowed
	}{
		{"defaults", &one, z(2), nil, nil, ""},
		{"no replicas", nil, z(2), nil, nil, "replicas"},
		{"two replicas", &two, z(2), nil, nil, "replicas"},
		{"no size", &one, nil, nil, nil, "size"},
		{"size off the catalog", &one, odd, nil, nil, "size"},
		{"min off the catalog", &one, z(2), odd, nil, "autoscaling"},
		{"max off the catalog", &one, z(2), nil, odd, "autoscaling"},
		{"size below min", &one, z(1), z(2), nil, "size"},
		{"size above max", &one, z(4), nil, z(2), "size"},
		{"min above max", &one, z(2), z(4), z(1), "size"},
		{"fixed size", &one, z(2), z(2), z(2), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, err := Shape(tc.replicas, tc.size, tc.min, tc.max)
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field != "" && (err == nil || err.Field != tc.field):
				t.Fatalf("got %v, want an error on %s", err, tc.field)
			case tc.field == "" && tc.min == nil && (lo != Catalog().DefaultMinSize.ClusterSize() || hi != Catalog().DefaultMaxSize.ClusterSize()):
				t.Fatalf("bounds %v..%v, want the defaults", lo, hi)
			}
		})
	}
}
