package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

const adminPassword = "correct horse battery staple"

func startControlPlane(t *testing.T, extraEnv ...string) *svcdtest.Service {
	return svcdtest.Start(t, append([]string{"SVC_BOOTSTRAP_PASSWORD=" + adminPassword}, extraEnv...)...)
}

// createKey makes a key with the admin key and returns its token and id.
func createKey(t *testing.T, s *svcdtest.Service, body map[string]any) (token, id string) {
	t.Helper()
	var k struct{ Token, ID string }
	s.Must(200, "POST", "/v1/keys", body).JSON(t, &k)
	if !strings.HasPrefix(k.Token, "svck_") || k.ID == "" {
		t.Fatalf("created key %+v", k)
	}
	return k.Token, k.ID
}

func login(t *testing.T, s *svcdtest.Service, user, password string) string {
	t.Helper()
	var res struct{ Token string }
	s.Must(200, "POST", "/v1/auth/login", map[string]string{"username": user, "password": password}, "Authorization", "").JSON(t, &res)
	if !strings.HasPrefix(res.Token, "svcs_") {
		t.Fatalf("session token %q", res.Token)
	}
	return res.Token
}

// deviceToken runs the device grant with a plain HTTP client standing in for the
// browser (the browser test below does it with Chromium).
func deviceToken(t *testing.T, s *svcdtest.Service, user, password string) string {
	t.Helper()
	var dc struct {
		DeviceCode string `json:"device_code"`
		UserCode   string `json:"user_code"`
	}
	form := url.Values{"client_id": {"svc-cli"}, "scope": {"full_access"}}
	resp, err := http.PostForm(s.URL+"/v1/oauth/device/code", form)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&dc)
	resp.Body.Close()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	page := postForm(t, browser, s.URL+"/device/login", url.Values{"username": {user}, "password": {password}, "user_code": {dc.UserCode}})
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("no csrf token on the page:\n%s", page)
	}
	page = postForm(t, browser, s.URL+"/device", url.Values{"csrf": {csrf[1]}, "user_code": {dc.UserCode}, "action": {"approve"}})
	if !strings.Contains(page, "Device approved") {
		t.Fatalf("approval page:\n%s", page)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	resp, err = http.PostForm(s.URL+"/v1/oauth/token", url.Values{"grant_type": {deviceGrantType}, "device_code": {dc.DeviceCode}, "client_id": {"svc-cli"}})
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if !strings.HasPrefix(tok.AccessToken, "svco_") {
		t.Fatalf("token response %+v", tok)
	}
	return tok.AccessToken
}

const deviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"

func postForm(t *testing.T, c *http.Client, u string, v url.Values) string {
	t.Helper()
	resp, err := c.PostForm(u, v)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestPermissionMatrix checks every endpoint with every kind of credential against the
// spec's permission matrix.
func TestPermissionMatrix(t *testing.T) {
	s := startControlPlane(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "m"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE analyst"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "GRANT SELECT, INSERT ON default.m TO analyst"})
	creds := map[string]string{"admin": s.AdminKey}
	for _, p := range []string{"read_write", "write_only", "read_only"} {
		creds[p], _ = createKey(t, s, map[string]any{"name": p, "permission": p})
	}
	creds["role"], _ = createKey(t, s, map[string]any{"name": "analyst key", "database_roles": []string{"analyst"}})
	creds["session_admin"] = login(t, s, "admin", adminPassword)
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "bob", "password": "bobs password", "name": "Bob"},
		"Authorization", "Bearer "+creds["session_admin"])
	joinByInvitation(t, s, creds["session_admin"], "default", "bob", "bobs password", "member")
	creds["session_member"] = login(t, s, "bob", "bobs password")
	creds["oauth_admin"] = deviceToken(t, s, "admin", adminPassword)

	all := []string{"admin", "read_write", "write_only", "read_only", "role", "session_admin", "session_member", "oauth_admin"}
	admins := []string{"admin", "session_admin", "oauth_admin"}
	readers := []string{"admin", "read_write", "read_only", "session_admin", "session_member", "oauth_admin"}
	users := []string{"session_admin", "session_member", "oauth_admin"}
	notRole := []string{"admin", "read_write", "write_only", "read_only", "session_admin", "session_member", "oauth_admin"}
	n := 0
	unique := func() string { n++; return fmt.Sprintf("x%d", n) }
	type endpoint struct {
		name    string
		allowed []string
		// req returns method, path and body for one attempt (fresh names each time).
		req func() (string, string, any)
		ok  int
	}
	endpoints := []endpoint{
		{"list databases", readers, func() (string, string, any) { return "GET", "/v1/databases", nil }, 200},
		{"create database", admins, func() (string, string, any) { return "POST", "/v1/databases", map[string]string{"name": unique()} }, 200},
		{"delete database", admins, func() (string, string, any) {
			name := unique()
			s.Must(200, "POST", "/v1/databases", map[string]string{"name": name})
			return "DELETE", "/v1/databases/" + name, nil
		}, 200},
		{"list tables", readers, func() (string, string, any) { return "GET", "/v1/tables", nil }, 200},
		{"describe table", readers, func() (string, string, any) { return "GET", "/v1/tables/m", nil }, 200},
		{"create table", admins, func() (string, string, any) { return "POST", "/v1/tables", map[string]string{"name": unique()} }, 200},
		{"change sorting key", admins, func() (string, string, any) {
			name := unique()
			s.Must(200, "POST", "/v1/tables", map[string]string{"name": name})
			return "PATCH", "/v1/tables/" + name, map[string]string{"sorting_key": "a"}
		}, 200},
		{"delete table", admins, func() (string, string, any) {
			name := unique()
			s.Must(200, "POST", "/v1/tables", map[string]string{"name": name})
			return "DELETE", "/v1/tables/" + name, nil
		}, 200},
		{"insert", []string{"admin", "read_write", "write_only", "role", "session_admin", "oauth_admin"},
			func() (string, string, any) { return "POST", "/v1/tables/m", `{"a":1}` }, 202},
		{"query", []string{"admin", "read_write", "read_only", "role", "session_admin", "session_member", "oauth_admin"},
			func() (string, string, any) {
				return "POST", "/v1/query", map[string]string{"sql": "SELECT count() FROM m"}
			}, 200},
		{"list keys", append([]string{"admin"}, users...), func() (string, string, any) { return "GET", "/v1/keys", nil }, 200},
		{"create key", admins, func() (string, string, any) {
			return "POST", "/v1/keys", map[string]string{"name": unique(), "permission": "read_only"}
		}, 200},
		{"delete key", admins, func() (string, string, any) {
			_, id := createKey(t, s, map[string]any{"name": unique(), "permission": "read_only"})
			return "DELETE", "/v1/keys/" + id, nil
		}, 200},
		// Custom-role keys have no metadata API (SPEC; issue 25 audit row 5).
		// GET /v1/organizations stays open to them, the key's own organization only (documented).
		{"list organizations", all, func() (string, string, any) { return "GET", "/v1/organizations", nil }, 200},
		{"list clusters", notRole, func() (string, string, any) { return "GET", "/v1/clusters?organization=default", nil }, 200},
		{"create organization", users, func() (string, string, any) {
			return "POST", "/v1/organizations", map[string]string{"name": "org-" + unique()}
		}, 200},
		{"account", users, func() (string, string, any) { return "GET", "/v1/me", nil }, 200},
	}
	// The documented exception: a custom-role key lists its own organization only.
	var own struct{ Organizations []map[string]any }
	s.Must(200, "GET", "/v1/organizations", nil, "Authorization", "Bearer "+creds["role"]).JSON(t, &own)
	if len(own.Organizations) != 1 || own.Organizations[0]["name"] != "default" || own.Organizations[0]["role"] != nil {
		t.Errorf("a custom-role key's organizations: %v, want its own only", own.Organizations)
	}
	for _, e := range endpoints {
		for _, c := range all {
			allowed := false
			for _, a := range e.allowed {
				allowed = allowed || a == c
			}
			method, path, body := e.req()
			r, err := s.Do(method, path, body, "Authorization", "Bearer "+creds[c])
			if err != nil {
				t.Fatal(err)
			}
			want := 403
			if allowed {
				want = e.ok
			}
			if r.Status != want {
				t.Errorf("%s as %s: status %d, want %d: %s", e.name, c, r.Status, want, r.Body)
			}
		}
		method, path, body := e.req()
		if r, _ := s.Do(method, path, body, "Authorization", ""); r.Status != 401 {
			t.Errorf("%s without credentials: status %d, want 401", e.name, r.Status)
		}
	}
	// A key's organization parameter must name its own organization.
	s.Must(200, "GET", "/v1/organizations?organization=default", nil)
	s.Must(403, "GET", "/v1/organizations?organization=other", nil)
	// Keys read exactly their bound organization and cluster.
	var orgs struct {
		Organizations []struct {
			Name string
			Role *string
		}
	}
	s.Must(200, "GET", "/v1/organizations", nil).JSON(t, &orgs)
	if len(orgs.Organizations) != 1 || orgs.Organizations[0].Name != "default" || orgs.Organizations[0].Role != nil {
		t.Fatalf("organizations for a key: %+v", orgs)
	}
}

func TestKeyExpiryWithACachedKey(t *testing.T) {
	s := startControlPlane(t)
	expiry := time.Now().Add(5 * time.Second).Truncate(time.Second)
	token, id := createKey(t, s, map[string]any{"name": "short", "permission": "read_only", "expires_at": expiry.UTC().Format(time.RFC3339)})
	// The key works before its expiry (and is cached by that use).
	r, err := s.Do("POST", "/v1/query", map[string]string{"sql": "SELECT 1"}, "Authorization", "Bearer "+token)
	if err != nil {
		t.Fatal(err)
	}
	if answered := time.Now(); r.Status != 200 && answered.Before(expiry) {
		t.Fatalf("a key before its expiry: %d %s", r.Status, r.Body)
	}
	time.Sleep(time.Until(expiry) + 100*time.Millisecond)
	r = s.Must(401, "POST", "/v1/query", map[string]string{"sql": "SELECT 1"}, "Authorization", "Bearer "+token)
	if !strings.Contains(string(r.Body), "expired") {
		t.Fatalf("expired key error: %s", r.Body)
	}
	var keys struct {
		Keys []struct {
			ID        string
			Expired   bool
			ExpiresAt *time.Time `json:"expires_at"`
		}
	}
	s.Must(200, "GET", "/v1/keys", nil).JSON(t, &keys)
	found := false
	for _, k := range keys.Keys {
		if k.ID == id {
			found = k.Expired && k.ExpiresAt != nil
		}
	}
	if !found {
		t.Fatalf("expired key not listed as expired: %+v", keys)
	}
	s.Must(200, "DELETE", "/v1/keys/"+id, nil)
	for _, bad := range []string{"2020-01-01T00:00:00Z", "2099-01-01T00:00:00", "tomorrow", "2099-01-01"} {
		r := s.Must(400, "POST", "/v1/keys", map[string]any{"name": "bad", "permission": "admin", "expires_at": bad})
		if !strings.Contains(string(r.Body), "expires_at") {
			t.Errorf("expires_at %q: %s", bad, r.Body)
		}
	}
}

func TestKeyValidation(t *testing.T) {
	s := startControlPlane(t)
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE Reader"})
	cases := []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "k"}, "permission"},
		{map[string]any{"name": "k", "permission": "admin", "database_roles": []string{"Reader"}}, "permission"},
		{map[string]any{"name": "k", "permission": "owner"}, "permission"},
		{map[string]any{"name": "k", "database_roles": []string{}}, "database_roles"},
		{map[string]any{"name": "k", "database_roles": []string{"reader"}}, "database_roles"},
		{map[string]any{"name": "k", "database_roles": []string{"Reader", "Reader"}}, "database_roles"},
		{map[string]any{"permission": "admin"}, "name"},
	}
	for _, c := range cases {
		r := s.Must(400, "POST", "/v1/keys", c.body)
		var env struct{ Error struct{ Field string } }
		r.JSON(t, &env)
		if env.Error.Field != c.field {
			t.Errorf("%v: field %q, want %q (%s)", c.body, env.Error.Field, c.field, r.Body)
		}
	}
	many := make([]string, 33)
	for i := range many {
		many[i] = fmt.Sprintf("r%d", i)
	}
	s.Must(400, "POST", "/v1/keys", map[string]any{"name": "k", "database_roles": many})
	// The database selected when creating a key becomes its default.
	s.Must(200, "POST", "/v1/databases", map[string]string{"name": "other"})
	var k struct {
		DefaultDatabase string `json:"default_database"`
	}
	s.Must(200, "POST", "/v1/keys?database=other", map[string]any{"name": "k", "database_roles": []string{"Reader"}}).JSON(t, &k)
	if k.DefaultDatabase != "other" {
		t.Fatalf("default database %q", k.DefaultDatabase)
	}
	// Deleting a custom-role key keeps its role.
	tok, _ := createKey(t, s, map[string]any{"name": "k2", "database_roles": []string{"Reader"}})
	s.Must(200, "DELETE", "/v1/keys/"+tok, nil)
	createKey(t, s, map[string]any{"name": "k3", "database_roles": []string{"Reader"}})
}

func TestTokensAreNeverStoredInPlainText(t *testing.T) {
	s := startControlPlane(t)
	token, _ := createKey(t, s, map[string]any{"name": "secret", "permission": "admin"})
	session := login(t, s, "admin", adminPassword)
	s.Stop()
	raw, err := os.ReadFile(filepath.Join(s.DataDir, "events.db"))
	if err != nil {
		t.Fatal(err)
	}
	for name, secret := range map[string]string{"api key": token, "session": session, "password": adminPassword} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the event store holds the %s in plain text", name)
		}
	}
	if !bytes.Contains(raw, []byte("$argon2id$")) {
		t.Errorf("no argon2id password hash in the store")
	}
}

func TestDatabasesAndRestartRebuildsTheSameModels(t *testing.T) {
	s := startControlPlane(t)
	// A database on S3 is TestDatabaseOnS3's.
	s.Must(200, "POST", "/v1/databases", map[string]any{"name": "lake"})
	s.Must(409, "POST", "/v1/databases", map[string]string{"name": "lake"})
	s.Must(403, "DELETE", "/v1/databases/default", nil)
	s.Must(403, "DELETE", "/v1/databases/system", nil)
	list := s.Must(200, "GET", "/v1/databases", nil)
	if !bytes.Contains(list.Body, []byte(`"system"`)) {
		t.Fatalf("listing: %s", list.Body)
	}
	s.Must(200, "POST", "/v1/tables?database=lake", map[string]string{"name": "t"})
	s.Must(202, "POST", "/v1/tables/t?database=lake", `{"a":1}`)
	s.WaitCount("lake.t", 1, 30*time.Second)
	before := map[string]string{}
	for _, p := range []string{"/v1/databases", "/v1/keys", "/v1/organizations", "/v1/tables?database=lake"} {
		before[p] = string(s.Must(200, "GET", p, nil).Body)
	}
	s.Restart()
	for p, want := range before {
		if got := string(s.Must(200, "GET", p, nil).Body); got != want {
			t.Errorf("%s after restart:\n%s\nwant\n%s", p, got, want)
		}
	}
	// Deleting a database drops its data and revokes no key.
	s.Must(200, "DELETE", "/v1/databases/lake", nil)
	s.Must(404, "GET", "/v1/tables?database=lake", nil)
	s.Must(200, "GET", "/v1/databases", nil)
}
