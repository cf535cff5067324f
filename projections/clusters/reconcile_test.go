package clusters

import (
	"testing"
	"time"

	"github.com/svc-data/svc/projections/catalog"
)

func cluster(phase string, cores float64) *catalog.Cluster {
	z := catalog.ClusterSize{CPUCores: cores, MemoryGiB: 4 * cores}
	return &catalog.Cluster{Phase: phase, Size: z, MinSize: z, MaxSize: z}
}

// TestPlanReconcile walks the reconciler's decision through every phase, with and
// without a local run, a resize, and a backoff not yet over.
func TestPlanReconcile(t *testing.T) {
	one := cluster(catalog.PhaseReady, 1)
	sameLimits := LocalRun{Running: true, Limits: LimitsFor(one)}
	cases := []struct {
		name  string
		c     *catalog.Cluster
		local LocalRun
		due   bool
		want  Plan
	}{
		{"gone, running here: stop and remove", nil, sameLimits, false, Plan{Stop: true, Remove: true}},
		{"gone, nothing here: remove", nil, LocalRun{}, false, Plan{Remove: true}},
		{"provisioning, due: start and record started", cluster(catalog.PhaseProvisioning, 1), LocalRun{}, true,
			Plan{Start: true, Then: ThenRecordStarted}},
		{"provisioning, backing off: nothing", cluster(catalog.PhaseProvisioning, 1), LocalRun{}, false, Plan{}},
		{"resuming, running here: record started", cluster(catalog.PhaseResuming, 1), sameLimits, false,
			Plan{Then: ThenRecordStarted}},
		{"failed, due: start and record started", cluster(catalog.PhaseFailed, 1), LocalRun{}, true,
			Plan{Start: true, Then: ThenRecordStarted}},
		{"ready, running here: check idle", one, sameLimits, false, Plan{Then: ThenCheckIdle}},
		{"ready, not running here, due: start and check idle", one, LocalRun{}, true, Plan{Start: true, Then: ThenCheckIdle}},
		{"ready, not running here, backing off: nothing", one, LocalRun{}, false, Plan{}},
		{"resized: restart with the new limits", cluster(catalog.PhaseReady, 2), sameLimits, true,
			Plan{Stop: true, Resized: true, Start: true, Then: ThenCheckIdle}},
		{"resized, backing off: stop only", cluster(catalog.PhaseReady, 2), sameLimits, false,
			Plan{Stop: true, Resized: true}},
		{"stopping, running here: stop and record stopped", cluster(catalog.PhaseStopping, 1), sameLimits, false,
			Plan{Stop: true, Then: ThenRecordStopped}},
		{"stopping, nothing here: record stopped", cluster(catalog.PhaseStopping, 1), LocalRun{}, true,
			Plan{Then: ThenRecordStopped}},
		{"stopped: check for ingestion", cluster(catalog.PhaseStopped, 1), LocalRun{}, true, Plan{Then: ThenCheckWake}},
		{"stopped, still running here: stop, then check", cluster(catalog.PhaseStopped, 1), sameLimits, true,
			Plan{Stop: true, Then: ThenCheckWake}},
		{"deleting, running here: stop and delete", cluster(catalog.PhaseDeleting, 1), sameLimits, false,
			Plan{Stop: true, Then: ThenDelete}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := PlanReconcile(tc.c, tc.local, tc.due); got != tc.want {
				t.Fatalf("PlanReconcile = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestRecordsFailure: a failed start becomes the phase only of a cluster coming up.
func TestRecordsFailure(t *testing.T) {
	for phase, want := range map[string]bool{
		catalog.PhaseProvisioning: true, catalog.PhaseResuming: true,
		catalog.PhaseFailed: false, catalog.PhaseReady: false,
	} {
		if got := RecordsFailure(cluster(phase, 1)); got != want {
			t.Errorf("%s: RecordsFailure = %v, want %v", phase, got, want)
		}
	}
}

// TestBackoff: due without failures; after one, not due for 1 s; the delay doubles to
// at most 30 s.
func TestBackoff(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var b *Backoff
	if !b.Due(t0) {
		t.Fatal("no failure: want due")
	}
	b = b.Failed(t0)
	if b.Due(t0.Add(time.Second)) || !b.Due(t0.Add(time.Second+1)) {
		t.Fatal("after the first failure: want due only after 1s")
	}
	var delays []time.Duration
	now := t0
	for range 7 {
		b = b.Failed(now)
		delays = append(delays, b.next.Sub(now))
	}
	want := []time.Duration{2, 4, 8, 16, 30, 30, 30}
	for i := range want {
		if delays[i] != want[i]*time.Second {
			t.Fatalf("delays %v, want %v seconds", delays, want)
		}
	}
}
