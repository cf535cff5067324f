package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestDeviceLoginApprovedInChromium runs `svc login` non-interactively: it prints the
// device_approval_required event on stderr, a real browser approves the code on the
// service's page, and svc saves the token (mode 0600) that later commands use; logout
// revokes it on the service.
func TestDeviceLoginApprovedInChromium(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	bctx := svcdtest.Browser(t)
	c := newCLI(t, s)
	cmd := c.command("login", "--json", "--timeout-seconds", "120")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() {
		t.Fatalf("no event on stderr")
	}
	var ev struct {
		Event, VerificationURI, UserCode string
		VerificationURIComplete          string `json:"verification_uri_complete"`
		ExpiresIn                        int    `json:"expires_in"`
	}
	var raw map[string]any
	if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
		t.Fatalf("stderr line is not JSON: %s", sc.Bytes())
	}
	json.Unmarshal(sc.Bytes(), &ev)
	if raw["event"] != "device_approval_required" || raw["verification_uri"] == nil || raw["user_code"] == nil ||
		!strings.Contains(ev.VerificationURIComplete, raw["user_code"].(string)) || ev.ExpiresIn <= 0 {
		t.Fatalf("event: %s", sc.Bytes())
	}
	go func() { // drain the rest
		for sc.Scan() {
		}
	}()
	var message string
	err = chromedp.Run(bctx,
		chromedp.Navigate(ev.VerificationURIComplete),
		chromedp.WaitVisible("#login-form"),
		chromedp.SendKeys("#username", "admin"),
		chromedp.SendKeys("#password", adminPassword),
		chromedp.Click("#login"),
		chromedp.WaitVisible("#approve-form"),
		chromedp.Click("#approve"),
		chromedp.WaitVisible("#message"),
		chromedp.Text("#message", &message),
	)
	if err != nil || !strings.Contains(message, "approved") {
		t.Fatalf("browser: %v %q", err, message)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("svc login: %v\nstdout: %s", err, stdout.String())
	}
	var res map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res["logged_in"] != true || res["user"] != "admin" || res["credential"] != "oauth" {
		t.Fatalf("login result: %v %s", err, stdout.String())
	}
	path := filepath.Join(c.cfgDir, "svc", "config.json")
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config: %v %v", st, err)
	}
	var saved config
	b, _ := os.ReadFile(path)
	json.Unmarshal(b, &saved)
	if !strings.HasPrefix(saved.Token, "svco_") {
		t.Fatalf("saved token %q", saved.Token)
	}
	if v := c.ok("whoami"); field(field(v, "user"), "username") != "admin" {
		t.Fatalf("whoami after login: %v", v)
	}
	c.with("SERVICE_ORG=default").ok("db", "list")
	if v := c.ok("logout"); v["revoked"] != true {
		t.Fatalf("logout: %v", v)
	}
	if r, _ := s.Do("GET", "/v1/me", nil, "Authorization", "Bearer "+saved.Token); r.Status != 401 {
		t.Fatalf("the token works after logout: %d", r.Status)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("config kept after logout: %v", err)
	}
}

// TestDeviceLoginTimesOut: --timeout-seconds bounds the wait, with a JSON error.
func TestDeviceLoginTimesOut(t *testing.T) {
	s := svcdtest.Start(t)
	c := newCLI(t, s)
	start := time.Now()
	e := c.fails(1, "login", "--timeout-seconds", "1")
	if field(e["error"], "code") != "timeout" || time.Since(start) > 30*time.Second {
		t.Fatalf("timeout: %v after %s", e, time.Since(start))
	}
}
