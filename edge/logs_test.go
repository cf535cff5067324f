package edge

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestRedactPath(t *testing.T) {
	f := func(path, route, want string) {
		t.Helper()
		if got := redactPath(path, route); got != want {
			t.Fatalf("redactPath(%q) = %q, want %q", path, got, want)
		}
	}
	token := "svck_" + strings.Repeat("x", 43)
	f("/v1/keys/"+token, "/v1/keys/{key}", "/v1/keys/svck_xxxx…")
	f("/v1/keys/0b6f2e1c-7c3e-4a8a-9a34-2b1f0c9d8e7f", "/v1/keys/{key}", "/v1/keys/0b6f2e1c-7c3e-4a8a-9a34-2b1f0c9d8e7f")
	f("/v1/tables/svck_looks_like_a_token", "/v1/tables/{table}", "/v1/tables/svck_looks_like_a_token")
	f("/v1/organizations/acme/members/bob", "/v1/organizations/{org}/members/{user}", "/v1/organizations/acme/members/{user}")
}

func TestSource(t *testing.T) {
	f := func(ua, src, version string) {
		t.Helper()
		if s, v := source(ua); s != src || v != version {
			t.Fatalf("source(%q) = %q %q, want %q %q", ua, s, v, src, version)
		}
	}
	f("svc-cli/1.4.2 (linux)", "cli", "1.4.2")
	f("Mozilla/5.0 (X11)", "ui", "")
	f("curl/8.5.0", "api", "")
	f("", "api", "")
}

func TestRedactServerLog(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := redactServerLog(in); got != want {
			t.Fatalf("redactServerLog(%q) = %q, want %q", in, got, want)
		}
	}
	f("error when reading request headers: cannot find http request method. Buffer size=42, contents: \"GET svck_abc\"",
		"error when reading request headers: cannot find http request method. [request bytes removed]")
	f("bad header Authorization: Bearer svcs_secret x", "bad header Authorization: [redacted] [redacted] x")
	f("token=svco_secret; basic dXNlcjpwdw==", "token=[redacted] basic [redacted]")
	f("connection closed", "connection closed")
}

func TestMetricsAllowed(t *testing.T) {
	f := func(addr, token, auth string, want bool) {
		t.Helper()
		s := &Server{cfg: Config{Addr: addr, MetricsToken: token}}
		ctx := &fasthttp.RequestCtx{}
		if auth != "" {
			ctx.Request.Header.Set("Authorization", auth)
		}
		if got := s.metricsAllowed(ctx) == nil; got != want {
			t.Fatalf("metrics on %s (token %q, auth %q): allowed %v, want %v", addr, token, auth, got, want)
		}
	}
	f("127.0.0.1:8080", "", "", true)
	f("[::1]:8080", "", "", true)
	f("0.0.0.0:8080", "", "", false)
	f(":8080", "", "", false)
	f("10.0.0.5:8080", "", "", false)
	f("0.0.0.0:8080", "tok", "Bearer tok", true)
	f("127.0.0.1:8080", "tok", "", false)
	f("127.0.0.1:8080", "tok", "Bearer tak", false)
}
