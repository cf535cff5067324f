package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/svc-data/svc/infra/clickhouse"
)

// Config is everything svcd reads at start: flags, each with an environment variable
// fallback, validated before anything starts.
type Config struct {
	HTTPAddr string
	DataDir  string
	LogLevel slog.Level

	// KafkaSeeds, when empty, makes svcd run its own single-node broker from KafkaLibs.
	KafkaSeeds       string
	KafkaLibs        string
	IngestPartitions int

	// ClickHouseURL, when set, points every cluster at an existing ClickHouse server
	// instead of an embedded engine process per cluster.
	ClickHouseURL string
	ChdbLib       string
	EngineBin     string
	EnginePool    int
	EngineMemory  string
	// engineMemoryBytes is EngineMemory read by Validate; 0 keeps the engine's default.
	engineMemoryBytes int64

	// EventStoreURL, when set, keeps control-plane events in EventStoreDB instead of the
	// embedded file.
	EventStoreURL string

	BootstrapAPIKey   string
	BootstrapOrg      string
	BootstrapUser     string
	BootstrapPassword string
	// PublicURL is where users reach the service (device login links).
	PublicURL string
	// MetricsToken is the bearer token /metrics requires (SVC_METRICS_TOKEN, from the
	// environment only); unset, /metrics is served only on a loopback listen address.
	MetricsToken string
	// URLImportAllow lists networks and hosts URL imports may reach beyond public ones.
	URLImportAllow []string

	BatchMaxRows int
	BatchLinger  time.Duration
	// RemoteInsertTimeout bounds an insert into a table on a customer's bucket; one that
	// runs out parks the table for RemoteRetryMin (doubling up to 10 minutes): its rows
	// go to its dead letters meanwhile and its partition's other tables go on.
	RemoteInsertTimeout time.Duration
	RemoteRetryMin      time.Duration

	// DeviceCodeTTL is how long a device login waits for approval.
	DeviceCodeTTL time.Duration
	// ClusterIdleTimeout is a new cluster's idle timeout in minutes when not given.
	ClusterIdleTimeout int
	// PprofAddr, when set, serves Go's runtime profiles (net/http/pprof) there.
	PprofAddr string

	// Workflows is "off" to disable the workflow service (its endpoints answer 503).
	Workflows string
	// TemporalAddr, when set, points workflows at an existing Temporal cluster instead
	// of the embedded server run from TemporalBin.
	TemporalAddr      string
	TemporalNamespace string
	// TemporalTaskQueue is polled by every node of this deployment; it also prefixes
	// schedule and execution ids, so deployments can share a namespace.
	TemporalTaskQueue string
	TemporalBin       string
	// TemporalRetention is how long the embedded server keeps finished runs.
	TemporalRetention time.Duration
	// SecretKey encrypts workflow sink secrets; empty uses <data>/workflow.key.
	SecretKey string
	// WorkflowHoldAfterSinks is a fault-test hook (SVC_WORKFLOW_TEST_HOLD_AFTER_SINKS).
	WorkflowHoldAfterSinks string
	// MaxConcurrentIngest and IngestWait bound inserts in flight on this node: more wait
	// up to IngestWait, then get 503 with Retry-After (OTLP/gRPC: UNAVAILABLE).
	MaxConcurrentIngest int
	IngestWait          time.Duration
	// PromQLTimeout and PromQLMaxSamples bound a Prometheus-app query's evaluation time
	// and the samples it holds at once (promapi.Config).
	PromQLTimeout    time.Duration
	PromQLMaxSamples int
	// ServiceSecret keys what only the service may compute (ingest deduplication
	// tokens); empty reads or creates <data dir>/service.secret. Nodes sharing clusters
	// must share it.
	ServiceSecret string
}

func loadConfig(args []string) (*Config, error) {
	c := &Config{}
	fs := flag.NewFlagSet("svcd", flag.ContinueOnError)
	str := func(p *string, name, env, def, usage string) {
		fs.StringVar(p, name, envOr(env, def), usage+" ($"+env+")")
	}
	str(&c.HTTPAddr, "http-addr", "SVC_HTTP_ADDR", "127.0.0.1:8080", "HTTP listen address")
	str(&c.DataDir, "data-dir", "SVC_DATA_DIR", "./data", "directory for all local state")
	str(&c.PprofAddr, "pprof-addr", "SVC_PPROF_ADDR", "", "address serving Go runtime profiles (/debug/pprof/); empty serves none. Keep it on loopback")
	level := envOr("SVC_LOG_LEVEL", "info")
	fs.StringVar(&level, "log-level", level, "debug, info, warn or error ($SVC_LOG_LEVEL)")
	str(&c.KafkaSeeds, "kafka-seeds", "SVC_KAFKA_SEEDS", "", "Kafka brokers, comma-separated; empty runs an embedded broker")
	str(&c.KafkaLibs, "kafka-libs", "SVC_KAFKA_LIBS", "", "directory of Kafka's jars for the embedded broker")
	str(&c.ClickHouseURL, "clickhouse-url", "SVC_CLICKHOUSE_URL", "", "existing ClickHouse HTTP address; empty runs an embedded engine per cluster")
	str(&c.ChdbLib, "chdb-lib", "SVC_CHDB_LIB", "", "path of libchdb.so for embedded engines")
	str(&c.EngineBin, "engine-bin", "SVC_ENGINE_BIN", "", "path of the chengine binary (default: beside svcd)")
	str(&c.EngineMemory, "engine-memory", "SVC_ENGINE_MEMORY", "", "memory limit of each embedded engine, e.g. 4GiB, 25% or 0.5 (of RAM)")
	str(&c.EventStoreURL, "eventstore-url", "SVC_EVENTSTORE_URL", "", "EventStoreDB connection string; empty uses the embedded store")
	str(&c.BootstrapAPIKey, "bootstrap-api-key", "SVC_BOOTSTRAP_API_KEY", "", "admin API key created at the first start")
	str(&c.BootstrapOrg, "bootstrap-org", "SVC_BOOTSTRAP_ORG", "default", "organization created at the first start")
	str(&c.BootstrapUser, "bootstrap-user", "SVC_BOOTSTRAP_USER", "admin", "administrator user created at the first start")
	str(&c.BootstrapPassword, "bootstrap-password", "SVC_BOOTSTRAP_PASSWORD", "", "that user's password (default: generated)")
	c.ServiceSecret = os.Getenv("SVC_SERVICE_SECRET") // never a flag: argv is public on the machine
	str(&c.PublicURL, "public-url", "SVC_PUBLIC_URL", "", "address users reach the service at (default: the listen address)")
	str(&c.Workflows, "workflows", "SVC_WORKFLOWS", "on", "on, or off to disable the workflow service")
	str(&c.TemporalAddr, "temporal-addr", "SVC_TEMPORAL_ADDR", "", "existing Temporal frontend host:port; empty runs the embedded server")
	str(&c.TemporalNamespace, "temporal-namespace", "SVC_TEMPORAL_NAMESPACE", "svc", "Temporal namespace of workflow runs")
	str(&c.TemporalTaskQueue, "temporal-task-queue", "SVC_TEMPORAL_TASK_QUEUE", "svc-workflows", "Temporal task queue of this deployment's workers (letters, digits, '_' and '-')")
	str(&c.TemporalBin, "temporal-bin", "SVC_TEMPORAL_BIN", "", "the temporal CLI for the embedded server (`go tool task deps:temporal` fetches it)")
	c.SecretKey = os.Getenv("SVC_SECRET_KEY") // never a flag: argv is visible to every local user
	c.WorkflowHoldAfterSinks = os.Getenv("SVC_WORKFLOW_TEST_HOLD_AFTER_SINKS")
	retention := envOr("SVC_TEMPORAL_RETENTION", "1h")
	fs.StringVar(&retention, "temporal-retention", retention, "how long the embedded Temporal keeps finished runs ($SVC_TEMPORAL_RETENTION)")
	c.MetricsToken = os.Getenv("SVC_METRICS_TOKEN")
	var err error
	// envErrs keeps every unreadable environment value, so a later good one cannot
	// hide an earlier bad one.
	var envErrs []error
	intFlag := func(p *int, name, env string, def int, usage string) {
		v := def
		if s := os.Getenv(env); s != "" {
			n, perr := strconv.Atoi(s)
			if perr != nil {
				envErrs = append(envErrs, fmt.Errorf("$%s: %w", env, perr))
			} else {
				v = n
			}
		}
		fs.IntVar(p, name, v, usage+" ($"+env+")")
	}
	intFlag(&c.IngestPartitions, "ingest-partitions", "SVC_INGEST_PARTITIONS", 4, "partitions of each cluster's ingest topic")
	intFlag(&c.EnginePool, "engine-pool", "SVC_ENGINE_POOL", 4, "engine connections per embedded engine")
	intFlag(&c.BatchMaxRows, "batch-max-rows", "SVC_BATCH_MAX_ROWS", 100_000, "rows that close a batch")
	intFlag(&c.ClusterIdleTimeout, "cluster-idle-timeout", "SVC_CLUSTER_IDLE_TIMEOUT", 0, "idle timeout of new clusters in minutes: 0 or 15 to 43200")
	linger := envOr("SVC_BATCH_LINGER", "200ms")
	remoteInsert := envOr("SVC_REMOTE_INSERT_TIMEOUT", "1m")
	fs.StringVar(&remoteInsert, "remote-insert-timeout", remoteInsert, "bound of an insert into a table on a customer's bucket ($SVC_REMOTE_INSERT_TIMEOUT)")
	remoteRetry := envOr("SVC_REMOTE_RETRY_MIN", "30s")
	fs.StringVar(&remoteRetry, "remote-retry-min", remoteRetry, "first pause before a parked table on a customer's bucket is tried again ($SVC_REMOTE_RETRY_MIN)")
	fs.StringVar(&linger, "batch-linger", linger, "time that closes a batch ($SVC_BATCH_LINGER)")
	if err := errors.Join(envErrs...); err != nil {
		return nil, err
	}
	allow := envOr("SVC_URL_IMPORT_ALLOW", "")
	fs.StringVar(&allow, "url-import-allow", allow, "CIDRs and host names URL imports may reach beyond public addresses ($SVC_URL_IMPORT_ALLOW)")
	intFlag(&c.MaxConcurrentIngest, "max-concurrent-ingest", "SVC_MAX_CONCURRENT_INGEST", 256, "inserts in flight on this node before more wait")
	ingestWait := envOr("SVC_INGEST_WAIT", "2s")
	fs.StringVar(&ingestWait, "ingest-wait", ingestWait, "how long an insert waits for a slot before 503 ($SVC_INGEST_WAIT)")
	intFlag(&c.PromQLMaxSamples, "promql-max-samples", "SVC_PROMQL_MAX_SAMPLES", 50_000_000, "samples a PromQL query may hold at once")
	promTimeout := envOr("SVC_PROMQL_TIMEOUT", "2m")
	fs.StringVar(&promTimeout, "promql-timeout", promTimeout, "longest PromQL query evaluation ($SVC_PROMQL_TIMEOUT)")
	deviceTTL := envOr("SVC_DEVICE_CODE_TTL", "15m")
	fs.StringVar(&deviceTTL, "device-code-ttl", deviceTTL, "how long a device login waits for approval ($SVC_DEVICE_CODE_TTL)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.DeviceCodeTTL, err = time.ParseDuration(deviceTTL); err != nil || c.DeviceCodeTTL < time.Second || c.DeviceCodeTTL > time.Hour {
		return nil, fmt.Errorf("device code ttl %q: want a duration from 1s to 1h", deviceTTL)
	}
	for _, a := range strings.Split(allow, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.URLImportAllow = append(c.URLImportAllow, a)
		}
	}
	if c.TemporalRetention, err = time.ParseDuration(retention); err != nil || c.TemporalRetention < time.Hour {
		return nil, fmt.Errorf("temporal retention %q: want a duration of at least 1h", retention)
	}
	if !validTaskQueue(c.TemporalTaskQueue) {
		return nil, fmt.Errorf("temporal task queue %q: want 1 to 100 letters, digits, '_' and '-'", c.TemporalTaskQueue)
	}
	if c.Workflows != "on" && c.Workflows != "off" {
		return nil, fmt.Errorf("workflows %q: want on or off", c.Workflows)
	}
	if c.IngestWait, err = time.ParseDuration(ingestWait); err != nil || c.IngestWait <= 0 || c.MaxConcurrentIngest < 1 {
		return nil, fmt.Errorf("ingest wait %q and max concurrent ingest %d: want a positive duration and at least 1", ingestWait, c.MaxConcurrentIngest)
	}
	if c.PromQLTimeout, err = time.ParseDuration(promTimeout); err != nil || c.PromQLTimeout <= 0 || c.PromQLMaxSamples < 1 {
		return nil, fmt.Errorf("promql timeout %q and max samples %d: want a positive duration and at least 1", promTimeout, c.PromQLMaxSamples)
	}
	if c.BatchLinger, err = time.ParseDuration(linger); err != nil {
		return nil, fmt.Errorf("batch linger: %w", err)
	}
	if c.RemoteInsertTimeout, err = time.ParseDuration(remoteInsert); err != nil {
		return nil, fmt.Errorf("remote insert timeout: %w", err)
	}
	if c.RemoteRetryMin, err = time.ParseDuration(remoteRetry); err != nil {
		return nil, fmt.Errorf("remote retry min: %w", err)
	}
	if err := c.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	return c, c.Validate()
}

// Validate checks the configuration and fills derived defaults.
func (c *Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("data dir is empty"))
	} else if abs, err := filepath.Abs(c.DataDir); err == nil {
		c.DataDir = abs
	}
	if c.KafkaSeeds == "" && c.KafkaLibs == "" {
		errs = append(errs, errors.New("no Kafka: set SVC_KAFKA_SEEDS, or SVC_KAFKA_LIBS for the embedded broker (`go tool task up` does)"))
	}
	if c.ClickHouseURL == "" {
		if c.ChdbLib == "" {
			errs = append(errs, errors.New("no engine: set SVC_CLICKHOUSE_URL, or SVC_CHDB_LIB for embedded engines (`go tool task up` does)"))
		}
		if c.EngineBin == "" {
			if exe, err := os.Executable(); err == nil {
				c.EngineBin = filepath.Join(filepath.Dir(exe), "chengine")
			}
		}
	}
	if m := strings.TrimSpace(c.EngineMemory); m != "" {
		var err error
		if f, ferr := strconv.ParseFloat(m, 64); ferr == nil && f > 0 && f <= 1 {
			c.engineMemoryBytes = clickhouse.MemoryFraction(f) // a fraction of the machine's memory
		} else if c.engineMemoryBytes, err = clickhouse.ParseSize(m); err != nil || c.engineMemoryBytes == 0 {
			errs = append(errs, fmt.Errorf("engine memory %q: want bytes (4GiB), a percentage (25%%) or a fraction of memory (0.5)", m))
		}
	}
	if c.IngestPartitions < 1 || c.IngestPartitions > 1024 {
		errs = append(errs, fmt.Errorf("ingest partitions %d: want 1 to 1024", c.IngestPartitions))
	}
	if t := c.ClusterIdleTimeout; t != 0 && (t < 15 || t > 43200) {
		errs = append(errs, fmt.Errorf("cluster idle timeout %d: want 0 or 15 to 43,200 minutes", t))
	}
	if c.BatchMaxRows < 1 {
		errs = append(errs, fmt.Errorf("batch max rows %d: want at least 1", c.BatchMaxRows))
	}
	if c.BatchLinger < time.Millisecond || c.BatchLinger > time.Minute {
		errs = append(errs, fmt.Errorf("batch linger %s: want 1ms to 1m", c.BatchLinger))
	}
	if c.RemoteInsertTimeout == 0 {
		c.RemoteInsertTimeout = time.Minute
	}
	if c.RemoteRetryMin == 0 {
		c.RemoteRetryMin = 30 * time.Second
	}
	if c.RemoteInsertTimeout < time.Second || c.RemoteInsertTimeout > time.Hour {
		errs = append(errs, fmt.Errorf("remote insert timeout %s: want 1s to 1h", c.RemoteInsertTimeout))
	}
	if c.RemoteRetryMin < time.Second || c.RemoteRetryMin > 10*time.Minute {
		errs = append(errs, fmt.Errorf("remote retry min %s: want 1s to 10m", c.RemoteRetryMin))
	}
	if k := c.BootstrapAPIKey; k != "" && (len(k) < 16 || strings.ContainsAny(k, " \t\r\n")) {
		errs = append(errs, errors.New("bootstrap API key: want at least 16 characters without spaces"))
	}
	return errors.Join(errs...)
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func validTaskQueue(q string) bool {
	if q == "" || len(q) > 100 {
		return false
	}
	for _, r := range q {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
