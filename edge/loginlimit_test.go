package edge

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestLoginLimiterLocksTheSourceNotTheAccount: failures lock the (address, name) pair and,
// in bulk, the address, with a backoff that doubles; never the name for everyone; a
// success clears only its pair; IPv6 addresses count per /64.
func TestLoginLimiterLocksTheSourceNotTheAccount(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := newLoginLimiter()
	l.now = func() time.Time { return now }
	attacker, owner := netip.MustParseAddr("203.0.113.9"), netip.MustParseAddr("198.51.100.7")
	fail := func(name string, a netip.Addr, n int) {
		for range n {
			l.result(name, a, false)
		}
	}

	fail("admin", attacker, pairAfter)
	if d := l.wait("admin", attacker); d != pairBase {
		t.Fatalf("attacker's wait after %d failures: %v, want %v", pairAfter, d, pairBase)
	}
	if d := l.wait("ADMIN", owner); d != 0 {
		t.Fatalf("the owner from another address waits %v", d)
	}
	if d := l.wait("other", attacker); d != 0 {
		t.Fatalf("another name from the attacker's address waits %v before the address limit", d)
	}
	// The next lock of the pair is twice as long.
	now = now.Add(pairBase)
	fail("admin", attacker, pairAfter)
	if d := l.wait("admin", attacker); d != 2*pairBase {
		t.Fatalf("second lock %v, want %v", d, 2*pairBase)
	}
	// Many names from one address lock the address, for every name.
	now = now.Add(lockMax)
	for i := range addrAfter {
		l.result(string(rune('a'+i%26))+"-user", attacker, false)
	}
	if d := l.wait("fresh-name", attacker); d != addrBase {
		t.Fatalf("address wait after %d failures: %v, want %v", addrAfter, d, addrBase)
	}
	// A success clears the pair but not the address.
	l.result("fresh-name", attacker, true)
	if d := l.wait("fresh-name", attacker); d != addrBase {
		t.Fatalf("a success washed the address: wait %v", d)
	}
	// A quiet lockMax forgets the history: the next lock is the first again.
	now = now.Add(2 * lockMax)
	fail("admin", attacker, pairAfter)
	if d := l.wait("admin", attacker); d != pairBase {
		t.Fatalf("lock after a quiet spell %v, want %v", d, pairBase)
	}
	// IPv6: one /64 is one source.
	fail("admin", netip.MustParseAddr("2001:db8:1:2::1"), pairAfter)
	if d := l.wait("admin", netip.MustParseAddr("2001:db8:1:2:ffff::9")); d != pairBase {
		t.Fatalf("another address of the same /64 waits %v, want %v", d, pairBase)
	}
	if d := l.wait("admin", netip.MustParseAddr("2001:db8:1:3::1")); d != 0 {
		t.Fatalf("another /64 waits %v", d)
	}
}

// TestClientAddrAndSecureRequest: forwarding headers count only from trusted proxies,
// the client is the right-most untrusted X-Forwarded-For hop, and an https public URL
// makes every request secure.
func TestClientAddrAndSecureRequest(t *testing.T) {
	proxies, err := ParseTrustedProxies("10.0.0.0/8, 192.168.1.1")
	if err != nil {
		t.Fatal(err)
	}
	f := func(cfg Config, peer string, headers []string, wantAddr string, wantSecure bool) {
		t.Helper()
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.ParseIP(peer), Port: 4000}, nil)
		for i := 0; i+1 < len(headers); i += 2 {
			ctx.Request.Header.Add(headers[i], headers[i+1])
		}
		s := &Server{cfg: cfg}
		if got := s.clientAddr(&ctx).String(); got != wantAddr {
			t.Errorf("peer %s %v: client %s, want %s", peer, headers, got, wantAddr)
		}
		if got := s.secureRequest(&ctx); got != wantSecure {
			t.Errorf("peer %s %v: secure %v, want %v", peer, headers, got, wantSecure)
		}
	}
	trusting := Config{TrustedProxies: proxies}
	xff := func(v ...string) []string {
		var h []string
		for _, x := range v {
			h = append(h, "X-Forwarded-For", x)
		}
		return h
	}
	f(Config{}, "203.0.113.9", xff("198.51.100.7"), "203.0.113.9", false)
	f(trusting, "203.0.113.9", xff("198.51.100.7"), "203.0.113.9", false)
	f(trusting, "10.1.2.3", nil, "10.1.2.3", false)
	f(trusting, "10.1.2.3", xff("198.51.100.7"), "198.51.100.7", false)
	f(trusting, "10.1.2.3", xff("198.51.100.7, 203.0.113.9"), "203.0.113.9", false)
	f(trusting, "10.1.2.3", xff("198.51.100.7", "203.0.113.9, 192.168.1.1"), "203.0.113.9", false)
	f(trusting, "10.1.2.3", xff("198.51.100.7, not-an-address, 10.9.9.9"), "10.9.9.9", false)
	f(trusting, "::ffff:10.1.2.3", xff("2001:db8::1"), "2001:db8::1", false)
	f(trusting, "10.1.2.3", []string{"X-Forwarded-Proto", "https"}, "10.1.2.3", true)
	f(trusting, "10.1.2.3", []string{"X-Forwarded-Proto", "https, http"}, "10.1.2.3", false)
	f(trusting, "203.0.113.9", []string{"X-Forwarded-Proto", "https"}, "203.0.113.9", false)
	f(Config{PublicURL: "HTTPS://svc.example.com"}, "203.0.113.9", nil, "203.0.113.9", true)
	f(Config{PublicURL: "http://svc.example.com"}, "203.0.113.9", nil, "203.0.113.9", false)

	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted", bad)
		}
	}
}
