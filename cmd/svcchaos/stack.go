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
	"sync/atomic"
	"syscall"
	"time"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/infra/pgserver"
)

// stack is the broker and svcd this run started, and only those (plus the chengine
// children of that svcd) are ever killed. With several nodes (Config.Nodes) it is a
// deployment: a PostgreSQL event store and one engine process (SVC_CLICKHOUSE_URL)
// that every node shares, and a Kafka cluster of Config.Brokers; requests go round the
// nodes.
type stack struct {
	cfg    Config
	dir    string
	out    io.Writer
	broker *kafka.Broker  // one broker
	kafka  *kafka.Cluster // several
	pg     *pgserver.Server
	engine *clickhouse.Process
	secret string
	key    string
	client *http.Client
	rr     atomic.Uint64

	mu    sync.Mutex
	nodes []*svcdNode
}

// svcdNode is one svcd of the run.
type svcdNode struct {
	addr, url, dataDir, log string
	cmd                     *exec.Cmd
	done                    chan struct{}
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
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	s := &stack{cfg: cfg, dir: dir, out: out, key: "svck_chaos" + hex.EncodeToString(raw),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}}
	_, _ = rand.Read(raw)
	s.secret = hex.EncodeToString(raw)
	if err := s.startShared(ctx); err != nil {
		s.stop()
		return nil, err
	}
	for i := range max(cfg.Nodes, 1) {
		httpPort, err := freePort()
		if err != nil {
			s.stop()
			return nil, err
		}
		n := &svcdNode{addr: "127.0.0.1:" + strconv.Itoa(httpPort), dataDir: filepath.Join(dir, "svcd"), log: filepath.Join(dir, "svcd.log")}
		if cfg.Nodes > 1 {
			n.dataDir, n.log = filepath.Join(dir, fmt.Sprintf("svcd-%d", i+1)), filepath.Join(dir, fmt.Sprintf("svcd-%d.log", i+1))
		}
		n.url = "http://" + n.addr
		s.nodes = append(s.nodes, n)
		// The first node bootstraps the deployment; the others find it.
		if err := s.startNode(ctx, i); err != nil {
			s.stop()
			return nil, err
		}
	}
	return s, nil
}

// startShared starts the broker (or brokers) and, for several nodes, the event store
// and the engine they share.
func (s *stack) startShared(ctx context.Context) error {
	cfg := s.cfg
	if cfg.Brokers > 1 {
		c, err := kafka.NewCluster(kafka.ClusterConfig{LibsDir: cfg.KafkaLibs, Dir: filepath.Join(s.dir, "kafka"), Brokers: cfg.Brokers,
			HeapMB: 384, ReadyTimeout: 3 * time.Minute})
		if err != nil {
			return err
		}
		s.kafka = c
		if err := c.Start(ctx); err != nil {
			return err
		}
	} else {
		port, err := freePort()
		if err != nil {
			return err
		}
		// The run's own broker, on a fixed port so that a restarted one is found again.
		b, err := kafka.NewBroker(kafka.BrokerConfig{LibsDir: cfg.KafkaLibs, DataDir: filepath.Join(s.dir, "kafka"), Port: port})
		if err != nil {
			return err
		}
		s.broker = b
		if err := b.Start(ctx); err != nil {
			return err
		}
	}
	if cfg.Nodes <= 1 {
		return nil
	}
	bin, err := pgserver.FindBinaries()
	if err != nil && cfg.PostgresCache != "" {
		bin, err = pgserver.FetchBinaries(cfg.PostgresCache, "")
	}
	if err != nil {
		return fmt.Errorf("several nodes need PostgreSQL: %w (or pass -postgres-cache)", err)
	}
	if s.pg, err = pgserver.NewServer(pgserver.ServerConfig{BinDir: bin, Dir: filepath.Join(s.dir, "postgres"), NoSync: true}); err != nil {
		return err
	}
	if err := s.pg.Start(ctx); err != nil {
		return err
	}
	s.engine, err = clickhouse.NewProcess(clickhouse.ProcessConfig{Binary: filepath.Join(cfg.BinDir, "chengine"), Lib: cfg.ChdbLib,
		DataDir: filepath.Join(s.dir, "engine"), Restart: true, MaxMemory: 1 << 30})
	if err != nil {
		return err
	}
	return s.engine.Start(ctx)
}

func (s *stack) seeds() (string, string) {
	if s.kafka != nil {
		return s.kafka.Seeds(), s.kafka.CredentialsFile()
	}
	return s.broker.Seeds(), s.broker.CredentialsFile()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startNode starts node i on its data directory and waits until it serves.
func (s *stack) startNode(ctx context.Context, i int) error {
	n := s.nodes[i]
	logf, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	seeds, sasl := s.seeds()
	cmd := exec.Command(filepath.Join(s.cfg.BinDir, "svcd"))
	cmd.Env = append(os.Environ(), "SVC_HTTP_ADDR="+n.addr, "SVC_DATA_DIR="+n.dataDir,
		"SVC_KAFKA_SEEDS="+seeds, "SVC_KAFKA_SASL_FILE="+sasl, "SVC_ENGINE_BIN="+filepath.Join(s.cfg.BinDir, "chengine"),
		"SVC_CHDB_LIB="+s.cfg.ChdbLib, "SVC_BOOTSTRAP_API_KEY="+s.key, "SVC_ENGINE_MEMORY=1GiB")
	if s.pg != nil {
		cmd.Env = append(cmd.Env, "SVC_EVENTSTORE_URL="+s.pg.URL(), "SVC_CLICKHOUSE_URL="+s.engine.URL(), "SVC_SERVICE_SECRET="+s.secret)
	}
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
	n.cmd, n.done = cmd, done
	s.mu.Unlock()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case <-done:
			return fmt.Errorf("svcd exited during start; see %s", n.log)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		// Only svcd's own answer counts: a process that took the address may answer too.
		if resp, err := s.client.Get(n.url + "/health"); err == nil {
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

// nodePID is node i's pid, 0 when it does not run.
func (s *stack) nodePID(i int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[i]
	if n.cmd == nil {
		return 0
	}
	select {
	case <-n.done:
		return 0
	default:
		return n.cmd.Process.Pid
	}
}

// svcdPID is the first node's pid.
func (s *stack) svcdPID() int { return s.nodePID(0) }

// killNode kill -9s node i and waits until it is gone.
func (s *stack) killNode(i int) {
	s.mu.Lock()
	cmd, done := s.nodes[i].cmd, s.nodes[i].done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// enginePIDs are the engine processes to kill: the shared engine's, else the chengine
// children of this run's svcd.
func (s *stack) enginePIDs() []int {
	if s.engine != nil {
		if pid := s.engine.PID(); pid > 0 {
			return []int{pid}
		}
		return nil
	}
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
	for i, n := range s.nodes {
		if s.nodePID(i) == 0 {
			continue
		}
		s.mu.Lock()
		cmd, done := n.cmd, n.done
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
	if s.engine != nil {
		_ = s.engine.Shutdown(ctx)
	}
	if s.pg != nil {
		_ = s.pg.Stop(ctx)
	}
	if s.kafka != nil {
		_ = s.kafka.Shutdown(ctx)
	}
	if s.broker != nil {
		_ = s.broker.Shutdown(ctx)
	}
}

// url is the next node's address: requests go round the nodes, so one that is down
// fails a request that its retry sends to the next.
func (s *stack) url() string {
	return s.nodes[int(s.rr.Add(1)%uint64(len(s.nodes)))].url
}

// do sends a request with the admin key and returns the status, Retry-After and body.
func (s *stack) do(ctx context.Context, method, path string, body []byte, headers ...string) (int, string, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.url()+path, bytes.NewReader(body))
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
