// Command svcchaos proves that an acknowledged row is never lost or duplicated while
// processes die. It starts its own Kafka broker and svcd (which starts the engine), and:
//
//  1. measures saturation: acknowledged rows/s of closed-loop load;
//  2. runs load at 70% of it, every request with its own Idempotency-Key and retried
//     with that key until acknowledged, while kill -9 hits svcd, the engine (chengine)
//     and the broker in turn, several times each at random moments, restarting each;
//     after every kill a probe row measures the recovery time (kill to queryable);
//  3. runs open-loop load at 2× saturation: every request must answer 2xx, or 429/503
//     with Retry-After, and svcd's RSS must stay under a bound; then load at 70% must
//     reach its rate again;
//  4. counts every row stored against every row acknowledged.
//
// It prints acknowledged, stored, lost, duplicated, restarts survived and recovery
// p50/max, and exits 1 when a row was lost or duplicated or a check failed. It only
// ever kills processes it started (the broker, svcd, and chengine children of its
// svcd). `go tool task chaos` runs it; a short version runs in the test suite.
//
// With -nodes 3 -brokers 3 it runs a deployment instead (docs/deploy.md): three svcd on
// one PostgreSQL event store and one engine process, a three-broker Kafka; requests go
// round the nodes, and each kill hits a node, a broker or the engine at random.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("svcchaos", flag.ExitOnError)
	fs.StringVar(&cfg.BinDir, "bin", cfg.BinDir, "directory holding svcd and chengine")
	fs.StringVar(&cfg.KafkaLibs, "kafka-libs", cfg.KafkaLibs, "Kafka's jars ($SVC_KAFKA_LIBS)")
	fs.StringVar(&cfg.ChdbLib, "chdb-lib", cfg.ChdbLib, "libchdb.so ($SVC_CHDB_LIB)")
	fs.DurationVar(&cfg.Calibrate, "calibrate", cfg.Calibrate, "saturation measurement")
	fs.DurationVar(&cfg.Chaos, "duration", cfg.Chaos, "load with kills at 70% of saturation")
	fs.IntVar(&cfg.Kills, "kills", cfg.Kills, "kills of each process (svcd, engine, broker)")
	fs.DurationVar(&cfg.Overload, "overload", cfg.Overload, "open-loop load at -overload-factor times saturation")
	fs.Float64Var(&cfg.OverloadFactor, "overload-factor", cfg.OverloadFactor, "the overload's multiple of saturation")
	fs.IntVar(&cfg.EdgeInflight, "edge-inflight", cfg.EdgeInflight, "svcd's inserts in flight (SVC_MAX_CONCURRENT_INGEST); 0: svcd's default")
	fs.DurationVar(&cfg.EdgeWait, "edge-wait", cfg.EdgeWait, "how long an insert waits for a slot before 503 (SVC_INGEST_WAIT); 0: svcd's default")
	fs.BoolVar(&cfg.RequireShedding, "require-shedding", cfg.RequireShedding, "fail unless the overload draws 429/503 answers")
	fs.DurationVar(&cfg.Recover, "recover", cfg.Recover, "load at 70% after the overload")
	fs.IntVar(&cfg.RSSBoundMiB, "rss-bound", cfg.RSSBoundMiB, "svcd RSS bound during the overload, MiB")
	fs.Float64Var(&cfg.RecoverRatio, "recover-ratio", cfg.RecoverRatio, "share of the 70% load acknowledged after the overload")
	fs.IntVar(&cfg.Rows, "rows", cfg.Rows, "rows per request")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "concurrent requests that measure saturation (closed loop)")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "random seed of the kill schedule (0: from the clock)")
	fs.BoolVar(&cfg.Keep, "keep", cfg.Keep, "keep the data directory")
	fs.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "svcd nodes; more than 1 share a PostgreSQL event store and one engine process (SVC_CLICKHOUSE_URL)")
	fs.IntVar(&cfg.Brokers, "brokers", cfg.Brokers, "Kafka brokers; more than 1 is a KRaft cluster (replication min(brokers, 3), min.insync.replicas 2 from 3)")
	fs.StringVar(&cfg.PostgresCache, "postgres-cache", cfg.PostgresCache, "where to fetch PostgreSQL's embedded binaries when none is installed (several nodes)")
	_ = fs.Parse(os.Args[1:])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := Run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "svcchaos:", err)
		os.Exit(1)
	}
	if fails := rep.Failures(); len(fails) > 0 {
		for _, f := range fails {
			fmt.Fprintln(os.Stderr, "svcchaos: FAIL:", f)
		}
		os.Exit(1)
	}
}

// Config sizes a run.
type Config struct {
	BinDir, KafkaLibs, ChdbLib string
	Calibrate, Chaos           time.Duration
	Overload, Recover          time.Duration
	// OverloadFactor is the overload's multiple of saturation (default 2). Saturation is
	// end to end (consumer-bound), so the log absorbs a small multiple and the edge
	// sheds nothing; a large one with a small EdgeInflight reaches real overload.
	OverloadFactor float64
	// EdgeInflight and EdgeWait set svcd's in-flight insert budget and its wait for a
	// slot (0: svcd's defaults, 256 and 2 s).
	EdgeInflight int
	EdgeWait     time.Duration
	// RequireShedding fails the run unless the overload drew a 429 or 503.
	RequireShedding bool
	Kills           int
	RSSBoundMiB     int
	// RecoverRatio is the share of the 70% load that must be acknowledged again after
	// the overload.
	RecoverRatio float64
	Rows         int
	Workers      int
	Seed         int64
	Keep         bool
	// Dir, when set, holds the run's data (else a temporary directory).
	Dir string
	// Nodes is how many svcd run (default 1); several share a PostgreSQL event store and
	// one engine process, and kills of svcd pick one at random.
	Nodes int
	// Brokers is how many Kafka brokers run (default 1); kills pick one at random.
	Brokers int
	// PostgresCache is where PostgreSQL's embedded binaries are fetched when none is
	// installed.
	PostgresCache string
}

func defaultConfig() Config {
	bin := "."
	if exe, err := os.Executable(); err == nil {
		bin = filepath.Dir(exe)
	}
	return Config{BinDir: bin, KafkaLibs: os.Getenv("SVC_KAFKA_LIBS"), ChdbLib: os.Getenv("SVC_CHDB_LIB"),
		Calibrate: 15 * time.Second, Chaos: 5 * time.Minute, Kills: 3, Overload: time.Minute, Recover: 30 * time.Second,
		RSSBoundMiB: 1024, RecoverRatio: 0.8, Rows: 50, Workers: 64, OverloadFactor: 2, Nodes: 1, Brokers: 1}
}

// Run runs the whole experiment and writes the report to out.
func Run(ctx context.Context, cfg Config, out io.Writer) (*Report, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 64
	}
	if cfg.OverloadFactor <= 0 {
		cfg.OverloadFactor = 2
	}
	if cfg.Seed == 0 {
		cfg.Seed = time.Now().UnixNano()
	}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "svcchaos-*")
		if err != nil {
			return nil, err
		}
		dir = d
		if !cfg.Keep {
			defer os.RemoveAll(dir)
		}
	}
	st, err := startStack(ctx, cfg, dir, out)
	if err != nil {
		return nil, err
	}
	defer st.stop()
	rep := &Report{Seed: cfg.Seed, RSSBoundMiB: cfg.RSSBoundMiB, RecoverRatio: cfg.RecoverRatio, Dir: dir,
		RequireShedding: cfg.RequireShedding}
	err = experiment(ctx, cfg, st, rep, out)
	rep.print(out)
	return rep, err
}
