package catalog

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// Event type names of identity and access. Stored: never change them.
const (
	EvUserCreated         = "user.created"
	EvUserPasswordChanged = "user.password_changed"
	EvUsernameClaimed     = "username.claimed"
	EvOrganizationRenamed = "organization.renamed"
	EvOrganizationDeleted = "organization.deleted"
	EvOrgNameClaimed      = "organization_name.claimed"
	EvOrgNameReleased     = "organization_name.released"
	EvMemberAdded         = "membership.added"
	EvMemberRoleChanged   = "membership.role_changed"
	EvMemberRemoved       = "membership.removed"
	EvSessionCreated      = "session.created"
	EvSessionRevoked      = "session.revoked"
	EvDeviceRequested     = "device_authorization.requested"
	EvDeviceApproved      = "device_authorization.approved"
	EvDeviceDenied        = "device_authorization.denied"
	EvDeviceTokenIssued   = "device_authorization.token_issued"
	EvClusterNamed        = "organization.cluster_named"
	EvRoleCreated         = "role.created"
	EvRoleDropped         = "role.dropped"
)

func userStream(id uuid.UUID) string    { return "user-" + id.String() }
func usernameStream(name string) string { return "username-" + strings.ToLower(name) }
func orgNameStream(name string) string  { return "organization_name-" + strings.ToLower(name) }
func sessionStream(id uuid.UUID) string { return "session-" + id.String() }
func deviceStream(id uuid.UUID) string  { return "device_authorization-" + id.String() }
func roleStream(cluster uuid.UUID, name string) string {
	return "role-" + cluster.String() + "-" + name
}

// UserCreated records a local user. Only an argon2id hash of the password is stored.
type UserCreated struct {
	ID           uuid.UUID `json:"id"`
	Username     string    `json:"username"`
	Name         string    `json:"name"`
	PasswordHash string    `json:"password_hash"`
	CreatedAt    time.Time `json:"created_at"`
}

// UserPasswordChanged records a new password hash.
type UserPasswordChanged struct {
	ID           uuid.UUID `json:"id"`
	PasswordHash string    `json:"password_hash"`
}

// NameClaimed reserves a unique name (user name, organization name) for an owner.
type NameClaimed struct {
	Name  string    `json:"name"`
	Owner uuid.UUID `json:"owner"`
}

// OrganizationRenamed records an organization's new name.
type OrganizationRenamed struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// OrganizationDeleted records that an organization is gone.
type OrganizationDeleted struct {
	ID uuid.UUID `json:"id"`
}

// Membership roles.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// MemberAdded records a user joining an organization with a role.
type MemberAdded struct {
	OrgID  uuid.UUID `json:"org_id"`
	UserID uuid.UUID `json:"user_id"`
	Role   string    `json:"role"`
}

// MemberRoleChanged records a member's new role.
type MemberRoleChanged struct {
	OrgID  uuid.UUID `json:"org_id"`
	UserID uuid.UUID `json:"user_id"`
	Role   string    `json:"role"`
}

// MemberRemoved records a user leaving an organization.
type MemberRemoved struct {
	OrgID  uuid.UUID `json:"org_id"`
	UserID uuid.UUID `json:"user_id"`
}

// Credential kinds of user tokens.
const (
	KindSession = "session"
	KindOAuth   = "oauth"
)

// SessionCreated records a user token: a login session or an OAuth access token.
type SessionCreated struct {
	ID        uuid.UUID `json:"id"`
	UserID    uuid.UUID `json:"user_id"`
	Kind      string    `json:"kind"`
	Scope     string    `json:"scope,omitempty"`
	TokenHash string    `json:"token_hash"`
	ExpiresAt time.Time `json:"expires_at"`
	CreatedAt time.Time `json:"created_at"`
}

// SessionRevoked records a logout or revocation.
type SessionRevoked struct {
	ID uuid.UUID `json:"id"`
}

// DeviceRequested records an OAuth device authorization request (RFC 8628).
type DeviceRequested struct {
	ID             uuid.UUID `json:"id"`
	DeviceCodeHash string    `json:"device_code_hash"`
	UserCode       string    `json:"user_code"`
	ClientID       string    `json:"client_id"`
	Scope          string    `json:"scope"`
	ExpiresAt      time.Time `json:"expires_at"`
	Interval       int       `json:"interval"`
}

// DeviceApproved records a user approving a device.
type DeviceApproved struct {
	ID     uuid.UUID `json:"id"`
	UserID uuid.UUID `json:"user_id"`
}

// DeviceDenied records a user denying a device.
type DeviceDenied struct {
	ID     uuid.UUID `json:"id"`
	UserID uuid.UUID `json:"user_id"`
}

// DeviceTokenIssued records that the device exchanged its code for an access token
// (the token itself is a SessionCreated of kind oauth).
type DeviceTokenIssued struct {
	ID        uuid.UUID `json:"id"`
	SessionID uuid.UUID `json:"session_id"`
}

// ClusterNamed reserves a cluster name in its organization's stream.
type ClusterNamed struct {
	OrgID     uuid.UUID `json:"org_id"`
	ClusterID uuid.UUID `json:"cluster_id"`
	Name      string    `json:"name"`
}

// RoleCreated records a database role on a cluster.
type RoleCreated struct {
	ClusterID uuid.UUID `json:"cluster_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// RoleDropped records that a role is gone; keys that used it keep existing.
type RoleDropped struct {
	ClusterID uuid.UUID `json:"cluster_id"`
	Name      string    `json:"name"`
}
