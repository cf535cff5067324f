package chengine

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/infra/testenv"
)

func TestServerShutdownWithoutStart(t *testing.T) {
	s, err := New(Config{Path: t.TempDir(), Lib: "/proc/self/exe"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServerInProcess runs the server in the test process (libchdb loaded here), so that the
// race detector sees its goroutines. The engine tests in infra/clickhouse cover the rest.
func TestServerInProcess(t *testing.T) {
	lib := testenv.Engine(t)
	dir := t.TempDir()
	ready := dir + "/addr"
	s, err := New(Config{Path: dir, Lib: lib, Listen: "127.0.0.1:0", Pool: 2, MaxMemory: 1 << 30, ReadyFile: ready},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(ready); err != nil || strings.TrimSpace(string(b)) != s.Addr() {
		t.Fatalf("ready file %q, %v; addr %s", b, err, s.Addr())
	}
	if err := s.Start(ctx); err != ErrStarted {
		t.Fatalf("second Start: %v", err)
	}
	// A second server on the same path is refused by the lock.
	s2, err := New(Config{Path: dir, Lib: lib, Listen: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Start(ctx); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second server on one path: %v", err)
	}

	post := func(body string) string {
		t.Helper()
		res, err := http.Post("http://"+s.Addr()+"/?max_threads=1", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			post("SELECT count() FROM numbers(100000)")
		}
	}()
	for range 20 {
		if got := post("SELECT sum(number) FROM numbers(1000)"); got != "499500\n" {
			t.Errorf("sum = %q", got)
		}
	}
	<-done
	if got := post("INSERT INTO FUNCTION null('a UInt8') FORMAT TSV\n1\n2\n"); got != "" {
		t.Errorf("insert = %q", got)
	}

	for range 2 {
		if err := s.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(ready); !os.IsNotExist(err) {
		t.Fatalf("ready file left after shutdown: %v", err)
	}
}
