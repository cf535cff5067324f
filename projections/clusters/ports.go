package clusters

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
)

// The runtime's ports. cmd/svcd implements them over the engine processes
// (infra/clickhouse), the ingest consumers (pipeline, infra/kafka) and the metrics
// store (query/metrics); the unit tests implement them with fakes.

// Engines runs this node's engine process of each cluster.
type Engines interface {
	// Start starts the cluster's engine with limits (or finds it running) and brings its
	// schema and `default` database to the catalog's; every step is idempotent. It
	// returns what the process got.
	Start(ctx context.Context, c *catalog.Cluster, limits EngineLimits) (Resources, error)
	// Stop stops the cluster's engine; nothing when none runs.
	Stop(ctx context.Context, id uuid.UUID) error
	// Load counts the statements running on the cluster's engine now (an engine too
	// busy to answer counts as saturated); ErrRestarting when no engine runs.
	Load(ctx context.Context, c *catalog.Cluster) (int, error)
}

// ErrRestarting: the cluster's engine is not running on this node right now (stopped,
// or restarting for a resize).
var ErrRestarting = errors.New("the cluster's engine is not running here")

// Consumers runs this node's ingest consumer of each cluster.
type Consumers interface {
	// Start ensures the cluster's topics and starts its consumer, after its engine.
	Start(ctx context.Context, c *catalog.Cluster) (Consumer, error)
	// Waiting counts the records in the cluster's ingest topic its consumer group has
	// not committed.
	Waiting(ctx context.Context, id uuid.UUID) (int64, error)
}

// Consumer is one cluster's running consumer.
type Consumer interface {
	// Landed is the rows the consumer landed since it started.
	Landed() int64
	// Shutdown drains: the consumer flushes and commits, then stops; rows not yet
	// landed stay in Kafka.
	Shutdown(ctx context.Context) error
}

// Teardown removes what a cluster leaves behind.
type Teardown interface {
	// RemoveLocal removes the cluster's local data on this node.
	RemoveLocal(id uuid.UUID) error
	// Delete removes a deleting cluster's databases, keys, data and topics, then
	// records it deleted; every step may run again.
	Delete(ctx context.Context, c *catalog.Cluster) error
}

// Usage records the usage of this node's clusters.
type Usage interface {
	// Sample records one observation of a running cluster.
	Sample(ctx context.Context, c *catalog.Cluster, r Resources, landed int64) error
	// Flush stores what was counted and not yet sampled, before the cluster's engine
	// stops.
	Flush(ctx context.Context, id uuid.UUID)
}

// Commands are the control-plane commands the runtime records (*catalog.Service).
type Commands interface {
	ClusterStarted(ctx context.Context, id uuid.UUID) (*catalog.Cluster, error)
	ClusterFailed(ctx context.Context, id uuid.UUID, message string) (*catalog.Cluster, error)
	ClusterStopped(ctx context.Context, id uuid.UUID) (*catalog.Cluster, error)
	StopCluster(ctx context.Context, id uuid.UUID, idle bool) (*catalog.Cluster, error)
	ResumeCluster(ctx context.Context, id uuid.UUID) (*catalog.Cluster, error)
	ResizeCluster(ctx context.Context, id uuid.UUID, from, to catalog.ClusterSize, reason string) error
	// RecordClusterUse shares this node's last use of a cluster with the other nodes.
	RecordClusterUse(ctx context.Context, id uuid.UUID, at time.Time) error
}

// Clusters reads the clusters the control plane records (*catalog.Model).
type Clusters interface {
	Cluster(id uuid.UUID) (*catalog.Cluster, bool)
	AllClusters() []*catalog.Cluster
}

// Resources are what a cluster's engine process got: cores (its max_threads) and
// memory limit in bytes; Measured is false while unknown.
type Resources struct {
	CPU      float64
	Memory   int64
	Measured bool
}
