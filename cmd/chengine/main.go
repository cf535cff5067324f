// Command chengine is the embedded ClickHouse engine of one cluster: libchdb behind the part
// of ClickHouse's HTTP interface that clickhouse-go/v2 uses. infra/clickhouse.Process starts
// and supervises it.
//
//	chengine --path /var/lib/svc/c1 --lib ~/.cache/svc/chdb/26.5.3/libchdb.so --listen 127.0.0.1:0 --ready-file /run/c1.addr
//
// Every flag falls back to an environment variable (shown in -help). SIGTERM or SIGINT stops
// accepting requests, lets running statements finish until --shutdown-timeout, cancels the
// rest and closes the engine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chengine"
)

func main() {
	// The engine's files are its own: directories 0700, files 0600.
	syscall.Umask(0o077)
	os.Exit(run(os.Args[1:], os.Getenv, os.Stderr))
}

// run parses args, serves until a signal, and returns the exit status.
func run(args []string, getenv func(string) string, stderr io.Writer) int {
	fs := flag.NewFlagSet("chengine", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	var (
		listen    = fs.String("listen", env("SVC_CHENGINE_LISTEN", chengine.DefaultListen), "`address` to serve on; port 0 picks a free port (SVC_CHENGINE_LISTEN)")
		path      = fs.String("path", env("SVC_CHENGINE_PATH", ""), "engine data `directory`, owned by this process (SVC_CHENGINE_PATH)")
		lib       = fs.String("lib", env("SVC_CHDB_LIB", ""), "`path` of libchdb.so (SVC_CHDB_LIB)")
		pool      = fs.String("pool", env("SVC_CHENGINE_POOL", strconv.Itoa(chengine.DefaultPool)), "engine connections, i.e. statements running at once (SVC_CHENGINE_POOL)")
		maxMem    = fs.String("max-memory", env("SVC_CHENGINE_MAX_MEMORY", "25%"), "engine memory limit: bytes, 2GiB, or a percentage of memory (SVC_CHENGINE_MAX_MEMORY)")
		threads   = fs.String("max-threads", env("SVC_CHENGINE_MAX_THREADS", "0"), "max_threads of every statement; 0 is the engine's default (SVC_CHENGINE_MAX_THREADS)")
		markCache = fs.String("mark-cache", env("SVC_CHENGINE_MARK_CACHE", "128MiB"), "mark and primary index cache `size` (SVC_CHENGINE_MARK_CACHE)")
		acquire   = fs.String("acquire-timeout", env("SVC_CHENGINE_ACQUIRE_TIMEOUT", chengine.DefaultAcquireTimeout.String()), "how long a request waits for a free connection before 503 (SVC_CHENGINE_ACQUIRE_TIMEOUT)")
		grace     = fs.String("shutdown-timeout", env("SVC_CHENGINE_SHUTDOWN_TIMEOUT", "30s"), "how long running statements may finish after SIGTERM (SVC_CHENGINE_SHUTDOWN_TIMEOUT)")
		ready     = fs.String("ready-file", env("SVC_CHENGINE_READY_FILE", ""), "`file` to write the bound address to once serving (SVC_CHENGINE_READY_FILE)")
		level     = fs.String("log-level", env("SVC_LOG_LEVEL", "info"), "log level: debug, info, warn or error (SVC_LOG_LEVEL)")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "chengine: %v\n", err)
		return 2
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fail(fmt.Errorf("log level: %w", err))
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))

	// The password comes from the environment only: a command line is readable by
	// every local user.
	cfg := chengine.Config{Listen: *listen, Path: *path, Lib: *lib, ReadyFile: *ready, Password: getenv("SVC_ENGINE_PASSWORD")}
	var err error
	var errs []error
	if cfg.Pool, err = strconv.Atoi(*pool); err != nil {
		errs = append(errs, fmt.Errorf("pool: %w", err))
	}
	if cfg.MaxMemory, err = clickhouse.ParseSize(*maxMem); err != nil {
		errs = append(errs, fmt.Errorf("max memory: %w", err))
	}
	if cfg.MaxThreads, err = strconv.Atoi(*threads); err != nil {
		errs = append(errs, fmt.Errorf("max threads: %w", err))
	}
	if cfg.MarkCache, err = clickhouse.ParseSize(*markCache); err != nil {
		errs = append(errs, fmt.Errorf("mark cache: %w", err))
	}
	if cfg.AcquireTimeout, err = time.ParseDuration(*acquire); err != nil {
		errs = append(errs, fmt.Errorf("acquire timeout: %w", err))
	}
	shutdownTimeout, err := time.ParseDuration(*grace)
	if err != nil {
		errs = append(errs, fmt.Errorf("shutdown timeout: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fail(err)
	}
	srv, err := chengine.New(cfg, log)
	if err != nil {
		return fail(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		log.Error("start", slog.Any("error", err))
		if errors.Is(err, chengine.ErrPathInUse) {
			return clickhouse.ExitPathInUse
		}
		return 1
	}
	<-ctx.Done()
	stop()
	log.Info("shutting down", slog.Duration("timeout", shutdownTimeout))
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutdown", slog.Any("error", err))
		return 1
	}
	log.Info("stopped")
	return 0
}
