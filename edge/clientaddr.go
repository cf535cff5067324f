package edge

import (
	"bytes"
	"net/netip"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"
)

// Requests through a reverse proxy: the direct peer is the proxy, and the client's
// address and scheme are what the proxy says in X-Forwarded-For and X-Forwarded-Proto.
// Anyone can send those headers, so they are read only when the direct peer is one of
// Config.TrustedProxies (none by default). This file is their one home: the login
// limiter keys on clientAddr, the session cookie's Secure flag asks secureRequest.

// ParseTrustedProxies reads a comma-separated list of networks (CIDR, "10.0.0.0/8") and
// single addresses ("10.0.0.7") of trusted reverse proxies.
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, err
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, err
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// trusted reports whether a is a trusted proxy.
func (s *Server) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr is the direct peer's address.
func peerAddr(ctx *fasthttp.RequestCtx) netip.Addr {
	a, _ := netip.AddrFromSlice(ctx.RemoteIP())
	return a.Unmap()
}

// viaTrustedProxy reports whether the request came from a trusted proxy, whose
// forwarding headers are believed.
func (s *Server) viaTrustedProxy(ctx *fasthttp.RequestCtx) bool {
	return len(s.cfg.TrustedProxies) > 0 && s.trusted(peerAddr(ctx))
}

// clientAddr is the address of the client a request comes from: the direct peer, or,
// when that is a trusted proxy, the right-most address of X-Forwarded-For that is not a
// trusted proxy (each proxy appends the peer it saw, so addresses to its left are the
// client's own claims). When every listed address is trusted, or an entry does not
// parse, it is the nearest trusted one: a client never chooses its own address.
func (s *Server) clientAddr(ctx *fasthttp.RequestCtx) netip.Addr {
	addr := peerAddr(ctx)
	if !s.viaTrustedProxy(ctx) {
		return addr
	}
	hops := forwardedValues(&ctx.Request.Header, "X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			return addr
		}
		if addr = a.Unmap(); !s.trusted(addr) {
			return addr
		}
	}
	return addr
}

// secureRequest reports whether the client reached the service over TLS: the request
// came over TLS, a trusted proxy says X-Forwarded-Proto https (its right-most value,
// the one that proxy wrote), or the configured public URL is https, which says every
// user arrives over TLS whatever the hop to svcd is.
func (s *Server) secureRequest(ctx *fasthttp.RequestCtx) bool {
	if ctx.IsTLS() {
		return true
	}
	if u, err := url.Parse(s.cfg.PublicURL); err == nil && strings.EqualFold(u.Scheme, "https") {
		return true
	}
	if !s.viaTrustedProxy(ctx) {
		return false
	}
	protos := forwardedValues(&ctx.Request.Header, "X-Forwarded-Proto")
	return len(protos) > 0 && strings.EqualFold(protos[len(protos)-1], "https")
}

// forwardedValues returns the comma-separated values of every header named name, in
// order, trimmed.
func forwardedValues(h *fasthttp.RequestHeader, name string) []string {
	var out []string
	for _, v := range h.PeekAll(name) {
		for _, f := range bytes.Split(v, []byte(",")) {
			out = append(out, string(bytes.TrimSpace(f)))
		}
	}
	return out
}
