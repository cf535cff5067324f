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

// The permission matrix of SPEC.md (Authentication), extended to the other
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
func (p Principal) canRead() bool {
	switch p.Kind {
	case PermissionKey:
		return p.Permission == PermAdmin || p.Permission == PermReadWrite || p.Permission == PermReadOnly
	case RoleKey, UserSession, Workflow:
		return true
	}
	return false
}

// canWrite is the write half of INSERT ... SELECT for principals whose
// rights do not come from grants.
func (p Principal) canWrite() bool {
	switch p.Kind {
	case PermissionKey:
		return p.Permission == PermAdmin || p.Permission == PermReadWrite || p.Permission == PermWriteOnly
	case UserSession:
		return p.OrgAdmin
	case Workflow:
		return true
	}
	return false
}

func (p Principal) isAdmin() bool {
	switch p.Kind {
	case PermissionKey:
		return p.Permission == PermAdmin
	case UserSession:
		return p.OrgAdmin
	}
	return false
}

func (p Principal) byGrants() bool { return p.Kind == RoleKey }

// holdsAny reports whether the key holds one of roles (row policies and settings
// profiles apply to keys holding one of theirs).
func (p Principal) holdsAny(roles []string) bool {
	return slices.ContainsFunc(roles, func(r string) bool { return slices.Contains(p.Roles, r) })
}
