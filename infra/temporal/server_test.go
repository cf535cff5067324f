package temporal

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-data/svc/infra/localproc"
)

// TestServerRunsByPID starts the dev server detached, as the test harness does, and
// stops it through its PID file; its SQLite runs in WAL mode.
func TestServerRunsByPID(t *testing.T) {
	bin := os.Getenv("SVC_TEMPORAL_BIN")
	if bin == "" {
		t.Skip("SVC_TEMPORAL_BIN not set; run through `go tool task test`")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := NewServer(ServerConfig{Binary: bin, DataDir: dir, Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = StopPIDFile(context.Background(), dir) })
	if err := Ping(ctx, s.Addr(), "svc"); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "temporal.db-wal")); err != nil {
		t.Fatalf("SQLite is not in WAL mode: %v", err)
	}
	pid := localproc.ReadPID(PIDFile(dir))
	if pid != s.PID() || !localproc.Alive(pid, marker) {
		t.Fatalf("pid file %d, server %d", pid, s.PID())
	}
	if err := StopPIDFile(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if localproc.Alive(pid, marker) {
		t.Fatal("the server still runs after StopPIDFile")
	}
	if err := Ping(ctx, s.Addr(), "svc"); err == nil {
		t.Fatal("a stopped server answered")
	}
	// Shutdown after the process is gone is safe, twice.
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
