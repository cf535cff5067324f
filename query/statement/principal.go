package statement

import (
	"slices"
	"strings"
)

// PrincipalKind says how the caller authenticated.
type PrincipalKind uint8

// Principal kinds.
const (
	// PermissionKey is an API key with a permission (admin, read_write,
	// write_only, read_only).
	PermissionKey PrincipalKind = iota + 1
	// RoleKey is a custom-role API key: limited to the grants of its roles,
	// filtered by their row policies, tuned by their settings profiles.
	RoleKey
	// UserSession is an organization member's session or OAuth token.
	UserSession
	// Workflow is the scheduler running a saved workflow's SQL with the
	// organization's credentials.
	Workflow
)

// Permission of a permission-based key.
type Permission string

// Permissions of API keys.
const (
	PermAdmin     Permission = "admin"
	PermReadWrite Permission = "read_write"
	PermWriteOnly Permission = "write_only"
	PermReadOnly  Permission = "read_only"
)

// Principal is the caller. Build it with KeyWithPermission, KeyWithRoles,
// Member or WorkflowRun.
type Principal struct {
	Kind       PrincipalKind
	Permission Permission // PermissionKey only
	Roles      []string   // RoleKey only: the key's database_roles
	OrgAdmin   bool       // UserSession only: membership role admin
}

// KeyWithPermission is a permission-based API key.
func KeyWithPermission(p Permission) Principal { return Principal{Kind: PermissionKey, Permission: p} }

// KeyWithRoles is a custom-role API key.
func KeyWithRoles(roles ...string) Principal { return Principal{Kind: RoleKey, Roles: roles} }

// Member is an organization user session; admin is the membership role.
func Member(admin bool) Principal { return Principal{Kind: UserSession, OrgAdmin: admin} }

// WorkflowRun is a workflow executing its saved SQL.
func WorkflowRun() Principal { return Principal{Kind: Workflow} }

func (p Principal) String() string {
	switch p.Kind {
	case PermissionKey:
		return "key with permission " + string(p.Permission)
	case RoleKey:
		return "key with roles " + strings.Join(p.Roles, ", ")
	case UserSession:
		if p.OrgAdmin {
			return "organization administrator"
		}
		return "organization member"
	case Workflow:
		return "workflow"
	}
	return "unknown principal"
}

// The permission matrix of the served OpenAPI document (edge/openapi.json,
// "Permissions"), extended to the other
// principals:
//
//	                 read  insert-select  admin DDL (tables, roles, policies, workloads, profiles)
//	admin key         yes   yes            yes
//	read_write key    yes   yes            no
//	read_only key     yes   no             no
//	write_only key    no    no (needs read) no
//	role key          grants (SELECT; INSERT on the target)  no
//	org admin         yes   yes            yes
//	org member        yes   no             no
//	workflow          yes   yes            no
//
// Allows below writes it down; these read it.
func (p Principal) canRead() bool { return p.Allows(ActQuery) }

// canWrite is the write half of INSERT ... SELECT for principals whose
// rights do not come from grants.
func (p Principal) canWrite() bool { return !p.byGrants() && p.Allows(ActInsert) }

func (p Principal) isAdmin() bool { return p.Allows(ActManageTables) }

func (p Principal) byGrants() bool { return p.Kind == RoleKey }

// holdsAny reports whether the key holds one of roles (row policies and settings
// profiles apply to keys holding one of theirs).
func (p Principal) holdsAny(roles []string) bool {
	return slices.ContainsFunc(roles, func(r string) bool { return slices.Contains(p.Roles, r) })
}

// Action is an operation of the API's permission matrix (edge/openapi.json, "Permissions").
type Action uint8

// Actions of the permission matrix.
const (
	ActListDatabases Action = iota + 1
	ActInsert
	ActQuery
	ActDeleteTable
	ActManageDatabases
	ActManageKeys
	ActManageTables // create table, change sorting key
	ActListKeys
)

// Allows is the permission matrix, the one place it is written. Permission-based keys
// follow the spec's table; custom-role keys may read through the query API and insert,
// each further limited by their roles' grants (MayInsert, the analysis); organization
// administrators act as admin keys, members read; workflows read and insert.
func (p Principal) Allows(a Action) bool {
	switch p.Kind {
	case UserSession:
		return p.OrgAdmin || a == ActListDatabases || a == ActQuery || a == ActListKeys
	case PermissionKey:
		switch p.Permission {
		case PermAdmin:
			return true
		case PermReadWrite:
			return a == ActListDatabases || a == ActInsert || a == ActQuery
		case PermWriteOnly:
			return a == ActInsert
		case PermReadOnly:
			return a == ActListDatabases || a == ActQuery
		}
	case RoleKey, Workflow:
		return a == ActInsert || a == ActQuery
	}
	return false
}

// MayInsert is the INSERT grant, the one place it is decided: whether p may insert rows
// into the logical table db.table, by the matrix and, for custom-role keys, by a grant
// of INSERT to one of its existing roles.
func MayInsert(p Principal, access Access, db, table string) bool {
	if !p.Allows(ActInsert) {
		return false
	}
	return !p.byGrants() || holds(p, access, PrivInsert, db, table)
}

// MayReadWhole is the SELECT grant for reads that see whole rows of db.table outside the
// SQL analysis (the Prometheus app's PromQL queries), the one place it is decided: by the
// matrix and, for custom-role keys, by a grant of SELECT on the table with no column
// restriction to one of its existing roles, and no row policy filtering the table for
// the key (such reads cannot apply one, so they are refused).
func MayReadWhole(p Principal, access Access, db, table string) bool {
	if !p.Allows(ActQuery) {
		return false
	}
	if !p.byGrants() {
		return true
	}
	for _, rp := range access.RowPolicies() {
		if rp.Database == db && rp.Table == table && p.holdsAny(rp.Roles) {
			return false
		}
	}
	for _, r := range p.Roles {
		if !access.RoleExists(r) {
			continue
		}
		if slices.ContainsFunc(access.Grants(r), func(g Grant) bool { return len(g.Columns) == 0 && g.covers(PrivSelect, db, table) }) {
			return true
		}
	}
	return false
}

// holds reports whether one of p's existing roles has priv on db.table.
func holds(p Principal, access Access, priv Privilege, db, table string) bool {
	for _, r := range p.Roles {
		if !access.RoleExists(r) {
			continue // a dropped role grants nothing
		}
		if slices.ContainsFunc(access.Grants(r), func(g Grant) bool { return g.covers(priv, db, table) }) {
			return true
		}
	}
	return false
}
