package statement

import (
	"fmt"
	"slices"
	"strings"
)

// Env is everything Analyze needs to know besides the statement text: who is
// asking, where, and what the organization has defined. The HTTP layer builds
// one per request from the authenticated principal and the read models.
type Env struct {
	Principal Principal
	// Database is the selected logical database (query parameter, header or
	// the key's stored default). "system" selects the read-only system views.
	Database string
	Catalog  Catalog
	// Access gives roles, grants, row policies and settings profiles. Nil
	// means none are defined.
	Access Access
	// Cluster describes how the cluster stores access entities and
	// workloads, which decides the ON CLUSTER rules.
	Cluster Cluster
}

// Cluster holds the facts about the cluster and organization that change
// which forms of access-control and scheduling statements are accepted.
type Cluster struct {
	// ReplicatedAccessStorage: roles, policies and profiles live in
	// replicated (Keeper) storage, so ON CLUSTER is unnecessary.
	ReplicatedAccessStorage bool
	// KeeperWorkloadStorage: workloads and resources live in Keeper, where
	// ON CLUSTER is rejected.
	KeeperWorkloadStorage bool
	// InternalOrganization: the caller belongs to the service's internal
	// organization, which cannot manage policies, profiles or scheduling.
	InternalOrganization bool
	// SharedEngine: the cluster's engine also serves other organizations (one
	// ClickHouse server for every cluster). Workload scheduling is server-wide
	// there (one root workload, one resource per operation), so tenants may not
	// manage it: the operator defines workloads, tenants select them.
	SharedEngine bool
	// MaxThreads is the cores of the cluster's size: a SETTINGS max_threads above it,
	// or 0 (the engine's "auto", the machine's cores), is lowered to it. 0: no cap.
	MaxThreads int
}

// Catalog is the organization's data catalog: its logical databases, their
// engine names, and its tables.
type Catalog interface {
	// Database returns the engine database of the organization's logical
	// database name (o_<org uuid hex>__<name>).
	Database(name string) (engine string, ok bool)
	// Databases lists the organization's logical databases.
	Databases() []Database
	// Table reports whether table exists in logical database db.
	Table(db, table string) (Table, bool)
}

// Database is one logical database of the organization.
type Database struct {
	Name   string // logical name
	Engine string // engine database name
}

// Table is what the analysis needs about one table.
type Table struct {
	// Generation is the current generation n: rows are written to
	// <engine db>.<table>__g<n>. Zero means no generation exists yet.
	Generation int
	// Paths is the table's path schema: each leaf path with the engine types seen in
	// it (docs/typing.md). Nil leaves every path Dynamic.
	Paths map[string][]string
	// SortingKey is the table's logical sorting key ("" chooses one per part).
	SortingKey string
	// TTL is the table's retention as a TTL expression in user names
	// ("timestamp + INTERVAL 30 DAY"); "" keeps rows forever. SHOW CREATE TABLE shows it.
	TTL string
}

// Access is the organization's access control: roles with their grants,
// database users (whose names roles may not take), row policies and
// settings profiles.
type Access interface {
	RoleExists(name string) bool
	// Grants returns the grants held by role.
	Grants(role string) []Grant
	// DatabaseUserExists reports whether an engine user has this name (every
	// custom-role key has one); role names may not collide with them.
	DatabaseUserExists(name string) bool
	// RowPolicies returns every row policy of the organization.
	RowPolicies() []RowPolicy
	// SettingsProfiles returns every settings profile.
	SettingsProfiles() []SettingsProfile
}

// Privilege is a set of data privileges.
type Privilege uint8

// Privileges a grant can hold.
const (
	PrivSelect Privilege = 1 << iota
	PrivInsert
)

// MarshalText renders privileges as "SELECT", "INSERT" or "SELECT, INSERT".
func (p Privilege) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads what MarshalText wrote.
func (p *Privilege) UnmarshalText(b []byte) error {
	*p = 0
	for _, part := range strings.Split(string(b), ",") {
		switch strings.TrimSpace(part) {
		case "SELECT":
			*p |= PrivSelect
		case "INSERT":
			*p |= PrivInsert
		case "":
		default:
			return fmt.Errorf("unknown privilege %q", part)
		}
	}
	return nil
}

func (p Privilege) String() string {
	switch p {
	case PrivSelect:
		return "SELECT"
	case PrivInsert:
		return "INSERT"
	case PrivSelect | PrivInsert:
		return "SELECT, INSERT"
	}
	return ""
}

// Grant is one privilege grant to a role. Database and Table may be "*".
// Columns, when not empty, restricts the grant to those top-level JSON keys
// of the document (see DESIGN.md: a column of a table is a top-level path
// segment).
type Grant struct {
	Role       string
	Privileges Privilege
	Database   string
	Table      string
	Columns    []string
}

// covers reports whether g grants priv on logical table db.table.
func (g Grant) covers(priv Privilege, db, table string) bool {
	return g.Privileges&priv != 0 &&
		(g.Database == "*" || g.Database == db) &&
		(g.Table == "*" || g.Table == table)
}

// RowPolicy filters reads of a table by keys holding one of Roles.
type RowPolicy struct {
	Name     string
	Database string // logical
	Table    string
	// Filter is the boolean expression in logical names, as Analyze
	// rendered it when the policy was created.
	Filter      string
	Restrictive bool
	Roles       []string
}

// Constraint is how a settings profile pins a setting.
type Constraint uint8

// Constraints of profile settings.
const (
	ConstraintNone Constraint = iota
	ConstraintReadonly
	ConstraintConst
)

// MarshalText renders the constraint as "", "READONLY" or "CONST".
func (c Constraint) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads what MarshalText wrote.
func (c *Constraint) UnmarshalText(b []byte) error {
	switch string(b) {
	case "":
		*c = ConstraintNone
	case "READONLY":
		*c = ConstraintReadonly
	case "CONST":
		*c = ConstraintConst
	default:
		return fmt.Errorf("unknown constraint %q", b)
	}
	return nil
}

func (c Constraint) String() string {
	switch c {
	case ConstraintReadonly:
		return "READONLY"
	case ConstraintConst:
		return "CONST"
	}
	return ""
}

// SettingsProfile applies settings to the queries of keys holding Roles.
type SettingsProfile struct {
	Name     string
	Settings []ProfileSetting
	Roles    []string
}

// ProfileSetting is one setting of a profile. Value is the plain value
// ("analytics", "1"), not an SQL literal.
type ProfileSetting struct {
	Name       string
	Value      string
	Constraint Constraint
}

// StaticCatalog is an in-memory Catalog, for tests and tools.
type StaticCatalog struct {
	DBs    []Database
	Tables map[string]map[string]Table // logical db -> table -> info
}

// Database implements Catalog.
func (c *StaticCatalog) Database(name string) (string, bool) {
	for _, d := range c.DBs {
		if d.Name == name {
			return d.Engine, true
		}
	}
	return "", false
}

// Databases implements Catalog.
func (c *StaticCatalog) Databases() []Database { return c.DBs }

// Table implements Catalog.
func (c *StaticCatalog) Table(db, table string) (Table, bool) {
	t, ok := c.Tables[db][table]
	return t, ok
}

// StaticAccess is an in-memory Access, for tests and tools.
type StaticAccess struct {
	Roles    []string
	Users    []string
	GrantSet []Grant
	Policies []RowPolicy
	Profiles []SettingsProfile
}

// RoleExists implements Access.
func (a *StaticAccess) RoleExists(name string) bool { return slices.Contains(a.Roles, name) }

// Grants implements Access.
func (a *StaticAccess) Grants(role string) []Grant {
	var out []Grant
	for _, g := range a.GrantSet {
		if g.Role == role {
			out = append(out, g)
		}
	}
	return out
}

// DatabaseUserExists implements Access.
func (a *StaticAccess) DatabaseUserExists(name string) bool { return slices.Contains(a.Users, name) }

// RowPolicies implements Access.
func (a *StaticAccess) RowPolicies() []RowPolicy { return a.Policies }

// SettingsProfiles implements Access.
func (a *StaticAccess) SettingsProfiles() []SettingsProfile { return a.Profiles }

// noAccess is the Access of an organization without access entities.
type noAccess struct{}

func (noAccess) RoleExists(string) bool              { return false }
func (noAccess) Grants(string) []Grant               { return nil }
func (noAccess) DatabaseUserExists(string) bool      { return false }
func (noAccess) RowPolicies() []RowPolicy            { return nil }
func (noAccess) SettingsProfiles() []SettingsProfile { return nil }
