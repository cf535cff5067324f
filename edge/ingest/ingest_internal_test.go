package ingest

import (
	"testing"
	"time"
)

// TestAckTimeoutGrowsWithTheRequest: a request near the 100 MiB limit waits for the log
// longer than a small one, which keeps the configured wait.
func TestAckTimeoutGrowsWithTheRequest(t *testing.T) {
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{0, 10 * time.Second}, {4 << 10, 10 * time.Second}, {95 << 20, 105 * time.Second}} {
		if got := ackTimeout(10*time.Second, c.n); got != c.want {
			t.Errorf("ackTimeout(10s, %d) = %v, want %v", c.n, got, c.want)
		}
	}
}
