package temporal

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-data/svc/infra/localproc"
	"github.com/svc-data/svc/infra/testenv"
)

// TestMain lets this test binary be the forwarder, as svcd is: `<test> temporal-netns`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == NetnsCommand {
		err := RunNetns(os.Args[2:])
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
		}
		os.Exit(NetnsExit(err))
	}
	os.Exit(m.Run())
}

// serverPID returns the dev server's pid among the forwarder's children, 0 if none.
func serverPID(forwarder int) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if len(fields) > 1 && fields[1] == strconv.Itoa(forwarder) && localproc.Alive(pid, marker) {
			return pid
		}
	}
	return 0
}

// TestIsolatedServerIsReachedThroughItsSocket starts the server as svcd does, through
// the forwarder in a network namespace of its own: its address is the unix socket
// (0600, in the 0700 directory), the host's loopback does not reach it, and it dies
// with its forwarder.
func TestIsolatedServerIsReachedThroughItsSocket(t *testing.T) {
	bin := testenv.TemporalBin(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := NewServer(ServerConfig{Binary: bin, DataDir: dir, Forwarder: []string{os.Args[0], NetnsCommand}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if !s.Isolated() || s.Addr() != "unix://"+SocketFile(dir) {
		t.Fatalf("isolated %v, addr %s", s.Isolated(), s.Addr())
	}
	if err := Ping(ctx, s.Addr(), "svc"); err != nil {
		t.Fatalf("ping through the socket: %v", err)
	}
	if fi, err := os.Stat(SocketFile(dir)); err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v %v", fi, err)
	}
	// The frontend's port in the namespace is not the host's.
	if err := Ping(ctx, "127.0.0.1:"+strconv.Itoa(netnsPort), "svc"); err == nil {
		t.Fatal("the host's loopback reaches the isolated server")
	}
	srv := serverPID(s.PID())
	if srv == 0 {
		t.Fatal("no server below the forwarder")
	}
	host, _ := os.Readlink("/proc/self/ns/net")
	if ns, err := os.Readlink("/proc/" + strconv.Itoa(srv) + "/ns/net"); err != nil || ns == host {
		t.Fatalf("the server's network namespace %s (%v) is the host's %s", ns, err, host)
	}
	// Killed, the forwarder takes the server with it.
	if err := syscall.Kill(s.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.proc.Done()
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		return !localproc.Alive(srv, marker), fmt.Sprintf("the server %d outlived its forwarder", srv)
	})
}

// TestNoNamespaceFallsBackLoudly: where the forwarder reports that it cannot bring its
// namespace up, the server runs on TCP loopback, and svcd's log says so loudly.
func TestNoNamespaceFallsBackLoudly(t *testing.T) {
	bin := testenv.TemporalBin(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var logs bytes.Buffer
	s, err := NewServer(ServerConfig{Binary: bin, DataDir: dir, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Forwarder: []string{"/bin/sh", "-c", "exit " + strconv.Itoa(NetnsRefusedExit)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if s.Isolated() || strings.HasPrefix(s.Addr(), "unix:") {
		t.Fatalf("isolated %v, addr %s", s.Isolated(), s.Addr())
	}
	if err := Ping(ctx, s.Addr(), "svc"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "SVC_TEMPORAL_TLS_CERT") {
		t.Fatalf("no warning naming the risk and the remedy:\n%s", logs.String())
	}
}

// TestServerRunsByPID starts the dev server detached, as the test harness does, and
// stops it through its PID file; its SQLite runs in WAL mode.
func TestServerRunsByPID(t *testing.T) {
	bin := testenv.TemporalBin(t)
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
