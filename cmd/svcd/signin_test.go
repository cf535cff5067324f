package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// fromAddr is an HTTP client whose connections come from the loopback address local.
func fromAddr(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// send posts a JSON body with headers (name, value pairs) through client.
func send(t *testing.T, client *http.Client, url string, body any, headers ...string) *svcdtest.Response {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(context.Background(), "POST", url, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &svcdtest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// TestWrongPasswordsDoNotLockOutTheOwner: failed sign-ins count per client address and
// user name, so an attacker's wrong passwords lock the attacker, never the owner signing
// in from elsewhere; behind a reverse proxy the client address comes from
// X-Forwarded-For, believed only from a configured trusted proxy (here 127.0.0.1, while
// 127.0.0.2 plays a client that talks to svcd directly and forges the header); and the
// session cookie is Secure when a trusted proxy says the client came over https.
func TestWrongPasswordsDoNotLockOutTheOwner(t *testing.T) {
	s := startControlPlane(t, "SVC_TRUSTED_PROXIES=127.0.0.1/32, ::1")
	proxy, direct := fromAddr("127.0.0.1"), fromAddr("127.0.0.2")
	loginURL := s.URL + "/v1/auth/login"
	wrong := map[string]string{"username": "admin", "password": "a guess"}
	right := map[string]string{"username": "admin", "password": adminPassword}

	// The attacker, through the proxy, fails until its attempts lock.
	for i := range 5 {
		if r := send(t, proxy, loginURL, wrong, "X-Forwarded-For", "203.0.113.9"); r.Status != 401 {
			t.Fatalf("attacker's attempt %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := send(t, proxy, loginURL, right, "X-Forwarded-For", "203.0.113.9")
	if r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("attacker after 5 failures: %d %s, want 429 with Retry-After", r.Status, r.Body)
	}
	// Prepending the owner's address does not help: the proxy appends the peer it saw.
	if r := send(t, proxy, loginURL, right, "X-Forwarded-For", "198.51.100.7, 203.0.113.9"); r.Status != 429 {
		t.Fatalf("attacker naming the owner's address first: %d %s, want 429", r.Status, r.Body)
	}
	// The owner, from another address through the same proxy, signs in.
	if r := send(t, proxy, loginURL, right, "X-Forwarded-For", "198.51.100.7"); r.Status != 200 {
		t.Fatalf("the owner is locked out by someone else's wrong passwords: %d %s", r.Status, r.Body)
	}

	// A client that is no trusted proxy cannot change its address with the header.
	for i := range 5 {
		if r := send(t, direct, loginURL, wrong, "X-Forwarded-For", fmt.Sprintf("192.0.2.%d", i+1)); r.Status != 401 {
			t.Fatalf("direct attempt %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	if r := send(t, direct, loginURL, right, "X-Forwarded-For", "192.0.2.99"); r.Status != 429 {
		t.Fatalf("a forged X-Forwarded-For from an untrusted peer escaped the limit: %d %s", r.Status, r.Body)
	}

	// The session cookie: Secure when the trusted proxy says https, not when anyone else does.
	secure := func(client *http.Client, proto string) bool {
		t.Helper()
		r := send(t, client, s.URL+"/ui/login", right, "X-Forwarded-Proto", proto, "X-Forwarded-For", "198.51.100.7")
		if r.Status != 200 {
			t.Fatalf("console sign-in: %d %s", r.Status, r.Body)
		}
		for _, c := range (&http.Response{Header: r.Header}).Cookies() {
			if c.Name == "svc_session" {
				return c.Secure
			}
		}
		t.Fatalf("console sign-in set no session cookie: %v", r.Header)
		return false
	}
	if !secure(proxy, "https") {
		t.Error("the session cookie is not Secure behind a TLS-terminating trusted proxy")
	}
	if secure(proxy, "http") {
		t.Error("the session cookie is Secure for a plain-http client of the proxy")
	}
	// 127.0.0.2 is locked for admin; another user signs in from there.
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "carol", "password": "carols password"},
		"Authorization", "Bearer "+login(t, s, "admin", adminPassword))
	r = send(t, direct, s.URL+"/ui/login", map[string]string{"username": "carol", "password": "carols password"}, "X-Forwarded-Proto", "https")
	if r.Status != 200 {
		t.Fatalf("carol's console sign-in: %d %s", r.Status, r.Body)
	}
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "svc_session" && c.Secure {
			t.Error("an untrusted peer's X-Forwarded-Proto made the cookie Secure")
		}
	}
	if !strings.Contains(r.Header.Get("Set-Cookie"), "svc_session=") {
		t.Errorf("carol's sign-in set no session cookie: %v", r.Header)
	}
}
