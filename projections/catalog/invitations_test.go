package catalog_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/eventstore/boltstore"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/es"
)

// TestInvitationsWrittenBeforeBindingReplaySafely: invitation.created events written
// before invitations carried user_id still replay, and each goes to the user who held
// the name at that point of the log, never to a user who claimed the name afterwards;
// new invitations of a name nobody holds are never redeemable, not after the name is
// created either, and survive a rebuild the same way.
func TestInvitationsWrittenBeforeBindingReplaySafely(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	svc, closeStore := open(t, path)
	b, err := svc.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme", AdminUser: "alice", AdminPassword: "alices password"})
	if err != nil {
		t.Fatal(err)
	}
	org := b.Organization.ID
	early, err := svc.CreateUser(ctx, "early", "", "earlys password")
	if err != nil {
		t.Fatal(err)
	}
	unbound, err := svc.Invite(ctx, org, "later", b.AdminUser.ID, catalog.RoleAdmin)
	if err != nil || unbound == nil {
		t.Fatalf("invite a name nobody has: %v %v", unbound, err)
	}
	closeStore()

	// Two events as the old code wrote them (no user_id): one for a name a user held,
	// one for a name nobody held.
	st, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	legacy := func(username string) uuid.UUID {
		t.Helper()
		id := uuid.New()
		data, _ := json.Marshal(map[string]any{"id": id, "org_id": org, "username": username, "role": "admin",
			"invited_by": b.AdminUser.ID, "created_at": time.Now().UTC(), "expires_at": time.Now().Add(catalog.InvitationTTL).UTC()})
		if _, err := st.Append(ctx, "organization-"+org.String(), es.Any(), es.NewEvent{Type: catalog.EvInvitationCreated, Data: data}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	oldEarly, oldLater := legacy("EARLY"), legacy("later")
	st.Close()

	svc, closeStore = open(t, path)
	defer func() { closeStore() }()
	later, err := svc.CreateUser(ctx, "later", "", "laters password")
	if err != nil {
		t.Fatal(err)
	}
	check := func(svc *catalog.Service) {
		t.Helper()
		m := svc.Model()
		if got := m.UserInvitations(early.ID); len(got) != 1 || got[0].ID != oldEarly {
			t.Errorf("early's invitations %+v, want only the old one of its name", got)
		}
		if got := m.UserInvitations(later.ID); len(got) != 0 {
			t.Errorf("a user created after the invitations got %+v", got)
		}
		if got := m.Invitations(org, ""); len(got) != 3 {
			t.Errorf("the organization lists %d invitations, want 3", len(got))
		}
		for _, id := range []uuid.UUID{unbound.ID, oldLater} {
			if _, err := svc.AnswerInvitation(ctx, id, later, true); err == nil {
				t.Errorf("later accepted invitation %s made before the name existed", id)
			}
		}
	}
	check(svc)
	closeStore()
	svc, closeStore = open(t, path)
	check(svc)
	if _, err := svc.AnswerInvitation(ctx, oldEarly, early, true); err != nil {
		t.Fatalf("early accepts its old invitation: %v", err)
	}
	if !svc.Model().IsOperator(b.AdminUser.ID) || svc.Model().IsOperator(early.ID) {
		t.Error("the operator is the bootstrap administrator, and only it")
	}
	// Invited again now that the name has a user, the new invitation is theirs.
	inv, err := svc.Invite(ctx, org, "later", b.AdminUser.ID, catalog.RoleMember)
	if err != nil || inv == nil {
		t.Fatalf("invite later again: %v %v", inv, err)
	}
	if _, err := svc.AnswerInvitation(ctx, inv.ID, later, true); err != nil {
		t.Fatalf("later accepts the new invitation: %v", err)
	}
}
