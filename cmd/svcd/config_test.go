package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/query/promapi"
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
	t.Setenv("SVC_BATCH_MAX_BYTES", "16MiB")
	_, err := loadConfig(nil)
	if err == nil || !strings.Contains(err.Error(), "SVC_INGEST_PARTITIONS") || !strings.Contains(err.Error(), "SVC_BATCH_MAX_ROWS") ||
		!strings.Contains(err.Error(), "SVC_BATCH_MAX_BYTES") {
		t.Fatalf("loadConfig: %v; want both bad values named", err)
	}
}

// TestBatchMaxBytesIsBounded: the batch's byte bound defaults to the consumer's and
// is refused outside 1 MiB to 1 GiB.
func TestBatchMaxBytesIsBounded(t *testing.T) {
	for in, ok := range map[int]bool{0: true, 1 << 20: true, 64 << 20: true, 1 << 30: true, 1<<20 - 1: false, 1<<30 + 1: false, -1: false} {
		c := &Config{DataDir: t.TempDir(), KafkaSeeds: "x", ChdbLib: "x", EngineBin: "x", IngestPartitions: 4, BatchMaxRows: 1,
			BatchLinger: time.Second, BatchMaxBytes: in}
		err := c.Validate()
		if ok != (err == nil) {
			t.Errorf("batch max bytes %d: %v", in, err)
		}
		if in == 0 && c.BatchMaxBytes != pipeline.DefaultMaxBytes {
			t.Errorf("batch max bytes unset: %d, want %d", c.BatchMaxBytes, pipeline.DefaultMaxBytes)
		}
	}
}

// TestEngineMemoryReachesTheEngine: --engine-memory is read at start and handed to
// every embedded engine process.
func TestEngineMemoryReachesTheEngine(t *testing.T) {
	f := func(in string, want int64) {
		t.Helper()
		c := &Config{DataDir: t.TempDir(), KafkaSeeds: "x", ChdbLib: "x", EngineBin: "x", IngestPartitions: 4, BatchMaxRows: 1,
			BatchLinger: time.Second, EngineMemory: in}
		err := c.Validate()
		if want < 0 {
			if err == nil {
				t.Errorf("engine memory %q accepted", in)
			}
			return
		}
		if err != nil || c.engineMemoryBytes != want {
			t.Errorf("engine memory %q: %d, %v; want %d", in, c.engineMemoryBytes, err, want)
		}
	}
	f("", 0)
	f("4GiB", 4<<30)
	f("512MiB", 512<<20)
	f("lots", -1)
	f("0", -1)
	if half, quarter := engineMemory(t, "0.5"), engineMemory(t, "25%"); half <= 0 || half != 2*quarter {
		t.Errorf("0.5 of memory is %d, 25%% is %d", half, quarter)
	}
	e := newEngines(&Config{engineMemoryBytes: 3 << 30}, slog.New(slog.DiscardHandler), []byte("test-secret-0123456789"))
	if got := e.processConfig(uuid.New(), engineLimits{}).MaxMemory; got != 3<<30 {
		t.Errorf("engine process gets MaxMemory %d", got)
	}
	// A size's memory applies below the operator's cap, and the cap above it.
	if got := e.processConfig(uuid.New(), engineLimits{Memory: 1 << 30}).MaxMemory; got != 1<<30 {
		t.Errorf("a 1 GiB size gets MaxMemory %d", got)
	}
	if got := e.processConfig(uuid.New(), engineLimits{Memory: 8 << 30}).MaxMemory; got != 3<<30 {
		t.Errorf("an 8 GiB size under a 3 GiB cap gets MaxMemory %d", got)
	}
}

func engineMemory(t *testing.T, in string) int64 {
	c := &Config{DataDir: t.TempDir(), KafkaSeeds: "x", ChdbLib: "x", EngineBin: "x", IngestPartitions: 4, BatchMaxRows: 1,
		BatchLinger: time.Second, EngineMemory: in}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c.engineMemoryBytes
}

// TestPromQLLimitsAndMemoryLimit: unset PromQL limits get promapi's defaults, bad ones are
// refused at start, and the memory limit reads bytes, fractions and off.
func TestPromQLLimitsAndMemoryLimit(t *testing.T) {
	base := func() *Config {
		return &Config{DataDir: t.TempDir(), KafkaSeeds: "x", ClickHouseURL: "x", IngestPartitions: 4, BatchMaxRows: 1, BatchLinger: time.Second}
	}
	c := base()
	t.Setenv("GOMEMLIMIT", "")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.PromQLMaxSteps != promapi.DefaultMaxSteps || c.PromQLMaxConcurrent != promapi.DefaultMaxConcurrent ||
		c.PromQLMaxConcurrentPerOrg != promapi.DefaultMaxConcurrentPerOrg || c.PromQLQueueWait != promapi.DefaultConcurrencyWait ||
		c.PromQLQueryBytes != promapi.DefaultQueryBytes || c.PromQLOrgBytes != promapi.DefaultOrgBytes || c.memoryLimitBytes <= 0 {
		t.Fatalf("defaults: %+v", c)
	}
	bad := func(name string, set func(*Config)) {
		t.Helper()
		c := base()
		set(c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	bad("negative steps", func(c *Config) { c.PromQLMaxSteps = -1 })
	bad("per org over node", func(c *Config) { c.PromQLMaxConcurrent, c.PromQLMaxConcurrentPerOrg = 2, 3 })
	bad("query memory not a size", func(c *Config) { c.PromQLQueryMemory = "lots" })
	bad("query memory over org memory", func(c *Config) { c.PromQLQueryMemory, c.PromQLOrgMemory = "2GiB", "1GiB" })
	bad("memory limit too small", func(c *Config) { c.MemoryLimit = "1MiB" })
	mem := func(in string, want int64) {
		t.Helper()
		c := base()
		c.MemoryLimit = in
		if err := c.Validate(); err != nil || c.memoryLimitBytes != want {
			t.Errorf("memory limit %q: %d (%v), want %d", in, c.memoryLimitBytes, err, want)
		}
	}
	mem("2GiB", 2<<30)
	mem("off", 0)
	t.Setenv("GOMEMLIMIT", "3GiB")
	mem("", 0) // the runtime read $GOMEMLIMIT
}

// TestClusterRuntimeIntervalsAreConfig: the cluster runtime's intervals are read into
// Config from their environment variables, default when unset, and a bad value fails the
// start naming the variable (it was silently ignored before).
func TestClusterRuntimeIntervalsAreConfig(t *testing.T) {
	t.Setenv("SVC_KAFKA_SEEDS", "127.0.0.1:9092")
	t.Setenv("SVC_CLICKHOUSE_URL", "http://127.0.0.1:8123")
	t.Setenv("SVC_DATA_DIR", t.TempDir())
	c, err := loadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.ClusterIdleMinute != time.Minute || c.AutoscaleInterval != 15*time.Second || c.MetricsInterval != 15*time.Second {
		t.Fatalf("defaults: idle minute %s, autoscale %s, metrics %s", c.ClusterIdleMinute, c.AutoscaleInterval, c.MetricsInterval)
	}
	t.Setenv("SVC_CLUSTER_IDLE_MINUTE", "100ms")
	t.Setenv("SVC_AUTOSCALE_INTERVAL", "200ms")
	t.Setenv("SVC_METRICS_INTERVAL", "300ms")
	if c, err = loadConfig(nil); err != nil {
		t.Fatal(err)
	}
	if c.ClusterIdleMinute != 100*time.Millisecond || c.AutoscaleInterval != 200*time.Millisecond || c.MetricsInterval != 300*time.Millisecond {
		t.Fatalf("from the environment: idle minute %s, autoscale %s, metrics %s", c.ClusterIdleMinute, c.AutoscaleInterval, c.MetricsInterval)
	}
	t.Setenv("SVC_AUTOSCALE_INTERVAL", "soon")
	t.Setenv("SVC_METRICS_INTERVAL", "-1s")
	_, err = loadConfig(nil)
	if err == nil || !strings.Contains(err.Error(), "SVC_AUTOSCALE_INTERVAL") {
		t.Fatalf("loadConfig: %v; want the bad autoscale interval named", err)
	}
	t.Setenv("SVC_AUTOSCALE_INTERVAL", "1s")
	if _, err = loadConfig(nil); err == nil || !strings.Contains(err.Error(), "metrics interval") {
		t.Fatalf("loadConfig: %v; want the negative metrics interval refused", err)
	}
}

// TestServiceLogDaysAreBounded: the request and workflow logs' retention is read from the
// environment (0 or unset: 30) and refused outside 1 to 3650 days.
func TestServiceLogDaysAreBounded(t *testing.T) {
	t.Setenv("SVC_KAFKA_SEEDS", "127.0.0.1:9092")
	t.Setenv("SVC_CLICKHOUSE_URL", "http://127.0.0.1:8123")
	t.Setenv("SVC_REQUEST_LOG_DAYS", "90")
	c, err := loadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.RequestLogDays != 90 || c.WorkflowLogDays != 30 {
		t.Fatalf("loadConfig: request log %d days, workflow log %d days, %v", c.RequestLogDays, c.WorkflowLogDays, err)
	}
	t.Setenv("SVC_WORKFLOW_LOG_DAYS", "3651")
	if _, err := loadConfig(nil); err == nil || !strings.Contains(err.Error(), "workflow log days 3651") {
		t.Fatalf("3651 days: %v", err)
	}
	t.Setenv("SVC_WORKFLOW_LOG_DAYS", "-1")
	if _, err := loadConfig(nil); err == nil || !strings.Contains(err.Error(), "workflow log days -1") {
		t.Fatalf("-1 days: %v", err)
	}
}
