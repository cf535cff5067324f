// Package clickhouse runs the embedded ClickHouse engine: Process supervises one chengine
// process (cmd/chengine) per cluster, which serves libchdb over ClickHouse's HTTP interface
// for clickhouse-go/v2.
package clickhouse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/svc-data/svc/infra/localproc"
)

// Files the engine keeps in its data directory beside the engine's own.
const (
	LogFile   = "chengine.log"  // the engine's stdout and stderr, appended
	ReadyFile = "chengine.addr" // the bound address, written by the engine when it serves
)

// ExitPathInUse is chengine's exit status when another engine holds its data directory
// (one that is still shutting down, after its supervisor was killed).
const ExitPathInUse = 3

var (
	// ErrEngineExited is returned by Start when the engine exits before it serves; the error
	// carries the tail of its log.
	ErrEngineExited = errors.New("chengine exited before serving")
	// ErrNotStarted is returned by calls that need a running engine.
	ErrNotStarted = errors.New("chengine not started")
)

// ProcessConfig configures a Process. Zero fields take the documented defaults.
type ProcessConfig struct {
	// Binary is the chengine executable. Default: $SVC_BIN_DIR/chengine, else chengine beside
	// the running executable, else chengine on $PATH.
	Binary string
	// Lib is the path of libchdb.so. Default $SVC_CHDB_LIB.
	Lib string
	// DataDir is the engine's data directory, owned by this engine alone. Required.
	DataDir string
	// Listen is the address to serve on. Default 127.0.0.1:0 (a free port; URL reports it,
	// and a restarted engine keeps it).
	Listen string
	// Pool is the number of engine connections. Default: the engine's (4).
	Pool int
	// MaxMemory is the engine's memory limit in bytes. Default: the engine's (25% of memory).
	MaxMemory int64
	// MaxThreads is the engine's max_threads. Default: the engine's.
	MaxThreads int
	// Restart restarts an engine that exits on its own, with exponential backoff.
	Restart bool
	// WaitForPath is how long Start waits for another engine to release the data
	// directory (an engine of a killed svcd finishes its statements first, up to its
	// shutdown timeout). Zero refuses a held directory at once.
	WaitForPath time.Duration
	// StartTimeout bounds how long Start waits for the engine to serve. Default 60s.
	StartTimeout time.Duration
	// ShutdownTimeout is how long running statements may finish after Shutdown asks the
	// engine to stop, before it cancels them. Default 30s. Shutdown's ctx still bounds the
	// wait; at its end the engine is killed.
	ShutdownTimeout time.Duration
	// Env is added to the engine's environment.
	Env []string
	// Password, when set, is required by the engine of every statement. It reaches the
	// engine through its environment (SVC_ENGINE_PASSWORD), never its command line,
	// which every local user can read.
	Password string
	// Logger receives supervision events. Default: discard.
	Logger *slog.Logger
}

func (c ProcessConfig) withDefaults() ProcessConfig {
	if c.Binary == "" {
		c.Binary = findBinary()
	}
	if c.Lib == "" {
		c.Lib = os.Getenv("SVC_CHDB_LIB")
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:0"
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 60 * time.Second
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports the problems of c after defaults, naming the remedy.
func (c ProcessConfig) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.DataDir == "" || !filepath.IsAbs(c.DataDir) {
		errs = append(errs, fmt.Errorf("data dir %q: an absolute path is required", c.DataDir))
	}
	if c.Binary == "" {
		errs = append(errs, errors.New("binary: chengine not found; build it (`go tool task build`) or set SVC_BIN_DIR"))
	} else if _, err := os.Stat(c.Binary); err != nil {
		errs = append(errs, fmt.Errorf("binary: %w (build it with `go tool task build`)", err))
	}
	if c.Lib == "" {
		errs = append(errs, errors.New("lib: set SVC_CHDB_LIB to libchdb.so (`go tool task deps:chdb` fetches it)"))
	}
	if c.Pool < 0 || c.MaxMemory < 0 || c.StartTimeout < 0 || c.ShutdownTimeout < 0 {
		errs = append(errs, errors.New("pool, max memory and timeouts must not be negative"))
	}
	return errors.Join(errs...)
}

func findBinary() string {
	if dir := os.Getenv("SVC_BIN_DIR"); dir != "" {
		if p := filepath.Join(dir, "chengine"); fileExists(p) {
			return p
		}
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "chengine"); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("chengine"); err == nil {
		return p
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Process supervises one chengine process.
type Process struct {
	cfg ProcessConfig
	log *slog.Logger

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd exits
	addr     string
	started  bool
	stopping bool
	stopped  chan struct{} // closed when the supervisor goroutine ends
	// quit is closed by Shutdown: it ends the supervisor's backoff and a restart's
	// wait for the engine to serve, so Shutdown is never held past its deadline.
	quit    chan struct{}
	logFile *os.File
}

// NewProcess returns a supervisor for cfg; nothing runs until Start.
func NewProcess(cfg ProcessConfig) (*Process, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("chengine process config: %w", err)
	}
	cfg = cfg.withDefaults()
	return &Process{cfg: cfg, log: cfg.Logger.With(slog.String("data_dir", cfg.DataDir))}, nil
}

// URL is the engine's HTTP address (http://host:port), once started.
func (p *Process) URL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.addr == "" {
		return ""
	}
	return "http://" + p.addr
}

// Addr is the engine's host:port, once started.
func (p *Process) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// PID is the engine's process id, or 0 when it is not running.
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Start launches the engine and returns once it serves. A failed Start cleans up.
func (p *Process) Start(ctx context.Context) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("chengine process: already started")
	}
	p.started = true
	p.mu.Unlock()
	if err := os.MkdirAll(p.cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create engine data dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(p.cfg.DataDir, LogFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open engine log: %w", err)
	}
	p.logFile = f
	waitUntil := time.Now().Add(p.cfg.WaitForPath)
	for {
		err := p.launch(ctx, p.cfg.Listen)
		if err == nil {
			break
		}
		p.mu.Lock()
		cmd := p.cmd
		p.mu.Unlock()
		held := errors.Is(err, ErrEngineExited) && cmd != nil && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == ExitPathInUse
		if !held || time.Now().After(waitUntil) || ctx.Err() != nil {
			return errors.Join(err, p.Shutdown(context.Background()))
		}
		p.log.Warn("engine data directory held by another engine; waiting", slog.Duration("up_to", time.Until(waitUntil).Round(time.Second)))
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
	p.mu.Lock()
	p.stopped, p.quit = make(chan struct{}), make(chan struct{})
	p.mu.Unlock()
	go p.supervise()
	return nil
}

// launch starts the engine on listen and waits until it serves or exits.
func (p *Process) launch(ctx context.Context, listen string) error {
	ready := filepath.Join(p.cfg.DataDir, ReadyFile)
	_ = os.Remove(ready)
	args := []string{
		"--path", p.cfg.DataDir,
		"--lib", p.cfg.Lib,
		"--listen", listen,
		"--ready-file", ready,
		"--shutdown-timeout", p.cfg.ShutdownTimeout.String(),
	}
	if p.cfg.Pool > 0 {
		args = append(args, "--pool", strconv.Itoa(p.cfg.Pool))
	}
	if p.cfg.MaxMemory > 0 {
		args = append(args, "--max-memory", strconv.FormatInt(p.cfg.MaxMemory, 10))
	}
	if p.cfg.MaxThreads > 0 {
		args = append(args, "--max-threads", strconv.Itoa(p.cfg.MaxThreads))
	}
	cmd := exec.Command(p.cfg.Binary, args...)
	// The engine gets only what it needs: never svcd's bootstrap secrets (localproc.Env).
	cmd.Env = localproc.Env(p.cfg.Env...)
	if p.cfg.Password != "" {
		cmd.Env = append(cmd.Env, "SVC_ENGINE_PASSWORD="+p.cfg.Password)
	}
	cmd.Stdout, cmd.Stderr = p.logFile, p.logFile
	// Own process group, so a terminal's Ctrl-C reaches the supervisor, which stops the
	// engine in order; and the engine goes (SIGTERM) when the supervisor dies. Linux sends
	// the death signal when the forking thread exits, which the Go runtime does only for
	// threads locked by an exiting goroutine.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start chengine: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	p.log.Info("chengine started", slog.Int("pid", cmd.Process.Pid))

	ctx, cancel := context.WithTimeout(ctx, p.cfg.StartTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			p.mu.Lock()
			p.addr = strings.TrimSpace(string(b))
			p.mu.Unlock()
			p.log.Info("chengine serving", slog.String("addr", p.Addr()))
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%w (%s); log tail:\n%s", ErrEngineExited, cmd.ProcessState, p.logTail())
		case <-ctx.Done():
			return fmt.Errorf("chengine did not serve within %s: %w; log tail:\n%s", p.cfg.StartTimeout, ctx.Err(), p.logTail())
		case <-tick.C:
		}
	}
}

// supervise waits for the engine to exit and, with Restart, starts it again on the same
// address with exponential backoff.
func (p *Process) supervise() {
	p.mu.Lock()
	stopped, quit := p.stopped, p.quit
	p.mu.Unlock()
	defer close(stopped)
	qctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-quit:
			cancel()
		case <-qctx.Done():
		}
	}()
	backoff := 250 * time.Millisecond
	for {
		p.mu.Lock()
		exited, cmd := p.exited, p.cmd
		p.mu.Unlock()
		startedAt := time.Now()
		<-exited
		p.mu.Lock()
		stopping := p.stopping
		p.mu.Unlock()
		if stopping {
			return
		}
		p.log.Error("chengine exited", slog.String("state", cmd.ProcessState.String()), slog.String("log_tail", p.logTail()))
		if !p.cfg.Restart {
			return
		}
		if time.Since(startedAt) > time.Minute {
			backoff = 250 * time.Millisecond
		}
		for {
			select {
			case <-time.After(backoff):
			case <-quit:
				return
			}
			backoff = min(2*backoff, 30*time.Second)
			p.mu.Lock()
			stopping, listen := p.stopping, p.addr
			p.mu.Unlock()
			if stopping {
				return
			}
			if listen == "" {
				listen = p.cfg.Listen
			}
			err := p.launch(qctx, listen)
			p.mu.Lock()
			stopping, exited := p.stopping, p.exited
			p.mu.Unlock()
			if err != nil || stopping {
				// A failed restart, or one that raced Shutdown: this process must not stay.
				if err != nil {
					p.log.Error("restart chengine", slog.Any("error", err))
				}
				p.kill(exited)
				if stopping {
					return
				}
				continue
			}
			break
		}
	}
}

// kill stops the current engine process hard and waits for it.
func (p *Process) kill(exited <-chan struct{}) {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
	<-exited
}

// Shutdown asks the engine to stop (SIGTERM), waits for it until ctx ends and kills it then.
// It is safe without Start and twice.
func (p *Process) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		return nil
	}
	p.stopping = true
	cmd, exited, stopped := p.cmd, p.exited, p.stopped
	if p.quit != nil {
		close(p.quit)
	}
	p.mu.Unlock()

	var err error
	alive := exited != nil
	if alive {
		select {
		case <-exited: // it died before; the supervisor reported that
			alive = false
		default:
		}
	}
	if alive {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-ctx.Done():
			p.log.Warn("chengine did not stop in time; killing it", slog.Int("pid", cmd.Process.Pid))
			_ = cmd.Process.Kill()
			<-exited
			err = fmt.Errorf("stop chengine: %w", ctx.Err())
		}
		if err == nil && cmd.ProcessState != nil && !cmd.ProcessState.Success() {
			err = fmt.Errorf("stop chengine: %s; log tail:\n%s", cmd.ProcessState, p.logTail())
		}
	}
	if stopped != nil {
		select {
		case <-stopped:
		case <-ctx.Done():
			// A restart raced this Shutdown: quit cut its wait short, and the
			// supervisor kills what it started, which takes no longer than a kill.
			<-stopped
		}
	}
	if p.logFile != nil {
		err = errors.Join(err, p.logFile.Close())
		p.logFile = nil
	}
	return err
}

// logTail returns the end of the engine log, for errors.
func (p *Process) logTail() string {
	f, err := os.Open(filepath.Join(p.cfg.DataDir, LogFile))
	if err != nil {
		return ""
	}
	defer f.Close()
	const n = 4096
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	if i := bytes.IndexByte(b, '\n'); len(b) == n && i >= 0 {
		b = b[i+1:]
	}
	return strings.TrimRight(string(b), "\n")
}
