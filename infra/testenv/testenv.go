// Package testenv is where tests find the external services the test harness runs (the
// engine, the broker, Temporal, the S3-compatible server, a browser, network
// namespaces), with one rule for all of them: unset skips the test (a quick local unit
// run without services), set but unusable fails it (the harness named a service, so it
// must work). `go tool task test` sets every variable, and `svcstack skips` fails a CI
// run on any skip .ci/skips.txt does not allow, so a test guarded here always runs there.
//
//	func TestX(t *testing.T) {
//		seeds := testenv.Broker(t) // skips without KAFKA_SEEDS, fails if it does not answer
//		...
//	}
//
// It also holds Eventually, the one way tests wait on state.
package testenv

import (
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// skip is the one skip message: which variable, what it names, who sets it.
func skip(t testing.TB, env, what string) {
	t.Helper()
	t.Skipf("%s is unset: no %s; run through `go tool task test`, which sets it", env, what)
}

// lookup returns the variable, skipping the test when it is unset or empty.
func lookup(t testing.TB, env, what string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		skip(t, env, what)
	}
	return v
}

// Engine returns the path of libchdb (SVC_CHDB_LIB), which every embedded engine loads.
func Engine(t testing.TB) string {
	t.Helper()
	lib := lookup(t, "SVC_CHDB_LIB", "embedded engine (`go tool task deps:chdb` fetches libchdb)")
	mustExist(t, "SVC_CHDB_LIB", lib)
	return lib
}

// Broker returns the harness's Kafka seed addresses (KAFKA_SEEDS), failing when none
// accepts a connection. The credentials are KAFKA_SASL_FILE's (kafkatest.Conn reads them).
func Broker(t testing.TB) string {
	t.Helper()
	seeds := lookup(t, "KAFKA_SEEDS", "Kafka broker")
	var addrs []string
	for _, s := range strings.Split(seeds, ",") {
		if s = strings.TrimSpace(s); s != "" {
			addrs = append(addrs, s)
		}
	}
	mustReach(t, "KAFKA_SEEDS", addrs...)
	return seeds
}

// KafkaLibs returns the directory of Kafka's jars (SVC_KAFKA_LIBS), for tests that run a
// broker of their own (they stop or kill it; the shared one must stay up).
func KafkaLibs(t testing.TB) string {
	t.Helper()
	dir := lookup(t, "SVC_KAFKA_LIBS", "Kafka jars to run a broker (`go tool task deps:kafka` fetches them)")
	mustExist(t, "SVC_KAFKA_LIBS", dir)
	return dir
}

// Temporal returns the harness's Temporal frontend address (TEMPORAL_ADDR), failing
// when it does not accept a connection.
func Temporal(t testing.TB) string {
	t.Helper()
	addr := lookup(t, "TEMPORAL_ADDR", "Temporal server")
	mustReach(t, "TEMPORAL_ADDR", addr)
	return addr
}

// TemporalBin returns the Temporal CLI (SVC_TEMPORAL_BIN), for tests that run the
// embedded dev server.
func TemporalBin(t testing.TB) string {
	t.Helper()
	bin := lookup(t, "SVC_TEMPORAL_BIN", "Temporal CLI to run the embedded server")
	mustExist(t, "SVC_TEMPORAL_BIN", bin)
	return bin
}

// S3 returns the endpoint of the S3/STS/IAM-compatible server (SVC_S3_ENDPOINT), failing
// when it does not accept a connection.
func S3(t testing.TB) string {
	t.Helper()
	ep := lookup(t, "SVC_S3_ENDPOINT", "S3-compatible server")
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" {
		t.Fatalf("SVC_S3_ENDPOINT=%q: want a URL such as http://127.0.0.1:5000", ep)
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	mustReach(t, "SVC_S3_ENDPOINT", host)
	return ep
}

// Postgres returns the harness's PostgreSQL connection string (SVC_TEST_POSTGRES_URL,
// postgres://user@127.0.0.1:port/db), failing when nothing answers there. Tests make a
// database of their own in it (pgstore/pgtest).
func Postgres(t testing.TB) string {
	t.Helper()
	raw := lookup(t, "SVC_TEST_POSTGRES_URL", "PostgreSQL server (`svcstack postgres start` runs one)")
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		t.Fatalf("SVC_TEST_POSTGRES_URL is set but is not a postgres://user@host:port/db URL")
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	mustReach(t, "SVC_TEST_POSTGRES_URL", net.JoinHostPort(u.Hostname(), port))
	return raw
}

// BinDir returns the directory of built binaries (SVC_BIN_DIR), for tests that need the
// harness's own build (svcd built with the race detector, chengine, svcstack).
func BinDir(t testing.TB) string {
	t.Helper()
	dir := lookup(t, "SVC_BIN_DIR", "directory of built binaries (`go build -o .bin/ ./cmd/...`)")
	mustExist(t, "SVC_BIN_DIR", dir)
	return dir
}

// Browser returns the path of Debian's chromium. It is found on PATH rather than named by
// a variable, so the rule reads: not installed skips, unless SVC_REQUIRE_BROWSER is set
// (the CI script sets it), which turns the skip into a failure.
func Browser(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("SVC_REQUIRE_BROWSER") != "" {
			t.Fatalf("chromium not found but SVC_REQUIRE_BROWSER is set: %v", err)
		}
		t.Skip("chromium is not installed: no browser (Debian package chromium); CI installs it and sets SVC_REQUIRE_BROWSER")
	}
	return path
}

// NetworkNamespaces returns the path of iproute2's `ip`, for tests that make network
// namespaces and links of their own (the network partition test). Making them needs
// root (CAP_NET_ADMIN in the host's namespace), which no variable can grant: as another
// user the test skips (`go tool task test` then allows it, .ci/skips-not-root.txt); as
// root it must run, so a missing `ip` fails it (`go tool task deps:iproute2` and CI
// install iproute2). CI runs as root.
func NetworkNamespaces(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: making network namespaces and veth links needs CAP_NET_ADMIN in the host's network namespace; CI runs as root")
	}
	path, err := exec.LookPath("ip")
	if err != nil {
		t.Fatalf("running as root, but iproute2's ip is not installed (apt-get install iproute2; `go tool task deps:iproute2`): %v", err)
	}
	return path
}

func mustExist(t testing.TB, env, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is set but unusable: %v", env, err)
	}
}

// reached remembers addresses that answered, so each is dialled once per test binary.
var reached sync.Map

// mustReach fails the test unless one of addrs accepts a TCP connection.
func mustReach(t testing.TB, env string, addrs ...string) {
	t.Helper()
	var errs []string
	for _, a := range addrs {
		if _, ok := reached.Load(a); ok {
			return
		}
		// The timeout bounds a dial to a local service that is down; it decides nothing
		// about speed.
		c, err := net.DialTimeout("tcp", a, 10*time.Second)
		if err == nil {
			_ = c.Close()
			reached.Store(a, true)
			return
		}
		errs = append(errs, err.Error())
	}
	t.Fatalf("%s is set but nothing answers there: %s", env, strings.Join(errs, "; "))
}
