package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/svc-data/svc/edge"
	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/infra/temporal"
	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/promapi"
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
	// RequestLogDays and WorkflowLogDays are how long the request log and the workflow
	// run log keep entries in each cluster's engine (their TTL, applied at each start).
	RequestLogDays  int
	WorkflowLogDays int
	// KafkaReplication and KafkaMinInSync are the replication factor and
	// min.insync.replicas of the topics svcd creates; 0 leaves each to the brokers'
	// defaults (default.replication.factor, min.insync.replicas).
	KafkaReplication int
	KafkaMinInSync   int
	// KafkaSessionTimeout is how long the consumer group waits for a node that stopped
	// heartbeating before its partitions move; 0 is the client's default (45 s).
	KafkaSessionTimeout time.Duration
	// KafkaSASL* are the credentials svcd presents to KafkaSeeds' brokers: a JSON file
	// ({"mechanism","user","password"}, as the embedded broker writes), or a mechanism,
	// a user and a password (from the environment only). None: no authentication. The
	// embedded broker uses the credentials it generates.
	KafkaSASLFile      string
	KafkaSASLMechanism string
	KafkaSASLUser      string
	KafkaSASLPassword  string

	// ClickHouseURL, when set, points every cluster at an existing ClickHouse server
	// instead of an embedded engine process per cluster.
	ClickHouseURL string
	ChdbLib       string
	EngineBin     string
	EnginePool    int
	EngineMemory  string
	// engineMemoryBytes is EngineMemory read by Validate; 0 keeps the engine's default.
	engineMemoryBytes int64

	// EventStoreURL, when set, keeps control-plane events in PostgreSQL (postgres://...,
	// which several nodes share) or EventStoreDB (esdb://...) instead of the embedded file.
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
	// TrustedProxies are the reverse proxies whose X-Forwarded-For and X-Forwarded-Proto
	// svcd believes (SVC_TRUSTED_PROXIES: CIDRs or addresses); none by default.
	TrustedProxies []netip.Prefix

	BatchMaxRows int
	// BatchMaxBytes closes a batch by the records' bytes (pipeline.ConsumerConfig.MaxBytes).
	BatchMaxBytes int
	BatchLinger   time.Duration
	// BatchMaxSamples and MetricsBatchLinger close batches of Prometheus remote-write
	// records (pipeline.ConsumerConfig.MaxSamples, MetricsLinger).
	BatchMaxSamples    int
	MetricsBatchLinger time.Duration
	// RemoteInsertTimeout bounds an insert into a table on a customer's bucket; one that
	// runs out parks the table for RemoteRetryMin (doubling up to 10 minutes): its rows
	// go to its dead letters meanwhile and its partition's other tables go on.
	RemoteInsertTimeout time.Duration
	RemoteRetryMin      time.Duration

	// DeviceCodeTTL is how long a device login waits for approval.
	DeviceCodeTTL time.Duration
	// ClusterIdleTimeout is a new cluster's idle timeout in minutes when not given.
	ClusterIdleTimeout int
	// ClusterIdleMinute is how long one minute of idle timeout lasts
	// (SVC_CLUSTER_IDLE_MINUTE: a minute; tests shorten it).
	ClusterIdleMinute time.Duration
	// AutoscaleInterval is how often each cluster's load is checked for autoscaling
	// (SVC_AUTOSCALE_INTERVAL, default 15s).
	AutoscaleInterval time.Duration
	// MetricsInterval is how often each running cluster is sampled
	// (SVC_METRICS_INTERVAL, default 15s).
	MetricsInterval time.Duration
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
	// TemporalTLS are the mutual-TLS files for TemporalAddr (an operator's cluster).
	TemporalTLS temporal.TLSFiles
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
	// GRPCStreams bounds OTLP/gRPC exports in flight per connection and per key.
	GRPCStreams int
	// PromQLTimeout and PromQLMaxSamples bound a Prometheus-app query's evaluation time
	// and the samples it holds at once (promapi.Config).
	PromQLTimeout    time.Duration
	PromQLMaxSamples int
	// PromQLMaxSteps bounds a query's evaluation steps, subqueries' included, checked on
	// the parsed query before it runs (promapi.EvalSteps).
	PromQLMaxSteps int64
	// PromQLMaxConcurrent and PromQLMaxConcurrentPerOrg bound the Prometheus-app
	// requests served at once on the node and per organization; more wait up to
	// PromQLQueueWait, then get 503.
	PromQLMaxConcurrent       int
	PromQLMaxConcurrentPerOrg int
	PromQLQueueWait           time.Duration
	// PromQLQueryBytes and PromQLOrgBytes bound the bytes of series and samples one
	// query, and one organization's queries together, load from the engine (read by
	// Validate from PromQLQueryMemory and PromQLOrgMemory).
	PromQLQueryMemory, PromQLOrgMemory string
	PromQLQueryBytes, PromQLOrgBytes   int64
	// PromQLPushdown computes rate, increase, delta, count_over_time and last_over_time
	// in the engine on the query's step grid (promapi.NewPushdownEngine); off, the
	// upstream engine computes them over raw samples.
	PromQLPushdown bool
	// MemoryLimit is svcd's soft memory limit (debug.SetMemoryLimit): bytes (2GiB), a
	// percentage (25%) or a fraction (0.5) of the machine's memory or cgroup limit, or
	// "off". Empty keeps $GOMEMLIMIT when set, else half the machine's memory. Read by
	// Validate into memoryLimitBytes (0: leave the runtime's limit as it is).
	MemoryLimit      string
	memoryLimitBytes int64
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
	str(&c.KafkaSASLFile, "kafka-sasl-file", "SVC_KAFKA_SASL_FILE", "", "JSON file of the SASL credentials for SVC_KAFKA_SEEDS: {\"mechanism\",\"user\",\"password\"}")
	str(&c.KafkaSASLMechanism, "kafka-sasl-mechanism", "SVC_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512", "SASL mechanism for SVC_KAFKA_SEEDS with SVC_KAFKA_SASL_USER: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	str(&c.KafkaSASLUser, "kafka-sasl-user", "SVC_KAFKA_SASL_USER", "", "SASL user for SVC_KAFKA_SEEDS (password in $SVC_KAFKA_SASL_PASSWORD)")
	c.KafkaSASLPassword = os.Getenv("SVC_KAFKA_SASL_PASSWORD") // never a flag: argv is public on the machine
	str(&c.ClickHouseURL, "clickhouse-url", "SVC_CLICKHOUSE_URL", "", "existing ClickHouse HTTP address; empty runs an embedded engine per cluster")
	str(&c.ChdbLib, "chdb-lib", "SVC_CHDB_LIB", "", "path of libchdb.so for embedded engines")
	str(&c.EngineBin, "engine-bin", "SVC_ENGINE_BIN", "", "path of the chengine binary (default: beside svcd)")
	str(&c.EngineMemory, "engine-memory", "SVC_ENGINE_MEMORY", "", "memory limit of each embedded engine, e.g. 4GiB, 25% or 0.5 (of RAM)")
	str(&c.EventStoreURL, "eventstore-url", "SVC_EVENTSTORE_URL", "", "PostgreSQL (postgres://...) or EventStoreDB (esdb://...) connection string; empty uses the embedded store")
	str(&c.BootstrapAPIKey, "bootstrap-api-key", "SVC_BOOTSTRAP_API_KEY", "", "admin API key created at the first start")
	str(&c.BootstrapOrg, "bootstrap-org", "SVC_BOOTSTRAP_ORG", "default", "organization created at the first start")
	str(&c.BootstrapUser, "bootstrap-user", "SVC_BOOTSTRAP_USER", "admin", "administrator user created at the first start")
	str(&c.BootstrapPassword, "bootstrap-password", "SVC_BOOTSTRAP_PASSWORD", "", "that user's password (default: generated)")
	c.ServiceSecret = os.Getenv("SVC_SERVICE_SECRET") // never a flag: argv is public on the machine
	str(&c.PublicURL, "public-url", "SVC_PUBLIC_URL", "", "address users reach the service at (default: the listen address)")
	var proxies string
	str(&proxies, "trusted-proxies", "SVC_TRUSTED_PROXIES", "", "reverse proxies (CIDRs or addresses, comma-separated) whose X-Forwarded-For and X-Forwarded-Proto are believed; empty believes none")
	str(&c.Workflows, "workflows", "SVC_WORKFLOWS", "on", "on, or off to disable the workflow service")
	str(&c.TemporalAddr, "temporal-addr", "SVC_TEMPORAL_ADDR", "", "existing Temporal frontend host:port; empty runs the embedded server")
	str(&c.TemporalNamespace, "temporal-namespace", "SVC_TEMPORAL_NAMESPACE", "svc", "Temporal namespace of workflow runs")
	str(&c.TemporalTaskQueue, "temporal-task-queue", "SVC_TEMPORAL_TASK_QUEUE", "svc-workflows", "Temporal task queue of this deployment's workers (letters, digits, '_' and '-')")
	str(&c.TemporalTLS.Cert, "temporal-tls-cert", "SVC_TEMPORAL_TLS_CERT", "", "client certificate (PEM) for SVC_TEMPORAL_ADDR's mutual TLS")
	str(&c.TemporalTLS.Key, "temporal-tls-key", "SVC_TEMPORAL_TLS_KEY", "", "that certificate's private key (PEM file)")
	str(&c.TemporalTLS.CA, "temporal-tls-ca", "SVC_TEMPORAL_TLS_CA", "", "CA certificate (PEM) the Temporal server's certificate is checked against (default: the system's)")
	str(&c.TemporalTLS.ServerName, "temporal-tls-server-name", "SVC_TEMPORAL_TLS_SERVER_NAME", "", "name checked in the Temporal server's certificate (default: SVC_TEMPORAL_ADDR's host)")
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
	intFlag(&c.RequestLogDays, "request-log-days", "SVC_REQUEST_LOG_DAYS", 30, "days the request log keeps entries")
	intFlag(&c.WorkflowLogDays, "workflow-log-days", "SVC_WORKFLOW_LOG_DAYS", 30, "days workflow run logs are kept")
	intFlag(&c.KafkaReplication, "kafka-replication", "SVC_KAFKA_REPLICATION", 0, "replication factor of the topics svcd creates; 0 is the brokers' default.replication.factor")
	intFlag(&c.KafkaMinInSync, "kafka-min-insync-replicas", "SVC_KAFKA_MIN_INSYNC_REPLICAS", 0, "min.insync.replicas of the topics svcd creates; 0 is the brokers' default")
	intFlag(&c.EnginePool, "engine-pool", "SVC_ENGINE_POOL", 4, "engine connections per embedded engine")
	intFlag(&c.BatchMaxRows, "batch-max-rows", "SVC_BATCH_MAX_ROWS", 100_000, "rows that close a batch")
	intFlag(&c.BatchMaxBytes, "batch-max-bytes", "SVC_BATCH_MAX_BYTES", pipeline.DefaultMaxBytes, "bytes of records that close a batch: 1 MiB to 1 GiB")
	intFlag(&c.BatchMaxSamples, "batch-max-samples", "SVC_BATCH_MAX_SAMPLES", 1_000_000, "Prometheus samples that close a batch")
	intFlag(&c.ClusterIdleTimeout, "cluster-idle-timeout", "SVC_CLUSTER_IDLE_TIMEOUT", 0, "idle timeout of new clusters in minutes: 0 or 15 to 43200")
	durFlag := func(p *time.Duration, name, env string, def time.Duration, usage string) {
		v := def
		if s := os.Getenv(env); s != "" {
			d, perr := time.ParseDuration(s)
			if perr != nil {
				envErrs = append(envErrs, fmt.Errorf("$%s: %w", env, perr))
			} else {
				v = d
			}
		}
		fs.DurationVar(p, name, v, usage+" ($"+env+")")
	}
	durFlag(&c.ClusterIdleMinute, "cluster-idle-minute", "SVC_CLUSTER_IDLE_MINUTE", time.Minute, "how long one minute of cluster idle timeout lasts (tests shorten it)")
	durFlag(&c.KafkaSessionTimeout, "kafka-session-timeout", "SVC_KAFKA_SESSION_TIMEOUT", 0, "how long the consumer group waits for a node that stopped heartbeating before its partitions move; 0 is 45 s (within the brokers' group.min/max.session.timeout.ms)")
	durFlag(&c.AutoscaleInterval, "autoscale-interval", "SVC_AUTOSCALE_INTERVAL", 15*time.Second, "how often each cluster's load is checked for autoscaling")
	durFlag(&c.MetricsBatchLinger, "metrics-batch-linger", "SVC_METRICS_BATCH_LINGER", time.Second, "time that closes a batch of Prometheus remote-write records only")
	durFlag(&c.MetricsInterval, "metrics-interval", "SVC_METRICS_INTERVAL", 15*time.Second, "how often each running cluster's metrics are sampled")
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
	intFlag(&c.GRPCStreams, "grpc-streams", "SVC_GRPC_STREAMS", 8, "OTLP/gRPC exports in flight per connection and per key")
	ingestWait := envOr("SVC_INGEST_WAIT", "2s")
	fs.StringVar(&ingestWait, "ingest-wait", ingestWait, "how long an insert waits for a slot before 503 ($SVC_INGEST_WAIT)")
	intFlag(&c.PromQLMaxSamples, "promql-max-samples", "SVC_PROMQL_MAX_SAMPLES", 50_000_000, "samples a PromQL query may hold at once")
	int64Flag := func(p *int64, name, env string, def int64, usage string) {
		v := def
		if s := os.Getenv(env); s != "" {
			n, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil {
				envErrs = append(envErrs, fmt.Errorf("$%s: %w", env, perr))
			} else {
				v = n
			}
		}
		fs.Int64Var(p, name, v, usage+" ($"+env+")")
	}
	int64Flag(&c.PromQLMaxSteps, "promql-max-steps", "SVC_PROMQL_MAX_STEPS", promapi.DefaultMaxSteps, "evaluation steps a PromQL query may take, subqueries' included (nested ones multiply)")
	intFlag(&c.PromQLMaxConcurrent, "promql-max-concurrent", "SVC_PROMQL_MAX_CONCURRENT", promapi.DefaultMaxConcurrent, "Prometheus-app requests served at once on this node")
	intFlag(&c.PromQLMaxConcurrentPerOrg, "promql-max-concurrent-per-org", "SVC_PROMQL_MAX_CONCURRENT_PER_ORG", promapi.DefaultMaxConcurrentPerOrg,
		"Prometheus-app requests one organization may have served at once")
	promWait := envOr("SVC_PROMQL_QUEUE_WAIT", promapi.DefaultConcurrencyWait.String())
	fs.StringVar(&promWait, "promql-queue-wait", promWait, "how long a Prometheus-app request waits for a slot before 503 ($SVC_PROMQL_QUEUE_WAIT)")
	str(&c.PromQLQueryMemory, "promql-query-memory", "SVC_PROMQL_QUERY_MEMORY", "", "bytes of series and samples one PromQL query may load from the engine (default 512MiB)")
	str(&c.PromQLOrgMemory, "promql-org-memory", "SVC_PROMQL_ORG_MEMORY", "", "bytes of series and samples one organization's PromQL queries may hold at once (default 1GiB)")
	str(&c.MemoryLimit, "memory-limit", "SVC_MEMORY_LIMIT", "", "svcd's soft memory limit: 2GiB, 25% or 0.5 of memory, or off (default: $GOMEMLIMIT, else half the memory)")
	pushdown, perr := strconv.ParseBool(envOr("SVC_PROMQL_PUSHDOWN", "true"))
	if perr != nil {
		envErrs = append(envErrs, fmt.Errorf("$SVC_PROMQL_PUSHDOWN: %w", perr))
	}
	fs.BoolVar(&c.PromQLPushdown, "promql-pushdown", pushdown, "compute rate, increase, delta, count_over_time and last_over_time in the engine on the step grid ($SVC_PROMQL_PUSHDOWN)")
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
	if c.TrustedProxies, err = edge.ParseTrustedProxies(proxies); err != nil {
		return nil, fmt.Errorf("trusted proxies %q: want CIDRs or addresses, comma-separated: %w", proxies, err)
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
	if c.PromQLQueueWait, err = time.ParseDuration(promWait); err != nil {
		return nil, fmt.Errorf("promql queue wait %q: want a duration", promWait)
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
	// The service logs' retention: unset (zero) takes the default, as the intervals below.
	if c.RequestLogDays == 0 {
		c.RequestLogDays = 30
	}
	if c.WorkflowLogDays == 0 {
		c.WorkflowLogDays = 30
	}
	if c.RequestLogDays < 1 || c.RequestLogDays > 3650 {
		errs = append(errs, fmt.Errorf("request log days %d: want 1 to 3650", c.RequestLogDays))
	}
	if c.WorkflowLogDays < 1 || c.WorkflowLogDays > 3650 {
		errs = append(errs, fmt.Errorf("workflow log days %d: want 1 to 3650", c.WorkflowLogDays))
	}
	if c.KafkaReplication < 0 || c.KafkaReplication > 32 {
		errs = append(errs, fmt.Errorf("kafka replication %d: want 1 to 32, or 0 for the brokers' default", c.KafkaReplication))
	}
	if c.KafkaSessionTimeout < 0 || c.KafkaSessionTimeout > 30*time.Minute {
		errs = append(errs, fmt.Errorf("kafka session timeout %s: want 0 (45 s) to 30m", c.KafkaSessionTimeout))
	}
	if c.KafkaMinInSync < 0 || c.KafkaReplication > 0 && c.KafkaMinInSync > c.KafkaReplication {
		errs = append(errs, fmt.Errorf("kafka min.insync.replicas %d: want at most the replication factor, or 0 for the brokers' default", c.KafkaMinInSync))
	}
	if t := c.ClusterIdleTimeout; catalog.CheckIdleTimeout(t) != nil {
		errs = append(errs, fmt.Errorf("cluster idle timeout %d: want 0 or 15 to 43,200 minutes", t))
	}
	// The cluster runtime's intervals: unset (zero) takes the default.
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"cluster idle minute", &c.ClusterIdleMinute, time.Minute}, {"autoscale interval", &c.AutoscaleInterval, 15 * time.Second},
		{"metrics interval", &c.MetricsInterval, 15 * time.Second}} {
		switch {
		case *d.v == 0:
			*d.v = d.def
		case *d.v < 0:
			errs = append(errs, fmt.Errorf("%s %s: want a positive duration", d.name, *d.v))
		}
	}
	if c.BatchMaxRows < 1 {
		errs = append(errs, fmt.Errorf("batch max rows %d: want at least 1", c.BatchMaxRows))
	}
	if c.BatchMaxBytes == 0 {
		c.BatchMaxBytes = pipeline.DefaultMaxBytes
	}
	if c.BatchMaxBytes < 1<<20 || c.BatchMaxBytes > 1<<30 {
		errs = append(errs, fmt.Errorf("batch max bytes %d: want 1 MiB (1048576) to 1 GiB (1073741824)", c.BatchMaxBytes))
	}
	if c.BatchLinger < time.Millisecond || c.BatchLinger > time.Minute {
		errs = append(errs, fmt.Errorf("batch linger %s: want 1ms to 1m", c.BatchLinger))
	}
	if c.BatchMaxSamples == 0 {
		c.BatchMaxSamples = 1_000_000
	}
	if c.MetricsBatchLinger == 0 {
		c.MetricsBatchLinger = time.Second
	}
	if c.BatchMaxSamples < 1 {
		errs = append(errs, fmt.Errorf("batch max samples %d: want at least 1", c.BatchMaxSamples))
	}
	if c.MetricsBatchLinger < time.Millisecond || c.MetricsBatchLinger > time.Minute {
		errs = append(errs, fmt.Errorf("metrics batch linger %s: want 1ms to 1m", c.MetricsBatchLinger))
	}
	errs = append(errs, c.validatePromQL()...)
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

// validatePromQL checks the Prometheus-app query limits and svcd's memory limit, reads
// the sizes, and gives what is unset (zero) promapi's default.
func (c *Config) validatePromQL() []error {
	var errs []error
	if c.PromQLMaxSteps == 0 {
		c.PromQLMaxSteps = promapi.DefaultMaxSteps
	}
	if c.PromQLMaxConcurrent == 0 {
		c.PromQLMaxConcurrent = promapi.DefaultMaxConcurrent
	}
	if c.PromQLMaxConcurrentPerOrg == 0 {
		c.PromQLMaxConcurrentPerOrg = min(promapi.DefaultMaxConcurrentPerOrg, c.PromQLMaxConcurrent)
	}
	if c.PromQLQueueWait == 0 {
		c.PromQLQueueWait = promapi.DefaultConcurrencyWait
	}
	if c.PromQLMaxSteps < 1 {
		errs = append(errs, fmt.Errorf("promql max steps %d: want at least 1", c.PromQLMaxSteps))
	}
	if c.PromQLMaxConcurrent < 1 || c.PromQLMaxConcurrentPerOrg < 1 || c.PromQLMaxConcurrentPerOrg > c.PromQLMaxConcurrent {
		errs = append(errs, fmt.Errorf("promql max concurrent %d and per organization %d: want at least 1, per organization at most the node's",
			c.PromQLMaxConcurrent, c.PromQLMaxConcurrentPerOrg))
	}
	if c.PromQLQueueWait < 0 || c.PromQLQueueWait > time.Minute {
		errs = append(errs, fmt.Errorf("promql queue wait %s: want at most 1m (0 is the default, 5s)", c.PromQLQueueWait))
	}
	size := func(name, s string, def int64) int64 {
		if strings.TrimSpace(s) == "" {
			return def
		}
		n, err := clickhouse.ParseSize(strings.TrimSpace(s))
		if err != nil || n < 1<<20 {
			errs = append(errs, fmt.Errorf("%s %q: want bytes of at least 1MiB, e.g. 512MiB", name, s))
		}
		return n
	}
	c.PromQLQueryBytes = size("promql query memory", c.PromQLQueryMemory, promapi.DefaultQueryBytes)
	c.PromQLOrgBytes = size("promql org memory", c.PromQLOrgMemory, promapi.DefaultOrgBytes)
	if c.PromQLQueryBytes > c.PromQLOrgBytes {
		errs = append(errs, fmt.Errorf("promql query memory (%d MiB) is more than the organization's (%d MiB): want at most it",
			c.PromQLQueryBytes>>20, c.PromQLOrgBytes>>20))
	}
	switch m := strings.TrimSpace(c.MemoryLimit); {
	case m == "off":
		c.memoryLimitBytes = 0
	case m == "" && os.Getenv("GOMEMLIMIT") != "":
		c.memoryLimitBytes = 0 // the runtime read it
	case m == "":
		c.memoryLimitBytes = clickhouse.MemoryFraction(0.5)
	default:
		var err error
		if f, ferr := strconv.ParseFloat(m, 64); ferr == nil && f > 0 && f <= 1 {
			c.memoryLimitBytes = clickhouse.MemoryFraction(f)
		} else if c.memoryLimitBytes, err = clickhouse.ParseSize(m); err != nil || c.memoryLimitBytes < 64<<20 {
			errs = append(errs, fmt.Errorf("memory limit %q: want bytes of at least 64MiB (2GiB), a percentage (25%%), a fraction of memory (0.5) or off", m))
		}
	}
	return errs
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

// kafkaConn is how svcd reaches KafkaSeeds' brokers; no seeds when svcd runs its own.
func (c *Config) kafkaConn() (kafka.Conn, error) {
	conn := kafka.Conn{Seeds: kafka.ParseSeeds(c.KafkaSeeds)}
	if len(conn.Seeds) == 0 {
		return conn, nil
	}
	switch {
	case c.KafkaSASLFile != "":
		s, err := kafka.ReadCredentials(c.KafkaSASLFile)
		if err != nil {
			return kafka.Conn{}, err
		}
		conn.SASL = s
	case c.KafkaSASLUser != "":
		conn.SASL = kafka.SASL{Mechanism: c.KafkaSASLMechanism, User: c.KafkaSASLUser, Password: c.KafkaSASLPassword}
		if err := conn.SASL.Validate(); err != nil {
			return kafka.Conn{}, fmt.Errorf("%w (SVC_KAFKA_SASL_USER, SVC_KAFKA_SASL_PASSWORD, SVC_KAFKA_SASL_MECHANISM)", err)
		}
	}
	return conn, nil
}
