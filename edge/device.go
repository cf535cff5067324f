package edge

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html/template"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// The OAuth 2.0 Device Authorization Grant (RFC 8628) for the command-line client:
//
//	POST /v1/oauth/device/code   client_id, scope      → device_code, user_code, ...
//	GET  /device                 the approval page, where a logged-in user enters the code
//	POST /v1/oauth/token         grant_type=urn:ietf:params:oauth:grant-type:device_code
//
// The token endpoint answers errors in OAuth's own shape ({"error": "authorization_pending"})
// because OAuth clients read that shape, not the service's envelope.

const deviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"

// pollState enforces the polling interval per device code (slow_down). It is per node:
// a client polling two nodes alternately is merely slowed less.
type pollState struct {
	mu   sync.Mutex
	last map[uuid.UUID]time.Time
	wait map[uuid.UUID]time.Duration
}

func (s *Server) publicURL(ctx *fasthttp.RequestCtx) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimSuffix(s.cfg.PublicURL, "/")
	}
	// Never the Host header: a phishing page could send a device code whose link
	// points wherever its Host said.
	scheme := "http"
	if ctx.IsTLS() {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil {
		return scheme + "://" + s.Addr()
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// oauthForm reads an OAuth request's parameters from a form body, a JSON object body or
// the query string. A JSON body that is not an object, or a member of one that is not a
// string, answers 400 invalid_request naming the member (RFC 6749 §5.2), instead of
// being read as absent. Members the endpoints do not read are ignored, as the document allows.
// oauthParams are the members the OAuth endpoints read; others are ignored.
var oauthParams = map[string]bool{"client_id": true, "scope": true, "grant_type": true, "device_code": true}

func oauthForm(ctx *fasthttp.RequestCtx) (func(name string) string, error) {
	var m map[string]any
	if bytes.HasPrefix(ctx.Request.Header.ContentType(), []byte("application/json")) && len(bytes.TrimSpace(ctx.PostBody())) > 0 {
		if err := json.Unmarshal(ctx.PostBody(), &m); err != nil || m == nil {
			return nil, oauthErr(400, "invalid_request", "the body must be a JSON object")
		}
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if _, ok := m[k].(string); !ok && oauthParams[k] {
				return nil, oauthErr(400, "invalid_request", k+" must be a string")
			}
		}
	}
	return func(name string) string {
		if v := ctx.PostArgs().Peek(name); v != nil {
			return string(v)
		}
		if v, ok := m[name].(string); ok {
			return v
		}
		return string(ctx.QueryArgs().Peek(name))
	}, nil
}

// oauthError is an OAuth error (RFC 6749 section 5.2), which writeError answers in
// OAuth's own envelope, {"error": code, "error_description": desc}.
type oauthError struct {
	status     int
	code, desc string
}

func (e *oauthError) Error() string { return e.code + ": " + e.desc }

func oauthErr(status int, code, desc string) error {
	return &oauthError{status: status, code: code, desc: desc}
}

func (e *oauthError) WriteAnswer(ctx *fasthttp.RequestCtx) {
	writeJSON(ctx, e.status, map[string]string{"error": e.code, "error_description": e.desc})
	ctx.Response.Header.Set("Cache-Control", "no-store")
}

func (s *Server) deviceCode(ctx *fasthttp.RequestCtx) error {
	formValue, err := oauthForm(ctx)
	if err != nil {
		return err
	}
	clientID := formValue("client_id")
	if clientID == "" {
		return oauthErr(400, "invalid_request", "client_id is required")
	}
	scope := formValue("scope")
	if scope == "" {
		scope = "full_access"
	}
	for _, sc := range strings.Fields(scope) {
		if sc != "full_access" {
			return oauthErr(400, "invalid_scope", "unknown scope "+sc+"; the service offers full_access")
		}
	}
	d, code, err := s.deps.Commands.RequestDevice(s.work(), clientID, scope)
	if err != nil {
		return err
	}
	base := s.publicURL(ctx) + "/device"
	ctx.Response.Header.Set("Cache-Control", "no-store")
	writeJSON(ctx, 200, map[string]any{
		"device_code":               code,
		"user_code":                 d.UserCode,
		"verification_uri":          base,
		"verification_uri_complete": base + "?user_code=" + url.QueryEscape(d.UserCode),
		"expires_in":                int(time.Until(d.ExpiresAt).Seconds()),
		"interval":                  d.Interval,
	})
	return nil
}

func (s *Server) token(ctx *fasthttp.RequestCtx) error {
	formValue, err := oauthForm(ctx)
	if err != nil {
		return err
	}
	if gt := formValue("grant_type"); gt != deviceGrantType {
		return oauthErr(400, "unsupported_grant_type", "only "+deviceGrantType+" is supported")
	}
	code := formValue("device_code")
	if code == "" {
		return oauthErr(400, "invalid_request", "device_code is required")
	}
	d, ok := s.deps.Catalog.DeviceByCodeHash(catalog.HashToken(code))
	if !ok {
		return oauthErr(400, "invalid_grant", "unknown device_code")
	}
	if cid := formValue("client_id"); cid != "" && cid != d.ClientID {
		return oauthErr(400, "invalid_grant", "the device_code was issued to another client")
	}
	if !time.Now().Before(d.ExpiresAt) {
		return oauthErr(400, "expired_token", "the device code expired; start the login again")
	}
	switch d.State {
	case catalog.DeviceDeniedState:
		return oauthErr(400, "access_denied", "the user denied the request")
	case catalog.DeviceIssued:
		return oauthErr(400, "invalid_grant", "the device_code was already exchanged")
	case catalog.DevicePending:
		if s.pollTooSoon(d) {
			return oauthErr(400, "slow_down", "polling too fast; wait the interval, now increased by 5 seconds")
		}
		return oauthErr(400, "authorization_pending", "waiting for the user to approve the request")
	}
	sess, token, err := s.deps.Commands.IssueDeviceToken(s.work(), d.ID)
	if err != nil {
		if errors.Is(err, catalog.ErrConflict) {
			return oauthErr(400, "invalid_grant", err.Error())
		}
		return err
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	writeJSON(ctx, 200, map[string]any{"access_token": token, "token_type": "Bearer",
		"expires_in": int(time.Until(sess.ExpiresAt).Seconds()), "scope": sess.Scope})
	return nil
}

// pollTooSoon records a poll and reports whether it came before the interval elapsed; each
// early poll adds 5 seconds to the interval (RFC 8628 §3.5).
func (s *Server) pollTooSoon(d *catalog.Device) bool {
	p := &s.polls
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last, p.wait = map[uuid.UUID]time.Time{}, map[uuid.UUID]time.Duration{}
	}
	now := time.Now()
	wait := p.wait[d.ID]
	if wait == 0 {
		wait = time.Duration(d.Interval) * time.Second
	}
	last, seen := p.last[d.ID]
	p.last[d.ID] = now
	if seen && now.Sub(last) < wait {
		p.wait[d.ID] = wait + 5*time.Second
		return true
	}
	p.wait[d.ID] = wait
	return false
}

const sessionCookie = "svc_session"

var devicePage = template.Must(template.New("device").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Device login</title>
<meta name="viewport" content="width=device-width,initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}
input,button{font-size:1rem;padding:.4rem;margin:.2rem 0;width:100%}.msg{padding:.6rem;background:#eef}
.err{background:#fee}</style></head><body>
<h1>Device login</h1>
{{if .Message}}<p class="msg{{if .Error}} err{{end}}" id="message">{{.Message}}</p>{{end}}
{{if .Done}}{{else if .User}}
<p>Signed in as <b id="user">{{.User}}</b>. Enter the code your device shows.</p>
<form method="post" action="/device" id="approve-form">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<label>Code <input name="user_code" id="user_code" value="{{.UserCode}}" autocomplete="off" required></label>
<button name="action" value="approve" id="approve">Approve</button>
<button name="action" value="deny" id="deny">Deny</button>
</form>
{{else}}
<p>Sign in to approve a device.</p>
<form method="post" action="/device/login" id="login-form">
<input type="hidden" name="user_code" value="{{.UserCode}}">
<label>User name <input name="username" id="username" autocomplete="username" required></label>
<label>Password <input name="password" id="password" type="password" autocomplete="current-password" required></label>
<button id="login">Sign in</button>
</form>
{{end}}
</body></html>`))

type devicePageData struct {
	User, UserCode, CSRF, Message string
	Error, Done                   bool
}

func (s *Server) renderDevice(ctx *fasthttp.RequestCtx, status int, d devicePageData) error {
	var buf bytes.Buffer
	if err := devicePage.Execute(&buf, d); err != nil {
		return err
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.Response.Header.Set("X-Frame-Options", "DENY")
	ctx.Response.Header.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	ctx.SetBody(buf.Bytes())
	return nil
}

// cookieUser returns the user of the page's session cookie and the cookie's token.
func (s *Server) cookieUser(ctx *fasthttp.RequestCtx) (*catalog.User, string) {
	token := string(ctx.Request.Header.Cookie(sessionCookie))
	if token == "" {
		return nil, ""
	}
	p, err := s.principalForToken(token)
	if err != nil || p.User == nil {
		return nil, ""
	}
	return p.User, token
}

// csrfToken binds the approval form to the session: a page of another site cannot read
// the cookie, so it cannot compute the token.
func csrfToken(sessionToken string) string {
	sum := sha256.Sum256([]byte("device-approval:" + sessionToken))
	return hex.EncodeToString(sum[:16])
}

func (s *Server) devicePageGet(ctx *fasthttp.RequestCtx) error {
	code := catalog.NormalizeUserCode(string(ctx.QueryArgs().Peek("user_code")))
	u, token := s.cookieUser(ctx)
	d := devicePageData{UserCode: code}
	if u != nil {
		d.User, d.CSRF = u.Username, csrfToken(token)
	}
	return s.renderDevice(ctx, 200, d)
}

func (s *Server) deviceLogin(ctx *fasthttp.RequestCtx) error {
	code := catalog.NormalizeUserCode(string(ctx.PostArgs().Peek("user_code")))
	u, sess, token, err := s.passwordSession(ctx, string(ctx.PostArgs().Peek("username")), string(ctx.PostArgs().Peek("password")))
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == 429 {
			ctx.Response.Header.Set("Retry-After", strconv.Itoa(ae.RetryAfter))
			return s.renderDevice(ctx, 429, devicePageData{UserCode: code, Message: "Too many failed sign-ins; try again later.", Error: true})
		}
	}
	if err != nil {
		if e := toAPIError(err); e.Status == 401 {
			return s.renderDevice(ctx, 401, devicePageData{UserCode: code, Message: "Wrong user name or password.", Error: true})
		}
		return err
	}
	s.setSessionCookie(ctx, token, sess.ExpiresAt)
	return s.renderDevice(ctx, 200, devicePageData{User: u.Username, UserCode: code, CSRF: csrfToken(token)})
}

func (s *Server) deviceDecide(ctx *fasthttp.RequestCtx) error {
	u, token := s.cookieUser(ctx)
	code := catalog.NormalizeUserCode(string(ctx.PostArgs().Peek("user_code")))
	if u == nil {
		return s.renderDevice(ctx, 401, devicePageData{UserCode: code, Message: "Sign in first.", Error: true})
	}
	page := devicePageData{User: u.Username, UserCode: code, CSRF: csrfToken(token)}
	if subtle.ConstantTimeCompare(ctx.PostArgs().Peek("csrf"), []byte(csrfToken(token))) != 1 {
		page.Message, page.Error = "The form expired; submit it again.", true
		return s.renderDevice(ctx, 403, page)
	}
	d, ok := s.deps.Catalog.DeviceByUserCode(code)
	if !ok {
		page.Message, page.Error = "Unknown code. Check the code your device shows.", true
		return s.renderDevice(ctx, 404, page)
	}
	approve := string(ctx.PostArgs().Peek("action")) != "deny"
	if err := s.deps.Commands.DecideDevice(s.work(), d.ID, u.ID, approve); err != nil {
		page.Message, page.Error = strings.TrimPrefix(err.Error(), "conflict: ")+".", true
		return s.renderDevice(ctx, 409, page)
	}
	page.Done = true
	page.Message = "Device approved. You can return to your terminal."
	if !approve {
		page.Message = "Request denied."
	}
	return s.renderDevice(ctx, 200, page)
}
