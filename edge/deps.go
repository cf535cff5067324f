package edge

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/requestlog"
	"github.com/svc-data/svc/query/tables"
	"github.com/svc-data/svc/workflows"
	"github.com/svc-data/svc/workflows/alerts"
)

// The edge's dependencies as the edge needs them: each interface names only the
// methods the handlers call, so the edge depends on no concrete type of the layers
// below (cmd/svcd asserts the real ones satisfy them) and its tests can hand in what
// they like.

// CatalogModel is the catalog's read model (catalog.Model).
type CatalogModel interface {
	Organization(id uuid.UUID) (*catalog.Organization, bool)
	Membership(org, user uuid.UUID) (*catalog.Membership, bool)
	Members(org uuid.UUID) []*catalog.Membership
	User(id uuid.UUID) (*catalog.User, bool)
	UserByName(name string) (*catalog.User, bool)
	UserOrganizations(user uuid.UUID) []*catalog.Organization
	HomeOrganization(user uuid.UUID) (*catalog.Organization, bool)
	IsOperator(user uuid.UUID) bool
	Invitations(org uuid.UUID, username string) []*catalog.Invitation
	UserInvitations(user uuid.UUID) []*catalog.Invitation
	SessionByHash(hash string) (*catalog.Session, bool)
	DeviceByCodeHash(hash string) (*catalog.Device, bool)
	DeviceByUserCode(code string) (*catalog.Device, bool)
	APIKey(id uuid.UUID) (*catalog.APIKey, bool)
	APIKeyByHash(hash string) (*catalog.APIKey, bool)
	APIKeys(cluster uuid.UUID) []*catalog.APIKey
	Cluster(id uuid.UUID) (*catalog.Cluster, bool)
	Clusters(org uuid.UUID) []*catalog.Cluster
	AllClusters() []*catalog.Cluster
	AppInstalled(cluster uuid.UUID, app string) bool
	AppRetention(cluster uuid.UUID, app string) string
	Database(cluster uuid.UUID, name string) (*catalog.Database, bool)
	Databases(cluster uuid.UUID) []*catalog.Database
	Table(cluster uuid.UUID, database, name string) (*catalog.Table, bool)
	Tables(cluster uuid.UUID, database string) []*catalog.Table
	Paths(table uuid.UUID) map[string][]string
	SavedSearch(id uuid.UUID) (*catalog.SavedSearch, bool)
	SavedSearches(org, cluster uuid.UUID) []*catalog.SavedSearch
}

// CatalogCommands changes the catalog (catalog.Service).
type CatalogCommands interface {
	Authenticate(username, password string) (*catalog.User, error)
	CreateUser(ctx context.Context, username, name, password string) (*catalog.User, error)
	CreateSession(ctx context.Context, user uuid.UUID, kind, scope string, ttl time.Duration) (*catalog.Session, string, error)
	RevokeSession(ctx context.Context, id uuid.UUID) error
	RequestDevice(ctx context.Context, clientID, scope string) (*catalog.Device, string, error)
	DecideDevice(ctx context.Context, id, user uuid.UUID, approve bool) error
	IssueDeviceToken(ctx context.Context, id uuid.UUID) (*catalog.Session, string, error)
	CreateOrganizationBy(ctx context.Context, name string, creator uuid.UUID) (*catalog.Organization, error)
	RenameOrganization(ctx context.Context, id uuid.UUID, name string) (*catalog.Organization, error)
	DeleteOrganization(ctx context.Context, id uuid.UUID) error
	SetMember(ctx context.Context, org, user uuid.UUID, role string) error
	RemoveMember(ctx context.Context, org, user uuid.UUID) error
	Invite(ctx context.Context, org uuid.UUID, username string, by uuid.UUID, role string) (*catalog.Invitation, error)
	AnswerInvitation(ctx context.Context, id uuid.UUID, user *catalog.User, accept bool) (*catalog.Invitation, error)
	RevokeInvitation(ctx context.Context, org, id uuid.UUID) error
	CreateAPIKey(ctx context.Context, nk catalog.NewAPIKey) (*catalog.APIKey, string, error)
	DeleteAPIKey(ctx context.Context, id uuid.UUID) error
	CreateClusterWith(ctx context.Context, spec catalog.ClusterCreated) (*catalog.Cluster, error)
	UpdateCluster(ctx context.Context, id uuid.UUID, u catalog.ClusterUpdate) (*catalog.Cluster, error)
	StopCluster(ctx context.Context, id uuid.UUID, idle bool) (*catalog.Cluster, error)
	ResumeCluster(ctx context.Context, id uuid.UUID) (*catalog.Cluster, error)
	RequestClusterDelete(ctx context.Context, id uuid.UUID) (*catalog.Cluster, error)
	SetApp(ctx context.Context, cluster uuid.UUID, app string, on bool) error
	SaveSearch(ctx context.Context, ss catalog.SavedSearch) (*catalog.SavedSearch, error)
	DeleteSearch(ctx context.Context, id uuid.UUID) error
	// Sync waits until the read model has caught up with every event appended so far.
	Sync(ctx context.Context) error
}

// TableManager creates, changes and drops databases and tables in the catalog and the
// engine together (tables.Manager).
type TableManager interface {
	CreateDatabase(ctx context.Context, org, cluster uuid.UUID, name string, s3 *catalog.S3Storage) (*catalog.Database, error)
	DropDatabase(ctx context.Context, cluster uuid.UUID, name string) error
	CreateTable(ctx context.Context, org, cluster uuid.UUID, database, name, key, columnType string, retention *string) (*catalog.Table, error)
	ChangeSortingKey(ctx context.Context, cluster uuid.UUID, database, name, key string) (*catalog.Table, error)
	ChangeRetention(ctx context.Context, cluster uuid.UUID, database, name, retention string) (*catalog.Table, error)
	SetDatabaseRetention(ctx context.Context, cluster uuid.UUID, database, retention string) (*catalog.Database, error)
	ReadRetention(ctx context.Context, cluster uuid.UUID, tables []*catalog.Table) map[uuid.UUID]tables.RetentionState
	SetAppRetention(ctx context.Context, cluster uuid.UUID, app, retention string) ([]tables.AppTableRetention, error)
	DropTable(ctx context.Context, cluster uuid.UUID, database, name string) error
	VerifyStorage(ctx context.Context, s3 catalog.S3Storage, bucketTag string) (catalog.StorageVerification, error)
	AdmitStorage(ctx context.Context, s3 *catalog.S3Storage, access *catalog.DatabaseS3Access) error
	ClaimStorage(s3 *catalog.S3Storage, create func() error) error
}

// RequestLog records API requests and reads them back (requestlog.Log).
type RequestLog interface {
	Record(e requestlog.Entry)
	Query(ctx context.Context, org, cluster uuid.UUID, f requestlog.Filter) (requestlog.Page, error)
}

// AlertService is the alert API's domain (alerts.Service).
type AlertService interface {
	// Available answers workflows.ErrDisabled when workflows (and so alerts) are off.
	Available(ctx context.Context) error
	List(ctx context.Context, cluster uuid.UUID) []alerts.View
	Alert(cluster, id uuid.UUID) (*catalog.Alert, bool)
	View(ctx context.Context, a *catalog.Alert) alerts.View
	// Create and Update ask may whether the caller may query in the alert's language.
	Create(ctx context.Context, org, cluster uuid.UUID, body []byte, may alerts.Permit) (alerts.View, error)
	Update(ctx context.Context, a *catalog.Alert, body []byte, may alerts.Permit) (alerts.View, error)
	Silence(ctx context.Context, a *catalog.Alert, until *time.Time) (alerts.View, error)
	Delete(ctx context.Context, a *catalog.Alert) error
	History(ctx context.Context, a *catalog.Alert, limit int) ([]alerts.HistoryEntry, error)
	// Rules are the PromQL alerts over a database as Prometheus's rule groups.
	Rules(ctx context.Context, cluster uuid.UUID, database string) []alerts.RuleGroup
	// EvaluationStats are this node's evaluation counters, for GET /metrics.
	EvaluationStats() alerts.EvalStats
}

// WorkflowService is the workflow API's domain (workflows.Service).
type WorkflowService interface {
	// Available answers workflows.ErrDisabled when workflows are off.
	Available(ctx context.Context) error
	List(cluster uuid.UUID) []workflows.View
	Workflow(cluster, id uuid.UUID) (*catalog.Workflow, bool)
	View(w *catalog.Workflow) workflows.View
	Create(ctx context.Context, org, cluster uuid.UUID, body []byte) (workflows.View, error)
	Update(ctx context.Context, w *catalog.Workflow, body []byte) (workflows.View, error)
	Delete(ctx context.Context, w *catalog.Workflow) error
	StartRun(ctx context.Context, w *catalog.Workflow, key string) (workflows.Run, error)
	CancelRun(ctx context.Context, w *catalog.Workflow, runID string) error
	Runs(ctx context.Context, w *catalog.Workflow, limitArg, cursor string) (workflows.RunsPage, error)
	Logs(ctx context.Context, w *catalog.Workflow, win workflows.Window, limitArg, cursor string) (workflows.LogPage, error)
	Metrics(ctx context.Context, w *catalog.Workflow, win workflows.Window) (workflows.Metrics, error)
}
