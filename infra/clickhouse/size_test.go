package clickhouse_test

import (
	"testing"

	"github.com/svc-data/svc/infra/clickhouse"
)

func TestParseSize(t *testing.T) {
	f := func(in string, want int64) {
		t.Helper()
		got, err := clickhouse.ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	f("1024", 1024)
	f("2GiB", 2<<30)
	f("512MiB", 512<<20)
	f("512M", 512<<20)
	f("1.5G", 3<<29)
	for _, bad := range []string{"", "x", "-1", "0%", "101%", "GiB"} {
		if _, err := clickhouse.ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	if v, err := clickhouse.ParseSize("25%"); err != nil || v <= 0 {
		t.Errorf("ParseSize(25%%) = %d, %v", v, err)
	}
}
