package testenv

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records a skip or a failure instead of ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

type stop struct{}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	panic(stop{})
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	panic(stop{})
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(stop{})
}

// run calls f with a recorder and returns it once f returns, skips or fails.
func run(t *testing.T, f func(testing.TB)) (r *recorder) {
	r = &recorder{TB: t}
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(stop); !ok {
				panic(v)
			}
		}
	}()
	f(r)
	return r
}

func TestUnsetSkipsSetButUnusableFails(t *testing.T) {
	// A listener that answers, and an address where nothing does (a listener closed).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := closed.Addr().String()
	closed.Close()
	file := filepath.Join(t.TempDir(), "libchdb.so")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "absent")

	f := func(name, env, value string, guard func(testing.TB) string, want string) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			t.Setenv(env, value)
			r := run(t, func(tb testing.TB) { guard(tb) })
			switch want {
			case "skip":
				if r.skipped == "" || !strings.HasPrefix(r.skipped, env+" is unset") {
					t.Errorf("%s=%q: skipped %q, failed %q; want a skip naming %s", env, value, r.skipped, r.failed, env)
				}
			case "fail":
				if r.failed == "" || !strings.Contains(r.failed, env) {
					t.Errorf("%s=%q: skipped %q, failed %q; want a failure naming %s", env, value, r.skipped, r.failed, env)
				}
			case "pass":
				if r.skipped != "" || r.failed != "" {
					t.Errorf("%s=%q: skipped %q, failed %q; want neither", env, value, r.skipped, r.failed)
				}
			}
		})
	}
	f("engine unset", "SVC_CHDB_LIB", "", Engine, "skip")
	f("engine missing", "SVC_CHDB_LIB", missing, Engine, "fail")
	f("engine", "SVC_CHDB_LIB", file, Engine, "pass")
	f("broker unset", "KAFKA_SEEDS", "", Broker, "skip")
	f("broker down", "KAFKA_SEEDS", dead, Broker, "fail")
	f("broker one seed up", "KAFKA_SEEDS", dead+","+l.Addr().String(), Broker, "pass")
	f("temporal unset", "TEMPORAL_ADDR", "", Temporal, "skip")
	f("temporal down", "TEMPORAL_ADDR", dead, Temporal, "fail")
	f("temporal", "TEMPORAL_ADDR", l.Addr().String(), Temporal, "pass")
	f("s3 unset", "SVC_S3_ENDPOINT", "", S3, "skip")
	f("s3 down", "SVC_S3_ENDPOINT", "http://"+dead, S3, "fail")
	f("s3 not a url", "SVC_S3_ENDPOINT", "127.0.0.1", S3, "fail")
	f("s3", "SVC_S3_ENDPOINT", "http://"+l.Addr().String(), S3, "pass")
	f("temporal bin unset", "SVC_TEMPORAL_BIN", "", TemporalBin, "skip")
	f("temporal bin missing", "SVC_TEMPORAL_BIN", missing, TemporalBin, "fail")
	f("kafka libs unset", "SVC_KAFKA_LIBS", "", KafkaLibs, "skip")
	f("kafka libs missing", "SVC_KAFKA_LIBS", missing, KafkaLibs, "fail")
	f("bin dir unset", "SVC_BIN_DIR", "", BinDir, "skip")
	f("bin dir missing", "SVC_BIN_DIR", missing, BinDir, "fail")
}

func TestBrowserRequiredFailsWithoutChromium(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no chromium on it
	t.Setenv("SVC_REQUIRE_BROWSER", "")
	if r := run(t, func(tb testing.TB) { Browser(tb) }); r.skipped == "" {
		t.Errorf("without chromium: skipped %q, failed %q; want a skip", r.skipped, r.failed)
	}
	t.Setenv("SVC_REQUIRE_BROWSER", "1")
	if r := run(t, func(tb testing.TB) { Browser(tb) }); r.failed == "" {
		t.Errorf("without chromium, SVC_REQUIRE_BROWSER set: skipped %q, failed %q; want a failure", r.skipped, r.failed)
	}
}

func TestEventuallyFailsWithTheLastReason(t *testing.T) {
	calls := 0
	r := run(t, func(tb testing.TB) {
		Eventually(tb, time.Nanosecond, func() (bool, string) {
			calls++
			return false, fmt.Sprintf("call %d", calls)
		})
	})
	if want := fmt.Sprintf("call %d", calls); !strings.HasSuffix(r.failed, want) {
		t.Errorf("failed %q, want it to end with the last reason %q", r.failed, want)
	}
	calls = 0
	r = run(t, func(tb testing.TB) {
		Eventually(tb, time.Hour, func() (bool, string) {
			calls++
			return calls == 3, "not yet"
		})
	})
	if r.failed != "" || calls != 3 {
		t.Errorf("failed %q after %d calls; want done on the third", r.failed, calls)
	}
}
