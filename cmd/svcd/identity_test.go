package main

import (
	"bytes"
	"testing"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestInvitationTakeover reproduces issue 23's organization takeover: default's
// administrator invites a name nobody has yet as admin; an unrelated user, admin of an
// organization of its own, creates that name with a password of its choosing, signs in
// as it and accepts. Creating users is the operator's act now, refused to everyone else
// before any lookup (so it tells no taken name from a free one), and an invitation is
// bound to the user who held the name when it was made: one created later under the
// name, even by the operator, never gets it.
func TestInvitationTakeover(t *testing.T) {
	s := startControlPlane(t)
	admin := "Bearer " + login(t, s, "admin", adminPassword)
	s.Must(202, "POST", "/v1/organizations/default/invitations", map[string]string{"username": "newadmin", "role": "admin"}, "Authorization", admin)
	s.Must(202, "POST", "/v1/organizations/default/invitations", map[string]string{"username": "boss@example.com", "role": "admin"}, "Authorization", admin)

	s.Must(200, "POST", "/v1/users", map[string]string{"username": "outsider", "password": "outsiders password"}, "Authorization", admin)
	outsider := "Bearer " + login(t, s, "outsider", "outsiders password")
	s.Must(200, "POST", "/v1/organizations", map[string]string{"name": "outsiders"}, "Authorization", outsider)

	// An organization's administrator is no operator: creation is refused before the
	// name is looked at, with one answer for taken, free and invited names alike.
	var first *svcdtest.Response
	for _, name := range []string{"newadmin", "boss@example.com", "admin", "outsider", "free-name-7"} {
		r, err := s.Do("POST", "/v1/users", map[string]string{"username": name, "password": "chosen by outsider"}, "Authorization", outsider)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != 403 {
			t.Fatalf("outsider created user %q: status %d %s", name, r.Status, r.Body)
		}
		if first == nil {
			first = r
		} else if !bytes.Equal(r.Body, first.Body) {
			t.Errorf("user creation tells names apart: %s vs %s", r.Body, first.Body)
		}
	}
	var e struct{ Error struct{ Code, Hint string } }
	first.JSON(t, &e)
	if e.Error.Code != "forbidden" || e.Error.Hint == "" {
		t.Errorf("refusal %s, want forbidden with a hint", first.Body)
	}

	// Even the operator creating the name after the invitation does not hand it over.
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "newadmin", "password": "newadmins password"}, "Authorization", admin)
	newadmin := "Bearer " + login(t, s, "newadmin", "newadmins password")
	var mine struct{ Invitations []struct{ ID string } }
	s.Must(200, "GET", "/v1/invitations", nil, "Authorization", newadmin).JSON(t, &mine)
	if len(mine.Invitations) != 0 {
		t.Fatalf("a user created after the invitation sees it: %+v", mine)
	}
	var pending struct {
		Invitations []struct{ ID, Username string }
	}
	s.Must(200, "GET", "/v1/organizations/default/invitations", nil, "Authorization", admin).JSON(t, &pending)
	var early string
	for _, p := range pending.Invitations {
		if p.Username == "newadmin" {
			early = p.ID
		}
	}
	if early == "" {
		t.Fatalf("the invitation of a name nobody had is not listed like any other: %+v", pending)
	}
	s.Must(404, "POST", "/v1/invitations/"+early+"/accept", nil, "Authorization", newadmin)
	s.Must(404, "POST", "/v1/invitations/"+early+"/decline", nil, "Authorization", newadmin)
	s.Must(404, "GET", "/v1/organizations/default", nil, "Authorization", newadmin)
	s.Must(404, "GET", "/v1/clusters?organization=default", nil, "Authorization", newadmin)

	// Invited again now that the user exists, the invitation is theirs.
	s.Must(202, "POST", "/v1/organizations/default/invitations", map[string]string{"username": "newadmin", "role": "admin"}, "Authorization", admin)
	s.Must(200, "GET", "/v1/invitations", nil, "Authorization", newadmin).JSON(t, &mine)
	if len(mine.Invitations) != 1 || mine.Invitations[0].ID == early {
		t.Fatalf("newadmin's invitations after a fresh one: %+v", mine)
	}
	s.Must(404, "POST", "/v1/invitations/"+mine.Invitations[0].ID+"/accept", nil, "Authorization", outsider)
	s.Must(200, "POST", "/v1/invitations/"+mine.Invitations[0].ID+"/accept", nil, "Authorization", newadmin)
	s.Must(200, "GET", "/v1/organizations/default", nil, "Authorization", newadmin)
	// An administrator of the bootstrap organization is still no operator.
	r := s.Must(403, "POST", "/v1/users", map[string]string{"username": "someone", "password": "someones password"}, "Authorization", newadmin)
	if !bytes.Equal(r.Body, first.Body) {
		t.Errorf("refusal differs for an administrator of default: %s", r.Body)
	}

	// The binding survives a restart: replay binds the same way.
	s.Restart()
	newadmin = "Bearer " + login(t, s, "newadmin", "newadmins password")
	s.Must(200, "GET", "/v1/organizations/default", nil, "Authorization", newadmin)
	s.Must(404, "POST", "/v1/invitations/"+early+"/accept", nil, "Authorization", newadmin)
}
