// Package tables manages databases and tables in both the catalog and the engine: a
// logical table is a Merge read view over MergeTree generations, each generation sorted
// by the table's key compiled with types taken from the data (DESIGN.md, "Sorting keys
// and generations").
package tables

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/pathtype"
	"github.com/svc-data/svc/query/sortkey"
	"github.com/svc-data/svc/query/sqlquote"
	"github.com/svc-data/svc/query/statement"
	"github.com/svc-data/svc/query/target"
)

// Engine is what table management needs of an engine.
type Engine interface {
	Exec(ctx context.Context, sql string) error
	QueryStrings(ctx context.Context, sql string) ([]string, error)
}

// Engines returns the engine of a cluster.
type Engines interface {
	Engine(cluster uuid.UUID) (Engine, error)
}

// ErrKeyUnusable wraps the engine's refusal of a sorting key.
var ErrKeyUnusable = errors.New("sorting key refused by the engine")

// Manager creates, changes and drops databases and tables.
type Manager struct {
	cat     *catalog.Service
	engines Engines
	mu      sync.Mutex
	locks   map[uuid.UUID]*sync.Mutex // per table: one node creates a generation once
	storage Storage
	// claims serializes the last overlap check with the creation that records the
	// storage (ClaimStorage).
	claims sync.Mutex
}

// Storage is the service's object storage as table management needs it.
type Storage interface {
	// Configured reports whether the service has storage credentials.
	Configured() bool
	// ServiceCredentialsAllowed reports the operator's opt-in to storage without a
	// customer role, written by the service's own identity (SVC_S3_ALLOW_SERVICE_CREDENTIALS).
	ServiceCredentialsAllowed() bool
	// DiskSetting is the MergeTree setting keeping a table's data under bucket/path,
	// without any secret in it.
	DiskSetting(bucket, path string) (string, error)
	// VerifyStorage runs verify-s3-access's checks: the role assumed with the external
	// id, the `<tag_domain>/cluster` tag on role and buckets (with value bucketTag when
	// set), and a probe object written, read back and deleted.
	VerifyStorage(ctx context.Context, s3 catalog.S3Storage, bucketTag string) catalog.StorageVerification
}

// storageReach is an optional ability of Storage: whether the endpoint of bucket/path
// answers at all (s3store.Config.Reachable).
type storageReach interface {
	Reachable(ctx context.Context, bucket, path string) error
}

// ErrStorageUnavailable refuses to drop a database or table whose storage (a customer's
// bucket) does not answer: the engine's DROP would block on it, holding one of its
// connections, and the catalog must not forget data the engine still holds.
var ErrStorageUnavailable = errors.New("the storage of this database does not answer")

// storageAnswers fails with ErrStorageUnavailable when s3's endpoint does not answer.
func (m *Manager) storageAnswers(ctx context.Context, s3 *catalog.S3Storage) error {
	r, ok := m.storage.(storageReach)
	if s3 == nil || !ok {
		return nil
	}
	if err := r.Reachable(ctx, s3.Data.Bucket, s3.Data.Path); err != nil {
		return fmt.Errorf("%w (bucket %s); nothing was deleted", ErrStorageUnavailable, s3.Data.Bucket)
	}
	return nil
}

// ProbeStorage implements pipeline.StorageProber: nil when table id keeps its data
// locally, or its storage's endpoint answers.
func (m *Manager) ProbeStorage(ctx context.Context, id uuid.UUID) error {
	t, ok := m.cat.Model().TableByID(id)
	if !ok {
		return nil
	}
	s3 := m.storageOf(t)
	r, ok := m.storage.(storageReach)
	if s3 == nil || !ok {
		return nil
	}
	return r.Reachable(ctx, s3.Data.Bucket, s3.Data.Path)
}

// SetStorage sets the object storage that databases with s3_storage (their own or their
// cluster's) keep their tables' data on. Without it such databases are refused.
func (m *Manager) SetStorage(s Storage) { m.storage = s }

// errNoStorage refuses customer storage on a service without storage credentials.
var errNoStorage = &catalog.FieldError{Field: "s3_storage",
	Message: "this service has no object storage configured (SVC_S3_ACCESS_KEY_ID and SVC_S3_SECRET_ACCESS_KEY, or SVC_S3_CREDENTIALS_FILE), so it cannot keep data on S3"}

// CheckStorage refuses s3 storage the service cannot use: none configured, or bucket
// names and paths outside S3's rules (catalog.S3Storage.Validate, which normalizes the
// paths of s3 in place).
func (m *Manager) CheckStorage(s3 *catalog.S3Storage) error {
	if s3 == nil {
		return nil
	}
	if err := s3.Validate(); err != nil {
		return err
	}
	if m.storage == nil || !m.storage.Configured() {
		return errNoStorage
	}
	return nil
}

// AdmitStorage is the one gate customer storage passes before a cluster or a database
// is created on it: valid bucket names and paths (CheckStorage); a role with an
// external id, unless the operator opted into the service's own credentials; the
// cluster's database_s3_access when it grants it (access: its external id, and its
// database_bucket_tag on the buckets and the role); no other cluster or database, of any
// organization, on an overlapping bucket and path; and verify-s3-access's checks, run
// now. s3's paths are normalized and its external id defaulted to access's in place.
// The creation that follows runs in ClaimStorage, which checks overlaps again.
func (m *Manager) AdmitStorage(ctx context.Context, s3 *catalog.S3Storage, access *catalog.DatabaseS3Access) error {
	if err := m.CheckStorage(s3); err != nil || s3 == nil {
		return err
	}
	tag := ""
	if access != nil {
		if s3.ExternalID == "" {
			s3.ExternalID = access.ExternalID
		}
		if s3.ExternalID != access.ExternalID {
			return &catalog.FieldError{Field: "s3_storage.external_id",
				Message: "s3_storage.external_id must be the cluster's database_s3_access external_id"}
		}
		tag = access.DatabaseBucketTag
	}
	switch {
	case s3.RoleARN == "" && !m.storage.ServiceCredentialsAllowed():
		return &catalog.FieldError{Field: "s3_storage.role_arn",
			Message: "s3_storage.role_arn is required: the service writes to customer buckets only as a role of the customer's, assumed with the external id (storage without a role needs the operator's opt-in, SVC_S3_ALLOW_SERVICE_CREDENTIALS)"}
	case s3.RoleARN != "" && s3.ExternalID == "":
		return &catalog.FieldError{Field: "s3_storage.external_id",
			Message: "s3_storage.external_id is required with role_arn: the role's trust policy must ask for it"}
	}
	if err := m.inUse(s3); err != nil {
		return err
	}
	if v := m.storage.VerifyStorage(ctx, *s3, tag); !v.Verified {
		return &catalog.FieldError{Field: "s3_storage", Message: "s3_storage did not pass verify-s3-access: " + v.Message}
	}
	return nil
}

// ClaimStorage runs create, which records a cluster or database on s3 (admitted by
// AdmitStorage), after checking again, under one lock, that no storage recorded since
// overlaps s3: of creations at once on one bucket and path, one is recorded and the
// others are refused. (The lock is this node's: creations on two nodes at once are not
// serialized.)
func (m *Manager) ClaimStorage(s3 *catalog.S3Storage, create func() error) error {
	if s3 == nil {
		return create()
	}
	m.claims.Lock()
	defer m.claims.Unlock()
	if err := m.inUse(s3); err != nil {
		return err
	}
	return create()
}

// inUse refuses s3 when it overlaps storage a cluster or database already uses.
func (m *Manager) inUse(s3 *catalog.S3Storage) error {
	if l, used := m.cat.Model().StorageInUse(s3); used {
		return &catalog.FieldError{Field: "s3_storage",
			Message: fmt.Sprintf("s3_storage: bucket %s path %q overlaps storage another cluster or database already uses; each keeps its data under a bucket and path of its own", l.Bucket, l.Path)}
	}
	return nil
}

// ErrNoObjectStorage: verify-s3-access on a node wired without object storage.
var ErrNoObjectStorage = errors.New("this service does not use object storage")

// VerifyStorage is verify-s3-access: s3's names and paths by the rules creation applies
// (a FieldError), then the checks AdmitStorage runs at creation, each reported. bucketTag
// is the value the ownership tag must have (database_s3_access), empty for any.
func (m *Manager) VerifyStorage(ctx context.Context, s3 catalog.S3Storage, bucketTag string) (catalog.StorageVerification, error) {
	if err := s3.Validate(); err != nil {
		return catalog.StorageVerification{}, err
	}
	if m.storage == nil {
		return catalog.StorageVerification{}, ErrNoObjectStorage
	}
	return m.storage.VerifyStorage(ctx, s3, bucketTag), nil
}

// StorageRole is the role whose session credentials the cluster's engine writes to S3
// with: its storage's role, or else that of the earliest-created database that has its
// own storage with a role; empty when none names one (the service's own credentials).
func (m *Manager) StorageRole(cluster uuid.UUID) (arn, externalID string) {
	if c, ok := m.cat.Model().Cluster(cluster); ok && c.S3 != nil && c.S3.RoleARN != "" {
		return c.S3.RoleARN, c.S3.ExternalID
	}
	var first *catalog.Database
	for _, d := range m.cat.Model().Databases(cluster) {
		if d.S3 != nil && d.S3.RoleARN != "" && (first == nil || d.CreatedAt.Before(first.CreatedAt)) {
			first = d
		}
	}
	if first == nil {
		return "", ""
	}
	return first.S3.RoleARN, first.S3.ExternalID
}

// roleless returns the locations of the cluster's storage (its own and its databases')
// that name no role: with the operator's opt-in they are written with the service's
// federated credentials, scoped to them (s3store.SessionPolicy).
func (m *Manager) roleless(cluster uuid.UUID) []catalog.S3Location {
	var out []catalog.S3Location
	if c, ok := m.cat.Model().Cluster(cluster); ok && c.S3 != nil && c.S3.RoleARN == "" {
		out = append(out, c.S3.Data, c.S3.Backups)
	}
	for _, d := range m.cat.Model().Databases(cluster) {
		if d.S3 != nil && d.S3.RoleARN == "" {
			out = append(out, d.S3.Data, d.S3.Backups)
		}
	}
	return out
}

// StorageIdentity is what the cluster's engine writes to S3 as: StorageRole's role, or,
// without one, the service's own identity scoped to the locations returned.
func (m *Manager) StorageIdentity(cluster uuid.UUID) (arn, externalID string, locations []catalog.S3Location) {
	if arn, ext := m.StorageRole(cluster); arn != "" {
		return arn, ext, nil
	}
	return "", "", m.roleless(cluster)
}

// generationSettings are the settings of t's generations: GenerationSettings, plus the
// S3 disk of its database's storage (or, when the database has none, its cluster's).
func (m *Manager) generationSettings(t *catalog.Table) (string, error) {
	s3 := m.storageOf(t)
	if s3 == nil {
		return GenerationSettings, nil
	}
	// Checked again where it becomes part of a statement: storage accepted before the
	// rules existed is refused here rather than handed to the engine.
	checked := *s3
	if err := m.CheckStorage(&checked); err != nil {
		return "", err
	}
	disk, err := m.storage.DiskSetting(checked.Data.Bucket, checked.Data.Path)
	if err != nil {
		return "", err
	}
	return GenerationSettings + ", " + disk, nil
}

// storageOf is the S3 storage t's data is kept on: its database's, else its cluster's;
// nil for the engine's local disk.
func (m *Manager) storageOf(t *catalog.Table) *catalog.S3Storage {
	if d, ok := m.cat.Model().Database(t.ClusterID, t.Database); ok && d.S3 != nil {
		return d.S3
	} else if c, ok := m.cat.Model().Cluster(t.ClusterID); ok {
		return c.S3
	}
	return nil
}

// uuidClause names the engine UUID of generation g (after resorts re-sorts) of t when t
// is on S3 (catalog.GenerationUUID), so Reconcile can attach it again from the bucket;
// local tables let the engine choose.
func (m *Manager) uuidClause(t *catalog.Table, n, resorts int) string {
	if m.storageOf(t) == nil {
		return ""
	}
	return " UUID " + sqlquote.String(catalog.GenerationUUID(t.ID, n, resorts).String())
}

// NewManager returns a manager.
func NewManager(cat *catalog.Service, engines Engines) *Manager {
	return &Manager{cat: cat, engines: engines, locks: map[uuid.UUID]*sync.Mutex{}}
}

// GenerationSettings are the MergeTree settings of every generation: nullable keys
// because typed JSON subcolumns are Nullable, and a deduplication window so that a
// replayed batch with the same token is dropped.
const GenerationSettings = "allow_nullable_key = 1, non_replicated_deduplication_window = 10000"

// EnsureDatabase creates a database's engine database.
func (m *Manager) EnsureDatabase(ctx context.Context, d *catalog.Database) error {
	e, err := m.engines.Engine(d.ClusterID)
	if err != nil {
		return err
	}
	return e.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+sqlquote.Ident(d.Engine))
}

// CreateDatabase creates a logical database in the catalog and the engine.
func (m *Manager) CreateDatabase(ctx context.Context, org, cluster uuid.UUID, name string, s3 *catalog.S3Storage) (*catalog.Database, error) {
	e, err := m.engines.Engine(cluster)
	if err != nil {
		return nil, err
	}
	if err := catalog.ValidateName("database", name); err != nil {
		return nil, &catalog.FieldError{Field: "name", Message: err.Error()}
	}
	if s3 != nil {
		c, ok := m.cat.Model().Cluster(cluster)
		if !ok {
			return nil, fmt.Errorf("%w: cluster %s", catalog.ErrNotFound, cluster)
		}
		// One engine writes as one identity: a role's, or (opted in) the service's.
		arn, _ := m.StorageRole(cluster)
		switch {
		case arn != "" && arn != s3.RoleARN:
			return nil, &catalog.FieldError{Field: "s3_storage",
				Message: "role_arn: the cluster's engine already writes with another role (its storage's, or an earlier database's); one engine holds one role's credentials, so a database on this cluster must name that role"}
		case arn == "" && s3.RoleARN != "" && len(m.roleless(cluster)) > 0:
			return nil, &catalog.FieldError{Field: "s3_storage",
				Message: "role_arn: the cluster's engine already writes storage without a role; one engine holds one identity's credentials, so a database on this cluster must name no role"}
		}
		if err := m.AdmitStorage(ctx, s3, c.DatabaseS3Access); err != nil {
			return nil, err
		}
	}
	// Engine first: creating an engine database that then loses a catalog race is
	// harmless, a catalog entry without its engine database is not.
	if err := e.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+sqlquote.Ident(catalog.EngineDatabase(org, name))); err != nil {
		return nil, fmt.Errorf("create engine database: %w", err)
	}
	var d *catalog.Database
	err = m.ClaimStorage(s3, func() (err error) {
		d, err = m.cat.CreateDatabase(ctx, org, cluster, name, s3)
		return err
	})
	return d, err
}

// DropDatabase deletes a database with its data.
func (m *Manager) DropDatabase(ctx context.Context, cluster uuid.UUID, name string) error {
	d, ok := m.cat.Model().Database(cluster, name)
	if !ok {
		return fmt.Errorf("%w: database %q", catalog.ErrNotFound, name)
	}
	s3 := d.S3
	if c, ok := m.cat.Model().Cluster(cluster); s3 == nil && ok {
		s3 = c.S3
	}
	if err := m.storageAnswers(ctx, s3); err != nil {
		return err
	}
	if err := m.cat.DeleteDatabase(ctx, cluster, name); err != nil {
		return err
	}
	e, err := m.engines.Engine(cluster)
	if err != nil {
		return err
	}
	return dropEngineDatabase(ctx, e, d.Engine)
}

// dropAttempts bounds dropEngineDatabase's tries; dropPause is the first pause between
// two, doubled each time (about 3 s in all).
const (
	dropAttempts = 6
	dropPause    = 100 * time.Millisecond
)

// dropEngineDatabase drops an engine database whose catalog entry is already gone. A
// consumer that had not yet seen the deletion may be creating a table in it (the first
// generation of a table its batch writes to): the engine then refuses the drop
// (DATABASE_NOT_EMPTY, "try again"), a retryable error, and the drop is tried again
// once the consumer has seen the deletion and stopped. Fatal errors are not retried.
func dropEngineDatabase(ctx context.Context, e Engine, name string) error {
	pause := dropPause
	for attempt := 1; ; attempt++ {
		err := e.Exec(ctx, "DROP DATABASE IF EXISTS "+sqlquote.Ident(name)+" SYNC")
		if err == nil || attempt == dropAttempts || engineerr.ClassOf(err) != engineerr.Retryable {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause *= 2
	}
}

// keyCheckTypes are the types a key's paths are tried with: the data decides a path's
// type later, so a key is usable if it works with one of them (lower(x) wants a String,
// intDiv(100, x) a number).
var keyCheckTypes = []string{"String", "Int64", "Float64", "DateTime64(9)"}

// CheckKey validates a sorting key with the one validator of statement.SortingKey (the
// same as SQL DDL's), lets the engine judge it by creating a throwaway table with it, and
// returns the canonical key text: the engine's own error comes back for an unusable key.
func (m *Manager) CheckKey(ctx context.Context, cluster uuid.UUID, key string) (string, error) {
	canonical, err := statement.SortingKey(key)
	if err != nil {
		msg := err.Error()
		var se *statement.Error
		if errors.As(err, &se) {
			msg = se.Message
		}
		return "", &catalog.FieldError{Field: "sorting_key", Message: msg}
	}
	k, err := sortkey.Parse(canonical)
	if err != nil {
		return "", &catalog.FieldError{Field: "sorting_key", Message: err.Error()}
	}
	if k.Empty() {
		return canonical, nil
	}
	e, err := m.engines.Engine(cluster)
	if err != nil {
		return "", err
	}
	var first error
	for _, typ := range keyCheckTypes {
		types := map[string]string{}
		for _, p := range k.Paths() {
			types[p] = typ
		}
		name := "_svc." + sqlquote.Ident("key_check_"+strings.ReplaceAll(uuid.NewString(), "-", ""))
		err = e.Exec(ctx, "CREATE TABLE "+name+" (doc JSON) ENGINE = MergeTree ORDER BY ("+k.Compile(types)+") SETTINGS "+GenerationSettings)
		if err == nil {
			return canonical, e.Exec(ctx, "DROP TABLE IF EXISTS "+name+" SYNC")
		}
		if first == nil {
			first = err
		}
		if !engineerr.IsWrongType(err) { // a different path type may cure a wrong type
			break
		}
	}
	return "", fmt.Errorf("%w: %w", ErrKeyUnusable, first)
}

// CreateTable creates a table: its read view in the engine, then the catalog entry. Rows
// get their first generation when the first batch arrives.
//
// retention nil takes the default: its app's setting for an app's table (appOfTable), else
// its database's; "" keeps rows forever.
func (m *Manager) CreateTable(ctx context.Context, org, cluster uuid.UUID, database, name, key, columnType string, retention *string) (*catalog.Table, error) {
	if err := catalog.ValidateName("table", name); err != nil {
		return nil, &catalog.FieldError{Field: "name", Message: err.Error()}
	}
	if name == LogSearchTable && columnType != LogSearchColumnType {
		// Made as a plain table, every search over it would fail in the engine (its
		// fields are not the typed ones search reads).
		return nil, &catalog.FieldError{Field: "name", Message: LogSearchTable + " is the log-search app's table, with typed _time, _raw, host, " +
			"source, sourcetype and index; send events through the HTTP Event Collector (POST /services/collector/event), " +
			"which creates it, then insert into it by name if you like"}
	}
	d, ok := m.cat.Model().Database(cluster, database)
	if !ok {
		return nil, fmt.Errorf("%w: database %q", catalog.ErrNotFound, database)
	}
	if _, ok := m.cat.Model().Table(cluster, database, name); ok {
		return nil, fmt.Errorf("%w: table %q in database %q", catalog.ErrExists, name, database)
	}
	key, err := m.CheckKey(ctx, cluster, key)
	if err != nil {
		return nil, err
	}
	if columnType == "" {
		columnType = "JSON"
	}
	asked := m.defaultRetention(d, name)
	if retention != nil {
		asked = *retention
	}
	canonical, err := CheckRetention(asked, columnType)
	if err != nil {
		return nil, err
	}
	if err := m.ensureView(ctx, cluster, d.Engine, name, columnType); err != nil {
		return nil, err
	}
	return m.cat.CreateTable(ctx, catalog.NewTable{Cluster: cluster, Database: database, Name: name,
		SortingKey: key, ColumnType: columnType, Retention: canonical})
}

func (m *Manager) ensureView(ctx context.Context, cluster uuid.UUID, db, name, columnType string) error {
	e, err := m.engines.Engine(cluster)
	if err != nil {
		return err
	}
	stmt := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s (doc %s) ENGINE = Merge(%s, %s)",
		sqlquote.Ident(db), sqlquote.Ident(name), columnType, sqlquote.String(db), sqlquote.String("^"+name+"__g[0-9]+$"))
	if err := e.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("create read view of %s: %w", name, err)
	}
	return nil
}

// ChangeSortingKey sets a new key: the next batch creates a generation with it.
func (m *Manager) ChangeSortingKey(ctx context.Context, cluster uuid.UUID, database, name, key string) (*catalog.Table, error) {
	if _, ok := m.cat.Model().Table(cluster, database, name); !ok {
		return nil, fmt.Errorf("%w: table %q in database %q", catalog.ErrNotFound, name, database)
	}
	if strings.TrimSpace(key) == "" {
		return nil, &catalog.FieldError{Field: "sorting_key", Message: "a sorting key must contain at least one expression and cannot be removed once set"}
	}
	key, err := m.CheckKey(ctx, cluster, key)
	if err != nil {
		return nil, err
	}
	return m.cat.ChangeSortingKey(ctx, cluster, database, name, key)
}

// DropTable deletes a table with its data.
func (m *Manager) DropTable(ctx context.Context, cluster uuid.UUID, database, name string) error {
	if t, ok := m.cat.Model().Table(cluster, database, name); ok {
		if err := m.storageAnswers(ctx, m.storageOf(t)); err != nil {
			return err
		}
	}
	t, err := m.cat.DeleteTable(ctx, cluster, database, name)
	if err != nil {
		return err
	}
	e, err := m.engines.Engine(cluster)
	if err != nil {
		return err
	}
	stmts := []string{"DROP TABLE IF EXISTS " + sqlquote.Ident(t.Engine) + "." + sqlquote.Ident(t.Name) + " SYNC"}
	for _, g := range t.Generations {
		stmts = append(stmts, "DROP TABLE IF EXISTS "+sqlquote.Ident(t.Engine)+"."+sqlquote.Ident(catalog.GenerationTable(t.Name, g.N))+" SYNC")
	}
	for _, s := range stmts {
		if err := e.Exec(ctx, s); err != nil {
			return fmt.Errorf("drop engine tables of %s: %w", name, err)
		}
	}
	return nil
}

// Reconcile makes the engine hold every database and read view the catalog has, after
// an engine was reset or a node stopped between the two.
func (m *Manager) Reconcile(ctx context.Context, cluster uuid.UUID) error {
	for _, d := range m.cat.Model().Databases(cluster) {
		if err := m.EnsureDatabase(ctx, d); err != nil {
			return err
		}
		for _, t := range m.cat.Model().Tables(cluster, d.Name) {
			if err := m.attachGenerations(ctx, t); err != nil {
				return err
			}
			if err := m.ensureView(ctx, cluster, d.Engine, t.Name, t.ColumnType); err != nil {
				return err
			}
			m.reconcileTTL(ctx, t)
		}
	}
	return nil
}

// attachGenerations attaches again the generations of a table on S3 that the engine
// lacks (its local directory was lost): their parts and the parts' metadata are in the
// bucket (a plain_rewritable disk) under their catalog.GenerationUUID, so the catalog's
// definition with that UUID finds them. A generation the engine has is left as it is.
func (m *Manager) attachGenerations(ctx context.Context, t *catalog.Table) error {
	if m.storageOf(t) == nil {
		return nil
	}
	settings, err := m.generationSettings(t)
	if err != nil {
		return err
	}
	e, err := m.engines.Engine(t.ClusterID)
	if err != nil {
		return err
	}
	for _, g := range t.Generations {
		stmt := fmt.Sprintf("ATTACH TABLE IF NOT EXISTS %s.%s%s (doc %s) ENGINE = MergeTree ORDER BY (%s)%s SETTINGS %s",
			sqlquote.Ident(t.Engine), sqlquote.Ident(catalog.GenerationTable(t.Name, g.N)), m.uuidClause(t, g.N, g.Resorts),
			t.ColumnType, g.PhysicalKey, ttlClause(t), settings)
		if err := e.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("attach generation %d of %s from its bucket: %w", g.N, t.Name, err)
		}
	}
	return nil
}

// Target implements pipeline.Tables.
func (m *Manager) Target(ctx context.Context, id uuid.UUID, sample [][]byte) (target.Table, bool, error) {
	t, ok := m.cat.Model().TableByID(id)
	if !ok {
		return target.Table{}, false, nil
	}
	if !t.KeyPending() {
		g, _ := t.Current()
		return m.target(t, g.N), true, nil
	}
	lock := m.tableLock(id)
	lock.Lock()
	defer lock.Unlock()
	if t, ok = m.cat.Model().TableByID(id); !ok {
		return target.Table{}, false, nil
	}
	if !t.KeyPending() {
		g, _ := t.Current()
		return m.target(t, g.N), true, nil
	}
	t, err := m.createGeneration(ctx, t, sample)
	if err != nil {
		return target.Table{}, false, err
	}
	g, ok := t.Current()
	if !ok {
		// A batch plan must name a generation that exists: this one is retried instead.
		return target.Table{}, false, fmt.Errorf("table %s: its generation was made but the read model does not have it yet", t.Name)
	}
	return m.target(t, g.N), true, nil
}

// Generation implements pipeline.Tables.
func (m *Manager) Generation(_ context.Context, id uuid.UUID, gen int) (target.Table, bool, error) {
	t, ok := m.cat.Model().TableByID(id)
	if !ok {
		return target.Table{}, false, nil
	}
	for _, g := range t.Generations {
		if g.N == gen {
			return m.target(t, gen), true, nil
		}
	}
	return target.Table{}, false, fmt.Errorf("table %s has no generation %d yet", t.Name, gen)
}

// TableHome implements pipeline.Homes.
func (m *Manager) TableHome(id uuid.UUID) (target.Home, bool) {
	model := m.cat.Model()
	t, ok := model.TableByID(id)
	if !ok {
		return target.Home{}, false
	}
	d, ok := model.Database(t.ClusterID, t.Database)
	if !ok {
		return target.Home{}, false
	}
	return target.Home{Cluster: t.ClusterID, Org: d.OrgID, Database: t.Engine}, true
}

// DatabaseHome implements pipeline.Homes.
func (m *Manager) DatabaseHome(engine string) (target.Home, bool) {
	d, ok := m.cat.Model().DatabaseByEngine(engine)
	if !ok {
		return target.Home{}, false
	}
	return target.Home{Cluster: d.ClusterID, Org: d.OrgID, Database: d.Engine}, true
}

func (m *Manager) target(t *catalog.Table, gen int) target.Table {
	return target.Table{TableID: t.ID, Database: t.Engine, Table: catalog.GenerationTable(t.Name, gen), Gen: gen,
		ColumnType: t.ColumnType, Remote: m.storageOf(t) != nil}
}

func (m *Manager) tableLock(id uuid.UUID) *sync.Mutex {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.locks[id]
	if l == nil {
		l = &sync.Mutex{}
		m.locks[id] = l
	}
	return l
}

// createGeneration creates the next generation of t in the engine, keyed by the table's
// key typed from sample, and records it. The key recorded is the one the engine holds,
// read back, so nodes racing to create the same generation record the same key.
func (m *Manager) createGeneration(ctx context.Context, t *catalog.Table, sample [][]byte) (*catalog.Table, error) {
	e, err := m.engines.Engine(t.ClusterID)
	if err != nil {
		return nil, err
	}
	// Inference failing on the data (not on reaching the engine) must not stall
	// ingestion: the generation is then made without an automatic key, or with its
	// paths typed as String.
	logical, chosen := t.SortingKey, ""
	if logical == "" {
		if chosen, err = chooseKey(ctx, e, t.ColumnType, sample); err != nil {
			if !isEngineException(err) {
				return nil, err
			}
			chosen = ""
		}
		logical = chosen
	}
	k, err := sortkey.Parse(logical)
	if err != nil {
		return nil, fmt.Errorf("sorting key %q of %s: %w", logical, t.Name, err)
	}
	types, err := inferTypes(ctx, e, t.ColumnType, k.Paths(), sample)
	if err != nil {
		if !isEngineException(err) {
			return nil, err
		}
		types = map[string]string{}
		for _, p := range k.Paths() {
			types[p] = "String"
		}
	}
	n := 1
	if g, ok := t.Current(); ok {
		n = g.N + 1
	}
	gen := catalog.GenerationTable(t.Name, n)
	settings, err := m.generationSettings(t)
	if err != nil {
		return nil, err
	}
	stmt := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s%s (doc %s) ENGINE = MergeTree ORDER BY (%s)%s SETTINGS %s",
		sqlquote.Ident(t.Engine), sqlquote.Ident(gen), m.uuidClause(t, n, 0), t.ColumnType, k.Compile(types), ttlClause(t), settings)
	if err := e.Exec(ctx, stmt); err != nil {
		return nil, fmt.Errorf("create generation %d of %s: %w", n, t.Name, err)
	}
	keys, err := e.QueryStrings(ctx, fmt.Sprintf("SELECT sorting_key FROM system.tables WHERE database = %s AND name = %s",
		sqlquote.String(t.Engine), sqlquote.String(gen)))
	if err != nil || len(keys) != 1 {
		return nil, fmt.Errorf("read back generation %d of %s: %v", n, t.Name, err)
	}
	made, err := m.cat.CreateGeneration(ctx, t.ID, n, t.SortingKey, keys[0], chosen)
	if err != nil {
		return nil, err
	}
	// A retention changed while the generation was made may have missed it.
	if made.Retention != t.Retention {
		if err := m.applyTTL(ctx, e, made, n); err != nil {
			return nil, err
		}
	}
	return made, nil
}

// maxSampleBytes bounds the rows sent to the engine to infer key types: they travel
// inside the query text, which the engine caps (max_query_size, 256 KiB by default).
const maxSampleBytes = 200 << 10

// inferTypes asks the engine which type each path has in the sample, parsing the rows
// exactly as an insert would. A path typed by the column declaration keeps that type
// (""); a Dynamic path gets its most frequent type, Float64 when integers and floats
// mix, String when the sample never has it.
func inferTypes(ctx context.Context, e Engine, columnType string, paths []string, sample [][]byte) (map[string]string, error) {
	types := map[string]string{}
	if len(paths) == 0 {
		return types, nil
	}
	src := sampleSource(columnType, sample)
	for _, path := range paths {
		col := sortkey.Subcolumn(strings.Split(path, "."), "")
		declared, err := e.QueryStrings(ctx, fmt.Sprintf("SELECT toTypeName(%s) FROM %s LIMIT 1", col, src))
		if err != nil {
			return nil, fmt.Errorf("infer type of %s: %w", path, err)
		}
		if len(declared) == 1 && declared[0] != "Dynamic" {
			types[path] = ""
			continue
		}
		counts, err := e.QueryStrings(ctx, fmt.Sprintf(
			"SELECT concat(dynamicType(%s), '\\t', toString(count())) FROM %s GROUP BY dynamicType(%[1]s)", col, src))
		if err != nil {
			return nil, fmt.Errorf("infer type of %s: %w", path, err)
		}
		types[path] = dominant(counts)
	}
	return types, nil
}

func dominant(counts []string) string {
	type tc struct {
		typ string
		n   int
	}
	var all []tc
	ints, floats := false, false
	for _, line := range counts {
		typ, num, _ := strings.Cut(line, "\t")
		if typ == "None" {
			continue
		}
		var n int
		fmt.Sscan(num, &n)
		all = append(all, tc{typ, n})
		switch typ {
		case "Int64", "UInt64":
			ints = true
		case "Float64":
			floats = true
		}
	}
	if len(all) == 0 {
		return "String"
	}
	// The one typing rule (docs/typing.md) where it gives a subcolumn type: one type
	// seen, or numbers mixed (Float64, as queries read them).
	seen := make([]string, len(all))
	for i, t := range all {
		seen[i] = t.typ
	}
	if r := pathtype.Decide(seen); r.Subcolumn || (ints && floats && r.Type == "Float64") {
		return r.Type
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n || (all[i].n == all[j].n && all[i].typ < all[j].typ) })
	return all[0].typ
}

// isEngineException reports whether the engine answered err (rather than being away).
func isEngineException(err error) bool {
	_, ok := engineerr.As(err)
	return ok
}
