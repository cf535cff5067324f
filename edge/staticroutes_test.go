package edge

import (
	"net"
	"testing"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"
)

// TestStaticRoutesAnswerOnlyTheirOwnMethods: a static path under /v1/clusters/ is no
// {cluster_id} for the methods it does not register (found by schemathesis 4.32.5's
// coverage phase: PATCH /v1/clusters/sizes reached the cluster update, and OPTIONS
// advertised its methods).
func TestStaticRoutesAnswerOnlyTheirOwnMethods(t *testing.T) {
	h := newHarness(t)
	send := func(method, path string) *fasthttp.Response {
		var req fasthttp.Request
		req.Header.SetMethod(method)
		req.SetRequestURI(path)
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 4242}, nil)
		h.s.srv.Handler(&ctx)
		resp := &fasthttp.Response{}
		ctx.Response.CopyTo(resp)
		return resp
	}
	for _, c := range []struct{ method, path, allow string }{
		{"PATCH", "/v1/clusters/sizes", "GET, OPTIONS"},
		{"DELETE", "/v1/clusters/metrics", "GET, OPTIONS"},
		{"GET", "/v1/clusters/verify-s3-access", "OPTIONS, POST"},
	} {
		r := send(c.method, c.path)
		if r.StatusCode() != 405 || string(r.Header.Peek("Allow")) != c.allow {
			t.Errorf("%s %s: got %d Allow %q, want 405 Allow %q", c.method, c.path, r.StatusCode(), r.Header.Peek("Allow"), c.allow)
		}
		if r = send("OPTIONS", c.path); string(r.Header.Peek("Allow")) != c.allow {
			t.Errorf("OPTIONS %s: got %d Allow %q, want %q", c.path, r.StatusCode(), r.Header.Peek("Allow"), c.allow)
		}
	}
	// The routes themselves still answer (401 without credentials, not 405).
	for _, c := range [][2]string{{"GET", "/v1/clusters/sizes"}, {"POST", "/v1/clusters/verify-s3-access"},
		{"PATCH", "/v1/clusters/" + uuid.NewString()}, {"DELETE", "/v1/clusters/" + uuid.NewString()}} {
		if r := send(c[0], c[1]); r.StatusCode() == 405 {
			t.Errorf("%s %s: got 405", c[0], c[1])
		}
	}
	if r := send("OPTIONS", "/v1/clusters/"+uuid.NewString()); string(r.Header.Peek("Allow")) != "DELETE, GET, OPTIONS, PATCH" {
		t.Errorf("OPTIONS /v1/clusters/{cluster_id}: Allow %q", r.Header.Peek("Allow"))
	}
}
