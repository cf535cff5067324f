package main

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWaitForPeerReportsAStall: a peer's count that stays short ends the wait with a
// stalledError naming what came; one that moves on is waited for; this service's wait
// (no stall) runs to its limit and fails as before.
func TestWaitForPeerReportsAStall(t *testing.T) {
	ctx := context.Background()
	stuck := func() (int64, error) { return 5, nil }
	var stalled *stalledError
	if err := waitForPeer(ctx, "peer", 10, time.Minute, 300*time.Millisecond, stuck); !errors.As(err, &stalled) || stalled.got != 5 || stalled.want != 10 {
		t.Fatalf("a stuck peer: %v", err)
	}
	n := int64(0)
	climbing := func() (int64, error) { n++; return min(n, 10), nil }
	if err := waitForPeer(ctx, "peer", 10, time.Minute, 300*time.Millisecond, climbing); err != nil {
		t.Fatalf("a peer getting there: %v", err)
	}
	if err := waitFor(ctx, "svc", 10, 500*time.Millisecond, stuck); err == nil || errors.As(err, &stalled) {
		t.Fatalf("this service short of its rows: %v", err)
	}
}
