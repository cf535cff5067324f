// Command svcstack starts and stops the local services the test harness needs, by PID:
//
//	svcstack kafka start -dir .data/test/kafka   # prints the seed address, writes <dir>/seeds
//	                                             # and the client credentials <dir>/sasl.json (0600)
//	svcstack kafka stop  -dir .data/test/kafka
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
		return fmt.Errorf("usage: svcstack kafka start|stop -dir DIR")
	}
	fs := flag.NewFlagSet("svcstack kafka "+args[1], flag.ContinueOnError)
	dir := fs.String("dir", ".data/test/kafka", "broker data directory")
	libs := fs.String("libs", os.Getenv("SVC_KAFKA_LIBS"), "directory of Kafka's jars")
	if err := fs.Parse(args[2:]); err != nil {
		return err
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
		return kafka.StopPIDFile(ctx, abs)
	}
	return fmt.Errorf("unknown action %q: want start or stop", args[1])
}
