package main

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestEveryPasswordLoginIsLimited fails sign-ins until the user name locks, then checks
// that every password door (the API login and the device page) answers 429 with
// Retry-After, even with the right password, while another user still signs in.
func TestEveryPasswordLoginIsLimited(t *testing.T) {
	s := startControlPlane(t)
	admin := login(t, s, "admin", adminPassword)
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "bob", "password": "bobs password"}, "Authorization", "Bearer "+admin)
	for range 5 {
		s.Must(401, "POST", "/v1/auth/login", map[string]string{"username": "bob", "password": "guess"}, "Authorization", "")
	}
	r := s.Must(429, "POST", "/v1/auth/login", map[string]string{"username": "bob", "password": "bobs password"}, "Authorization", "")
	if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 30 {
		t.Errorf("Retry-After %q, want 1 to 30 seconds", r.Header.Get("Retry-After"))
	}
	resp, err := http.PostForm(s.URL+"/device/login", url.Values{"username": {"BOB"}, "password": {"bobs password"}, "user_code": {"ABCD-EFGH"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("device page sign-in of a locked user: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	login(t, s, "admin", adminPassword)
}

// TestSmallLocalSurfaces: /metrics behind the operator token, the device link never from
// the Host header, and duplicate Authorization headers refused.
func TestSmallLocalSurfaces(t *testing.T) {
	s := svcdtest.Start(t, "SVC_METRICS_TOKEN=operator-metrics-token")
	s.Must(401, "GET", "/metrics", nil)
	s.Must(401, "GET", "/metrics", nil, "Authorization", "Bearer wrong")
	s.Must(200, "GET", "/metrics", nil, "Authorization", "Bearer operator-metrics-token")
	// An empty scope parameter names nothing (a schemathesis finding).
	s.Must(400, "GET", "/v1/databases?organization=", nil)
	s.Must(400, "GET", "/v1/databases?cluster=", nil)

	req, _ := http.NewRequest("POST", s.URL+"/v1/oauth/device/code", strings.NewReader("client_id=svc-cli"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Host = "phish.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var dc struct {
		URI string `json:"verification_uri_complete"`
	}
	r := &svcdtest.Response{Status: resp.StatusCode}
	r.Body, _ = readAll(resp)
	r.JSON(t, &dc)
	if resp.StatusCode != 200 || strings.Contains(dc.URI, "phish") || !strings.HasPrefix(dc.URI, s.URL+"/device") {
		t.Errorf("device code: %d, link %q, want one on %s", resp.StatusCode, dc.URI, s.URL)
	}

	req, _ = http.NewRequest("GET", s.URL+"/v1/tables", nil)
	req.Header["Authorization"] = []string{"Bearer " + s.AdminKey, "Bearer svck_other"}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := readAll(resp)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "duplicate_authorization") {
		t.Errorf("two Authorization headers: %d %s, want 400", resp.StatusCode, body)
	}
}

func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// TestDropRoleForgetsItsName: a key, row policy and settings profile of a dropped role
// keep nothing of it, so a role created again under the name grants them nothing.
func TestDropRoleForgetsItsName(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "t"})
	for _, sql := range []string{"CREATE ROLE r", "GRANT SELECT ON default.t TO r",
		"CREATE ROW POLICY p ON default.t FOR SELECT USING 1 TO r",
		"CREATE SETTINGS PROFILE prof SETTINGS workload = 'analytics' TO r"} {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql})
	}
	key, id := createKey(t, s, map[string]any{"name": "k", "database_roles": []string{"r"}})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT count() FROM t"}, "Authorization", "Bearer "+key)
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "DROP ROLE r"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE r"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "GRANT SELECT ON default.t TO r"})
	r, err := s.Do("POST", "/v1/query", map[string]string{"sql": "SELECT count() FROM t"}, "Authorization", "Bearer "+key)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 403 {
		t.Errorf("the key of a dropped role reads through a new role of the name: %d %s", r.Status, r.Body)
	}
	var keys struct {
		Keys []struct {
			ID    string
			Roles []string `json:"database_roles"`
		}
	}
	s.Must(200, "GET", "/v1/keys", nil).JSON(t, &keys)
	for _, k := range keys.Keys {
		if k.ID == id && len(k.Roles) != 0 {
			t.Errorf("the key still names roles %v", k.Roles)
		}
	}
}

// TestHECChecksTheInsertGrantFirst: a custom-role key without INSERT on logsearch_events
// is refused before the table is created.
func TestHECChecksTheInsertGrantFirst(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "other"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE writer"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "GRANT INSERT ON default.other TO writer"})
	key, _ := createKey(t, s, map[string]any{"name": "w", "database_roles": []string{"writer"}})
	r, err := s.Do("POST", "/services/collector/event", `{"event":"x"}`, "Authorization", "Splunk "+key)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 403 {
		t.Errorf("HEC with a key without the grant: %d %s, want 403", r.Status, r.Body)
	}
	s.Must(404, "GET", "/v1/tables/logsearch_events", nil)
}
