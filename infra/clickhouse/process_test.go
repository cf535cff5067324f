package clickhouse_test

import (
	"context"
	"testing"

	"github.com/svc-data/svc/infra/clickhouse"
)

func TestProcessConfigValidate(t *testing.T) {
	f := func(cfg clickhouse.ProcessConfig, ok bool) {
		t.Helper()
		if err := cfg.Validate(); (err == nil) != ok {
			t.Errorf("Validate(%+v) = %v, want ok=%v", cfg, err, ok)
		}
	}
	f(clickhouse.ProcessConfig{DataDir: "/tmp/x", Binary: "/bin/true", Lib: "/x/libchdb.so"}, true)
	f(clickhouse.ProcessConfig{DataDir: "relative", Binary: "/bin/true", Lib: "/x/libchdb.so"}, false)
	f(clickhouse.ProcessConfig{DataDir: "/tmp/x", Binary: "/nonexistent/chengine", Lib: "/x/libchdb.so"}, false)
	f(clickhouse.ProcessConfig{DataDir: "/tmp/x", Binary: "/bin/true", Lib: "/x/libchdb.so", Pool: -1}, false)
}

func TestProcessShutdownWithoutStart(t *testing.T) {
	p, err := clickhouse.NewProcess(clickhouse.ProcessConfig{DataDir: t.TempDir(), Binary: "/bin/true", Lib: "/x/libchdb.so"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := p.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if p.URL() != "" || p.PID() != 0 {
		t.Fatalf("URL %q, PID %d before start", p.URL(), p.PID())
	}
}

func TestProcessStartFailureIsReported(t *testing.T) {
	// /bin/true exits at once, before it serves.
	p, err := clickhouse.NewProcess(clickhouse.ProcessConfig{DataDir: t.TempDir(), Binary: "/bin/true", Lib: "/x/libchdb.so"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err == nil {
		t.Fatal("a binary that exits at once started")
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
