package edge

import (
	"errors"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestFiveHundredsCarryNoInternalText: a 5xx answer, and the request log entry made from
// it, say that the request failed and give its id; the internal error's text (which names
// engine databases, hosts and files) is not in them.
func TestFiveHundredsCarryNoInternalText(t *testing.T) {
	f := func(err error, status int, secret string) {
		t.Helper()
		var ctx fasthttp.RequestCtx
		ctx.SetUserValue(requestIDKey, "0123456789abcdef")
		writeError(&ctx, err)
		body := string(ctx.Response.Body())
		logged, _ := ctx.UserValue(apiErrorKey).(*APIError)
		if ctx.Response.StatusCode() != status || strings.Contains(body, secret) || !strings.Contains(body, "0123456789abcdef") ||
			logged == nil || strings.Contains(logged.Message, secret) {
			t.Fatalf("writeError(%v): %d %s (logged %+v)", err, ctx.Response.StatusCode(), body, logged)
		}
	}
	f(errors.New("write o_5f0e__db.`9c1d-table`: dial tcp 10.0.0.7:9000: connection refused"), 500, "o_5f0e__db")
	f(&APIError{Status: 500, Code: "internal_error", Message: "the search could not be compiled: o_5f0e__db"}, 500, "o_5f0e__db")
	f(&APIError{Status: 503, Code: "log_unavailable", Message: "dead letters are unavailable",
		Internal: errors.New("fetch svc-dlq-5f0e: broker 127.0.0.1:39092 unreachable"), RetryAfter: 1}, 503, "svc-dlq")

	// 4xx answers and 5xx ones built to be read are as they were.
	var ctx fasthttp.RequestCtx
	writeError(&ctx, &APIError{Status: 503, Code: "ingest_busy", Message: "too many inserts in flight", RetryAfter: 1})
	if !strings.Contains(string(ctx.Response.Body()), "too many inserts in flight") {
		t.Fatalf("a public 503: %s", ctx.Response.Body())
	}
}
