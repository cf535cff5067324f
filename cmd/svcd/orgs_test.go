package main

import (
	"strings"
	"testing"
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
