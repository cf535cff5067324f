package catalog

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// ErrConflict means the request conflicts with the object's state (for example removing
// the last administrator of an organization).
var ErrConflict = errors.New("conflict")

// Token prefixes of user credentials; API keys use TokenPrefix.
const (
	SessionTokenPrefix = "svcs_"
	OAuthTokenPrefix   = "svco_"
	// KeyUserPrefix starts the database user name of a custom-role key; role names may
	// not start with it, so roles never collide with key users.
	KeyUserPrefix = "svc_key_"
)

// Lifetimes of user credentials.
const (
	SessionTTL     = 7 * 24 * time.Hour
	OAuthTokenTTL  = 30 * 24 * time.Hour
	DeviceCodeTTL  = 15 * time.Minute
	DevicePollSecs = 5
)

// ValidateUsername checks a user name: 1 to 64 characters of letters, digits, '.', '_',
// '-' and '@'.
func ValidateUsername(name string) error {
	if name == "" || len(name) > 64 {
		return invalid("username", "user name must be 1 to 64 characters")
	}
	for _, r := range name {
		if !(r == '.' || r == '_' || r == '-' || r == '@' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			return invalid("username", "user name %q may contain only letters, digits, '.', '_', '-' and '@'", name)
		}
	}
	return nil
}

// ValidateOrganizationName checks an organization name: 1 to 64 characters of letters,
// digits, '.', '_' and '-' (names appear in query parameters), and not shaped like a
// UUID in any form uuid.Parse reads: a name equal to another organization's id would
// let references that accept an id or a name reach the wrong organization.
func ValidateOrganizationName(name string) error {
	if name == "" || len(name) > 64 {
		return invalid("name", "organization name must be 1 to 64 characters")
	}
	if _, err := uuid.Parse(name); err == nil {
		return invalid("name", "organization name %q is shaped like an id; organizations are referred to by id or by name, so a name may not look like an id", name)
	}
	for _, r := range name {
		if !(r == '.' || r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			return invalid("name", "organization name %q may contain only letters, digits, '.', '_' and '-'", name)
		}
	}
	return nil
}

// claim reserves a unique name in its claim stream; a released name can be claimed again.
func (s *Service) claim(ctx context.Context, stream, name string, owner uuid.UUID) error {
	events, err := es.Collect(ctx, s.store.ReadStream(ctx, stream, 0))
	if err != nil {
		return err
	}
	exp := es.NoStream()
	if len(events) > 0 {
		last := events[len(events)-1]
		if last.Type != EvOrgNameReleased {
			// A retried command finds its own claim: that is success, not a conflict.
			if c, err := decode[NameClaimed](last); err == nil && c.Owner == owner {
				return nil
			}
			return fmt.Errorf("%w: the name %q is taken", ErrExists, name)
		}
		exp = es.Exact(last.Version)
	}
	typ := EvOrgNameClaimed
	if strings.HasPrefix(stream, "username-") {
		typ = EvUsernameClaimed
	}
	_, err = s.store.Append(ctx, stream, exp, newEvent(typ, NameClaimed{Name: name, Owner: owner}))
	return err
}

func (s *Service) release(ctx context.Context, stream, name string, owner uuid.UUID) error {
	_, err := s.store.Append(ctx, stream, es.Any(), newEvent(EvOrgNameReleased, NameClaimed{Name: name, Owner: owner}))
	return err
}

// CreateUser creates a local user.
func (s *Service) CreateUser(ctx context.Context, username, name, password string) (*User, error) {
	if err := ValidateUsername(username); err != nil {
		return nil, err
	}
	if len(password) < 8 {
		return nil, invalid("password", "password must have at least 8 characters")
	}
	id := uuid.New()
	hash := HashPassword(password)
	err := s.retry(ctx, func() (uint64, error) {
		if err := s.claim(ctx, usernameStream(username), username, id); err != nil {
			return 0, err
		}
		return s.append(ctx, userStream(id), es.NoStream(), newEvent(EvUserCreated, UserCreated{
			ID: id, Username: username, Name: name, PasswordHash: hash, CreatedAt: s.now()}))
	})
	if err != nil {
		return nil, err
	}
	u, _ := s.model.User(id)
	return u, nil
}

// ErrBadCredentials means the user name or password is wrong.
var ErrBadCredentials = errors.New("wrong user name or password")

// Authenticate checks a user's password.
func (s *Service) Authenticate(username, password string) (*User, error) {
	u, ok := s.model.UserByName(username)
	if !ok {
		// Spend the same time as for a real user, so timing does not tell names apart.
		_, _ = CheckPassword(dummyHash(), password)
		return nil, ErrBadCredentials
	}
	ok, err := CheckPassword(u.PasswordHash, password)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrBadCredentials
	}
	return u, nil
}

// dummyHash is a hash no password matches, made on first use: an argon2id hash costs
// 19 MiB and tens of milliseconds, which every importer would pay at init.
var dummyHash = sync.OnceValue(func() string { return HashPassword("not a password anyone has") })

// CreateSession issues a user token of kind KindSession or KindOAuth.
func (s *Service) CreateSession(ctx context.Context, user uuid.UUID, kind, scope string, ttl time.Duration) (*Session, string, error) {
	prefix := SessionTokenPrefix
	if kind == KindOAuth {
		prefix = OAuthTokenPrefix
	}
	token := prefix + strings.TrimPrefix(NewToken(), TokenPrefix)
	id := uuid.New()
	now := s.now()
	err := s.retry(ctx, func() (uint64, error) {
		return s.append(ctx, sessionStream(id), es.NoStream(), newEvent(EvSessionCreated, SessionCreated{
			ID: id, UserID: user, Kind: kind, Scope: scope, TokenHash: HashToken(token), ExpiresAt: now.Add(ttl), CreatedAt: now}))
	})
	if err != nil {
		return nil, "", err
	}
	sess, _ := s.model.SessionByHash(HashToken(token))
	return sess, token, nil
}

// RevokeSession ends a user token.
func (s *Service) RevokeSession(ctx context.Context, id uuid.UUID) error {
	return s.retry(ctx, func() (uint64, error) {
		return s.append(ctx, sessionStream(id), es.Exact(0), newEvent(EvSessionRevoked, SessionRevoked{ID: id}))
	})
}

// orgState is the organization aggregate: its name, whether it lives, its members.
type orgState struct {
	version  uint64
	position uint64 // as dbState's
	exists   bool
	live     bool
	name     string
	members  map[uuid.UUID]string
}

func (s *Service) loadOrg(ctx context.Context, id uuid.UUID) (*orgState, error) {
	st := &orgState{members: map[uuid.UUID]string{}}
	it := s.store.ReadStream(ctx, orgStream(id), 0)
	defer it.Close()
	for it.Next(ctx) {
		e := it.Event()
		st.version, st.position, st.exists = e.Version, e.Position, true
		switch e.Type {
		case EvOrganizationCreated:
			v, err := decode[OrganizationCreated](e)
			if err != nil {
				return nil, err
			}
			st.live, st.name = true, v.Name
		case EvOrganizationRenamed:
			v, err := decode[OrganizationRenamed](e)
			if err != nil {
				return nil, err
			}
			st.name = v.Name
		case EvOrganizationDeleted:
			st.live = false
		case EvMemberAdded, EvMemberRoleChanged:
			v, err := decode[MemberAdded](e)
			if err != nil {
				return nil, err
			}
			st.members[v.UserID] = v.Role
		case EvMemberRemoved:
			v, err := decode[MemberRemoved](e)
			if err != nil {
				return nil, err
			}
			delete(st.members, v.UserID)
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	if !st.live {
		return nil, fmt.Errorf("%w: organization %s", ErrNotFound, id)
	}
	return st, nil
}

func (st *orgState) admins() int {
	n := 0
	for _, r := range st.members {
		if r == RoleAdmin {
			n++
		}
	}
	return n
}

// CreateOrganizationBy creates an organization whose first administrator is creator.
func (s *Service) CreateOrganizationBy(ctx context.Context, name string, creator uuid.UUID) (*Organization, error) {
	if err := ValidateOrganizationName(name); err != nil {
		return nil, err
	}
	id := uuid.New()
	err := s.retry(ctx, func() (uint64, error) {
		if err := s.claim(ctx, orgNameStream(name), name, id); err != nil {
			return 0, err
		}
		events := []es.NewEvent{newEvent(EvOrganizationCreated, OrganizationCreated{ID: id, Name: name, CreatedAt: s.now()})}
		if creator != uuid.Nil {
			events = append(events, newEvent(EvMemberAdded, MemberAdded{OrgID: id, UserID: creator, Role: RoleAdmin}))
		}
		return s.append(ctx, orgStream(id), es.NoStream(), events...)
	})
	if err != nil {
		return nil, err
	}
	o, _ := s.model.Organization(id)
	return o, nil
}

// RenameOrganization gives an organization a new, unclaimed name.
func (s *Service) RenameOrganization(ctx context.Context, id uuid.UUID, name string) (*Organization, error) {
	if err := ValidateOrganizationName(name); err != nil {
		return nil, err
	}
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadOrg(ctx, id)
		if err != nil {
			return 0, err
		}
		if st.name == name {
			return st.position, nil
		}
		if !strings.EqualFold(st.name, name) {
			if err := s.claim(ctx, orgNameStream(name), name, id); err != nil {
				return 0, err
			}
		}
		pos, err := s.append(ctx, orgStream(id), es.Exact(st.version), newEvent(EvOrganizationRenamed, OrganizationRenamed{ID: id, Name: name}))
		if err != nil {
			return 0, err
		}
		if !strings.EqualFold(st.name, name) {
			if err := s.release(ctx, orgNameStream(st.name), st.name, id); err != nil {
				return 0, err
			}
		}
		return pos, nil
	})
	if err != nil {
		return nil, err
	}
	o, _ := s.model.Organization(id)
	return o, nil
}

// DeleteOrganization deletes an organization that has no clusters left.
func (s *Service) DeleteOrganization(ctx context.Context, id uuid.UUID) error {
	if cs := s.model.Clusters(id); len(cs) > 0 {
		return fmt.Errorf("%w: the organization still has %d cluster(s); delete them first", ErrConflict, len(cs))
	}
	return s.retry(ctx, func() (uint64, error) {
		st, err := s.loadOrg(ctx, id)
		if err != nil {
			return 0, err
		}
		pos, err := s.append(ctx, orgStream(id), es.Exact(st.version), newEvent(EvOrganizationDeleted, OrganizationDeleted{ID: id}))
		if err != nil {
			return 0, err
		}
		return pos, s.release(ctx, orgNameStream(st.name), st.name, id)
	})
}

// SetMember adds a user to an organization or changes their role. The last
// administrator cannot be demoted.
func (s *Service) SetMember(ctx context.Context, org, user uuid.UUID, role string) error {
	if role != RoleAdmin && role != RoleMember {
		return invalid("role", "role must be %q or %q", RoleAdmin, RoleMember)
	}
	if _, ok := s.model.User(user); !ok {
		return fmt.Errorf("%w: user %s", ErrNotFound, user)
	}
	return s.retry(ctx, func() (uint64, error) {
		st, err := s.loadOrg(ctx, org)
		if err != nil {
			return 0, err
		}
		old, member := st.members[user]
		if member && old == role {
			return st.position, nil
		}
		if old == RoleAdmin && role != RoleAdmin && st.admins() == 1 {
			return 0, fmt.Errorf("%w: the organization's last administrator cannot be demoted", ErrConflict)
		}
		typ := EvMemberAdded
		if member {
			typ = EvMemberRoleChanged
		}
		return s.append(ctx, orgStream(org), es.Exact(st.version), newEvent(typ, MemberAdded{OrgID: org, UserID: user, Role: role}))
	})
}

// RemoveMember removes a user from an organization; the last administrator stays.
func (s *Service) RemoveMember(ctx context.Context, org, user uuid.UUID) error {
	return s.retry(ctx, func() (uint64, error) {
		st, err := s.loadOrg(ctx, org)
		if err != nil {
			return 0, err
		}
		role, ok := st.members[user]
		if !ok {
			return 0, fmt.Errorf("%w: user %s is not a member", ErrNotFound, user)
		}
		if role == RoleAdmin && st.admins() == 1 {
			return 0, fmt.Errorf("%w: the organization's last administrator cannot be removed", ErrConflict)
		}
		return s.append(ctx, orgStream(org), es.Exact(st.version), newEvent(EvMemberRemoved, MemberRemoved{OrgID: org, UserID: user}))
	})
}

// userCodeAlphabet avoids vowels and look-alike characters (RFC 8628 §6.1).
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

func newUserCode() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = userCodeAlphabet[int(b[i])%len(userCodeAlphabet)]
	}
	return string(b[:4]) + "-" + string(b[4:])
}

// NormalizeUserCode upper-cases a user code and restores its dash, so users may type it
// loosely.
func NormalizeUserCode(code string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(code) {
		if r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if len(s) == 8 {
		return s[:4] + "-" + s[4:]
	}
	return s
}

// RequestDevice starts an OAuth device authorization and returns the device code, which
// is stored only as a hash.
func (s *Service) RequestDevice(ctx context.Context, clientID, scope string) (*Device, string, error) {
	id := uuid.New()
	code := "svcd_" + strings.TrimPrefix(NewToken(), TokenPrefix)
	userCode := newUserCode()
	err := s.retry(ctx, func() (uint64, error) {
		return s.append(ctx, deviceStream(id), es.NoStream(), newEvent(EvDeviceRequested, DeviceRequested{
			ID: id, DeviceCodeHash: HashToken(code), UserCode: userCode, ClientID: clientID, Scope: scope,
			ExpiresAt: s.now().Add(s.DeviceCodeTTL), Interval: DevicePollSecs}))
	})
	if err != nil {
		return nil, "", err
	}
	d, _ := s.model.Device(id)
	return d, code, nil
}

// DecideDevice approves or denies a pending device authorization for user.
func (s *Service) DecideDevice(ctx context.Context, id, user uuid.UUID, approve bool) error {
	return s.retry(ctx, func() (uint64, error) {
		events, err := es.Collect(ctx, s.store.ReadStream(ctx, deviceStream(id), 0))
		if err != nil {
			return 0, err
		}
		if len(events) == 0 {
			return 0, fmt.Errorf("%w: device authorization", ErrNotFound)
		}
		if len(events) > 1 {
			return 0, fmt.Errorf("%w: this code was already used", ErrConflict)
		}
		req, err := decode[DeviceRequested](events[0])
		if err != nil {
			return 0, err
		}
		if !s.now().Before(req.ExpiresAt) {
			return 0, fmt.Errorf("%w: this code has expired; start the login again", ErrConflict)
		}
		ev := newEvent(EvDeviceDenied, DeviceDenied{ID: id, UserID: user})
		if approve {
			ev = newEvent(EvDeviceApproved, DeviceApproved{ID: id, UserID: user})
		}
		return s.append(ctx, deviceStream(id), es.Exact(0), ev)
	})
}

// IssueDeviceToken exchanges an approved device authorization for an OAuth access token,
// once.
func (s *Service) IssueDeviceToken(ctx context.Context, id uuid.UUID) (*Session, string, error) {
	d, ok := s.model.Device(id)
	if !ok || d.State != DeviceApprovedState {
		return nil, "", fmt.Errorf("%w: device authorization is not approved", ErrConflict)
	}
	sess, token, err := s.CreateSession(ctx, d.UserID, KindOAuth, d.Scope, OAuthTokenTTL)
	if err != nil {
		return nil, "", err
	}
	err = s.retry(ctx, func() (uint64, error) {
		return s.append(ctx, deviceStream(id), es.Exact(1), newEvent(EvDeviceTokenIssued, DeviceTokenIssued{ID: id, SessionID: sess.ID}))
	})
	if err != nil {
		// The code was exchanged concurrently: the token just made must not work.
		_ = s.RevokeSession(ctx, sess.ID)
		return nil, "", fmt.Errorf("%w: device code already exchanged", ErrConflict)
	}
	return sess, token, nil
}

// ValidateRoleName checks a role name.
func ValidateRoleName(name string) error {
	if name == "" || len(name) > 64 {
		return invalid("role", "role name must be 1 to 64 characters")
	}
	if strings.HasPrefix(name, KeyUserPrefix) {
		return invalid("role", "role name %q collides with the database user names of keys (%s...)", name, KeyUserPrefix)
	}
	return nil
}

// CreateRole creates a role on a cluster; it never replaces an existing one.
func (s *Service) CreateRole(ctx context.Context, cluster uuid.UUID, name string, ifNotExists bool) error {
	if err := ValidateRoleName(name); err != nil {
		return err
	}
	d := definition{roleStream(cluster, name), EvRoleDropped, fmt.Sprintf("role %q", name)}
	return s.createDefinition(ctx, d, ifNotExists, false, func() es.NewEvent {
		return newEvent(EvRoleCreated, RoleCreated{ClusterID: cluster, Name: name, CreatedAt: s.now()})
	})
}

// DropRole drops a role; keys that used it lose its grants and keep existing.
func (s *Service) DropRole(ctx context.Context, cluster uuid.UUID, name string, ifExists bool) error {
	d := definition{roleStream(cluster, name), EvRoleDropped, fmt.Sprintf("role %q", name)}
	return s.dropDefinition(ctx, d, ifExists, func() es.NewEvent {
		return newEvent(EvRoleDropped, RoleDropped{ClusterID: cluster, Name: name})
	})
}
