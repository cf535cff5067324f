package catalog_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/eventstore/boltstore"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/es"
)

// TestOrganizationAndMembershipRules checks the command rules of the organization
// aggregate and its name claims, each against the error callers branch on.
func TestOrganizationAndMembershipRules(t *testing.T) {
	ctx := context.Background()
	svc, b := bootstrapped(t)
	is := func(name string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	var fe *catalog.FieldError
	for _, bad := range []string{"", "a b", strings.Repeat("a", 65), uuid.NewString(), strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", ""))} {
		if _, err := svc.CreateOrganization(ctx, bad); !errors.As(err, &fe) || fe.Field != "name" {
			t.Errorf("organization name %q: %v", bad, err)
		}
	}
	u1, err := svc.CreateUser(ctx, "ann", "Ann", "password-1")
	if err != nil {
		t.Fatal(err)
	}
	u2, err := svc.CreateUser(ctx, "bob", "Bob", "password-2")
	if err != nil {
		t.Fatal(err)
	}

	// Names are unique without regard to case; the creator is the first administrator.
	org, err := svc.CreateOrganizationBy(ctx, "beta", u1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := svc.Model().Membership(org.ID, u1.ID); !ok || m.Role != catalog.RoleAdmin {
		t.Errorf("the creator's membership: %+v %v", m, ok)
	}
	_, err = svc.CreateOrganization(ctx, "BETA")
	is("a second organization of one name in another case", err, catalog.ErrExists)
	_, err = svc.CreateOrganization(ctx, b.Organization.Name)
	is("the bootstrap organization's name", err, catalog.ErrExists)

	// Renames: a change of case keeps the claim; a taken name is refused; the old name is
	// released for others.
	if o, err := svc.RenameOrganization(ctx, org.ID, "Beta"); err != nil || o.Name != "Beta" {
		t.Fatalf("rename to another case: %+v %v", o, err)
	}
	if _, err := svc.CreateOrganization(ctx, "gamma"); err != nil {
		t.Fatal(err)
	}
	_, err = svc.RenameOrganization(ctx, org.ID, "Gamma")
	is("renaming onto a taken name", err, catalog.ErrExists)
	if o, err := svc.RenameOrganization(ctx, org.ID, "delta"); err != nil || o.Name != "delta" {
		t.Fatalf("rename: %+v %v", o, err)
	}
	if _, err := svc.CreateOrganization(ctx, "beta"); err != nil {
		t.Errorf("the name a rename released: %v", err)
	}
	_, err = svc.RenameOrganization(ctx, uuid.New(), "epsilon")
	is("renaming a missing organization", err, catalog.ErrNotFound)

	// Members: valid roles of known users; a repeat appends nothing.
	if err := svc.SetMember(ctx, org.ID, u2.ID, "owner"); !errors.As(err, &fe) || fe.Field != "role" {
		t.Errorf("an unknown role: %v", err)
	}
	is("an unknown user", svc.SetMember(ctx, org.ID, uuid.New(), catalog.RoleMember), catalog.ErrNotFound)
	is("a missing organization", svc.SetMember(ctx, uuid.New(), u2.ID, catalog.RoleMember), catalog.ErrNotFound)
	if err := svc.SetMember(ctx, org.ID, u2.ID, catalog.RoleMember); err != nil {
		t.Fatal(err)
	}
	pos := svc.Model().Position()
	if err := svc.SetMember(ctx, org.ID, u2.ID, catalog.RoleMember); err != nil || svc.Model().Position() != pos {
		t.Errorf("setting the same role again: %v, position %d -> %d", err, pos, svc.Model().Position())
	}

	// The last administrator can be neither demoted nor removed, until there is another.
	is("demoting the last administrator", svc.SetMember(ctx, org.ID, u1.ID, catalog.RoleMember), catalog.ErrConflict)
	is("removing the last administrator", svc.RemoveMember(ctx, org.ID, u1.ID), catalog.ErrConflict)
	if err := svc.SetMember(ctx, org.ID, u2.ID, catalog.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if err := svc.SetMember(ctx, org.ID, u1.ID, catalog.RoleMember); err != nil {
		t.Errorf("demoting one of two administrators: %v", err)
	}
	if err := svc.RemoveMember(ctx, org.ID, u1.ID); err != nil {
		t.Errorf("removing a member: %v", err)
	}
	if _, ok := svc.Model().Membership(org.ID, u1.ID); ok {
		t.Error("a removed member is still in the model")
	}
	is("removing a non-member", svc.RemoveMember(ctx, org.ID, u1.ID), catalog.ErrNotFound)

	// Deleting: refused while clusters remain; afterwards the organization takes no
	// commands and its name is free.
	is("deleting an organization with clusters", svc.DeleteOrganization(ctx, b.Organization.ID), catalog.ErrConflict)
	if err := svc.DeleteOrganization(ctx, org.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := svc.Model().Organization(org.ID); ok {
		t.Error("a deleted organization is still in the model")
	}
	is("deleting it again", svc.DeleteOrganization(ctx, org.ID), catalog.ErrNotFound)
	is("a member of a deleted organization", svc.SetMember(ctx, org.ID, u1.ID, catalog.RoleAdmin), catalog.ErrNotFound)
	if _, err := svc.CreateOrganization(ctx, "delta"); err != nil {
		t.Errorf("the name of a deleted organization: %v", err)
	}
}

// TestUserAndSessionRules checks user names, passwords and the tokens of sessions.
func TestUserAndSessionRules(t *testing.T) {
	ctx := context.Background()
	svc, _ := bootstrapped(t)
	var fe *catalog.FieldError
	for _, bad := range []string{"", "a b", "ann/x", strings.Repeat("a", 65)} {
		if _, err := svc.CreateUser(ctx, bad, "", "password-1"); !errors.As(err, &fe) || fe.Field != "username" {
			t.Errorf("user name %q: %v", bad, err)
		}
	}
	if _, err := svc.CreateUser(ctx, "ann", "", "short"); !errors.As(err, &fe) || fe.Field != "password" {
		t.Errorf("a short password: %v", err)
	}
	u, err := svc.CreateUser(ctx, "ann.o@example", "Ann", "password-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateUser(ctx, "ANN.O@example", "", "password-2"); !errors.Is(err, catalog.ErrExists) {
		t.Errorf("a second user of one name in another case: %v", err)
	}

	// Authentication: the right password, in any case of the name; nothing else.
	if got, err := svc.Authenticate("Ann.O@example", "password-1"); err != nil || got.ID != u.ID {
		t.Errorf("the right password: %+v %v", got, err)
	}
	refused := func(name, user, password string) {
		t.Helper()
		if _, err := svc.Authenticate(user, password); !errors.Is(err, catalog.ErrBadCredentials) {
			t.Errorf("%s: %v", name, err)
		}
	}
	refused("a wrong password", "ann.o@example", "password-2")
	refused("an unknown user", "nobody", "password-1")
	refused("an empty password", "ann.o@example", "")

	// Sessions: the token's prefix says its kind; only its hash is kept; it lives ttl; a
	// revoked one is gone.
	session := func(kind, prefix string, ttl time.Duration) {
		t.Helper()
		sess, token, err := svc.CreateSession(ctx, u.ID, kind, "", ttl)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(token, prefix) || sess.TokenHash != catalog.HashToken(token) || strings.Contains(sess.TokenHash, token) {
			t.Errorf("%s: token %q, hash %q", kind, token, sess.TokenHash)
		}
		if sess.UserID != u.ID || sess.Kind != kind || !sess.ExpiresAt.Equal(sess.CreatedAt.Add(ttl)) {
			t.Errorf("%s: %+v", kind, sess)
		}
		if sess.Expired(sess.CreatedAt) || !sess.Expired(sess.ExpiresAt) {
			t.Errorf("%s: expiry at %v", kind, sess.ExpiresAt)
		}
		if err := svc.RevokeSession(ctx, sess.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok := svc.Model().SessionByHash(catalog.HashToken(token)); ok {
			t.Errorf("%s: a revoked session still authenticates", kind)
		}
	}
	session(catalog.KindSession, catalog.SessionTokenPrefix, catalog.SessionTTL)
	session(catalog.KindOAuth, catalog.OAuthTokenPrefix, catalog.OAuthTokenTTL)
}

// TestSavedSearchRules checks that an update keeps who made the search and where, counts
// revisions, and that a deleted search takes no command.
func TestSavedSearchRules(t *testing.T) {
	ctx := context.Background()
	svc, b := bootstrapped(t)
	org, cl, by := b.Organization.ID, b.Cluster.ID, uuid.New()
	ss, err := svc.SaveSearch(ctx, catalog.SavedSearch{OrgID: org, ClusterID: cl, Name: "errors", SPL: "search level=error",
		Visibility: catalog.VisibilityPrivate, CreatedBy: by})
	if err != nil {
		t.Fatal(err)
	}
	if ss.ID == uuid.Nil || ss.Revision != 1 || !ss.CreatedAt.Equal(ss.UpdatedAt) {
		t.Fatalf("created: %+v", ss)
	}
	// An update cannot move the search to another organization or cluster, nor change its author.
	up := *ss
	up.Name, up.OrgID, up.ClusterID, up.CreatedBy = "all errors", uuid.New(), uuid.New(), uuid.New()
	got, err := svc.SaveSearch(ctx, up)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "all errors" || got.Revision != 2 || got.OrgID != org || got.ClusterID != cl || got.CreatedBy != by || !got.CreatedAt.Equal(ss.CreatedAt) {
		t.Errorf("updated: %+v", got)
	}
	if list := svc.Model().SavedSearches(org, cl); len(list) != 1 || list[0].ID != ss.ID {
		t.Errorf("the cluster's searches: %+v", list)
	}
	missing := *ss
	missing.ID = uuid.New()
	if _, err := svc.SaveSearch(ctx, missing); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("updating a missing search: %v", err)
	}
	if err := svc.DeleteSearch(ctx, ss.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := svc.Model().SavedSearch(ss.ID); ok {
		t.Error("a deleted search is still in the model")
	}
	if _, err := svc.SaveSearch(ctx, up); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("updating a deleted search: %v", err)
	}
	if err := svc.DeleteSearch(ctx, ss.ID); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("deleting a deleted search: %v", err)
	}
}

// TestDeviceAuthorizationRules checks the device flow's states: a request is decided
// once, before it expires; only an approved one is exchanged, once, for an OAuth token
// of the approving user with the requested scope; the device code is kept as its hash.
func TestDeviceAuthorizationRules(t *testing.T) {
	ctx := context.Background()
	svc, _ := bootstrapped(t)
	u, err := svc.CreateUser(ctx, "ann", "Ann", "password-1")
	if err != nil {
		t.Fatal(err)
	}
	is := func(name string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	state := func(id uuid.UUID, want string) {
		t.Helper()
		if d, ok := svc.Model().Device(id); !ok || d.State != want {
			t.Errorf("state: %+v, want %s", d, want)
		}
	}
	d, code, err := svc.RequestDevice(ctx, "cli", "openid")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := svc.Model().DeviceByCodeHash(catalog.HashToken(code)); !ok || got.ID != d.ID || d.DeviceCodeHash == code {
		t.Errorf("the device by its code: %+v %v", got, ok)
	}
	if got, ok := svc.Model().DeviceByUserCode(catalog.NormalizeUserCode(strings.ToLower(strings.ReplaceAll(d.UserCode, "-", "")))); !ok || got.ID != d.ID {
		t.Errorf("the device by its user code typed loosely: %+v %v", got, ok)
	}
	state(d.ID, catalog.DevicePending)
	_, _, err = svc.IssueDeviceToken(ctx, d.ID)
	is("exchanging a pending request", err, catalog.ErrConflict)
	is("deciding a missing request", svc.DecideDevice(ctx, uuid.New(), u.ID, true), catalog.ErrNotFound)

	if err := svc.DecideDevice(ctx, d.ID, u.ID, true); err != nil {
		t.Fatal(err)
	}
	state(d.ID, catalog.DeviceApprovedState)
	is("deciding twice", svc.DecideDevice(ctx, d.ID, u.ID, false), catalog.ErrConflict)
	sess, token, err := svc.IssueDeviceToken(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, catalog.OAuthTokenPrefix) || sess.Kind != catalog.KindOAuth || sess.UserID != u.ID || sess.Scope != "openid" {
		t.Errorf("the issued token %q: %+v", token, sess)
	}
	state(d.ID, catalog.DeviceIssued)
	_, _, err = svc.IssueDeviceToken(ctx, d.ID)
	is("exchanging twice", err, catalog.ErrConflict)

	// A denied request is never exchanged.
	denied, _, err := svc.RequestDevice(ctx, "cli", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.DecideDevice(ctx, denied.ID, u.ID, false); err != nil {
		t.Fatal(err)
	}
	state(denied.ID, catalog.DeviceDeniedState)
	_, _, err = svc.IssueDeviceToken(ctx, denied.ID)
	is("exchanging a denied request", err, catalog.ErrConflict)

	// An expired request can no longer be decided.
	svc.DeviceCodeTTL = 0
	expired, _, err := svc.RequestDevice(ctx, "cli", "")
	if err != nil {
		t.Fatal(err)
	}
	is("deciding an expired request", svc.DecideDevice(ctx, expired.ID, u.ID, true), catalog.ErrConflict)
	state(expired.ID, catalog.DevicePending)
}

// raceStore runs race once, just before the next append reaches the store: the command
// making that append has already read its aggregate, so what race appends makes its
// expected version stale.
type raceStore struct {
	es.Store
	mu   sync.Mutex
	race func()
}

func (s *raceStore) Append(ctx context.Context, stream string, exp es.Expected, events ...es.NewEvent) (es.AppendResult, error) {
	s.mu.Lock()
	race := s.race
	s.race = nil
	s.mu.Unlock()
	if race != nil {
		race()
	}
	return s.Store.Append(ctx, stream, exp, events...)
}

// TestALostRaceIsDecidedAgainOnTheNewState: a command whose aggregate changed between
// its read and its append retries from a fresh read, so its rule sees the other
// command's effect instead of overwriting it.
func TestALostRaceIsDecidedAgainOnTheNewState(t *testing.T) {
	ctx := context.Background()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "events.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rs := &raceStore{Store: st}
	m := catalog.NewModel()
	svc := catalog.NewService(rs, m, catalog.NewProjector(st, m, 0, nil))
	u1, err := svc.CreateUser(ctx, "ann", "", "password-1")
	if err != nil {
		t.Fatal(err)
	}
	u2, err := svc.CreateUser(ctx, "bob", "", "password-2")
	if err != nil {
		t.Fatal(err)
	}
	org, err := svc.CreateOrganizationBy(ctx, "acme", u1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.SetMember(ctx, org.ID, u2.ID, catalog.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	raced := func(f func() error) {
		t.Helper()
		rs.mu.Lock()
		rs.race = func() {
			if err := f(); err != nil {
				t.Errorf("the racing command: %v", err)
			}
		}
		rs.mu.Unlock()
	}

	// Two administrators: removing one while the other is demoted leaves one.
	raced(func() error { return svc.SetMember(ctx, org.ID, u2.ID, catalog.RoleMember) })
	if err := svc.RemoveMember(ctx, org.ID, u1.ID); !errors.Is(err, catalog.ErrConflict) {
		t.Errorf("removing an administrator while the other is demoted: %v, want %v", err, catalog.ErrConflict)
	}
	if ms, ok := svc.Model().Membership(org.ID, u1.ID); !ok || ms.Role != catalog.RoleAdmin {
		t.Errorf("the last administrator: %+v %v", ms, ok)
	}

	// One user name claimed by two at once: the second sees the first's claim.
	raced(func() error { _, err := svc.CreateUser(ctx, "Cid", "", "password-3"); return err })
	if _, err := svc.CreateUser(ctx, "cid", "", "password-4"); !errors.Is(err, catalog.ErrExists) {
		t.Errorf("a user name claimed meanwhile: %v, want %v", err, catalog.ErrExists)
	}
	if u, ok := svc.Model().UserByName("cid"); !ok || u.Username != "Cid" {
		t.Errorf("the user of the name: %+v %v", u, ok)
	}
}
