package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestOrganizationIDSpoofing checks that no organization can be named like an id, so a
// reference by id always reaches the organization with that id.
func TestOrganizationIDSpoofing(t *testing.T) {
	s := startControlPlane(t)
	admin := login(t, s, "admin", adminPassword)
	as := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	var orgs struct {
		Organizations []struct{ ID, Name string }
	}
	s.Must(200, "GET", "/v1/organizations", nil).JSON(t, &orgs)
	victim := orgs.Organizations[0].ID

	s.Must(200, "POST", "/v1/users", map[string]string{"username": "mallory", "password": "mallorys password"}, as(admin)...)
	mallory := login(t, s, "mallory", "mallorys password")
	forms := []string{victim, strings.ToUpper(victim), strings.ReplaceAll(victim, "-", "")}
	for _, name := range forms {
		r, err := s.Do("POST", "/v1/organizations", map[string]string{"name": name}, as(mallory)...)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != 400 || !strings.Contains(string(r.Body), `"invalid_name"`) {
			t.Errorf("create an organization named %q: status %d, want 400 invalid_name: %s", name, r.Status, r.Body)
		}
	}
	var own struct{ ID string }
	s.Must(200, "POST", "/v1/organizations", map[string]string{"name": "mallorys"}, as(mallory)...).JSON(t, &own)
	for _, name := range forms {
		r, err := s.Do("PATCH", "/v1/organizations/mallorys", map[string]string{"name": name}, as(mallory)...)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != 400 {
			t.Errorf("rename to %q: status %d, want 400: %s", name, r.Status, r.Body)
		}
	}
	// By id, each caller reaches only its own organization.
	s.Must(200, "GET", "/v1/organizations/"+own.ID, nil, as(mallory)...)
	s.Must(200, "GET", "/v1/organizations/"+strings.ToUpper(own.ID), nil, as(mallory)...)
	s.Must(404, "GET", "/v1/organizations/"+victim, nil, as(mallory)...)
	s.Must(200, "GET", "/v1/organizations/"+victim, nil, as(admin)...)
}

// joinByInvitation has an administrator (session token admin) invite username to org,
// and that user accept.
func joinByInvitation(t *testing.T, s *svcdtest.Service, admin, org, username, password, role string) {
	t.Helper()
	s.Must(202, "POST", "/v1/organizations/"+org+"/invitations", map[string]string{"username": username, "role": role},
		"Authorization", "Bearer "+admin)
	user := "Bearer " + login(t, s, username, password)
	var mine struct{ Invitations []struct{ ID string } }
	s.Must(200, "GET", "/v1/invitations", nil, "Authorization", user).JSON(t, &mine)
	if len(mine.Invitations) != 1 {
		t.Fatalf("%s's invitations: %+v", username, mine)
	}
	s.Must(200, "POST", "/v1/invitations/"+mine.Invitations[0].ID+"/accept", nil, "Authorization", user)
}

// TestMembershipNeedsConsent: an administrator cannot add a user, only invite a name;
// every answer is the same whether or not the name exists; the user's consent makes
// the membership.
func TestMembershipNeedsConsent(t *testing.T) {
	s := startControlPlane(t)
	admin := "Bearer " + login(t, s, "admin", adminPassword)
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "carol", "password": "carols password"}, "Authorization", admin)
	carol := "Bearer " + login(t, s, "carol", "carols password")

	// No direct adding.
	if r, _ := s.Do("POST", "/v1/organizations/default/members", map[string]string{"username": "carol"}, "Authorization", admin); r.Status == 200 {
		t.Fatalf("a user was added without consent: %s", r.Body)
	}
	var members struct {
		Members []struct{ User struct{ Username string } }
	}
	s.Must(200, "GET", "/v1/organizations/default/members", nil, "Authorization", admin).JSON(t, &members)
	if len(members.Members) != 1 {
		t.Fatalf("members %+v", members)
	}
	// Existing and unknown names answer alike.
	answer := func(method, path string, body any) string {
		t.Helper()
		r, err := s.Do(method, path, body, "Authorization", admin)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(r.Status) + " " + strings.ReplaceAll(string(r.Body), "carol", "NAME")
	}
	for _, c := range []struct{ method, path string }{{"POST", "/v1/organizations/default/invitations"},
		{"PATCH", "/v1/organizations/default/members/NAME"}, {"DELETE", "/v1/organizations/default/members/NAME"}} {
		body := map[string]string{"username": "carol", "role": "member"}
		known := answer(c.method, strings.ReplaceAll(c.path, "NAME", "carol"), body)
		body["username"] = "nobody-here"
		unknown := strings.ReplaceAll(answer(c.method, strings.ReplaceAll(c.path, "NAME", "nobody-here"), body), "nobody-here", "NAME")
		if known != unknown {
			t.Errorf("%s %s tells names apart: %q vs %q", c.method, c.path, known, unknown)
		}
	}
	// Carol sees her invitation, declines it, is invited again and accepts.
	var mine struct {
		Invitations []struct {
			ID           string
			Role         string
			Organization struct{ Name string }
		}
	}
	s.Must(200, "GET", "/v1/invitations", nil, "Authorization", carol).JSON(t, &mine)
	if len(mine.Invitations) != 1 || mine.Invitations[0].Organization.Name != "default" || mine.Invitations[0].Role != "member" {
		t.Fatalf("carol's invitations %+v", mine)
	}
	s.Must(404, "POST", "/v1/invitations/"+mine.Invitations[0].ID+"/accept", nil, "Authorization", admin) // not the admin's
	s.Must(200, "POST", "/v1/invitations/"+mine.Invitations[0].ID+"/decline", nil, "Authorization", carol)
	s.Must(404, "POST", "/v1/invitations/"+mine.Invitations[0].ID+"/accept", nil, "Authorization", carol)
	s.Must(404, "GET", "/v1/clusters?organization=default", nil, "Authorization", carol)
	var pending struct {
		Invitations []struct{ ID, Username string }
	}
	s.Must(202, "POST", "/v1/organizations/default/invitations", map[string]string{"username": "carol"}, "Authorization", admin)
	s.Must(200, "GET", "/v1/organizations/default/invitations", nil, "Authorization", admin).JSON(t, &pending)
	if len(pending.Invitations) != 2 { // carol's, and the unknown name's
		t.Fatalf("pending %+v", pending)
	}
	s.Must(404, "GET", "/v1/organizations/default/invitations", nil, "Authorization", carol) // not a member yet
	s.Must(200, "GET", "/v1/invitations", nil, "Authorization", carol).JSON(t, &mine)
	s.Must(200, "POST", "/v1/invitations/"+mine.Invitations[0].ID+"/accept", nil, "Authorization", carol)
	s.Must(200, "GET", "/v1/clusters?organization=default", nil, "Authorization", carol)
	// Joining another organization keeps requests that name none in the first one.
	s.Must(200, "POST", "/v1/organizations", map[string]string{"name": "carols"}, "Authorization", carol)
	joinByInvitation(t, s, strings.TrimPrefix(carol, "Bearer "), "carols", "admin", adminPassword, "member")
	s.Must(200, "GET", "/v1/tables", nil, "Authorization", admin)
	for _, p := range pending.Invitations {
		if p.Username == "nobody-here" {
			s.Must(200, "DELETE", "/v1/organizations/default/invitations/"+p.ID, nil, "Authorization", admin)
			s.Must(404, "DELETE", "/v1/organizations/default/invitations/"+p.ID, nil, "Authorization", admin)
		}
	}
}
