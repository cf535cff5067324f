package clickhouse_test

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// The benchmarks' in-process engine keeps its directory for the life of the process.
	if direct.dir != "" {
		_ = os.RemoveAll(direct.dir)
	}
	os.Exit(code)
}
