package clusters

import (
	"testing"
	"time"

	"github.com/svc-data/svc/projections/catalog"
)

// TestIdle: a ready cluster stops once its timeout passed since its last use, in idle
// minutes; 0 never idles, and a cluster not used on this node is not idle.
func TestIdle(t *testing.T) {
	last := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	minute := 100 * time.Millisecond
	c := func(m int) *catalog.Cluster {
		return &catalog.Cluster{Phase: catalog.PhaseReady, IdleTimeoutMinutes: m}
	}
	cases := []struct {
		name    string
		timeout int
		last    time.Time
		since   time.Duration
		want    bool
	}{
		{"timeout passed", 15, last, 15 * minute, true},
		{"just short of it", 15, last, 15*minute - 1, false},
		{"0 never idles", 0, last, 1000 * time.Hour, false},
		{"never used here", 15, time.Time{}, 1000 * time.Hour, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Idle(c(tc.timeout), tc.last, last.Add(tc.since), minute); got != tc.want {
				t.Fatalf("Idle = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWakesOnIngest: waiting records resume a cluster the idle timeout stopped, never
// one an administrator stopped or one not stopped.
func TestWakesOnIngest(t *testing.T) {
	cases := []struct {
		name    string
		c       catalog.Cluster
		waiting int64
		want    bool
	}{
		{"idle-stopped, records waiting", catalog.Cluster{Phase: catalog.PhaseStopped, IdleStopped: true}, 3, true},
		{"idle-stopped, nothing waiting", catalog.Cluster{Phase: catalog.PhaseStopped, IdleStopped: true}, 0, false},
		{"stopped by an administrator", catalog.Cluster{Phase: catalog.PhaseStopped}, 3, false},
		{"stopping after idle", catalog.Cluster{Phase: catalog.PhaseStopping, IdleStopped: true}, 3, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := WakesOnIngest(&tc.c, tc.waiting); got != tc.want {
				t.Fatalf("WakesOnIngest = %v, want %v", got, tc.want)
			}
		})
	}
	if got := WakeCheckInterval(100 * time.Millisecond); got != 100*time.Millisecond {
		t.Errorf("WakeCheckInterval(100ms) = %v: a short idle minute checks as often", got)
	}
	if got := WakeCheckInterval(time.Minute); got != WakeCheckEvery {
		t.Errorf("WakeCheckInterval(1m) = %v, want %v", got, WakeCheckEvery)
	}
}
