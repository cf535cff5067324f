package main

import (
	"testing"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestInvitationCLI runs membership by invitation through svc against a real svcd: the
// administrator invites a second user, who (with their own configuration) declines,
// is invited again, accepts and appears among the members; roles change, members are
// removed, invitations revoked; unknown ids are the API's 404 (exit 1), malformed ones
// and missing arguments usage (exit 2).
func TestInvitationCLI(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	admin := newCLI(t, s)
	adminToken := userToken(t, s)
	admin.saveLogin(t, config{Token: adminToken, TokenType: tokenOAuth, Org: "default"})
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "carol", "password": "carols password"}, "Authorization", "Bearer "+adminToken)
	var login struct{ Token string }
	s.Must(200, "POST", "/v1/auth/login", map[string]string{"username": "carol", "password": "carols password"}).JSON(t, &login)
	carol := newCLI(t, s)
	carol.saveLogin(t, config{Token: login.Token, TokenType: tokenOAuth})

	members := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		items, _ := admin.ok("org", "members", "list")["members"].([]any)
		for _, it := range items {
			out[field(field(it, "user"), "username").(string)] = field(it, "role").(string)
		}
		return out
	}
	// pending lists invitations as username -> id, from the organization's side (org
	// invitations, optionally through its list subcommand) or the user's (invitation list).
	pending := func(c *cli, args ...string) map[string]string {
		t.Helper()
		out := map[string]string{}
		items, _ := c.ok(args...)["invitations"].([]any)
		for _, it := range items {
			out[field(it, "username").(string)] = field(it, "id").(string)
		}
		return out
	}
	if m := members(); len(m) != 1 || m["admin"] != "admin" {
		t.Fatalf("members before: %v", m)
	}

	// Decline: carol sees the invitation to default, declines it; it is gone for both.
	admin.ok("org", "invite", "carol")
	inv := carol.ok("invitation", "list")["invitations"].([]any)
	if len(inv) != 1 || field(field(inv[0], "organization"), "name") != "default" || field(inv[0], "role") != "member" {
		t.Fatalf("carol's invitations: %v", inv)
	}
	id := field(inv[0], "id").(string)
	if got := pending(admin, "org", "invitations"); got["carol"] != id {
		t.Fatalf("the organization's invitations: %v, want carol's %s", got, id)
	}
	carol.ok("invitation", "decline", id)
	if e := carol.fails(1, "invitation", "accept", id); e["status"] != 404.0 {
		t.Fatalf("accepting a declined invitation: %v", e)
	}
	if got := pending(admin, "org", "invitations", "list"); len(got) != 0 {
		t.Fatalf("invitations after the decline: %v", got)
	}
	if m := members(); len(m) != 1 {
		t.Fatalf("members after the decline: %v", m)
	}
	// carol is no member yet: the organization's routes are the API's 404.
	carol.fails(1, "org", "members", "list", "--org", "default")

	// Accept: invited again as an administrator, carol accepts and is a member.
	admin.ok("org", "invite", "carol", "--role", "admin")
	id = pending(carol, "invitation", "list")["carol"]
	if e := admin.fails(1, "invitation", "accept", id); e["status"] != 404.0 { // not the admin's
		t.Fatalf("the admin accepting carol's invitation: %v", e)
	}
	carol.ok("invitation", "accept", id)
	if m := members(); m["carol"] != "admin" {
		t.Fatalf("members after the accept: %v", m)
	}
	// carol now belongs to one organization: it is selected without --org.
	if got := names(carol.ok("org", "list"), "organizations"); len(got) != 1 || got[0] != "default" {
		t.Fatalf("carol's organizations: %v", got)
	}
	carol.ok("org", "members", "list")

	// Roles change and members are removed.
	admin.ok("org", "members", "update", "carol", "--role", "member")
	if m := members(); m["carol"] != "member" {
		t.Fatalf("members after update: %v", m)
	}
	admin.fails(2, "org", "members", "update", "carol")
	admin.fails(1, "org", "invite", "dave", "--role", "owner")
	admin.ok("org", "members", "remove", "carol")
	if m := members(); len(m) != 1 || m["carol"] != "" {
		t.Fatalf("members after remove: %v", m)
	}

	// Revoke: an invitation of a name (existing or not) is revoked once; then it is gone.
	admin.ok("org", "invite", "dave")
	id = pending(admin, "org", "invitations")["dave"]
	admin.ok("org", "invitations", "revoke", id)
	if e := admin.fails(1, "org", "invitations", "revoke", id); e["status"] != 404.0 {
		t.Fatalf("revoking twice: %v", e)
	}
	if got := pending(admin, "org", "invitations"); len(got) != 0 {
		t.Fatalf("invitations after revoke: %v", got)
	}

	// Unknown ids are the API's 404 (exit 1); malformed ids and missing ones are usage.
	unknown := "00000000-0000-4000-8000-000000000000"
	for _, args := range [][]string{{"invitation", "accept", unknown}, {"invitation", "decline", unknown}, {"org", "invitations", "revoke", unknown}} {
		if e := carol.fails(1, args...); e["status"] != 404.0 {
			t.Fatalf("svc %v: %v", args, e)
		}
	}
	if e := admin.fails(1, "org", "invitations", "revoke", unknown); e["status"] != 404.0 {
		t.Fatalf("revoking an unknown id: %v", e)
	}
	admin.fails(2, "invitation", "accept", "not-an-id")
	admin.fails(2, "invitation", "accept")
	admin.fails(2, "org", "invitations", "bogus")
}
