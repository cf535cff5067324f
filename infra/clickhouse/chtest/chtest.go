// Package chtest starts throwaway embedded engines (chengine) for tests.
//
//	func TestX(t *testing.T) {
//		_, conn := chtest.Engine(t) // skips when SVC_CHDB_LIB is unset
//		if err := conn.Exec(ctx, "CREATE TABLE ..."); err != nil { ... }
//	}
//
// The engine needs libchdb: SVC_CHDB_LIB names it (`go tool task deps:chdb` fetches it, and
// the Taskfile exports it). Unset, the test is skipped; set but unusable, the test fails. The
// chengine binary is taken from SVC_BIN_DIR when it holds one, else built once per test binary.
// Each engine is a separate process on its own temporary directory, stopped when the test
// ends.
package chtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chclient"
	"github.com/svc-data/svc/infra/testenv"
)

// Lib returns the path of libchdb from SVC_CHDB_LIB, skipping the test when it is unset
// (testenv.Engine).
func Lib(t testing.TB) string {
	t.Helper()
	return testenv.Engine(t)
}

var build struct {
	once sync.Once
	path string
	err  error
}

// Binary returns a chengine executable: $SVC_BIN_DIR/chengine when present, else one built
// from this module, once per test binary.
func Binary(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("SVC_BIN_DIR"); dir != "" {
		if p := filepath.Join(dir, "chengine"); isFile(p) {
			return p
		}
	}
	build.once.Do(func() {
		// One stable place per user, so repeated runs leave no binaries behind; the rename
		// keeps concurrent test binaries from seeing a half-written file.
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("svc-chtest-%d", os.Getuid()))
		if err := os.MkdirAll(dir, 0o750); err != nil {
			build.err = err
			return
		}
		out := filepath.Join(dir, "chengine")
		tmp := fmt.Sprintf("%s.%d", out, os.Getpid())
		cmd := exec.Command("go", "build", "-o", tmp, "github.com/svc-data/svc/cmd/chengine")
		if b, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build chengine: %w\n%s", err, b)
			return
		}
		build.err = os.Rename(tmp, out)
		build.path = out
	})
	if build.err != nil {
		t.Fatalf("chtest: %v", build.err)
	}
	return build.path
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Start starts an engine for the test and stops it when the test ends. Zero fields of cfg
// take test defaults: the binary and library above, a temporary data directory, a free
// port, a 1 GiB memory limit.
func Start(t testing.TB, cfg clickhouse.ProcessConfig) *clickhouse.Process {
	t.Helper()
	if cfg.Lib == "" {
		cfg.Lib = Lib(t)
	}
	if cfg.Binary == "" {
		cfg.Binary = Binary(t)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.MaxMemory == 0 {
		cfg.MaxMemory = 1 << 30
	}
	p, err := clickhouse.NewProcess(cfg)
	if err != nil {
		t.Fatalf("chtest: %v", err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatalf("chtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil {
			t.Errorf("chtest: stop engine: %v", err)
		}
	})
	return p
}

// Open opens a clickhouse-go connection over HTTP to the engine at rawURL (as
// Process.URL returns it), closed when the test ends. opts adjust the options before opening.
func Open(t testing.TB, rawURL string, opts ...func(*ch.Options)) driver.Conn {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("chtest: engine url: %v", err)
	}
	o := &ch.Options{
		Addr:        []string{u.Host},
		Protocol:    ch.HTTP,
		DialTimeout: 10 * time.Second,
	}
	for _, f := range opts {
		f(o)
	}
	conn, err := ch.Open(o)
	if err != nil {
		t.Fatalf("chtest: open: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := conn.Ping(ctx); err != nil {
		t.Fatalf("chtest: ping %s: %v", rawURL, err)
	}
	return conn
}

// Engine starts a throwaway engine and returns its URL and an open clickhouse-go HTTP
// connection to it. It skips the test when SVC_CHDB_LIB is unset.
func Engine(t testing.TB) (string, driver.Conn) {
	t.Helper()
	p := Start(t, clickhouse.ProcessConfig{})
	return p.URL(), Open(t, p.URL())
}

// Client opens the service's own engine client (chclient) to the engine at rawURL (as
// Process.URL returns it), closed when the test ends.
func Client(t testing.TB, rawURL string) *chclient.Client {
	t.Helper()
	c, err := chclient.Open(chclient.Config{URL: rawURL, DialTimeout: time.Second})
	if err != nil {
		t.Fatalf("chtest: open client: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
