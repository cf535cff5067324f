package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-data/svc/infra/pgserver"
)

// runPostgres starts or stops the test harness's PostgreSQL, by PID.
func runPostgres(args []string) error {
	if len(args) < 1 {
		return fmt.Errorf("usage: svcstack postgres start|stop -dir DIR, or svcstack postgres fetch -dir CACHE")
	}
	if args[0] == "fetch" {
		return fetchPostgres(args[1:])
	}
	fs := flag.NewFlagSet("svcstack postgres "+args[0], flag.ContinueOnError)
	dir := fs.String("dir", ".data/test/postgres", "server directory")
	bin := fs.String("bin", os.Getenv("SVC_POSTGRES_BIN"), "directory of initdb and postgres; empty finds an installed PostgreSQL")
	cache := fs.String("cache", "", "where to fetch the embedded binaries from Maven Central when no PostgreSQL is installed")
	port := fs.Int("port", 0, "TCP port on 127.0.0.1; 0 picks a free one")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	switch args[0] {
	case "start":
		// Each harness run starts from an empty cluster, like the broker.
		if err := pgserver.StopDir(ctx, abs); err != nil {
			return err
		}
		if err := os.RemoveAll(abs); err != nil {
			return err
		}
		if *bin == "" {
			if *bin, err = pgserver.FindBinaries(); err != nil && *cache != "" {
				*bin, err = pgserver.FetchBinaries(*cache, "")
			}
			if err != nil {
				return err
			}
		}
		s, err := pgserver.NewServer(pgserver.ServerConfig{BinDir: *bin, Dir: abs, Port: *port, NoSync: true, Detach: true,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
		if err != nil {
			return err
		}
		if err := s.Start(ctx); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(abs, "url"), []byte(s.URL()), 0o644); err != nil {
			return err
		}
		fmt.Println(s.URL())
		return nil
	case "stop":
		return pgserver.StopDir(ctx, abs)
	}
	return fmt.Errorf("unknown action %q: want start, stop or fetch", args[0])
}

// fetchPostgres unpacks the embedded PostgreSQL binaries from Maven Central, for a
// machine with no installed PostgreSQL, and prints their bin directory (for -bin or
// SVC_POSTGRES_BIN).
func fetchPostgres(args []string) error {
	fs := flag.NewFlagSet("svcstack postgres fetch", flag.ContinueOnError)
	dir := fs.String("dir", "", "cache directory")
	version := fs.String("version", pgserver.EmbeddedVersion, "io.zonky.test.postgres binaries version")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("postgres fetch: -dir is required")
	}
	bin, err := pgserver.FetchBinaries(*dir, *version)
	if err != nil {
		return err
	}
	fmt.Println(bin)
	return nil
}
