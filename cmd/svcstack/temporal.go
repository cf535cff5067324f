package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-data/svc/infra/temporal"
)

// runTemporal starts or stops the test harness's Temporal dev server, by PID.
func runTemporal(args []string) error {
	if len(args) < 1 {
		return fmt.Errorf("usage: svcstack temporal start|stop -dir DIR")
	}
	fs := flag.NewFlagSet("svcstack temporal "+args[0], flag.ContinueOnError)
	dir := fs.String("dir", ".data/test/temporal", "server data directory")
	bin := fs.String("bin", os.Getenv("SVC_TEMPORAL_BIN"), "the temporal CLI")
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
		// Each harness run starts from an empty server, like the broker.
		if err := temporal.StopPIDFile(ctx, abs); err != nil {
			return err
		}
		if err := os.RemoveAll(abs); err != nil {
			return err
		}
		s, err := temporal.NewServer(temporal.ServerConfig{Binary: *bin, DataDir: abs, Detach: true,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
		if err != nil {
			return err
		}
		if err := s.Start(ctx); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(abs, "addr"), []byte(s.Addr()), 0o644); err != nil {
			return err
		}
		fmt.Println(s.Addr())
		return nil
	case "stop":
		return temporal.StopPIDFile(ctx, abs)
	}
	return fmt.Errorf("unknown action %q: want start or stop", args[0])
}
