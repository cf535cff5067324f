package clickhouse_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// The benchmarks' in-process engine keeps its directory for the life of the process.
	if direct.dir != "" {
		_ = os.RemoveAll(direct.dir)
	}
	// The supervisor starts goroutines per engine: every test must leave none behind.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
