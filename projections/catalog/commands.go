package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// Errors callers branch on; each is wrapped with a message naming the object.
var (
	// ErrNotFound means the named object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists means an object of that name already exists.
	ErrExists = errors.New("already exists")
	// ErrInvalid means a field of the request is invalid; see FieldError.
	ErrInvalid = errors.New("invalid")
	// ErrProtected means the object is managed by the service and cannot be changed.
	ErrProtected = errors.New("protected")
)

// FieldError names the request field that is invalid.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Message }

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *FieldError) Unwrap() error { return ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Service executes control-plane commands: load the aggregate's stream, validate, append
// at the expected version, then wait until the local read model applied the result.
type Service struct {
	store es.Store
	model *Model
	proj  *Projector
	now   func() time.Time
	// DeviceCodeTTL is how long a device authorization request waits for approval.
	DeviceCodeTTL time.Duration
}

// NewService returns a command service writing to store and reading model.
func NewService(store es.Store, model *Model, proj *Projector) *Service {
	return &Service{store: store, model: model, proj: proj, now: func() time.Time { return time.Now().UTC() },
		DeviceCodeTTL: DeviceCodeTTL}
}

// Model returns the read model the service keeps current.
func (s *Service) Model() *Model { return s.model }

// maxAttempts bounds retries of a command that lost a race on its aggregate.
const maxAttempts = 20

// retry runs cmd again while it loses races on expected versions; cmd reloads its
// aggregate each time, so validation always sees the latest state.
func (s *Service) retry(ctx context.Context, cmd func() (uint64, error)) error {
	for range maxAttempts {
		pos, err := cmd()
		if errors.Is(err, es.ErrConcurrency) {
			continue
		}
		if err != nil {
			return err
		}
		return s.proj.WaitFor(ctx, pos)
	}
	return fmt.Errorf("command lost %d races in a row; retry later: %w", maxAttempts, es.ErrConcurrency)
}

func newEvent(typ string, v any) es.NewEvent {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode %s: %v", typ, err)) // our own event types always encode
	}
	return es.NewEvent{ID: uuid.New(), Type: typ, Data: data}
}

func (s *Service) append(ctx context.Context, stream string, exp es.Expected, events ...es.NewEvent) (uint64, error) {
	res, err := s.store.Append(ctx, stream, exp, events...)
	if err != nil {
		return 0, err
	}
	return res.Position, nil
}

// CreateOrganization creates an organization without members (the bootstrap's).
func (s *Service) CreateOrganization(ctx context.Context, name string) (*Organization, error) {
	return s.CreateOrganizationBy(ctx, name, uuid.Nil)
}

// CreateCluster creates a cluster of an organization with the default shape.
func (s *Service) CreateCluster(ctx context.Context, org uuid.UUID, name string) (*Cluster, error) {
	return s.CreateClusterWith(ctx, ClusterCreated{OrgID: org, Name: name})
}

// CreateClusterWith creates a cluster of spec.OrgID named spec.Name with spec's shape;
// cluster names are unique within the organization (case-insensitively).
func (s *Service) CreateClusterWith(ctx context.Context, spec ClusterCreated) (*Cluster, error) {
	if _, ok := s.model.Organization(spec.OrgID); !ok {
		return nil, fmt.Errorf("%w: organization %s", ErrNotFound, spec.OrgID)
	}
	if err := validClusterName(spec.Name); err != nil {
		return nil, err
	}
	spec.ID = uuid.New()
	spec.CreatedAt = s.now()
	spec.AppsTracked = true // clusters start with no apps installed
	err := s.retry(ctx, func() (uint64, error) {
		// The organization's own stream, read to its exact version, decides the name: two
		// creations of one name append at the same version and only one can pass.
		names, err := s.loadClusterNames(ctx, spec.OrgID)
		if err != nil {
			return 0, err
		}
		if _, taken := names.holder(spec.Name); taken {
			return 0, fmt.Errorf("%w: cluster %q", ErrExists, spec.Name)
		}
		if _, err := s.append(ctx, orgStream(spec.OrgID), es.Exact(names.version), newEvent(EvClusterNamed, ClusterNamed{OrgID: spec.OrgID, ClusterID: spec.ID, Name: spec.Name})); err != nil {
			return 0, err
		}
		return s.append(ctx, clusterStream(spec.ID), es.NoStream(), newEvent(EvClusterCreated, spec))
	})
	if err != nil {
		return nil, err
	}
	c, _ := s.model.Cluster(spec.ID)
	return c, nil
}

// dbState is the database aggregate: the database and its tables.
type dbState struct {
	version uint64
	// position is the store-wide position of the stream's last event: a command that
	// finds nothing to do waits until the local read model applied it, so that it
	// answers with what it decided on (another node's change, say).
	position uint64
	exists   bool // the stream exists
	live     bool // created and not deleted since
	created  DatabaseCreated
	tables   map[string]*tableState
	// retention is the database's default retention for new tables.
	retention string
}

type tableState struct {
	id        uuid.UUID
	key       string
	gens      int
	retention string
}

func (s *Service) loadDatabase(ctx context.Context, cluster uuid.UUID, name string) (*dbState, error) {
	st := &dbState{tables: map[string]*tableState{}}
	it := s.store.ReadStream(ctx, databaseStream(cluster, name), 0)
	defer it.Close()
	for it.Next(ctx) {
		e := it.Event()
		st.version, st.position, st.exists = e.Version, e.Position, true
		switch e.Type {
		case EvDatabaseCreated:
			v, err := decode[DatabaseCreated](e)
			if err != nil {
				return nil, err
			}
			st.live, st.created, st.tables, st.retention = true, v, map[string]*tableState{}, ""
		case EvDatabaseDeleted:
			st.live = false
		case EvTableCreated:
			v, err := decode[TableCreated](e)
			if err != nil {
				return nil, err
			}
			st.tables[v.Name] = &tableState{id: v.ID, key: v.SortingKey, retention: v.Retention}
		case EvTableKeyChanged:
			v, err := decode[TableKeyChanged](e)
			if err != nil {
				return nil, err
			}
			if t := st.tables[v.Name]; t != nil {
				t.key = v.SortingKey
			}
		case EvGenerationCreated:
			v, err := decode[GenerationCreated](e)
			if err != nil {
				return nil, err
			}
			if t := st.tables[v.Name]; t != nil {
				t.gens = v.N
			}
		case EvTableRetentionChanged:
			v, err := decode[TableRetentionChanged](e)
			if err != nil {
				return nil, err
			}
			if t := st.tables[v.Name]; t != nil {
				t.retention = v.Retention
			}
		case EvDatabaseRetentionChanged:
			v, err := decode[DatabaseRetentionChanged](e)
			if err != nil {
				return nil, err
			}
			st.retention = v.Retention
		case EvTableDeleted:
			v, err := decode[TableDeleted](e)
			if err != nil {
				return nil, err
			}
			delete(st.tables, v.Name)
		}
	}
	return st, it.Err()
}

func (st *dbState) expected() es.Expected {
	if !st.exists {
		return es.NoStream()
	}
	return es.Exact(st.version)
}

// CreateDatabase creates a logical database on a cluster.
func (s *Service) CreateDatabase(ctx context.Context, org, cluster uuid.UUID, name string, s3 *S3Storage) (*Database, error) {
	if err := ValidateName("database", name); err != nil {
		return nil, invalid("name", "%v", err)
	}
	if name == SystemDatabase {
		return nil, fmt.Errorf("%w: database %q is managed by the service", ErrExists, name)
	}
	if c, ok := s.model.Cluster(cluster); !ok || c.OrgID != org {
		return nil, fmt.Errorf("%w: cluster %s", ErrNotFound, cluster)
	}
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadDatabase(ctx, cluster, name)
		if err != nil {
			return 0, err
		}
		if st.live {
			return 0, fmt.Errorf("%w: database %q", ErrExists, name)
		}
		return s.append(ctx, databaseStream(cluster, name), st.expected(), newEvent(EvDatabaseCreated, DatabaseCreated{
			OrgID: org, ClusterID: cluster, Name: name, Engine: EngineDatabase(org, name), S3: s3, CreatedAt: s.now()}))
	})
	if err != nil {
		return nil, err
	}
	d, _ := s.model.Database(cluster, name)
	return d, nil
}

// DeleteDatabase deletes a logical database and its tables from the catalog. The caller
// drops the engine database.
func (s *Service) DeleteDatabase(ctx context.Context, cluster uuid.UUID, name string) error {
	if name == DefaultDatabase || name == SystemDatabase {
		return fmt.Errorf("%w: database %q cannot be deleted", ErrProtected, name)
	}
	return s.retry(ctx, func() (uint64, error) {
		st, err := s.loadDatabase(ctx, cluster, name)
		if err != nil {
			return 0, err
		}
		if !st.live {
			return 0, fmt.Errorf("%w: database %q", ErrNotFound, name)
		}
		return s.append(ctx, databaseStream(cluster, name), st.expected(),
			newEvent(EvDatabaseDeleted, DatabaseDeleted{ClusterID: cluster, Name: name}))
	})
}

// NewTable describes a table to create. The caller has validated SortingKey's syntax.
type NewTable struct {
	Cluster    uuid.UUID
	Database   string
	Name       string
	SortingKey string
	ColumnType string // default "JSON"
	// Retention, canonical (query/tables.ParseRetention); empty keeps rows forever.
	Retention string
}

// CreateTable creates a table. The caller creates its read view in the engine.
func (s *Service) CreateTable(ctx context.Context, nt NewTable) (*Table, error) {
	if err := ValidateName("table", nt.Name); err != nil {
		return nil, invalid("name", "%v", err)
	}
	if nt.ColumnType == "" {
		nt.ColumnType = "JSON"
	}
	id := uuid.New()
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadDatabase(ctx, nt.Cluster, nt.Database)
		if err != nil {
			return 0, err
		}
		if !st.live {
			return 0, fmt.Errorf("%w: database %q", ErrNotFound, nt.Database)
		}
		if _, ok := st.tables[nt.Name]; ok {
			return 0, fmt.Errorf("%w: table %q in database %q", ErrExists, nt.Name, nt.Database)
		}
		return s.append(ctx, databaseStream(nt.Cluster, nt.Database), st.expected(), newEvent(EvTableCreated, TableCreated{
			ID: id, ClusterID: nt.Cluster, Database: nt.Database, Name: nt.Name, SortingKey: nt.SortingKey,
			ColumnType: nt.ColumnType, CreatedAt: s.now(), Retention: nt.Retention}))
	})
	if err != nil {
		return nil, err
	}
	t, _ := s.model.TableByID(id)
	return t, nil
}

// ChangeSortingKey sets a table's logical sorting key for rows inserted from now on.
func (s *Service) ChangeSortingKey(ctx context.Context, cluster uuid.UUID, database, name, key string) (*Table, error) {
	var id uuid.UUID
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadDatabase(ctx, cluster, database)
		if err != nil {
			return 0, err
		}
		t := st.tables[name]
		if !st.live || t == nil {
			return 0, fmt.Errorf("%w: table %q in database %q", ErrNotFound, name, database)
		}
		id = t.id
		if t.key == key {
			return st.position, nil
		}
		if t.key != "" && key == "" {
			return 0, invalid("sorting_key", "a sorting key cannot be removed once set")
		}
		return s.append(ctx, databaseStream(cluster, database), st.expected(), newEvent(EvTableKeyChanged,
			TableKeyChanged{TableID: t.id, Database: database, Name: name, SortingKey: key}))
	})
	if err != nil {
		return nil, err
	}
	t, _ := s.model.TableByID(id)
	return t, nil
}

// CreateGeneration records generation n of a table, compiled from logicalKey. It is
// idempotent: when generation n already exists, it returns the table unchanged, so
// nodes racing to create the same generation agree on the winner's.
func (s *Service) CreateGeneration(ctx context.Context, tableID uuid.UUID, n int, logicalKey, physicalKey, chosenKey string) (*Table, error) {
	t0, ok := s.model.TableByID(tableID)
	if !ok {
		return nil, fmt.Errorf("%w: table %s", ErrNotFound, tableID)
	}
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadDatabase(ctx, t0.ClusterID, t0.Database)
		if err != nil {
			return 0, err
		}
		t := st.tables[t0.Name]
		if !st.live || t == nil || t.id != tableID {
			return 0, fmt.Errorf("%w: table %s", ErrNotFound, tableID)
		}
		if t.gens >= n {
			// Made already, by another node perhaps: answered once the local read model
			// has it (the caller reads the generation from it).
			return st.position, nil
		}
		if n != t.gens+1 {
			return 0, fmt.Errorf("generation %d of table %s requested after %d", n, t0.Name, t.gens)
		}
		return s.append(ctx, databaseStream(t0.ClusterID, t0.Database), st.expected(), newEvent(EvGenerationCreated,
			GenerationCreated{TableID: tableID, Database: t0.Database, Name: t0.Name, N: n, LogicalKey: logicalKey,
				PhysicalKey: physicalKey, ChosenKey: chosenKey, CreatedAt: s.now()}))
	})
	if err != nil {
		return nil, err
	}
	t, _ := s.model.TableByID(tableID)
	return t, nil
}

// ResortedGeneration records that generation n of a table now has physicalKey.
func (s *Service) ResortedGeneration(ctx context.Context, tableID uuid.UUID, n int, physicalKey string) error {
	t0, ok := s.model.TableByID(tableID)
	if !ok {
		return fmt.Errorf("%w: table %s", ErrNotFound, tableID)
	}
	return s.retry(ctx, func() (uint64, error) {
		st, err := s.loadDatabase(ctx, t0.ClusterID, t0.Database)
		if err != nil {
			return 0, err
		}
		if t := st.tables[t0.Name]; !st.live || t == nil || t.id != tableID {
			return 0, fmt.Errorf("%w: table %s", ErrNotFound, tableID)
		}
		return s.append(ctx, databaseStream(t0.ClusterID, t0.Database), st.expected(), newEvent(EvGenerationResorted,
			GenerationResorted{TableID: tableID, Database: t0.Database, Name: t0.Name, N: n, PhysicalKey: physicalKey}))
	})
}

// DeleteTable removes a table from the catalog. The caller drops its engine tables.
func (s *Service) DeleteTable(ctx context.Context, cluster uuid.UUID, database, name string) (*Table, error) {
	var gone *Table
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadDatabase(ctx, cluster, database)
		if err != nil {
			return 0, err
		}
		t := st.tables[name]
		if !st.live || t == nil {
			return 0, fmt.Errorf("%w: table %q in database %q", ErrNotFound, name, database)
		}
		gone, _ = s.model.TableByID(t.id)
		return s.append(ctx, databaseStream(cluster, database), st.expected(), newEvent(EvTableDeleted,
			TableDeleted{TableID: t.id, Database: database, Name: name}))
	})
	return gone, err
}

// NewAPIKey describes a key to create.
type NewAPIKey struct {
	OrgID           uuid.UUID
	ClusterID       uuid.UUID
	Name            string
	Permission      string
	Roles           []string
	DefaultDatabase string
	ExpiresAt       *time.Time
	// Token, when set, is used instead of a generated one (the bootstrap key).
	Token string
}

// Permissions of permission-based keys.
const (
	PermAdmin     = "admin"
	PermReadWrite = "read_write"
	PermWriteOnly = "write_only"
	PermReadOnly  = "read_only"
)

// CreateAPIKey creates a key and returns it with its token, which is not stored and
// cannot be shown again.
func (s *Service) CreateAPIKey(ctx context.Context, nk NewAPIKey) (*APIKey, string, error) {
	if nk.Name == "" {
		return nil, "", invalid("name", "key name is empty")
	}
	if len(nk.Name) > 256 {
		return nil, "", invalid("name", "key name is longer than 256 characters")
	}
	switch {
	case nk.Permission != "" && len(nk.Roles) > 0:
		return nil, "", invalid("permission", "give exactly one of permission and database_roles, not both")
	case nk.Permission == "" && len(nk.Roles) == 0:
		return nil, "", invalid("permission", "give exactly one of permission and database_roles")
	case nk.Permission != "":
		switch nk.Permission {
		case PermAdmin, PermReadWrite, PermWriteOnly, PermReadOnly:
		default:
			return nil, "", invalid("permission", "permission %q is not one of admin, read_write, write_only, read_only", nk.Permission)
		}
	default:
		if len(nk.Roles) > 32 {
			return nil, "", invalid("database_roles", "at most 32 roles per key, got %d", len(nk.Roles))
		}
		seen := map[string]bool{}
		for _, r := range nk.Roles {
			if seen[r] {
				return nil, "", invalid("database_roles", "role %q is listed twice", r)
			}
			seen[r] = true
			if _, ok := s.model.Role(nk.ClusterID, r); !ok {
				return nil, "", invalid("database_roles", "role %q does not exist on this cluster (names are case-sensitive)", r)
			}
		}
	}
	if nk.ExpiresAt != nil && !nk.ExpiresAt.After(s.now()) {
		return nil, "", invalid("expires_at", "expires_at must be in the future")
	}
	if c, ok := s.model.Cluster(nk.ClusterID); !ok || c.OrgID != nk.OrgID {
		return nil, "", fmt.Errorf("%w: cluster %s", ErrNotFound, nk.ClusterID)
	}
	token := nk.Token
	if token == "" {
		token = NewToken()
	}
	if nk.DefaultDatabase == "" {
		nk.DefaultDatabase = DefaultDatabase
	}
	hash := HashToken(token)
	if _, taken := s.model.APIKeyByHash(hash); taken {
		return nil, "", invalid("token", "this token is already in use")
	}
	id := uuid.New()
	err := s.retry(ctx, func() (uint64, error) {
		return s.append(ctx, apiKeyStream(id), es.NoStream(), newEvent(EvAPIKeyCreated, APIKeyCreated{
			ID: id, OrgID: nk.OrgID, ClusterID: nk.ClusterID, Name: nk.Name, Permission: nk.Permission,
			Roles: nk.Roles, DefaultDatabase: nk.DefaultDatabase, TokenHash: hash, TokenHint: TokenHint(token),
			ExpiresAt: nk.ExpiresAt, CreatedAt: s.now()}))
	})
	if err != nil {
		return nil, "", err
	}
	k, _ := s.model.APIKey(id)
	return k, token, nil
}

// DeleteAPIKey deletes a key.
func (s *Service) DeleteAPIKey(ctx context.Context, id uuid.UUID) error {
	return s.retry(ctx, func() (uint64, error) {
		events, err := es.Collect(ctx, s.store.ReadStream(ctx, apiKeyStream(id), 0))
		if err != nil {
			return 0, err
		}
		if len(events) == 0 || events[len(events)-1].Type == EvAPIKeyDeleted {
			return 0, fmt.Errorf("%w: key %s", ErrNotFound, id)
		}
		return s.append(ctx, apiKeyStream(id), es.Exact(events[len(events)-1].Version),
			newEvent(EvAPIKeyDeleted, APIKeyDeleted{ID: id}))
	})
}

// Bootstrap is what the first start creates.
type Bootstrap struct {
	Organization *Organization
	Cluster      *Cluster
	AdminKey     *APIKey
	AdminUser    *User
	// Token is the admin key's token and Password the admin user's password when this
	// call created them, else empty.
	Token    string
	Password string
}

// BootstrapConfig names what the first start creates.
type BootstrapConfig struct {
	Organization string
	// Token is the admin key's token; empty generates one.
	Token string
	// AdminUser and AdminPassword name the first user, an administrator of the
	// organization; an empty password generates one.
	AdminUser     string
	AdminPassword string
}

// EnsureBootstrap creates, on an empty store, an administrator user, an organization, a
// default cluster with its database "default", and an admin key. On a store that has an
// organization it returns what exists and creates nothing.
func (s *Service) EnsureBootstrap(ctx context.Context, cfg BootstrapConfig) (*Bootstrap, error) {
	if _, err := s.proj.CatchUp(ctx); err != nil {
		return nil, err
	}
	if orgs := s.model.Organizations(); len(orgs) > 0 {
		b := &Bootstrap{Organization: orgs[0]}
		if cs := s.model.Clusters(orgs[0].ID); len(cs) > 0 {
			b.Cluster = cs[0]
		}
		return b, nil
	}
	if cfg.AdminUser == "" {
		cfg.AdminUser = "admin"
	}
	password := cfg.AdminPassword
	if password == "" {
		password = strings.TrimPrefix(NewToken(), TokenPrefix)[:24]
	}
	user, err := s.CreateUser(ctx, cfg.AdminUser, "Administrator", password)
	if err != nil {
		return nil, fmt.Errorf("bootstrap admin user: %w", err)
	}
	org, err := s.CreateOrganizationBy(ctx, cfg.Organization, user.ID)
	if err != nil {
		return nil, fmt.Errorf("bootstrap organization: %w", err)
	}
	cl, err := s.CreateCluster(ctx, org.ID, "default")
	if err != nil {
		return nil, fmt.Errorf("bootstrap cluster: %w", err)
	}
	if _, err := s.CreateDatabase(ctx, org.ID, cl.ID, DefaultDatabase, nil); err != nil {
		return nil, fmt.Errorf("bootstrap database: %w", err)
	}
	key, tok, err := s.CreateAPIKey(ctx, NewAPIKey{OrgID: org.ID, ClusterID: cl.ID, Name: "bootstrap admin",
		Permission: PermAdmin, Token: cfg.Token})
	if err != nil {
		return nil, fmt.Errorf("bootstrap admin key: %w", err)
	}
	b := &Bootstrap{Organization: org, Cluster: cl, AdminKey: key, AdminUser: user, Token: tok}
	if cfg.AdminPassword == "" {
		b.Password = password
	}
	return b, nil
}
