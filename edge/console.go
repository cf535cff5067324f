package edge

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/ui"
	"github.com/svc-data/svc/projections/catalog"
)

// The web console (edge/ui) is served at /ui/:
//
//	GET  /ui/                   the page (index.html)
//	GET  /ui/assets/{file}      the bundle, stylesheet and vendored uPlot
//	POST /ui/login              JSON {username, password} → the session cookie
//	GET  /ui/session            the signed-in user and the CSRF token of the session
//	POST /ui/logout             ends the session (CSRF token required)
//	ANY  /ui/api/{path}         the API at /v1/{path}, as the session's user
//
// The page never sees the session token: the cookie is HttpOnly and SameSite=Strict.
// /ui/api checks an X-CSRF-Token bound to the session, then routes the request to /v1/
// with the session as its bearer token. The API itself reads only the Authorization
// header, so the cookie alone never reaches it.

const consoleCSRFHeader = "X-CSRF-Token"

// consoleCSRF binds the console's API calls to the session; another site's page can read
// neither the cookie nor GET /ui/session's answer, so it cannot compute the token.
func consoleCSRF(sessionToken string) string {
	sum := sha256.Sum256([]byte("console-api:" + sessionToken))
	return hex.EncodeToString(sum[:16])
}

var consoleAssets = func() fs.FS {
	sub, err := fs.Sub(ui.Static, "static")
	if err != nil {
		panic(err)
	}
	return sub
}()

// consoleSecurityHeaders keep the page out of frames and its scripts to its own files.
func consoleSecurityHeaders(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("X-Frame-Options", "DENY")
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	ctx.Response.Header.Set("Referrer-Policy", "same-origin")
	ctx.Response.Header.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "+
		"img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
}

func (s *Server) consolePage(ctx *fasthttp.RequestCtx) error {
	return s.consoleFile(ctx, "index.html")
}

func (s *Server) consoleAsset(ctx *fasthttp.RequestCtx) error {
	name, _ := ctx.UserValue("file").(string)
	if name == "index.html" || name != path.Base(name) || strings.HasPrefix(name, ".") {
		return apiErr(404, "route_not_found", "no console asset "+name, "")
	}
	return s.consoleFile(ctx, name)
}

func (s *Server) consoleFile(ctx *fasthttp.RequestCtx, name string) error {
	body, err := fs.ReadFile(consoleAssets, name)
	if err != nil {
		return apiErr(404, "route_not_found", "no console asset "+name, "")
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "text/plain; charset=utf-8"
	}
	consoleSecurityHeaders(ctx)
	// Assets change with the binary; revalidating costs one small request.
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.SetContentType(ct)
	ctx.SetStatusCode(200)
	ctx.SetBody(body)
	return nil
}

// consoleLogin checks the password like every other login and sets the session cookie.
func (s *Server) consoleLogin(ctx *fasthttp.RequestCtx) error {
	if !strings.HasPrefix(string(ctx.Request.Header.ContentType()), "application/json") {
		// A form post from another site cannot send JSON without a preflight.
		return apiErr(415, "unsupported_media_type", "send the sign-in as application/json", "")
	}
	u, sess, token, err := s.jsonLogin(ctx)
	if err != nil {
		return err
	}
	s.setSessionCookie(ctx, token, sess.ExpiresAt)
	ctx.Response.Header.Set("Cache-Control", "no-store")
	writeJSON(ctx, 200, map[string]any{"user": viewUser(u), "csrf_token": consoleCSRF(token)})
	return nil
}

// setSessionCookie sets (or, with an empty token, clears) the session cookie, Secure
// whenever the client reached the service over TLS (secureRequest).
func (s *Server) setSessionCookie(ctx *fasthttp.RequestCtx, token string, expires time.Time) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(sessionCookie)
	c.SetValue(token)
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	c.SetExpire(expires)
	c.SetSecure(s.secureRequest(ctx))
	ctx.Response.Header.SetCookie(c)
}

var errConsoleSignedOut = apiErr(401, "unauthenticated", "not signed in to the console", "sign in at /ui/")

// consoleSession answers the signed-in user and the CSRF token the page sends back.
func (s *Server) consoleSession(ctx *fasthttp.RequestCtx) error {
	u, token := s.cookieUser(ctx)
	if u == nil {
		return errConsoleSignedOut
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	writeJSON(ctx, 200, map[string]any{"user": viewUser(u), "csrf_token": consoleCSRF(token)})
	return nil
}

// consoleToken returns the session token of a console request that carries the cookie
// and the session's CSRF token.
func (s *Server) consoleToken(ctx *fasthttp.RequestCtx) (string, error) {
	u, token := s.cookieUser(ctx)
	if u == nil {
		return "", errConsoleSignedOut
	}
	if subtle.ConstantTimeCompare(ctx.Request.Header.Peek(consoleCSRFHeader), []byte(consoleCSRF(token))) != 1 {
		return "", apiErr(403, "csrf_token_invalid", "the console request lacks the session's "+consoleCSRFHeader,
			"reload the console; its token is bound to the session")
	}
	return token, nil
}

func (s *Server) consoleLogout(ctx *fasthttp.RequestCtx) error {
	token, err := s.consoleToken(ctx)
	if err != nil {
		return err
	}
	p, err := s.principalForToken(token)
	if err == nil && p.Session != nil {
		if err := s.deps.Commands.RevokeSession(s.work(), p.Session.ID); err != nil {
			return err
		}
	}
	s.setSessionCookie(ctx, "", time.Unix(0, 0))
	ctx.SetStatusCode(204)
	return nil
}

// consoleAPI routes /ui/api/{path} to /v1/{path} as the session's user.
func (s *Server) consoleAPI(ctx *fasthttp.RequestCtx) error {
	token, err := s.consoleToken(ctx)
	if err != nil {
		return err
	}
	rest, _ := ctx.UserValue("path").(string)
	if !consoleAPIPathOK(rest) {
		return apiErr(404, "route_not_found", "no API route under /v1 for this path", "see /v1/openapi.json for the API")
	}
	ctx.Request.URI().SetPath("/v1/" + rest)
	ctx.Request.Header.Set("Authorization", "Bearer "+token)
	ctx.Request.Header.DelAllCookies()
	ctx.Request.Header.Del(consoleCSRFHeader)
	ctx.Response.Header.Set("Cache-Control", "no-store")
	s.routes(ctx)
	return nil
}

// consoleAPIPathOK reports whether /ui/api/{rest} stays under /v1. The router matches the
// path as sent (rest is still percent-encoded), while fasthttp decodes it once and then
// resolves dot segments, and the router's fixed-path redirect uses that: so the segments
// are checked on rest decoded, where `..%2f` and `%2e%2e` are what they become.
func consoleAPIPathOK(rest string) bool {
	decoded, err := url.PathUnescape(rest)
	if err != nil {
		return false
	}
	for _, seg := range strings.Split(decoded, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// jsonLogin reads a JSON {username, password} body and opens a session.
func (s *Server) jsonLogin(ctx *fasthttp.RequestCtx) (*catalog.User, *catalog.Session, string, error) {
	var req loginRequest
	if err := readJSON(ctx, &req); err != nil {
		return nil, nil, "", err
	}
	// Missing credentials are bad input, answered before the login limiter counts a failure.
	for _, f := range []struct{ name, value string }{{"username", req.Username}, {"password", req.Password}} {
		if f.value == "" {
			return nil, nil, "", &APIError{Status: 400, Code: "invalid_" + f.name, Field: f.name, Message: f.name + " is required"}
		}
	}
	return s.passwordSession(ctx, req.Username, req.Password)
}

// passwordSession checks a user name and password through the login limiter
// (checkPassword) and opens a user session: the one path every password login takes
// (the API, the device page and the console).
func (s *Server) passwordSession(ctx *fasthttp.RequestCtx, username, password string) (*catalog.User, *catalog.Session, string, error) {
	u, err := s.checkPassword(ctx, username, password)
	if err != nil {
		return nil, nil, "", err
	}
	sess, token, err := s.deps.Commands.CreateSession(s.work(), u.ID, catalog.KindSession, "full_access", catalog.SessionTTL)
	if err != nil {
		return nil, nil, "", err
	}
	return u, sess, token, nil
}
