// Package egress is the one policy for addresses the service fetches on a caller's
// behalf (URL imports; any later outbound HTTP). Since the engine and svcd run inside
// the service's network, an address is refused unless it is public, so a caller cannot
// make the service read its own metadata endpoints, admin interfaces or private networks
// (server-side request forgery). Refused:
//
//   - schemes other than http and https, and URLs with credentials;
//   - hosts resolving to any loopback, private (RFC 1918, fc00::/7), link-local
//     (169.254.0.0/16 with cloud metadata services, fe80::/10), carrier-grade NAT
//     (100.64.0.0/10), multicast, unspecified or otherwise reserved address;
//   - every IPv6 form that embeds an IPv4 address, whatever that address: IPv4-compatible
//     (::a.b.c.d), SIIT (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4
//     (2002::/16), Teredo (2001::/32) and ISATAP interface ids. IPv4-mapped addresses
//     (::ffff:a.b.c.d) are read as the IPv4 address they map.
//
// unless the operator allows the host name or its network (Policy.Allow). The check
// resolves the name itself; a name whose DNS answer changes between this check and the
// fetch is the residual risk, which an egress firewall around the engine closes.
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

// Policy decides which URLs may be fetched.
type Policy struct {
	// Allow lists networks (CIDR), addresses and host names allowed beyond public ones.
	Allow []string
	// Resolver resolves host names; nil uses net.DefaultResolver.
	Resolver *net.Resolver
}

// Refused is a URL the policy does not let the service fetch.
type Refused struct{ Reason string }

func (e *Refused) Error() string { return e.Reason }

func refused(format string, args ...any) error { return &Refused{Reason: fmt.Sprintf(format, args...)} }

// Check parses raw and checks it against the policy, resolving its host.
func (p Policy) Check(ctx context.Context, raw string) (*url.URL, error) {
	// The reasons never quote the URL, nor url.Parse's error (which does, and quotes a
	// "port" that is a password when the user name's "@" is missing): a URL can carry
	// credentials in its user info, path or query, and the reason reaches answers and
	// the request log.
	u, err := url.Parse(raw)
	if err != nil {
		return nil, refused("url does not parse as a URL")
	}
	if u.Host == "" {
		return nil, refused("url is not an absolute URL (scheme://host/...)")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, refused("url scheme %q is not allowed; use http or https", u.Scheme)
	}
	if u.User != nil {
		return nil, refused("url must not carry credentials")
	}
	host := u.Hostname()
	if p.hostAllowed(host) {
		return u, nil
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		r := p.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ips, err := r.LookupNetIP(rctx, "ip", host)
		if err != nil || len(ips) == 0 {
			return nil, refused("url host %q does not resolve", host)
		}
		addrs = ips
	}
	for _, ip := range addrs {
		if !p.Allowed(ip) {
			return nil, refused("url host %q resolves to %s, which is not a public address", host, ip)
		}
	}
	return u, nil
}

var reserved = func() []netip.Prefix {
	var out []netip.Prefix
	for _, c := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "2001:db8::/32",
		// IPv6 forms embedding IPv4 (see the package doc).
		"::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "2001::/32"} {
		out = append(out, netip.MustParsePrefix(c))
	}
	return out
}()

// Allowed reports whether the policy lets the service reach ip.
func (p Policy) Allowed(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	for _, a := range p.Allow {
		if pre, err := netip.ParsePrefix(a); err == nil && pre.Contains(ip) {
			return true
		}
		if one, err := netip.ParseAddr(a); err == nil && one.Unmap() == ip {
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
	if ip.Is6() {
		// ISATAP: an interface id of 0000:5efe or 0200:5efe followed by an IPv4 address.
		b := ip.As16()
		if (b[8]|0x02) == 0x02 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe {
			return false
		}
	}
	return true
}

func (p Policy) hostAllowed(host string) bool {
	for _, a := range p.Allow {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// Dialer returns a dialer that refuses, at connect time, addresses the policy does not
// allow, so a DNS answer that changes after Check cannot lead anywhere private (the
// service's own connections: workflow HTTP sinks). Hosts allowed by name are dialed as
// they resolve.
func (p Policy) Dialer(host string) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if p.hostAllowed(host) {
		return d
	}
	d.Control = func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return refused("cannot check address %q", address)
		}
		if !p.Allowed(ap.Addr()) {
			return refused("%s is not a public address", ap.Addr().Unmap())
		}
		return nil
	}
	return d
}
