package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// Values returned by the read model are shared and immutable: apply replaces them,
// never changes them in place. Callers must not modify them.

// Organization is a tenant.
type Organization struct {
	ID        uuid.UUID
	Name      string
	CreatedAt time.Time
}

// Cluster is a set of engine resources of an organization.
type Cluster struct {
	ID                 uuid.UUID
	OrgID              uuid.UUID
	Name               string
	CreatedAt          time.Time
	Replicas           int
	Size               ClusterSize
	MinSize, MaxSize   ClusterSize
	IdleTimeoutMinutes int
	S3                 *S3Storage
	DatabaseS3Access   *DatabaseS3Access
	// AppsTracked: the cluster was created with apps (none installed); see AdoptApps.
	AppsTracked bool
	// Lifecycle (clusters.go): phase, its message, whether the idle timeout stopped it,
	// and when the phase began.
	Phase, Message string
	IdleStopped    bool
	PhaseAt        time.Time
	// LastUsedAt is the latest use any node recorded (ClusterUsed).
	LastUsedAt time.Time
}

// S3Location is a bucket and a path inside it.
type S3Location struct {
	Bucket string `json:"bucket"`
	Path   string `json:"path"`
}

// S3Storage is a customer-owned storage override. RoleARN and ExternalID are stored for
// the engine but never returned by the API.
type S3Storage struct {
	Data       S3Location `json:"data"`
	Backups    S3Location `json:"backups"`
	RoleARN    string     `json:"role_arn,omitempty"`
	ExternalID string     `json:"external_id,omitempty"`
}

// Database is a logical database on a cluster.
type Database struct {
	OrgID     uuid.UUID
	ClusterID uuid.UUID
	Name      string
	// Engine is the engine database the logical name maps to.
	Engine    string
	S3        *S3Storage
	CreatedAt time.Time
	// Retention is the default retention of tables created in the database from now on.
	Retention string
}

// Table is a logical table: a read view over its generations.
type Table struct {
	ID         uuid.UUID
	ClusterID  uuid.UUID
	Database   string
	Engine     string // engine database
	Name       string
	SortingKey string
	ColumnType string
	// Retention is the retention the table was given (empty: rows kept forever); what
	// the engine enforces is read from the engine (query/tables.ReadRetention).
	Retention string
	// Generations in creation order; rows are inserted into the last one.
	Generations []Generation
	CreatedAt   time.Time
}

// Generation is one physical table of a logical table.
type Generation struct {
	N           int
	LogicalKey  string
	PhysicalKey string
	ChosenKey   string
	// Resorts counts the times the generation was re-sorted (GenerationUUID).
	Resorts   int
	CreatedAt time.Time
}

// Current returns the generation new rows go to and whether there is one.
func (t *Table) Current() (Generation, bool) {
	if len(t.Generations) == 0 {
		return Generation{}, false
	}
	return t.Generations[len(t.Generations)-1], true
}

// KeyPending reports whether the logical key changed since the current generation was
// made, so the next batch must create a generation first.
func (t *Table) KeyPending() bool {
	g, ok := t.Current()
	return !ok || g.LogicalKey != t.SortingKey
}

// APIKey is a credential bound to one organization and one cluster.
type APIKey struct {
	ID              uuid.UUID
	OrgID           uuid.UUID
	ClusterID       uuid.UUID
	Name            string
	Permission      string
	Roles           []string
	DefaultDatabase string
	TokenHash       string
	TokenHint       string
	ExpiresAt       *time.Time
	CreatedAt       time.Time
}

// Expired reports whether the key is expired at now.
func (k *APIKey) Expired(now time.Time) bool {
	return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)
}

type dbKey struct {
	cluster uuid.UUID
	name    string
}

// Model is the control plane's read model, rebuilt from the event log.
type Model struct {
	mu       sync.RWMutex
	position uint64

	orgs       map[uuid.UUID]*Organization
	clusters   map[uuid.UUID]*Cluster
	databases  map[dbKey]*Database
	tables     map[dbKey]map[string]*Table // by database, then table name
	tablesByID map[uuid.UUID]*Table
	keys       map[uuid.UUID]*APIKey
	keyHashes  map[string]*APIKey
	identity
	accessModel
	searchModel
	appModel
	pathsModel
	workflowModel
	alertModel
	inviteModel
}

// NewModel returns an empty read model.
func NewModel() *Model {
	m := &Model{
		orgs:        map[uuid.UUID]*Organization{},
		clusters:    map[uuid.UUID]*Cluster{},
		databases:   map[dbKey]*Database{},
		tables:      map[dbKey]map[string]*Table{},
		tablesByID:  map[uuid.UUID]*Table{},
		keys:        map[uuid.UUID]*APIKey{},
		keyHashes:   map[string]*APIKey{},
		identity:    newIdentity(),
		accessModel: newAccessModel(),
	}
	return m
}

// Position is the store position of the last applied event.
func (m *Model) Position() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.position
}

// Apply folds one event into the model. Events at or before the current position are
// ignored, so catching up twice is harmless.
func (m *Model) Apply(e es.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.Position <= m.position {
		return nil
	}
	if err := m.apply(e); err != nil {
		return fmt.Errorf("apply %s at position %d: %w", e.Type, e.Position, err)
	}
	m.position = e.Position
	return nil
}

func decode[T any](e es.Event) (T, error) {
	var v T
	err := json.Unmarshal(e.Data, &v)
	return v, err
}

func (m *Model) apply(e es.Event) error {
	switch e.Type {
	case EvOrganizationCreated:
		v, err := decode[OrganizationCreated](e)
		if err != nil {
			return err
		}
		m.orgs[v.ID] = &Organization{ID: v.ID, Name: v.Name, CreatedAt: v.CreatedAt}
	case EvClusterCreated:
		v, err := decode[ClusterCreated](e)
		if err != nil {
			return err
		}
		m.clusters[v.ID] = &Cluster{ID: v.ID, OrgID: v.OrgID, Name: v.Name, CreatedAt: v.CreatedAt, Replicas: v.Replicas,
			Size: v.Size, MinSize: v.MinSize, MaxSize: v.MaxSize, IdleTimeoutMinutes: v.IdleTimeoutMinutes, S3: v.S3,
			DatabaseS3Access: v.DatabaseS3Access, AppsTracked: v.AppsTracked}
	case EvDatabaseCreated:
		v, err := decode[DatabaseCreated](e)
		if err != nil {
			return err
		}
		k := dbKey{v.ClusterID, v.Name}
		m.databases[k] = &Database{OrgID: v.OrgID, ClusterID: v.ClusterID, Name: v.Name, Engine: v.Engine, S3: v.S3, CreatedAt: v.CreatedAt}
		m.tables[k] = map[string]*Table{}
	case EvDatabaseDeleted:
		v, err := decode[DatabaseDeleted](e)
		if err != nil {
			return err
		}
		k := dbKey{v.ClusterID, v.Name}
		for _, t := range m.tables[k] {
			delete(m.tablesByID, t.ID)
		}
		delete(m.tables, k)
		delete(m.databases, k)
	case EvTableCreated:
		v, err := decode[TableCreated](e)
		if err != nil {
			return err
		}
		k := dbKey{v.ClusterID, v.Database}
		db := m.databases[k]
		if db == nil {
			return fmt.Errorf("table %s in unknown database %s", v.Name, v.Database)
		}
		t := &Table{ID: v.ID, ClusterID: v.ClusterID, Database: v.Database, Engine: db.Engine, Name: v.Name,
			SortingKey: v.SortingKey, ColumnType: v.ColumnType, CreatedAt: v.CreatedAt, Retention: v.Retention}
		m.tables[k][v.Name] = t
		m.tablesByID[v.ID] = t
	case EvTableKeyChanged:
		v, err := decode[TableKeyChanged](e)
		if err != nil {
			return err
		}
		m.replaceTable(v.TableID, func(t *Table) { t.SortingKey = v.SortingKey })
	case EvGenerationCreated:
		v, err := decode[GenerationCreated](e)
		if err != nil {
			return err
		}
		m.replaceTable(v.TableID, func(t *Table) {
			t.Generations = append(slices.Clip(t.Generations), Generation{N: v.N, LogicalKey: v.LogicalKey,
				PhysicalKey: v.PhysicalKey, ChosenKey: v.ChosenKey, CreatedAt: v.CreatedAt})
		})
	case EvGenerationResorted:
		v, err := decode[GenerationResorted](e)
		if err != nil {
			return err
		}
		m.replaceTable(v.TableID, func(t *Table) {
			gens := slices.Clone(t.Generations)
			for i := range gens {
				if gens[i].N == v.N {
					gens[i].PhysicalKey = v.PhysicalKey
					gens[i].Resorts++
				}
			}
			t.Generations = gens
		})
	case EvTableDeleted:
		v, err := decode[TableDeleted](e)
		if err != nil {
			return err
		}
		if t := m.tablesByID[v.TableID]; t != nil {
			delete(m.tables[dbKey{t.ClusterID, t.Database}], t.Name)
			delete(m.tablesByID, t.ID)
		}
	case EvAPIKeyCreated:
		v, err := decode[APIKeyCreated](e)
		if err != nil {
			return err
		}
		k := &APIKey{ID: v.ID, OrgID: v.OrgID, ClusterID: v.ClusterID, Name: v.Name, Permission: v.Permission,
			Roles: v.Roles, DefaultDatabase: v.DefaultDatabase, TokenHash: v.TokenHash, TokenHint: v.TokenHint,
			ExpiresAt: v.ExpiresAt, CreatedAt: v.CreatedAt}
		m.keys[v.ID] = k
		m.keyHashes[v.TokenHash] = k
	case EvAPIKeyDeleted:
		v, err := decode[APIKeyDeleted](e)
		if err != nil {
			return err
		}
		if k := m.keys[v.ID]; k != nil {
			delete(m.keyHashes, k.TokenHash)
			delete(m.keys, v.ID)
		}
	default:
		// Unknown types come from newer versions of the service; an older node skips
		// them rather than refusing to start.
		handled, err := m.applyAccess(e)
		if handled || err != nil {
			return err
		}
		if handled, err := m.applySearch(e); handled || err != nil {
			return err
		}
		if handled, err := m.applyApps(e); handled || err != nil {
			return err
		}
		if handled, err := m.applyCluster(e); handled || err != nil {
			return err
		}
		if handled, err := m.applyResize(e); handled || err != nil {
			return err
		}
		if handled, err := m.applyRetention(e); handled || err != nil {
			return err
		}
		if handled, err := m.applyPaths(e); handled || err != nil {
			return err
		}
		if handled, err := m.applyWorkflow(e); handled || err != nil {
			return err
		}
		if handled, err := m.applyAlert(e); handled || err != nil {
			return err
		}
		if handled, err := m.applyInvitation(e); handled || err != nil {
			return err
		}
		_, err = m.applyIdentity(e)
		return err
	}
	return nil
}

func (m *Model) replaceTable(id uuid.UUID, change func(*Table)) {
	old := m.tablesByID[id]
	if old == nil {
		return
	}
	t := *old
	change(&t)
	m.tablesByID[id] = &t
	m.tables[dbKey{t.ClusterID, t.Database}][t.Name] = &t
}

// Organization returns an organization by id.
func (m *Model) Organization(id uuid.UUID) (*Organization, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.orgs[id]
	return o, ok
}

// Organizations returns every organization, by name.
func (m *Model) Organizations() []*Organization {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*Organization, 0, len(m.orgs))
	for _, o := range m.orgs {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Cluster returns a cluster by id.
func (m *Model) Cluster(id uuid.UUID) (*Cluster, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c, ok := m.clusters[id]
	return c, ok
}

// Clusters returns the clusters of an organization, by name.
func (m *Model) Clusters(org uuid.UUID) []*Cluster {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*Cluster
	for _, c := range m.clusters {
		if c.OrgID == org {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AllClusters returns every cluster, by id.
func (m *Model) AllClusters() []*Cluster {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*Cluster, 0, len(m.clusters))
	for _, c := range m.clusters {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID.String() < out[j].ID.String() })
	return out
}

// Database returns a logical database of a cluster.
func (m *Model) Database(cluster uuid.UUID, name string) (*Database, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.databases[dbKey{cluster, name}]
	return d, ok
}

// DatabaseByEngine returns the logical database an engine database name belongs to.
func (m *Model) DatabaseByEngine(engine string) (*Database, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, d := range m.databases {
		if d.Engine == engine {
			return d, true
		}
	}
	return nil, false
}

// Databases returns the logical databases of a cluster, by name.
func (m *Model) Databases(cluster uuid.UUID) []*Database {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*Database
	for k, d := range m.databases {
		if k.cluster == cluster {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Table returns a table of a database.
func (m *Model) Table(cluster uuid.UUID, database, name string) (*Table, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.tables[dbKey{cluster, database}][name]
	return t, ok
}

// TableByID returns a table by id.
func (m *Model) TableByID(id uuid.UUID) (*Table, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.tablesByID[id]
	return t, ok
}

// Tables returns the tables of a database, by name.
func (m *Model) Tables(cluster uuid.UUID, database string) []*Table {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ts := m.tables[dbKey{cluster, database}]
	out := make([]*Table, 0, len(ts))
	for _, t := range ts {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// APIKeyByHash returns the key whose token hashes to hash.
func (m *Model) APIKeyByHash(hash string) (*APIKey, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	k, ok := m.keyHashes[hash]
	return k, ok
}

// APIKey returns a key by id.
func (m *Model) APIKey(id uuid.UUID) (*APIKey, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	k, ok := m.keys[id]
	return k, ok
}

// APIKeys returns the keys of a cluster, by creation time.
func (m *Model) APIKeys(cluster uuid.UUID) []*APIKey {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*APIKey
	for _, k := range m.keys {
		if k.ClusterID == cluster {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}
