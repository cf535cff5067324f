package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/svc-data/svc/infra/localproc"
)

// ClusterConfig describes a local KRaft cluster of several brokers on loopback (and on
// LinkHost, when set): every node is broker and controller at once, the controller
// quorum is all of them, topics are replicated to Brokers nodes (at most 3) with
// min.insync.replicas 2 from 3 on, and every listener asks for the one set of
// credentials in Dir/sasl.json.
type ClusterConfig struct {
	LibsDir string
	// Dir holds the cluster's state (cluster.json: its id and ports, so a broker
	// restarted alone comes back where it was), the credentials and one directory per
	// broker, broker-<id>.
	Dir     string
	Brokers int
	// HeapMB is each broker's maximum heap. Default 384.
	HeapMB int
	// LinkHost is a second address every broker serves clients on besides loopback
	// (BrokerConfig.LinkHost; LinkSeeds): for nodes in another network namespace.
	// Empty: loopback only.
	LinkHost string
	// Detach keeps the brokers running after this process exits; StopCluster stops them.
	Detach       bool
	ReadyTimeout time.Duration
	Logger       *slog.Logger
}

// Cluster is a running local cluster.
type Cluster struct {
	cfg   ClusterConfig
	state clusterState
	sasl  SASL

	mu      sync.Mutex
	brokers map[int]*Broker
}

// clusterState is what a broker restarted alone needs to rejoin: the cluster id its
// storage was formatted with and every node's ports.
type clusterState struct {
	ClusterID string        `json:"cluster_id"`
	Nodes     []clusterNode `json:"nodes"`
}

type clusterNode struct {
	ID             int `json:"id"`
	Port           int `json:"port"`
	ControllerPort int `json:"controller_port"`
	// LinkPort is the port on ClusterConfig.LinkHost, chosen when the cluster first
	// starts with one.
	LinkPort int `json:"link_port,omitempty"`
}

// BrokerDir is the directory of broker id in a cluster directory.
func BrokerDir(dir string, id int) string { return filepath.Join(dir, "broker-"+strconv.Itoa(id)) }

// NewCluster validates cfg. The cluster's ports are chosen at the first Start of an
// empty Dir and kept in Dir/cluster.json.
func NewCluster(cfg ClusterConfig) (*Cluster, error) {
	if cfg.Brokers < 1 || cfg.Brokers > 9 {
		return nil, fmt.Errorf("kafka cluster: want 1 to 9 brokers, got %d", cfg.Brokers)
	}
	if cfg.Dir == "" {
		return nil, errors.New("kafka cluster: no directory")
	}
	if cfg.HeapMB == 0 {
		cfg.HeapMB = 384
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Cluster{cfg: cfg, brokers: map[int]*Broker{}}, nil
}

// Seeds is every broker's client address, comma-separated.
func (c *Cluster) Seeds() string { return strings.Join(c.seeds(), ",") }

func (c *Cluster) seeds() []string {
	out := make([]string, len(c.state.Nodes))
	for i, n := range c.state.Nodes {
		out[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(n.Port))
	}
	return out
}

// LinkSeeds is every broker's address on ClusterConfig.LinkHost, comma-separated; empty
// without one. Clients there use the same credentials.
func (c *Cluster) LinkSeeds() string {
	if c.cfg.LinkHost == "" {
		return ""
	}
	out := make([]string, len(c.state.Nodes))
	for i, n := range c.state.Nodes {
		out[i] = net.JoinHostPort(c.cfg.LinkHost, strconv.Itoa(n.LinkPort))
	}
	return strings.Join(out, ",")
}

// Conn is how clients reach the cluster.
func (c *Cluster) Conn() Conn { return Conn{Seeds: c.seeds(), SASL: c.sasl} }

// CredentialsFile holds the client credentials (mode 0600).
func (c *Cluster) CredentialsFile() string { return CredentialsFile(c.cfg.Dir) }

// Start starts every broker (those already running in Dir are restarted) and waits until
// each serves clients.
func (c *Cluster) Start(ctx context.Context) error {
	if err := os.MkdirAll(c.cfg.Dir, 0o700); err != nil {
		return fmt.Errorf("kafka cluster: %w", err)
	}
	if err := c.load(); err != nil {
		return err
	}
	// A quorum elects its controller once a majority runs: every node is launched
	// before any is waited on.
	for _, n := range c.state.Nodes {
		if err := c.launch(ctx, n.ID); err != nil {
			return errors.Join(err, c.Shutdown(ctx))
		}
	}
	for _, n := range c.state.Nodes {
		if err := c.broker(n.ID).waitReady(ctx); err != nil {
			return errors.Join(err, c.Shutdown(ctx))
		}
	}
	c.cfg.Logger.Info("kafka cluster ready", "seeds", c.Seeds())
	return nil
}

// load reads Dir/cluster.json, or chooses the cluster's id and ports and writes it; and
// the credentials, generated on first use.
func (c *Cluster) load() error {
	file := filepath.Join(c.cfg.Dir, "cluster.json")
	raw, err := os.ReadFile(file)
	changed := false
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &c.state); err != nil {
			return fmt.Errorf("kafka cluster %s: %w", file, err)
		}
	case errors.Is(err, os.ErrNotExist):
		c.state, changed = clusterState{ClusterID: clusterID()}, true
		for id := 1; id <= c.cfg.Brokers; id++ {
			port, err := freePort("127.0.0.1")
			if err != nil {
				return err
			}
			ctrl, err := freePort("127.0.0.1")
			if err != nil {
				return err
			}
			c.state.Nodes = append(c.state.Nodes, clusterNode{ID: id, Port: port, ControllerPort: ctrl})
		}
	default:
		return fmt.Errorf("kafka cluster: %w", err)
	}
	for i := range c.state.Nodes {
		if n := &c.state.Nodes[i]; c.cfg.LinkHost != "" && n.LinkPort == 0 {
			if n.LinkPort, err = freePort(c.cfg.LinkHost); err != nil {
				return err
			}
			changed = true
		}
	}
	if changed {
		raw, _ := json.Marshal(c.state)
		if err := os.WriteFile(file, raw, 0o600); err != nil {
			return fmt.Errorf("kafka cluster: %w", err)
		}
	}
	c.sasl, err = brokerCredentials(c.cfg.Dir)
	return err
}

func (c *Cluster) broker(id int) *Broker {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.brokers[id]
}

// launch starts broker id's process without waiting for it.
func (c *Cluster) launch(ctx context.Context, id int) error {
	var voters []Voter
	cfg := BrokerConfig{LibsDir: c.cfg.LibsDir, DataDir: BrokerDir(c.cfg.Dir, id), HeapMB: c.cfg.HeapMB,
		Detach: c.cfg.Detach, ReadyTimeout: c.cfg.ReadyTimeout, Logger: c.cfg.Logger,
		NodeID: id, ClusterID: c.state.ClusterID, Replication: min(len(c.state.Nodes), 3), SASL: c.sasl}
	found := false
	for _, n := range c.state.Nodes {
		voters = append(voters, Voter{ID: n.ID, ControllerPort: n.ControllerPort})
		if n.ID == id {
			cfg.Port, cfg.ControllerPort, found = n.Port, n.ControllerPort, true
			if c.cfg.LinkHost != "" {
				cfg.LinkHost, cfg.LinkPort = c.cfg.LinkHost, n.LinkPort
			}
		}
	}
	if !found {
		return fmt.Errorf("kafka cluster: no broker %d", id)
	}
	cfg.Voters = voters
	b, err := NewBroker(cfg)
	if err != nil {
		return err
	}
	if err := b.launch(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	c.brokers[id] = b
	c.mu.Unlock()
	return nil
}

// StartBroker starts broker id again (after KillBroker or StopBroker) on its ports and
// directory, and waits until it serves clients.
func (c *Cluster) StartBroker(ctx context.Context, id int) error {
	if c.state.ClusterID == "" { // a cluster started by another process (svcstack)
		if err := c.load(); err != nil {
			return err
		}
	}
	if err := c.launch(ctx, id); err != nil {
		return err
	}
	return c.broker(id).waitReady(ctx)
}

// KillBroker ends broker id with SIGKILL, as a crash would, and waits until it is gone.
func (c *Cluster) KillBroker(id int) error {
	b := c.broker(id)
	if b == nil || b.proc == nil {
		return fmt.Errorf("kafka cluster: broker %d is not running", id)
	}
	if err := syscall.Kill(b.proc.PID(), syscall.SIGKILL); err != nil {
		return fmt.Errorf("kafka cluster: kill broker %d: %w", id, err)
	}
	<-b.proc.Done()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return b.Shutdown(ctx) // removes the pid file; the process is already gone
}

// StopBroker stops broker id (SIGTERM, then SIGKILL at ctx's deadline).
func (c *Cluster) StopBroker(ctx context.Context, id int) error {
	b := c.broker(id)
	if b == nil {
		return nil
	}
	return b.Shutdown(ctx)
}

// BrokerPID is broker id's process id; 0 when it does not run.
func (c *Cluster) BrokerPID(id int) int {
	if b := c.broker(id); b != nil {
		return b.PID()
	}
	return 0
}

// Shutdown stops every broker.
func (c *Cluster) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	bs := make([]*Broker, 0, len(c.brokers))
	for _, b := range c.brokers {
		bs = append(bs, b)
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(bs))
	for i, b := range bs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = b.Shutdown(ctx) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// StopCluster stops every broker of a cluster directory recorded in its PID files (the
// test harness's, started detached).
func StopCluster(ctx context.Context, dir string) error {
	dirs, _ := filepath.Glob(filepath.Join(dir, "broker-*"))
	var errs []error
	for _, d := range dirs {
		errs = append(errs, StopPIDFile(ctx, d))
	}
	return errors.Join(errs...)
}

// KillPIDFile ends the broker recorded in dir's PID file with SIGKILL, as a crash would.
func KillPIDFile(dir string) error {
	pid := localproc.ReadPID(PIDFile(dir))
	if pid == 0 || !localproc.Alive(pid, kafkaMarker) {
		return fmt.Errorf("no broker runs in %s", dir)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	return os.Remove(PIDFile(dir))
}
