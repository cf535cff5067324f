// Package svcdtest runs the real svcd binary for end-to-end tests: against the Kafka
// broker the test harness started (KAFKA_SEEDS), the harness's Temporal (TEMPORAL_ADDR)
// and an embedded engine (SVC_CHDB_LIB).
// Tests skip when either is unset, so a quick `go test ./...` without the harness still
// runs unit tests; `go tool task test` always sets both.
package svcdtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svc-data/svc/infra/testenv"
)

// Service is one running svcd.
type Service struct {
	URL      string
	AdminKey string
	DataDir  string
	Env      []string

	t     testing.TB
	netns *Netns // nil: the test's own network namespace
	cmd   *exec.Cmd
	done  chan struct{}
	log   *os.File
	// racesChecked is how much of the log checkRaces has read.
	racesChecked int
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries returns a directory holding svcd and chengine: SVC_BIN_DIR when it has
// them, else a fresh build shared by the test binary.
func binaries() (string, error) {
	buildOnce.Do(func() {
		if d := os.Getenv("SVC_BIN_DIR"); d != "" {
			if _, err := os.Stat(filepath.Join(d, "svcd")); err == nil {
				binDir = d
				return
			}
		}
		dir, err := os.MkdirTemp("", "svcd-bin-*")
		if err != nil {
			buildErr = err
			return
		}
		out, err := exec.Command("go", "build", "-o", dir+"/", "github.com/svc-data/svc/cmd/svcd", "github.com/svc-data/svc/cmd/chengine").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build svcd: %v: %s", err, out)
			return
		}
		binDir = dir
	})
	return binDir, buildErr
}

// Requirements skips the test unless the harness provides a broker and an engine, and
// fails it when one is named but unusable (testenv's rule).
func Requirements(t testing.TB) {
	t.Helper()
	testenv.Broker(t)
	testenv.Engine(t)
}

// Start runs svcd on a fresh data directory and waits until it serves. extraEnv entries
// (NAME=value) are added to its environment.
func Start(t testing.TB, extraEnv ...string) *Service {
	t.Helper()
	Requirements(t)
	s := newService(t, extraEnv)
	s.start()
	t.Cleanup(func() { s.Stop() })
	return s
}

func newService(t testing.TB, extraEnv []string) *Service {
	s := &Service{t: t, DataDir: t.TempDir(), AdminKey: "svck_test_" + strings.ReplaceAll(t.Name(), "/", "_")}
	s.Env = append([]string{
		"SVC_BOOTSTRAP_API_KEY=" + s.AdminKey,
		"SVC_KAFKA_SEEDS=" + os.Getenv("KAFKA_SEEDS"),
		"SVC_KAFKA_SASL_FILE=" + os.Getenv("KAFKA_SASL_FILE"),
		"SVC_BATCH_LINGER=50ms", "SVC_METRICS_BATCH_LINGER=50ms",
	}, extraEnv...)
	if addr := os.Getenv("TEMPORAL_ADDR"); addr != "" {
		// The harness's one Temporal serves every test's svcd; a task queue of its own
		// keeps each one's runs and schedules apart, and they go with the test (after
		// Start's Stop: cleanups run last first).
		s.Env = append([]string{"SVC_TEMPORAL_ADDR=" + addr, fmt.Sprintf("SVC_TEMPORAL_TASK_QUEUE=t-%d-%d", os.Getpid(), time.Now().UnixNano())}, s.Env...)
		t.Cleanup(func() { forgetSchedules(s.Env) })
	}
	return s
}

// Netns is a network namespace a test made (`ip netns add`) for a svcd of its own: the
// test reaches it at Host, an address of the namespace on a link the test made to it.
type Netns struct {
	Name string
	Host string
}

// StartInNetns is Start for a svcd in network namespace ns (run by `ip netns exec`, so
// the test runs as root), listening on ns.Host. Whatever it reaches must be reachable
// from there: extraEnv names those addresses.
func StartInNetns(t testing.TB, ns Netns, extraEnv ...string) *Service {
	t.Helper()
	Requirements(t)
	s := newService(t, extraEnv)
	s.netns = &ns
	s.start()
	t.Cleanup(func() { s.Stop() })
	return s
}

func (s *Service) start() {
	t := s.t
	t.Helper()
	dir, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	// The address is free when freeAddr returns but is not held until svcd binds it; a
	// process starting meanwhile (another test's engine) can take it. svcd then exits with
	// "address already in use" and is started again on another address.
	for attempt := 1; ; attempt++ {
		taken, err := s.launch(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !taken {
			return
		}
		if attempt == 5 {
			t.Fatalf("svcd found its listen address taken 5 times:\n%s", s.Logs())
		}
		t.Logf("svcd's listen address %s was taken before it bound it; starting it on another", s.URL)
	}
}

// launch starts svcd on a free address and waits until it serves. It reports taken when
// svcd exited because something else had bound the address first.
func (s *Service) launch(dir string) (taken bool, err error) {
	t := s.t
	t.Helper()
	addr, err := freeAddr()
	if err != nil {
		return false, err
	}
	if s.netns != nil {
		// The port was free on the host's loopback; the namespace holds svcd alone.
		_, port, _ := net.SplitHostPort(addr)
		addr = net.JoinHostPort(s.netns.Host, port)
	}
	s.URL = "http://" + addr
	s.log, err = os.OpenFile(filepath.Join(s.DataDir, "svcd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return false, err
	}
	logStart, _ := s.log.Seek(0, io.SeekEnd)
	cmd := exec.Command(filepath.Join(dir, "svcd"))
	if s.netns != nil {
		// ip execs svcd in the namespace: the process, its PID and its signals are svcd's.
		cmd = exec.Command("ip", "netns", "exec", s.netns.Name, filepath.Join(dir, "svcd"))
	}
	cmd.Env = append(os.Environ(), append([]string{"SVC_HTTP_ADDR=" + addr, "SVC_DATA_DIR=" + s.DataDir,
		"SVC_ENGINE_BIN=" + filepath.Join(dir, "chengine")}, s.Env...)...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return false, err
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-s.done:
			s.log.Close()
			s.cmd = nil
			logs := s.Logs()
			if int64(len(logs)) > logStart && strings.Contains(logs[logStart:], "address already in use") {
				return true, nil
			}
			t.Fatalf("svcd exited during start:\n%s", logs)
		default:
		}
		// Only svcd's own answer counts: whatever took the address may answer /health too
		// (an engine says "Ok.").
		if resp, err := http.Get(s.URL + "/health"); err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.TrimSpace(string(body)) == `{"status":"ok"}` {
				return false, nil
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("svcd not ready after 90s:\n%s", s.Logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Logs returns what svcd wrote so far.
func (s *Service) Logs() string {
	b, _ := os.ReadFile(filepath.Join(s.DataDir, "svcd.log"))
	return string(b)
}

// PID is svcd's process id.
func (s *Service) PID() int { return s.cmd.Process.Pid }

// Kill stops svcd with SIGKILL, as a crash would.
func (s *Service) Kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.log.Close()
	s.cmd = nil
	s.checkRaces()
}

// Stop stops svcd with SIGTERM and waits for it to drain.
func (s *Service) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(90 * time.Second):
		s.t.Errorf("svcd did not stop within 90s of SIGTERM; killing it")
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.log.Close()
	s.cmd = nil
	s.checkRaces()
	s.reportOnFailure()
}

// reportOnFailure logs svcd's warnings and errors when the test has failed, so that a 500
// ("it was logged as …") found in CI names its cause: the data directory, and the log with
// it, goes with the test.
func (s *Service) reportOnFailure() {
	if !s.t.Failed() {
		return
	}
	var lines []string
	for _, l := range strings.Split(s.Logs(), "\n") {
		if strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
			lines = append(lines, l)
		}
	}
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	if len(lines) > 0 {
		s.t.Logf("svcd's warnings and errors (the last %d):\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

// checkRaces fails the test when svcd, built with -race (go tool task test does that),
// reported a data race in the log written since the last check.
func (s *Service) checkRaces() {
	logs := s.Logs()
	fresh := logs[min(s.racesChecked, len(logs)):]
	s.racesChecked = len(logs)
	if i := strings.Index(fresh, "WARNING: DATA RACE"); i >= 0 {
		s.t.Errorf("svcd reported a data race:\n%s", fresh[i:min(len(fresh), i+8000)])
	}
}

// Restart starts svcd again on the same data directory.
func (s *Service) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// Resume starts svcd again after Kill.
func (s *Service) Resume() {
	s.t.Helper()
	s.start()
}

// Response is an HTTP response read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("response %d is not JSON: %v\n%s", r.Status, err, r.Body)
	}
}

// Do sends a request with the admin key unless headers set Authorization. body may be
// nil, a string, []byte or a value encoded as JSON.
func (s *Service) Do(method, path string, body any, headers ...string) (*Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.AdminKey)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}, err
}

// Must is Do that fails the test on transport errors or an unexpected status.
func (s *Service) Must(wantStatus int, method, path string, body any, headers ...string) *Response {
	s.t.Helper()
	r, err := s.Do(method, path, body, headers...)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	if r.Status != wantStatus {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, wantStatus, r.Body)
	}
	return r
}

// Query runs SQL through the query API and returns the JSON result's data.
func (s *Service) Query(sql string) []map[string]any {
	s.t.Helper()
	r := s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql})
	var res struct {
		Data []map[string]any `json:"data"`
	}
	r.JSON(s.t, &res)
	return res.Data
}

// Count returns SELECT count() of a table.
func (s *Service) Count(table string) int {
	s.t.Helper()
	data := s.Query("SELECT count() AS n FROM " + table)
	if len(data) != 1 {
		s.t.Fatalf("count of %s: %v", table, data)
	}
	n, _ := data[0]["n"].(float64)
	return int(n)
}

// WaitCount waits until a table holds want rows, failing after timeout; it also fails
// as soon as the count passes want, since a duplicate never goes away.
func (s *Service) WaitCount(table string, want int, timeout time.Duration) {
	s.t.Helper()
	testenv.Eventually(s.t, timeout, func() (bool, string) {
		got := s.Count(table)
		if got > want {
			s.t.Fatalf("%s holds %d rows, more than the %d acknowledged", table, got, want)
		}
		return got == want, fmt.Sprintf("%s holds %d rows, want %d\n%s", table, got, want, tail(s.Logs(), 4000))
	})
}

// WaitCaughtUp waits until the consumers inserted and committed every record the log
// holds for table's cluster (consumer lag 0), failing after timeout. After it, a count
// is final: nothing acknowledged is still on its way.
func (s *Service) WaitCaughtUp(table string, timeout time.Duration) {
	s.t.Helper()
	s.waitCaughtUp("/v1/tables/"+table+"/freshness", table, timeout)
}

// waitCaughtUp is WaitCaughtUp through a freshness path (which may name a database).
func (s *Service) waitCaughtUp(path, table string, timeout time.Duration) {
	s.t.Helper()
	testenv.Eventually(s.t, timeout, func() (bool, string) {
		r, err := s.Do("GET", path, nil)
		var v struct {
			Lag struct {
				Records    int64 `json:"records"`
				Partitions []any `json:"partitions"`
			} `json:"consumer_lag"`
		}
		if err == nil && r.Status == 200 && json.Unmarshal(r.Body, &v) == nil && v.Lag.Records == 0 && len(v.Lag.Partitions) > 0 {
			return true, ""
		}
		var body []byte
		if r != nil {
			body = r.Body
		}
		return false, fmt.Sprintf("consumers of %s not caught up: %v %s\n%s", table, err, body, tail(s.Logs(), 4000))
	})
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// BinDir is the directory holding the svcd and chengine binaries the tests run.
func BinDir(t testing.TB) string {
	t.Helper()
	dir, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Binary returns the path of a binary svcdtest built (or found in SVC_BIN_DIR): "svcd"
// or "chengine".
func Binary(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(BinDir(t), name)
}
