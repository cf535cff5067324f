package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/svc-data/svc/infra/kafka"
)

// stack is the broker and svcd this run started, and only those (plus the chengine
// children of that svcd) are ever killed.
type stack struct {
	cfg    Config
	dir    string
	out    io.Writer
	broker *kafka.Broker
	url    string
	addr   string
	key    string
	client *http.Client

	mu   sync.Mutex
	svcd *exec.Cmd
	done chan struct{}
}

func startStack(ctx context.Context, cfg Config, dir string, out io.Writer) (*stack, error) {
	for _, p := range []string{filepath.Join(cfg.BinDir, "svcd"), filepath.Join(cfg.BinDir, "chengine")} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%w (build with go tool task build, or pass -bin)", err)
		}
	}
	if cfg.KafkaLibs == "" || cfg.ChdbLib == "" {
		return nil, errors.New("set SVC_KAFKA_LIBS and SVC_CHDB_LIB (go tool task chaos does)")
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// The run's own broker, on a fixed port so that a restarted one is found again.
	b, err := kafka.NewBroker(kafka.BrokerConfig{LibsDir: cfg.KafkaLibs, DataDir: filepath.Join(dir, "kafka"), Port: port})
	if err != nil {
		return nil, err
	}
	if err := b.Start(ctx); err != nil {
		return nil, err
	}
	httpPort, err := freePort()
	if err != nil {
		_ = b.Shutdown(context.Background())
		return nil, err
	}
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	s := &stack{cfg: cfg, dir: dir, out: out, broker: b, addr: "127.0.0.1:" + strconv.Itoa(httpPort),
		key:    "svck_chaos" + hex.EncodeToString(raw),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}}
	s.url = "http://" + s.addr
	if err := s.startSvcd(ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startSvcd starts svcd on the run's data directory and waits until it serves.
func (s *stack) startSvcd(ctx context.Context) error {
	logf, err := os.OpenFile(filepath.Join(s.dir, "svcd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(s.cfg.BinDir, "svcd"))
	cmd.Env = append(os.Environ(), "SVC_HTTP_ADDR="+s.addr, "SVC_DATA_DIR="+filepath.Join(s.dir, "svcd"),
		"SVC_KAFKA_SEEDS="+s.broker.Seeds(), "SVC_KAFKA_SASL_FILE="+s.broker.CredentialsFile(), "SVC_ENGINE_BIN="+filepath.Join(s.cfg.BinDir, "chengine"),
		"SVC_CHDB_LIB="+s.cfg.ChdbLib, "SVC_BOOTSTRAP_API_KEY="+s.key, "SVC_ENGINE_MEMORY=1GiB")
	if s.cfg.EdgeInflight > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("SVC_MAX_CONCURRENT_INGEST=%d", s.cfg.EdgeInflight))
	}
	if s.cfg.EdgeWait > 0 {
		cmd.Env = append(cmd.Env, "SVC_INGEST_WAIT="+s.cfg.EdgeWait.String())
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.svcd, s.done = cmd, done
	s.mu.Unlock()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case <-done:
			return fmt.Errorf("svcd exited during start; see %s", filepath.Join(s.dir, "svcd.log"))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		// Only svcd's own answer counts: a process that took the address may answer too.
		if resp, err := s.client.Get(s.url + "/health"); err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.TrimSpace(string(body)) == `{"status":"ok"}` {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("svcd not ready after 3 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// svcdPID is the running svcd's pid, 0 when none runs.
func (s *stack) svcdPID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.svcd == nil {
		return 0
	}
	select {
	case <-s.done:
		return 0
	default:
		return s.svcd.Process.Pid
	}
}

// killSvcd kill -9s svcd and waits until it is gone.
func (s *stack) killSvcd() {
	s.mu.Lock()
	cmd, done := s.svcd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// enginePIDs are the chengine processes of this run's svcd.
func (s *stack) enginePIDs() []int {
	parent := s.svcdPID()
	if parent == 0 {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		i := bytes.LastIndexByte(b, ')')
		j := bytes.IndexByte(b, '(')
		if i < 0 || j < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && string(b[j+1:i]) == "chengine" && f[1] == strconv.Itoa(parent) {
			out = append(out, pid)
		}
	}
	return out
}

// rssMiB is a process's resident set.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

func (s *stack) stop() {
	if pid := s.svcdPID(); pid != 0 {
		s.mu.Lock()
		cmd, done := s.svcd, s.done
		s.mu.Unlock()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = s.broker.Shutdown(ctx)
}

// do sends a request with the admin key and returns the status, Retry-After and body.
func (s *stack) do(ctx context.Context, method, path string, body []byte, headers ...string) (int, string, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), raw, err
}

// query runs SQL and returns the JSON result's rows.
func (s *stack) query(ctx context.Context, sql string) ([]map[string]any, error) {
	body, _ := json.Marshal(map[string]string{"sql": sql})
	status, _, raw, err := s.do(ctx, "POST", "/v1/query", body)
	if err != nil {
		return nil, err
	}
	if status != 200 {
		return nil, fmt.Errorf("query %q: %d %s", sql, status, raw)
	}
	var res struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return res.Data, nil
}

// num reads a JSON number that may be quoted (64-bit integers are).
func num(v any) int64 {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}
