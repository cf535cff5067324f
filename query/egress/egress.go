// Package egress is the one policy for addresses the service reaches on a user's behalf
// (URL imports, workflow HTTP sinks). Since the service runs inside its operator's
// network, an address is refused unless it is public, so a caller cannot make the
// service reach its own metadata endpoints, admin interfaces or private networks
// (server-side request forgery). Refused:
//
//   - schemes other than http and https, and URLs with credentials;
//   - host names resolving to any loopback, private (RFC 1918, fc00::/7), link-local
//     (169.254.0.0/16 with cloud metadata services, fe80::/10), carrier-grade NAT
//     (100.64.0.0/10), multicast, unspecified or otherwise reserved address;
//
// unless the operator allows the host name or its network (SVC_URL_IMPORT_ALLOW:
// comma-separated CIDRs and host names).
package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Policy decides which URLs may be reached.
type Policy struct {
	// Allow lists networks (CIDR), addresses and host names reachable beyond the public
	// internet.
	Allow []string
}

// Error is a refused URL; its message names why.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

func refuse(format string, args ...any) error { return &Error{Message: fmt.Sprintf(format, args...)} }

// Check parses raw and checks it against the policy, resolving its host. A name whose
// DNS answer changes after the check is the residual risk; Dialer closes it for
// connections the service makes itself.
func (p Policy) Check(ctx context.Context, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, refuse("url %q is not an absolute URL", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, refuse("url scheme %q is not allowed; use http or https", u.Scheme)
	}
	if u.User != nil {
		return nil, refuse("url must not carry credentials")
	}
	host := u.Hostname()
	if p.hostAllowed(host) {
		return u, nil
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ips, err := net.DefaultResolver.LookupNetIP(rctx, "ip", host)
		if err != nil || len(ips) == 0 {
			return nil, refuse("url host %q does not resolve", host)
		}
		addrs = ips
	}
	for _, ip := range addrs {
		if !p.Reachable(ip) {
			return nil, refuse("url host %q resolves to %s, which is not a public address", host, ip.Unmap())
		}
	}
	return u, nil
}

func (p Policy) hostAllowed(host string) bool {
	for _, a := range p.Allow {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

var reserved = func() []netip.Prefix {
	var out []netip.Prefix
	for _, c := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "64:ff9b::/96", "2001:db8::/32"} {
		out = append(out, netip.MustParsePrefix(c))
	}
	return out
}()

// Reachable reports whether ip is public or allowed by the policy.
func (p Policy) Reachable(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, a := range p.Allow {
		if pre, err := netip.ParsePrefix(a); err == nil && pre.Contains(ip) {
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
	for _, pre := range reserved {
		if pre.Contains(ip) {
			return false
		}
	}
	return true
}

// Dialer returns a dialer that refuses, at connect time, addresses the policy does not
// reach, so a DNS answer that changes after Check cannot lead anywhere private. Hosts
// allowed by name are dialed as they resolve.
func (p Policy) Dialer(host string) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if p.hostAllowed(host) {
		return d
	}
	d.Control = func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return refuse("cannot check address %q", address)
		}
		if !p.Reachable(ap.Addr()) {
			return refuse("%s is not a public address", ap.Addr().Unmap())
		}
		return nil
	}
	return d
}
