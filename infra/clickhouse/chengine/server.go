package chengine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/svc-data/svc/infra/clickhouse/chdb"
)

var (
	// ErrPathInUse is returned by Start when another process serves the data directory.
	ErrPathInUse = errors.New("engine data directory is in use by another chengine")
	// ErrStarted is returned by a second Start.
	ErrStarted = errors.New("chengine: already started")
)

// serverInfo is what the engine says about itself, read once at start.
type serverInfo struct {
	displayName, version, timezone string
}

// Server is the engine process's HTTP server: a pool of chdb connections on one data
// directory behind ClickHouse's HTTP interface.
type Server struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	started bool
	stopped bool

	lock  *os.File   // flock on the data directory
	ctl   *chdb.Conn // KILLs, off the pool so that they never wait for a busy one
	probe *chdb.Conn // checks that a streamed statement ended (statementGone)
	pool  *pool
	reg   *registry
	info  serverInfo

	ln     net.Listener
	http   *http.Server
	served chan struct{}
	// bg scopes background work (kill loops); cancelled at the end of Shutdown.
	bg       context.Context
	bgCancel context.CancelFunc
}

// New returns a server for cfg; it does nothing until Start.
func New(cfg Config, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("chengine config: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	bg, cancel := context.WithCancel(context.Background())
	return &Server{cfg: cfg.withDefaults(), log: log, reg: newRegistry(), bg: bg, bgCancel: cancel}, nil
}

// Addr is the address the server listens on, once started.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// connectArgs are the engine arguments of every connection. Server-level ones take effect on
// the first connection, which boots the engine; later ones ignore them.
func (s *Server) connectArgs() []string {
	c := s.cfg
	args := []string{
		"--path=" + c.Path,
		"--tmp_path=" + filepath.Join(c.Path, "tmp") + "/",
		"--user_files_path=" + filepath.Join(c.Path, "user_files") + "/",
		// libchdb sizes itself for the whole machine by default (0.9 of RAM, 5 GiB caches); a
		// machine runs one engine per cluster beside svcd and Kafka.
		"--max_server_memory_usage=" + strconv.FormatInt(c.MaxMemory, 10),
		"--merges_mutations_memory_usage_soft_limit=" + strconv.FormatInt(c.MaxMemory/2, 10),
		"--mark_cache_size=" + strconv.FormatInt(c.MarkCache, 10),
		"--primary_index_cache_size=" + strconv.FormatInt(c.MarkCache, 10),
		"--index_mark_cache_size=" + strconv.FormatInt(c.MarkCache, 10),
	}
	return args
}

// connect opens one engine connection in its baseline state.
func (s *Server) connect() (*chdb.Conn, error) {
	c, err := chdb.Connect(s.connectArgs()...)
	if err != nil {
		return nil, err
	}
	// The query profiler drives timer signals into query threads; the process belongs to
	// the Go runtime's signal handling, so it stays off.
	set := "SET query_profiler_real_time_period_ns = 0, query_profiler_cpu_time_period_ns = 0"
	if s.cfg.MaxThreads > 0 {
		// The cluster size's cores; a connection argument would not reach the session.
		set += ", max_threads = " + strconv.Itoa(s.cfg.MaxThreads)
	}
	if _, err := c.Query(set, "TabSeparated"); err != nil {
		return nil, errors.Join(fmt.Errorf("initialize engine connection: %w", err), c.Close())
	}
	return c, nil
}

// Start opens the engine and begins serving. A Start that fails half-way cleans up.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return ErrStarted
	}
	s.started = true
	s.mu.Unlock()
	if err := s.start(ctx); err != nil {
		return errors.Join(err, s.Shutdown(ctx))
	}
	return nil
}

func (s *Server) start(ctx context.Context) error {
	c := s.cfg
	// metadata/ must exist before the engine boots: on a fresh path libchdb 26.5 starts
	// without the catalog's background tasks and DROP ... SYNC then never returns (fixed
	// upstream in chdb-core#173).
	for _, d := range []string{c.Path, filepath.Join(c.Path, "metadata"), filepath.Join(c.Path, "tmp"), filepath.Join(c.Path, "user_files")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create data directory: %w", err)
		}
	}
	lock, err := os.OpenFile(filepath.Join(c.Path, "chengine.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open data directory lock: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = lock.Close()
		return fmt.Errorf("%w: %s (stop the other engine first)", ErrPathInUse, c.Path)
	}
	s.lock = lock
	// Files in tmp/ belong to statements of a previous run.
	if err := clearDir(filepath.Join(c.Path, "tmp")); err != nil {
		s.log.Warn("clear engine tmp directory", slog.Any("error", err))
	}

	t0 := time.Now()
	if err := chdb.Load(c.Lib); err != nil {
		return err
	}
	ctl, err := s.connect()
	if err != nil {
		return fmt.Errorf("open engine on %s: %w", c.Path, err)
	}
	s.ctl = ctl
	if s.probe, err = s.connect(); err != nil {
		return fmt.Errorf("open engine probe connection: %w", err)
	}
	res, err := ctl.Query("SELECT displayName(), version(), timezone()", "TabSeparated")
	if err != nil {
		return fmt.Errorf("read engine info: %w", err)
	}
	f := strings.Split(strings.TrimRight(string(res.Data), "\n"), "\t")
	if len(f) != 3 {
		return fmt.Errorf("read engine info: unexpected %q", res.Data)
	}
	s.info = serverInfo{displayName: f[0], version: f[1], timezone: f[2]}
	p, err := newPool(c.Pool, c.AcquireTimeout, s.connect, s.log)
	if err != nil {
		return fmt.Errorf("open engine connections: %w", err)
	}
	s.pool = p
	s.log.Info("engine open", slog.String("path", c.Path), slog.String("version", s.info.version),
		slog.Int("pool", c.Pool), slog.Int64("max_memory", c.MaxMemory), slog.Duration("took", time.Since(t0)))

	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Listen, err)
	}
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.served = make(chan struct{})
	go func() {
		defer close(s.served)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serve", slog.Any("error", err))
		}
	}()
	if c.ReadyFile != "" {
		if err := writeFileAtomic(c.ReadyFile, []byte(ln.Addr().String()+"\n")); err != nil {
			return fmt.Errorf("write ready file: %w", err)
		}
	}
	s.log.Info("serving", slog.String("addr", ln.Addr().String()))
	return nil
}

// Shutdown stops accepting requests, lets running statements finish until ctx ends, cancels
// the rest, and closes the engine connections. It is safe without Start and twice.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	s.mu.Unlock()

	var errs []error
	if s.http != nil {
		if err := s.http.Shutdown(ctx); err != nil {
			// The deadline passed with statements still running: cancel them and give them a
			// moment to unwind before the connections close under them.
			n := s.reg.cancelAll()
			s.log.Warn("shutdown deadline passed; cancelled running statements", slog.Int("cancelled", n))
			wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = s.http.Shutdown(wait)
			cancel()
		}
		<-s.served
	}
	if s.cfg.ReadyFile != "" {
		_ = os.Remove(s.cfg.ReadyFile)
	}
	if s.pool != nil {
		wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		errs = append(errs, s.pool.drain(wait))
		cancel()
	}
	s.bgCancel()
	if s.probe != nil {
		errs = append(errs, s.probe.Close())
	}
	if s.ctl != nil {
		errs = append(errs, s.ctl.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	return errors.Join(errs...)
}

// killByMarker cancels the engine statement of query id from the control connection.
func (s *Server) killByMarker(id string) {
	s.log.Debug("kill", slog.String("query_id", id))
	if _, err := s.ctl.Query(killStatement(id), "TabSeparated"); err != nil {
		s.log.Warn("kill query", slog.String("query_id", id), slog.Any("error", err))
	}
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}
