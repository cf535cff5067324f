package ingest

import (
	"errors"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/apierr"
)

// TestProtocolEnvelopesCarryNoInternalText: HEC's and Firehose's own error envelopes
// answer a failure inside the service as every other route does — a generic message, the
// detail kept for the server log — not the internal text (HEC answered it as 400
// "Invalid data format: <text>", Firehose as its errorMessage).
func TestProtocolEnvelopesCarryNoInternalText(t *testing.T) {
	const secret = "dial tcp 10.0.0.7:9000: engine pool exhausted"
	internal := &apierr.Error{Status: 500, Code: "internal_error", Message: secret}
	for _, c := range []struct {
		name   string
		err    error
		status int
	}{
		{"hec", hecError(internal), 500},
		{"firehose", &firehoseError{requestID: "r1", err: internal}, 500},
		{"hec wrapped", hecError(errors.Join(errors.New("insert"), internal)), 500},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ctx fasthttp.RequestCtx
			ctx.SetUserValue(apierr.RequestIDKey, "req-1")
			apierr.Write(&ctx, c.err)
			body := string(ctx.Response.Body())
			if ctx.Response.StatusCode() != c.status || strings.Contains(body, "10.0.0.7") || strings.Contains(body, "pool") {
				t.Fatalf("answer %d %s", ctx.Response.StatusCode(), body)
			}
			if d, _ := ctx.UserValue(apierr.InternalErrorKey).(string); !strings.Contains(d, "pool exhausted") {
				t.Fatalf("the detail was not kept for the server log: %q", d)
			}
		})
	}
}
