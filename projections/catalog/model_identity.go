package catalog

import (
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// User is a local user.
type User struct {
	ID           uuid.UUID
	Username     string
	Name         string
	PasswordHash string
	CreatedAt    time.Time
}

// Membership is a user's role in an organization.
type Membership struct {
	OrgID  uuid.UUID
	UserID uuid.UUID
	Role   string
	// Joined is the store position of the membership's start: memberships compare by it.
	Joined uint64
}

// Session is a user token: a login session or an OAuth access token.
type Session struct {
	ID        uuid.UUID
	UserID    uuid.UUID
	Kind      string
	Scope     string
	TokenHash string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// Expired reports whether the session is expired at now.
func (s *Session) Expired(now time.Time) bool { return !now.Before(s.ExpiresAt) }

// Device authorization states.
const (
	DevicePending       = "pending"
	DeviceApprovedState = "approved"
	DeviceDeniedState   = "denied"
	DeviceIssued        = "issued"
)

// Device is an OAuth device authorization request.
type Device struct {
	ID             uuid.UUID
	DeviceCodeHash string
	UserCode       string
	ClientID       string
	Scope          string
	ExpiresAt      time.Time
	Interval       int
	State          string
	UserID         uuid.UUID
	SessionID      uuid.UUID
}

// Role is a database role of a cluster.
type Role struct {
	ClusterID uuid.UUID
	Name      string
	CreatedAt time.Time
}

type identity struct {
	users       map[uuid.UUID]*User
	usernames   map[string]*User                        // lowercased
	members     map[uuid.UUID]map[uuid.UUID]*Membership // org → user
	sessions    map[uuid.UUID]*Session
	sessionHash map[string]*Session
	devices     map[uuid.UUID]*Device
	deviceHash  map[string]*Device
	userCodes   map[string]*Device
	roles       map[uuid.UUID]map[string]*Role // cluster → name
	// operator is the first user the log records (IsOperator).
	operator uuid.UUID
}

func newIdentity() identity {
	return identity{
		users: map[uuid.UUID]*User{}, usernames: map[string]*User{},
		members:  map[uuid.UUID]map[uuid.UUID]*Membership{},
		sessions: map[uuid.UUID]*Session{}, sessionHash: map[string]*Session{},
		devices: map[uuid.UUID]*Device{}, deviceHash: map[string]*Device{}, userCodes: map[string]*Device{},
		roles: map[uuid.UUID]map[string]*Role{},
	}
}

// applyIdentity folds identity events; it reports whether it knew the type.
func (m *Model) applyIdentity(e es.Event) (bool, error) {
	switch e.Type {
	case EvUserCreated:
		v, err := decode[UserCreated](e)
		if err != nil {
			return true, err
		}
		u := &User{ID: v.ID, Username: v.Username, Name: v.Name, PasswordHash: v.PasswordHash, CreatedAt: v.CreatedAt}
		if m.operator == uuid.Nil {
			m.operator = v.ID
		}
		m.users[v.ID] = u
		m.usernames[strings.ToLower(v.Username)] = u
	case EvUserPasswordChanged:
		v, err := decode[UserPasswordChanged](e)
		if err != nil {
			return true, err
		}
		if old := m.users[v.ID]; old != nil {
			u := *old
			u.PasswordHash = v.PasswordHash
			m.users[v.ID] = &u
			m.usernames[strings.ToLower(u.Username)] = &u
		}
	case EvUsernameClaimed, EvOrgNameClaimed, EvOrgNameReleased, EvClusterNamed:
		// Uniqueness claims live in their own streams; the read model needs nothing.
	case EvOrganizationRenamed:
		v, err := decode[OrganizationRenamed](e)
		if err != nil {
			return true, err
		}
		if old := m.orgs[v.ID]; old != nil {
			o := *old
			o.Name = v.Name
			m.orgs[v.ID] = &o
		}
	case EvOrganizationDeleted:
		v, err := decode[OrganizationDeleted](e)
		if err != nil {
			return true, err
		}
		delete(m.orgs, v.ID)
		delete(m.members, v.ID)
	case EvMemberAdded, EvMemberRoleChanged:
		v, err := decode[MemberAdded](e)
		if err != nil {
			return true, err
		}
		if m.members[v.OrgID] == nil {
			m.members[v.OrgID] = map[uuid.UUID]*Membership{}
		}
		joined := e.Position
		if old := m.members[v.OrgID][v.UserID]; old != nil {
			joined = old.Joined // a role change keeps the membership's start
		}
		m.members[v.OrgID][v.UserID] = &Membership{OrgID: v.OrgID, UserID: v.UserID, Role: v.Role, Joined: joined}
	case EvMemberRemoved:
		v, err := decode[MemberRemoved](e)
		if err != nil {
			return true, err
		}
		delete(m.members[v.OrgID], v.UserID)
	case EvSessionCreated:
		v, err := decode[SessionCreated](e)
		if err != nil {
			return true, err
		}
		s := &Session{ID: v.ID, UserID: v.UserID, Kind: v.Kind, Scope: v.Scope, TokenHash: v.TokenHash,
			ExpiresAt: v.ExpiresAt, CreatedAt: v.CreatedAt}
		m.sessions[v.ID] = s
		m.sessionHash[v.TokenHash] = s
	case EvSessionRevoked:
		v, err := decode[SessionRevoked](e)
		if err != nil {
			return true, err
		}
		if s := m.sessions[v.ID]; s != nil {
			delete(m.sessionHash, s.TokenHash)
			delete(m.sessions, v.ID)
		}
	case EvDeviceRequested:
		v, err := decode[DeviceRequested](e)
		if err != nil {
			return true, err
		}
		d := &Device{ID: v.ID, DeviceCodeHash: v.DeviceCodeHash, UserCode: v.UserCode, ClientID: v.ClientID,
			Scope: v.Scope, ExpiresAt: v.ExpiresAt, Interval: v.Interval, State: DevicePending}
		m.devices[v.ID] = d
		m.deviceHash[v.DeviceCodeHash] = d
		m.userCodes[v.UserCode] = d
	case EvDeviceApproved, EvDeviceDenied, EvDeviceTokenIssued:
		v, err := decode[struct {
			ID        uuid.UUID `json:"id"`
			UserID    uuid.UUID `json:"user_id"`
			SessionID uuid.UUID `json:"session_id"`
		}](e)
		if err != nil {
			return true, err
		}
		old := m.devices[v.ID]
		if old == nil {
			return true, nil
		}
		d := *old
		switch e.Type {
		case EvDeviceApproved:
			d.State, d.UserID = DeviceApprovedState, v.UserID
		case EvDeviceDenied:
			d.State, d.UserID = DeviceDeniedState, v.UserID
		default:
			d.State, d.SessionID = DeviceIssued, v.SessionID
		}
		m.devices[v.ID], m.deviceHash[d.DeviceCodeHash], m.userCodes[d.UserCode] = &d, &d, &d
	case EvRoleCreated:
		v, err := decode[RoleCreated](e)
		if err != nil {
			return true, err
		}
		if m.roles[v.ClusterID] == nil {
			m.roles[v.ClusterID] = map[string]*Role{}
		}
		m.roles[v.ClusterID][v.Name] = &Role{ClusterID: v.ClusterID, Name: v.Name, CreatedAt: v.CreatedAt}
	case EvRoleDropped:
		v, err := decode[RoleDropped](e)
		if err != nil {
			return true, err
		}
		delete(m.roles[v.ClusterID], v.Name)
	default:
		return false, nil
	}
	return true, nil
}

// User returns a user by id.
func (m *Model) User(id uuid.UUID) (*User, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	u, ok := m.users[id]
	return u, ok
}

// IsOperator reports whether user is the service's operator, who alone creates users:
// the bootstrap administrator, which is the first user the log records (EnsureBootstrap
// creates it before anything else, on an empty store). Creating users is not an
// organization administrator's act, because anyone signed in can create an
// organization and administer it.
func (m *Model) IsOperator(user uuid.UUID) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return user != uuid.Nil && user == m.operator
}

// UserByName returns a user by user name, case-insensitively.
func (m *Model) UserByName(name string) (*User, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	u, ok := m.usernames[strings.ToLower(name)]
	return u, ok
}

// Membership returns a user's membership of an organization.
func (m *Model) Membership(org, user uuid.UUID) (*Membership, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ms, ok := m.members[org][user]
	return ms, ok
}

// Members returns an organization's memberships.
func (m *Model) Members(org uuid.UUID) []*Membership {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*Membership
	for _, ms := range m.members[org] {
		out = append(out, ms)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UserID.String() < out[j].UserID.String() })
	return out
}

// UserOrganizations returns the organizations a user belongs to, by name.
func (m *Model) UserOrganizations(user uuid.UUID) []*Organization {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*Organization
	for org, ms := range m.members {
		if _, ok := ms[user]; ok {
			if o := m.orgs[org]; o != nil {
				out = append(out, o)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// OrganizationByName returns an organization by name, case-insensitively.
func (m *Model) OrganizationByName(name string) (*Organization, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, o := range m.orgs {
		if strings.EqualFold(o.Name, name) {
			return o, true
		}
	}
	return nil, false
}

// SessionByHash returns the user token whose hash is hash.
func (m *Model) SessionByHash(hash string) (*Session, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.sessionHash[hash]
	return s, ok
}

// DeviceByCodeHash returns a device authorization by the hash of its device code.
func (m *Model) DeviceByCodeHash(hash string) (*Device, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.deviceHash[hash]
	return d, ok
}

// DeviceByUserCode returns a device authorization by its user code.
func (m *Model) DeviceByUserCode(code string) (*Device, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.userCodes[code]
	return d, ok
}

// Device returns a device authorization by id.
func (m *Model) Device(id uuid.UUID) (*Device, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.devices[id]
	return d, ok
}

// Role returns a role of a cluster.
func (m *Model) Role(cluster uuid.UUID, name string) (*Role, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.roles[cluster][name]
	return r, ok
}

// Roles returns the roles of a cluster, by name.
func (m *Model) Roles(cluster uuid.UUID) []*Role {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*Role
	for _, r := range m.roles[cluster] {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
