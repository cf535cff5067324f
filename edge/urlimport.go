package edge

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/query"
)

// URL imports let the engine fetch a URL itself. Since the engine runs inside the
// service's network, an address is refused unless it is public, so a caller cannot make
// the service read its own metadata endpoints, admin interfaces or private networks
// (server-side request forgery). Refused:
//
//   - schemes other than http and https, and URLs with credentials;
//   - host names resolving to any loopback, private (RFC 1918, fc00::/7), link-local
//     (169.254.0.0/16 with cloud metadata services, fe80::/10), carrier-grade NAT
//     (100.64.0.0/10), multicast, unspecified or otherwise reserved address;
//
// unless the operator allows the host name or its network in SVC_URL_IMPORT_ALLOW
// (comma-separated CIDRs and host names). The check resolves the name itself; a name
// whose DNS answer changes between this check and the engine's fetch is the residual
// risk, which an egress firewall around the engine closes.

// allowImport checks raw against the policy.
func (s *Server) allowImport(ctx context.Context, raw string) (*url.URL, error) {
	bad := func(format string, args ...any) error {
		return &APIError{Status: 400, Code: "url_refused", Field: "url", Message: fmt.Sprintf(format, args...),
			Hint: "URL imports reach public http(s) addresses; an operator can allow more with SVC_URL_IMPORT_ALLOW"}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, bad("url %q is not an absolute URL", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, bad("url scheme %q is not allowed; use http or https", u.Scheme)
	}
	if u.User != nil {
		return nil, bad("url must not carry credentials")
	}
	host := u.Hostname()
	for _, a := range s.cfg.URLImportAllow {
		if strings.EqualFold(a, host) {
			return u, nil
		}
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ips, err := net.DefaultResolver.LookupNetIP(rctx, "ip", host)
		if err != nil || len(ips) == 0 {
			return nil, bad("url host %q does not resolve", host)
		}
		addrs = ips
	}
	for _, ip := range addrs {
		ip = ip.Unmap()
		if !s.publicOrAllowed(ip) {
			return nil, bad("url host %q resolves to %s, which is not a public address", host, ip)
		}
	}
	return u, nil
}

var reserved = func() []netip.Prefix {
	var out []netip.Prefix
	for _, c := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "64:ff9b::/96", "2001:db8::/32"} {
		out = append(out, netip.MustParsePrefix(c))
	}
	return out
}()

func (s *Server) publicOrAllowed(ip netip.Addr) bool {
	for _, a := range s.cfg.URLImportAllow {
		if p, err := netip.ParsePrefix(a); err == nil && p.Contains(ip) {
			return true
		}
		if one, err := netip.ParseAddr(a); err == nil && one == ip {
			return true
		}
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsMulticast() || ip.IsUnspecified() || ip.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// urlImport runs the engine's native URL import into a table; the request stays open
// until it finishes.
func (s *Server) urlImport(ctx *fasthttp.RequestCtx, p *Principal) {
	if !p.can(actInsert) {
		writeError(ctx, forbidden("insert rows"))
		return
	}
	db, t, ok := s.selectedTable(ctx, p)
	if !ok {
		return
	}
	if p.CustomRole() && !s.roleMayInsert(p, db.Name, t.Name) {
		writeError(ctx, apiErr(403, "forbidden", fmt.Sprintf("no role of this key holds INSERT on %s.%s", db.Name, t.Name), ""))
		return
	}
	u, err := s.allowImport(s.work(), string(ctx.QueryArgs().Peek("url")))
	if err != nil {
		writeError(ctx, err)
		return
	}
	queryID := string(ctx.QueryArgs().Peek("query_id"))
	res, err := s.deps.Query.ImportURL(s.work(), query.Import{ClusterID: p.ClusterID, TableID: t.ID, URL: u.String(), QueryID: queryID})
	if res.QueryID != "" {
		ctx.Response.Header.Set("X-Engine-Query-Id", res.QueryID)
	}
	if err != nil {
		writeError(ctx, err)
		return
	}
	writeJSON(ctx, 200, map[string]any{"inserted": res.Inserted})
}
