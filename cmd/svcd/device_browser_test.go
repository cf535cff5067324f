package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

type deviceCode struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
}

func requestDeviceCode(t *testing.T, s *svcdtest.Service) deviceCode {
	t.Helper()
	resp, err := http.PostForm(s.URL+"/v1/oauth/device/code", url.Values{"client_id": {"svc-cli"}, "scope": {"full_access"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var dc deviceCode
	if err := json.NewDecoder(resp.Body).Decode(&dc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("device code: %d %v", resp.StatusCode, err)
	}
	return dc
}

func pollToken(t *testing.T, s *svcdtest.Service, code string) (status int, body map[string]any) {
	t.Helper()
	resp, err := http.PostForm(s.URL+"/v1/oauth/token", url.Values{"grant_type": {deviceGrantType}, "device_code": {code}, "client_id": {"svc-cli"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// TestDeviceLoginInChromium runs the whole device grant with a real browser filling in
// and submitting the approval page.
func TestDeviceLoginInChromium(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	ctx := svcdtest.Browser(t)
	dc := requestDeviceCode(t, s)
	if dc.Interval != 5 || dc.ExpiresIn <= 0 || !strings.Contains(dc.VerificationURIComplete, dc.UserCode) {
		t.Fatalf("device code response %+v", dc)
	}
	if st, body := pollToken(t, s, dc.DeviceCode); st != 400 || body["error"] != "authorization_pending" {
		t.Fatalf("before approval: %d %v", st, body)
	}
	if st, body := pollToken(t, s, dc.DeviceCode); st != 400 || body["error"] != "slow_down" {
		t.Fatalf("polling at once again: %d %v", st, body)
	}
	var message, user string
	err := chromedp.Run(ctx,
		chromedp.Navigate(dc.VerificationURIComplete),
		chromedp.WaitVisible("#login-form"),
		chromedp.SendKeys("#username", "admin"),
		chromedp.SendKeys("#password", adminPassword),
		chromedp.Click("#login"),
		chromedp.WaitVisible("#approve-form"),
		chromedp.Text("#user", &user),
		chromedp.Click("#approve"),
		chromedp.WaitVisible("#message"),
		chromedp.Text("#message", &message),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if user != "admin" || !strings.Contains(message, "approved") {
		t.Fatalf("page said %q as %q", message, user)
	}
	st, body := pollToken(t, s, dc.DeviceCode)
	token, _ := body["access_token"].(string)
	if st != 200 || !strings.HasPrefix(token, "svco_") || body["token_type"] != "Bearer" || body["scope"] != "full_access" {
		t.Fatalf("token: %d %v", st, body)
	}
	var me struct{ User struct{ Username string } }
	s.Must(200, "GET", "/v1/me", nil, "Authorization", "Bearer "+token).JSON(t, &me)
	if me.User.Username != "admin" {
		t.Fatalf("/v1/me as the device: %+v", me)
	}
	// The code is spent.
	if st, body := pollToken(t, s, dc.DeviceCode); st != 400 || body["error"] != "invalid_grant" {
		t.Fatalf("reused code: %d %v", st, body)
	}

	// Denying in the browser answers access_denied.
	dc2 := requestDeviceCode(t, s)
	err = chromedp.Run(ctx,
		chromedp.Navigate(dc2.VerificationURI),
		chromedp.WaitVisible("#approve-form"), // the session cookie keeps the user signed in
		chromedp.SendKeys("#user_code", strings.ToLower(strings.ReplaceAll(dc2.UserCode, "-", ""))),
		chromedp.Click("#deny"),
		chromedp.WaitVisible("#message"),
		chromedp.Text("#message", &message),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if !strings.Contains(message, "denied") {
		t.Fatalf("deny page said %q", message)
	}
	if st, body := pollToken(t, s, dc2.DeviceCode); st != 400 || body["error"] != "access_denied" {
		t.Fatalf("after denial: %d %v", st, body)
	}
}

func TestDeviceCodeExpires(t *testing.T) {
	s := svcdtest.Start(t, "SVC_DEVICE_CODE_TTL=2s")
	dc := requestDeviceCode(t, s)
	time.Sleep(2500 * time.Millisecond)
	if st, body := pollToken(t, s, dc.DeviceCode); st != 400 || body["error"] != "expired_token" {
		t.Fatalf("after expiry: %d %v", st, body)
	}
	if st, body := pollToken(t, s, "svcd_unknown"); st != 400 || body["error"] != "invalid_grant" {
		t.Fatalf("unknown code: %d %v", st, body)
	}
}
