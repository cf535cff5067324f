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
