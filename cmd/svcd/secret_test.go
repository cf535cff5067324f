package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServiceSecretIsCreatedPrivateOnceAndKept(t *testing.T) {
	cfg := &Config{DataDir: t.TempDir()}
	first, err := serviceSecret(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(cfg.DataDir, "service.secret"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("service.secret: %v, mode %v; want 0600", err, fi.Mode())
	}
	again, err := serviceSecret(cfg)
	if err != nil || string(again) != string(first) || len(first) != 64 {
		t.Fatalf("second start read %q (%v), first created %q", again, err, first)
	}
	cfg.ServiceSecret = "configured-secret-value"
	if got, err := serviceSecret(cfg); err != nil || string(got) != cfg.ServiceSecret {
		t.Fatalf("SVC_SERVICE_SECRET ignored: %q %v", got, err)
	}
	cfg.ServiceSecret = "short"
	if _, err := serviceSecret(cfg); err == nil {
		t.Fatal("a short secret was accepted")
	}
}

// TestEveryBadIntegerIsReported: a later good value must not hide an earlier bad one.
func TestEveryBadIntegerIsReported(t *testing.T) {
	t.Setenv("SVC_KAFKA_SEEDS", "127.0.0.1:9092")
	t.Setenv("SVC_CLICKHOUSE_URL", "http://127.0.0.1:8123")
	t.Setenv("SVC_INGEST_PARTITIONS", "four")
	t.Setenv("SVC_ENGINE_POOL", "4")
	t.Setenv("SVC_BATCH_MAX_ROWS", "1e3")
	_, err := loadConfig(nil)
	if err == nil || !strings.Contains(err.Error(), "SVC_INGEST_PARTITIONS") || !strings.Contains(err.Error(), "SVC_BATCH_MAX_ROWS") {
		t.Fatalf("loadConfig: %v; want both bad values named", err)
	}
}
