package catalog

import (
	"time"

	"github.com/google/uuid"
)

// Event type names. They are stored with every event and must never change; a new shape
// gets a new name.
const (
	EvOrganizationCreated = "organization.created"
	EvClusterCreated      = "cluster.created"
	EvDatabaseCreated     = "database.created"
	EvDatabaseDeleted     = "database.deleted"
	EvTableCreated        = "table.created"
	EvTableKeyChanged     = "table.sorting_key_changed"
	EvGenerationCreated   = "table.generation_created"
	EvGenerationResorted  = "table.generation_resorted"
	EvTableDeleted        = "table.deleted"
	EvAPIKeyCreated       = "api_key.created"
	EvAPIKeyDeleted       = "api_key.deleted"
)

// Stream names. An aggregate's stream name is derived from its identity so that
// uniqueness (one database of a name per cluster) is enforced by expected versions.
func orgStream(id uuid.UUID) string     { return "organization-" + id.String() }
func clusterStream(id uuid.UUID) string { return "cluster-" + id.String() }
func databaseStream(cluster uuid.UUID, name string) string {
	return "database-" + cluster.String() + "-" + name
}
func apiKeyStream(id uuid.UUID) string { return "api_key-" + id.String() }

// OrganizationCreated records a new organization.
type OrganizationCreated struct {
	ID        uuid.UUID `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// ClusterCreated records a new cluster of an organization.
type ClusterCreated struct {
	ID        uuid.UUID `json:"id"`
	OrgID     uuid.UUID `json:"org_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	// Shape of the cluster; zero values come from clusters made before these fields.
	Replicas           int               `json:"replicas,omitempty"`
	Size               ClusterSize       `json:"size"`
	MinSize            ClusterSize       `json:"min_size"`
	MaxSize            ClusterSize       `json:"max_size"`
	IdleTimeoutMinutes int               `json:"idle_timeout_minutes"`
	S3                 *S3Storage        `json:"s3_storage,omitempty"`
	DatabaseS3Access   *DatabaseS3Access `json:"database_s3_access,omitempty"`
	// AppsTracked marks clusters created with an apps stream of their own (none
	// installed); clusters made before apps existed are adopted once (AdoptApps).
	AppsTracked bool `json:"apps_tracked,omitempty"`
}

// ClusterSize is a (cpu cores, memory) pair of the size catalog.
type ClusterSize struct {
	CPUCores  float64 `json:"cpu_cores"`
	MemoryGiB float64 `json:"memory_gib"`
}

// DatabaseS3Access lets a cluster's databases use their own buckets.
type DatabaseS3Access struct {
	ExternalID        string `json:"external_id"`
	DatabaseBucketTag string `json:"database_bucket_tag"`
}

// DatabaseCreated records a logical database on a cluster.
type DatabaseCreated struct {
	OrgID     uuid.UUID  `json:"org_id"`
	ClusterID uuid.UUID  `json:"cluster_id"`
	Name      string     `json:"name"`
	Engine    string     `json:"engine"`
	S3        *S3Storage `json:"s3_storage,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

// DatabaseDeleted records that a database and its tables are gone.
type DatabaseDeleted struct {
	ClusterID uuid.UUID `json:"cluster_id"`
	Name      string    `json:"name"`
}

// TableCreated records a new table in a database.
type TableCreated struct {
	ID         uuid.UUID `json:"id"`
	ClusterID  uuid.UUID `json:"cluster_id"`
	Database   string    `json:"database"`
	Name       string    `json:"name"`
	SortingKey string    `json:"sorting_key"`
	// ColumnType is the engine type of the document column, "JSON" unless an app
	// declares typed paths.
	ColumnType string    `json:"column_type"`
	CreatedAt  time.Time `json:"created_at"`
	// Retention is the table's retention as the API takes it ("30d", "ts + INTERVAL 30
	// DAY"), empty to keep rows forever (query/tables.ParseRetention).
	Retention string `json:"retention,omitempty"`
}

// TableKeyChanged records a new logical sorting key for rows inserted from now on.
type TableKeyChanged struct {
	TableID    uuid.UUID `json:"table_id"`
	Database   string    `json:"database"`
	Name       string    `json:"name"`
	SortingKey string    `json:"sorting_key"`
}

// GenerationCreated records a new physical table of a table; new rows go to the highest.
type GenerationCreated struct {
	TableID  uuid.UUID `json:"table_id"`
	Database string    `json:"database"`
	Name     string    `json:"name"`
	N        int       `json:"n"`
	// LogicalKey is the sorting key the generation was compiled from; PhysicalKey the
	// engine ORDER BY expression list it got.
	LogicalKey  string `json:"logical_key"`
	PhysicalKey string `json:"physical_key"`
	// ChosenKey is the key the table chose from the data when its key is automatic.
	ChosenKey string    `json:"chosen_key,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// GenerationResorted records that an older generation was re-sorted into a newer key.
type GenerationResorted struct {
	TableID     uuid.UUID `json:"table_id"`
	Database    string    `json:"database"`
	Name        string    `json:"name"`
	N           int       `json:"n"`
	PhysicalKey string    `json:"physical_key"`
}

// TableDeleted records that a table and its data are gone.
type TableDeleted struct {
	TableID  uuid.UUID `json:"table_id"`
	Database string    `json:"database"`
	Name     string    `json:"name"`
}

// APIKeyCreated records a new API key. Only the token's hash is stored.
type APIKeyCreated struct {
	ID              uuid.UUID  `json:"id"`
	OrgID           uuid.UUID  `json:"org_id"`
	ClusterID       uuid.UUID  `json:"cluster_id"`
	Name            string     `json:"name"`
	Permission      string     `json:"permission,omitempty"`
	Roles           []string   `json:"database_roles,omitempty"`
	DefaultDatabase string     `json:"default_database"`
	TokenHash       string     `json:"token_hash"`
	TokenHint       string     `json:"token_hint"`
	ExpiresAt       *time.Time `json:"expires_at,omitempty"`
	CreatedAt       time.Time  `json:"created_at"`
}

// APIKeyDeleted records that a key no longer authenticates.
type APIKeyDeleted struct {
	ID uuid.UUID `json:"id"`
}
