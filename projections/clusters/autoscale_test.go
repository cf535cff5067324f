package clusters

import (
	"testing"

	"github.com/svc-data/svc/projections/catalog"
)

// TestAutoscaleDecision walks the rule through observation sequences: a move needs
// UpChecks saturated (or DownChecks quiet) checks in a row, any other observation resets
// the count, and the bounds hold.
func TestAutoscaleDecision(t *testing.T) {
	sizes := Sizes()
	z := func(c float64) catalog.ClusterSize {
		for _, s := range sizes {
			if s.CPUCores == c {
				return s
			}
		}
		t.Fatalf("no size of %v cores", c)
		return catalog.ClusterSize{}
	}
	cases := []struct {
		name        string
		cur, lo, hi float64
		running     []int
		want        float64 // 0: no move after the sequence; else the size moved to at its last observation
	}{
		{"saturated three checks: up", 1, 1, 8, []int{1, 1, 1}, 2},
		{"saturated twice: not yet", 1, 1, 8, []int{1, 1}, 0},
		{"a quiet check resets the count", 1, 1, 8, []int{1, 1, 0, 1, 1}, 0},
		{"at the upper bound: stays", 2, 1, 2, []int{5, 5, 5, 5}, 0},
		{"quiet ten checks: down", 4, 1, 8, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 2},
		{"quiet nine checks: not yet", 4, 1, 8, []int{0, 0, 0, 0, 0, 0, 0, 0, 0}, 0},
		{"load that needs this size: stays", 4, 1, 8, []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, 0},
		{"a busy check resets the quiet count", 2, 1, 8, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}, 0},
		{"at the lower bound: stays", 2, 2, 8, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var st ScaleState
			for i, r := range tc.running {
				to, move := Decide(z(tc.cur), z(tc.lo), z(tc.hi), r, &st)
				last := i == len(tc.running)-1
				switch {
				case move && (!last || tc.want == 0):
					t.Fatalf("moved to %v cores at observation %d", to.CPUCores, i)
				case last && tc.want != 0 && (!move || to != z(tc.want)):
					t.Fatalf("got %v cores (move %v), want %v", to.CPUCores, move, tc.want)
				}
			}
		})
	}
}
