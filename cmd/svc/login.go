package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

// The OAuth client id the service's device grant records for this client.
const clientID = "svc-cli"

func init() { register(loginCommand); register(logoutCommand); register(whoamiCommand) }

func loginCommand(a *app) *cobra.Command {
	var timeout int
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Log in with a browser approval (OAuth device flow), or save an API key with --api-key",
		Long: `Without --api-key, login asks the service for a device code and shows the address
and code to approve in a browser; it waits at most --timeout-seconds (capped by the
code's lifetime). When stdin is not a terminal, or with --json, it prints the JSON
event {"event":"device_approval_required", ...} on stderr instead of the message.`,
		Args: args(0, 0),
		RunE: runE(func(ctx context.Context, _ []string) error {
			if timeout <= 0 {
				return usageErr("--timeout-seconds must be positive")
			}
			key := first(a.apiKey, os.Getenv("SERVICE_API_KEY"))
			if key != "" {
				return a.emit(a.loginWithKey(ctx, key))
			}
			return a.emit(a.deviceLogin(ctx, time.Duration(timeout)*time.Second))
		}),
	}
	cmd.Flags().IntVar(&timeout, "timeout-seconds", 300, "how long to wait for the approval (capped by the device code's lifetime)")
	return cmd
}

// loginWithKey checks the key against the service and saves it; no device approval.
func (a *app) loginWithKey(ctx context.Context, key string) (any, error) {
	a.token, a.isKey = key, true
	v, err := a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
		return c.ListOrganizations(ctx, &client.ListOrganizationsParams{})
	})
	if err != nil {
		return nil, err
	}
	a.cfg = config{URL: a.baseURL(), Token: key, TokenType: tokenAPIKey}
	if orgs, _ := field(v, "organizations").([]any); len(orgs) == 1 {
		a.cfg.Org, _ = field(orgs[0], "name").(string)
	}
	if err := a.saveConfig(); err != nil {
		return nil, err
	}
	return map[string]any{"logged_in": true, "url": a.cfg.URL, "credential": tokenAPIKey, "org": a.cfg.Org, "config": a.cfgPath}, nil
}

type deviceCode struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
}

// deviceLogin runs the device authorization grant (RFC 8628).
func (a *app) deviceLogin(ctx context.Context, timeout time.Duration) (any, error) {
	c, err := client.NewClient(a.baseURL(), client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("User-Agent", userAgent)
		return nil
	}))
	if err != nil {
		return nil, err
	}
	resp, err := c.DeviceAuthorizationWithFormdataBody(ctx, client.DeviceAuthorizationFormdataRequestBody{ClientId: clientID, Scope: ptr("full_access")})
	if err != nil {
		return nil, transportErr(ctx, err)
	}
	var dc deviceCode
	if err := readJSON(resp, &dc); err != nil {
		return nil, err
	}
	if life := time.Duration(dc.ExpiresIn) * time.Second; life < timeout {
		timeout = life
	}
	if a.json || !isTerminal(a.stdin) {
		a.printEvent(map[string]any{"event": "device_approval_required", "verification_uri": dc.VerificationURI,
			"verification_uri_complete": dc.VerificationURIComplete, "user_code": dc.UserCode, "expires_in": dc.ExpiresIn})
	} else {
		fmt.Fprintf(a.stderr, "Open %s in a browser and confirm the code %s\n(or open %s).\nWaiting for approval...\n",
			dc.VerificationURI, dc.UserCode, dc.VerificationURIComplete)
	}
	deadline := time.Now().Add(timeout)
	interval := time.Duration(max(dc.Interval, 1)) * time.Second
	for {
		select {
		case <-ctx.Done():
			return nil, errInterrupted
		case <-time.After(min(interval, time.Until(deadline))):
		}
		if !time.Now().Before(deadline) {
			return nil, &apiError{status: 0, body: map[string]any{"code": "timeout",
				"message": fmt.Sprintf("the login was not approved within %s", timeout.Round(time.Second)),
				"hint":    "run svc login again and approve the code in the browser"}}
		}
		resp, err := c.DeviceTokenWithFormdataBody(ctx, client.DeviceTokenFormdataRequestBody{
			GrantType: "urn:ietf:params:oauth:grant-type:device_code", DeviceCode: dc.DeviceCode, ClientId: ptr(clientID)})
		if err != nil {
			return nil, transportErr(ctx, err)
		}
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		err = readJSON(resp, &tok)
		if ae, ok := err.(*apiError); ok {
			switch ae.body["code"] {
			case "authorization_pending":
				continue
			case "slow_down":
				interval += 5 * time.Second
				continue
			case "access_denied", "expired_token":
				ae.status = 401
			}
		}
		if err != nil {
			return nil, err
		}
		a.token, a.isKey = tok.AccessToken, false
		me, err := a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
			return c.GetMe(ctx, &client.GetMeParams{})
		})
		if err != nil {
			return nil, err
		}
		user, _ := field(field(me, "user"), "username").(string)
		a.cfg = config{URL: a.baseURL(), Token: tok.AccessToken, TokenType: tokenOAuth, User: user}
		if orgs, _ := field(me, "organizations").([]any); len(orgs) == 1 {
			a.cfg.Org, _ = field(orgs[0], "name").(string)
		}
		if err := a.saveConfig(); err != nil {
			return nil, err
		}
		return map[string]any{"logged_in": true, "url": a.cfg.URL, "credential": tokenOAuth, "user": user, "org": a.cfg.Org, "config": a.cfgPath}, nil
	}
}

// readJSON decodes a JSON answer into v, or returns the answer's error.
func readJSON(resp *http.Response, v any) error {
	b, err := readAnswer(resp)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// printEvent writes one JSON event line on stderr.
func (a *app) printEvent(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(a.stderr, "%s\n", b)
}

func logoutCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "Revoke the saved login's token on the service and forget it",
		Args:  args(0, 0),
		RunE: runE(func(ctx context.Context, _ []string) error {
			out := map[string]any{"logged_out": true, "revoked": false}
			if a.cfg.Token != "" && a.cfg.TokenType == tokenOAuth {
				a.token, a.isKey = a.cfg.Token, false
				_, err := a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.Logout(ctx, &client.LogoutParams{})
				})
				if ae, ok := err.(*apiError); err != nil && !(ok && ae.status == 401) {
					return err // a 401 means already revoked or expired: forget it all the same
				}
				out["revoked"] = err == nil
			}
			a.cfg = config{}
			if err := os.Remove(a.cfgPath); err != nil && !os.IsNotExist(err) {
				return err
			}
			return a.emit(out, nil)
		}),
	}
}

func whoamiCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "whoami",
		Short: "Show the logged-in user, or the API key's organization, and the selection",
		Args:  args(0, 0),
		RunE: runE(func(ctx context.Context, _ []string) error {
			if err := a.credentials(); err != nil {
				return err
			}
			var v any
			var err error
			if a.isKey {
				v, err = a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListOrganizations(ctx, &client.ListOrganizationsParams{})
				})
			} else {
				v, err = a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.GetMe(ctx, &client.GetMeParams{})
				})
			}
			if err != nil {
				return err
			}
			m, _ := v.(map[string]any)
			m["url"] = a.baseURL()
			m["credential"] = map[bool]string{true: tokenAPIKey, false: tokenOAuth}[a.isKey]
			m["selected"] = map[string]string{"org": a.sel.org, "cluster": a.sel.cluster, "database": a.sel.database}
			return a.emit(m, nil)
		}),
	}
}
