package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestConsoleAPIStaysUnderV1: /ui/api/{path} reaches /v1/{path} only. A dot segment spelled
// with percent-encoding (`..%2fmetrics`, `%2e%2e/health`) is decoded before the segments
// are checked, so it cannot climb out of /v1: the gateway, having checked the session,
// answered a redirect to /metrics (the router's fixed-path redirect on the decoded path).
func TestConsoleAPIStaysUnderV1(t *testing.T) {
	s := startControlPlane(t)
	r := s.Must(200, "POST", "/ui/login", map[string]string{"username": "admin", "password": adminPassword}, "Authorization", "")
	var cookie string
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "svc_session" {
			cookie = "svc_session=" + c.Value
		}
	}
	var sess struct {
		CSRF string `json:"csrf_token"`
	}
	r.JSON(t, &sess)
	session := []string{"Authorization", "", "Cookie", cookie, "X-CSRF-Token", sess.CSRF}
	s.Must(200, "GET", "/ui/api/me", nil, session...)
	for _, p := range []string{"/ui/api/..%2fmetrics", "/ui/api/..%2Fmetrics", "/ui/api/%2e%2e/metrics", "/ui/api/%2e%2e%2fmetrics",
		"/ui/api/me%2f..%2f..%2fmetrics", "/ui/api/..%2fhealth", "/ui/api/.%2e/health", "/ui/api/me%2f%2e%2e%2f..%2fhealth",
		"/ui/api/..%252fmetrics"} {
		// Redirects are not followed. (`/ui/api/..%2f..%2fhealth` never reaches the console:
		// the router answers it, for any client, with its fixed-path redirect to /health,
		// which carries no session token.)
		req, _ := http.NewRequest("GET", s.URL+p, nil)
		req.Header.Set("Cookie", cookie)
		req.Header.Set("X-CSRF-Token", sess.CSRF)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || strings.Contains(string(body), "svc_ingest") || strings.Contains(string(body), `"status"`) {
			t.Errorf("GET %s: %d %.200s, want 404 (it was the console's redirect out of /v1)", p, resp.StatusCode, body)
		}
	}
}
