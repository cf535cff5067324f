package edge

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// serverLogger routes fasthttp's own messages (malformed requests, connection errors)
// into slog. fasthttp runs with SecureErrorLogMessage, so its messages name no request
// contents; this also cuts anything after "contents" or "buffer" and redacts credentials,
// in case a message quotes request bytes anyway.
type serverLogger struct{ log *slog.Logger }

func (l serverLogger) Printf(format string, args ...any) {
	l.log.Warn("http server", "msg", redactServerLog(fmt.Sprintf(format, args...)))
}

// credentialPrefixes start tokens that must never reach a log.
var credentialPrefixes = []string{catalog.TokenPrefix, catalog.SessionTokenPrefix, catalog.OAuthTokenPrefix}

// redactServerLog cuts a quoted request buffer off a server message and replaces every
// credential in the rest: tokens, and whatever follows "Bearer", "Basic" or an
// Authorization header name.
func redactServerLog(msg string) string {
	lower := strings.ToLower(msg)
	for _, cut := range []string{"contents", "buffer"} {
		if i := strings.Index(lower, cut); i >= 0 {
			msg, lower = msg[:i]+"[request bytes removed]", lower[:i]
		}
	}
	orig := strings.Fields(msg)
	words := append([]string(nil), orig...)
	for i, w := range orig {
		lw := strings.ToLower(w)
		for _, p := range credentialPrefixes {
			if j := strings.Index(w, p); j >= 0 {
				words[i] = w[:j] + "[redacted]"
			}
		}
		if (lw == "bearer" || lw == "basic" || strings.HasPrefix(lw, "authorization")) && i+1 < len(words) {
			words[i+1] = "[redacted]"
		}
	}
	return strings.Join(words, " ")
}

// parseError answers a request fasthttp could not read with the API's error envelope
// (fasthttp's own answer is plain text), never quoting the request.
func parseError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var netErr *net.OpError
	switch {
	case errors.As(err, &small):
		writeError(ctx, apiErr(431, "headers_too_large", "the request's headers are too large", ""))
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		writeError(ctx, apiErr(413, "payload_too_large", "the request body is larger than the service accepts", ""))
	case errors.As(err, &netErr) && netErr.Timeout():
		writeError(ctx, apiErr(408, "request_timeout", "the request was not received in time", ""))
	default:
		writeError(ctx, apiErr(400, "malformed_request", "the request could not be parsed as HTTP/1.1", "check the request line and headers"))
	}
}
