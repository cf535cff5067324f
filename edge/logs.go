package edge

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/apierr"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/requestlog"
)

const (
	principalKey = "principal"
	apiErrorKey  = apierr.ErrorKey
)

// bodyRoutes are the routes whose JSON bodies the request log keeps, secret fields
// redacted (requestlog.KeepBody). Every caller who reads the cluster's log can read what
// these bodies hold anyway. Routes carrying credentials (login, users, device approval),
// row data (inserts), membership and organizations (user names), workflows (sink URLs
// and headers), and searches (privateTextRoutes) are not among them, and response
// bodies are never kept.
var bodyRoutes = map[string]bool{
	"POST /v1/query":           true,
	"POST /v1/query/cancel":    true,
	"POST /v1/tables":          true,
	"PATCH /v1/tables/{table}": true,
	"POST /v1/databases":       true,
	"POST /v1/keys":            true,
}

// privateTextRoutes take text that may be private to its author: a search's SPL may be
// a private saved search's, which only its owner may read (the server cannot tell a
// saved search run from an ad hoc one, and decides nothing on comparing texts). The log
// keeps neither their bodies nor their error messages, which quote the text: only the
// error's code.
var privateTextRoutes = map[string]bool{
	"POST /v1/spl/search":                    true,
	"POST /v1/apps/logsearch/searches":       true,
	"PATCH /v1/apps/logsearch/searches/{id}": true,
}

// privateTextMessage stands for the error message of a privateTextRoutes request.
const privateTextMessage = "not logged: the request's text may be private to its author"

// source tells the caller's kind from its user agent: the command-line client, a
// browser (the UI), or any other API client.
func source(ua string) (src, version string) {
	if v, ok := strings.CutPrefix(ua, "svc-cli/"); ok {
		return "cli", strings.Fields(v + " ")[0]
	}
	if strings.Contains(ua, "Mozilla/") {
		return "ui", ""
	}
	return "api", ""
}

// traceIDs reads a W3C traceparent, or makes new ids.
func traceIDs(ctx *fasthttp.RequestCtx) (trace, span string) {
	if tp := strings.Split(string(ctx.Request.Header.Peek("traceparent")), "-"); len(tp) == 4 && len(tp[1]) == 32 {
		trace = tp[1]
	} else {
		var b [16]byte
		rand.Read(b[:])
		trace = hex.EncodeToString(b[:])
	}
	var s [8]byte
	rand.Read(s[:])
	return trace, hex.EncodeToString(s[:])
}

// recordRequest adds a request to the request log of its organization's cluster.
// Requests that resolved no cluster (failed authentication, login) belong to no
// organization's log.
func (s *Server) recordRequest(ctx *fasthttp.RequestCtx, start time.Time, trace, span string) {
	if s.deps.RequestLog == nil {
		return
	}
	p, _ := ctx.UserValue(principalKey).(*Principal)
	if p == nil || p.ClusterID.String() == "00000000-0000-0000-0000-000000000000" {
		return
	}
	route, _ := ctx.UserValue(router.MatchedRoutePathParam).(string)
	ua := string(ctx.Request.Header.UserAgent())
	src, version := source(ua)
	e := requestlog.Entry{ID: span, CreatedAt: start.UTC(), OrgID: p.OrgID, ClusterID: p.ClusterID,
		Method: string(ctx.Method()), Path: redactPath(string(ctx.Path()), route), Route: route, Status: ctx.Response.StatusCode(),
		Source: src, DurationMS: float64(time.Since(start).Microseconds()) / 1000, UserAgent: ua, ClientVersion: version,
		RequestSize: len(ctx.Request.Body()), TraceID: trace, Database: selectedDatabase(ctx)}
	if e.Database == "" && p.Key != nil {
		e.Database = p.Key.DefaultDatabase
	}
	if ae, ok := ctx.UserValue(apiErrorKey).(*APIError); ok {
		e.Error = &requestlog.Error{Code: ae.Code, Message: ae.Message}
		if privateTextRoutes[e.Method+" "+route] {
			e.Error.Message = privateTextMessage
		}
	}
	ct := string(ctx.Request.Header.ContentType())
	if bodyRoutes[e.Method+" "+route] && (ct == "" || strings.Contains(ct, "json")) {
		if b, ok := requestlog.KeepBody(ctx.Request.Body()); ok {
			e.Body = &b
		}
	}
	s.deps.RequestLog.Record(e)
}

// maxLogOffset is the largest `offset` of GET /v1/logs (the document's maximum): 2^53-1,
// exact in every JSON reader and far past any log's length.
const maxLogOffset = 1<<53 - 1

func (s *Server) listLogs(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actQuery) || p.CustomRole() {
		return forbidden("read request logs")
	}
	if err := needCluster(p); err != nil {
		return err
	}
	args := ctx.QueryArgs()
	f := requestlog.Filter{Limit: 50, Search: string(args.Peek("search")), UserAgent: string(args.Peek("user_agent"))}
	bad := func(field, msg string) error {
		return &APIError{Status: 400, Code: "invalid_" + field, Field: field, Message: msg}
	}
	if v := args.Peek("limit"); v != nil {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > 200 {
			return bad("limit", "limit must be 1 to 200")
		}
		f.Limit = n
	}
	if v := args.Peek("offset"); v != nil {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 0 || n > maxLogOffset {
			return bad("offset", "offset must be 0 to "+strconv.Itoa(maxLogOffset))
		}
		f.Offset = n
	}
	for _, b := range []struct {
		name string
		dst  **time.Time
	}{{"start_time", &f.Start}, {"end_time", &f.End}} {
		if v := args.Peek(b.name); v != nil {
			t, err := time.Parse(time.RFC3339Nano, string(v))
			if err != nil {
				return bad(b.name, b.name+" must be an RFC 3339 time")
			}
			*b.dst = &t
		}
	}
	// Lists are comma-separated; items may have spaces (ASCII only, as the document's
	// patterns say) around them, and empty items are skipped.
	list := func(name string) []string {
		var out []string
		for _, v := range strings.Split(string(args.Peek(name)), ",") {
			if v = strings.Trim(v, " "); v != "" {
				out = append(out, v)
			}
		}
		return out
	}
	for _, m := range list("methods") {
		f.Methods = append(f.Methods, strings.ToUpper(m))
	}
	for _, c := range list("status_codes") {
		n, err := strconv.Atoi(c)
		if err != nil || len(c) != 3 || c[0] < '1' || c[0] > '5' { // three digits, 100 to 599: no sign, no leading zero
			return bad("status_codes", "status_codes must be comma-separated HTTP status codes")
		}
		f.StatusCodes = append(f.StatusCodes, n)
	}
	for _, src := range list("sources") {
		if src != "ui" && src != "cli" && src != "api" {
			return bad("sources", "sources must be ui, cli or api")
		}
		f.Sources = append(f.Sources, src)
	}
	page, err := s.deps.RequestLog.Query(s.work(), p.OrgID, p.ClusterID, f)
	if err != nil {
		return &APIError{Status: 503, Code: "engine_unavailable", Message: "the request log is unavailable", Internal: err, RetryAfter: 1}
	}
	writeJSON(ctx, 200, page)
	return nil
}

// redactPath keeps secrets out of logged paths: a key deleted by its token
// (DELETE /v1/keys/{token}) is logged as its token hint.
func redactPath(path, route string) string {
	if strings.Contains(route, "{user}") {
		// User names are not for every reader of the cluster's log.
		ps, rs := strings.Split(path, "/"), strings.Split(route, "/")
		if len(ps) == len(rs) {
			for i, r := range rs {
				if r == "{user}" {
					ps[i] = r
				}
			}
			return strings.Join(ps, "/")
		}
		return route
	}
	if route != "/v1/keys/{key}" {
		return path
	}
	ref := strings.TrimPrefix(path, "/v1/keys/")
	if strings.HasPrefix(ref, catalog.TokenPrefix) {
		return "/v1/keys/" + catalog.TokenHint(ref)
	}
	return path
}
