package egress

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestCheck(t *testing.T) {
	p := Policy{Allow: []string{"10.1.0.0/16", "files.internal"}}
	f := func(raw string, ok bool) {
		t.Helper()
		_, err := p.Check(context.Background(), raw)
		if (err == nil) != ok {
			t.Errorf("%s: %v, want allowed=%v", raw, err, ok)
		}
	}
	f("https://93.184.215.14/x", true)
	f("http://10.1.2.3/hook", true)       // allowed network
	f("http://files.internal/hook", true) // allowed by name, not resolved
	f("http://10.2.0.1/", false)
	f("http://127.0.0.1:8080/", false)
	f("http://[::1]/", false)
	f("http://169.254.169.254/latest/meta-data", false)
	f("http://100.64.0.1/", false)
	f("http://[::ffff:127.0.0.1]/", false)
	f("http://0.0.0.0/", false)
	f("ftp://93.184.215.14/", false)
	f("https://user:pw@93.184.215.14/", false)
	f("/relative", false)
	f("http://no-such-host.invalid/", false)
}

func TestReachable(t *testing.T) {
	var p Policy
	for ip, want := range map[string]bool{"8.8.8.8": true, "2606:4700::1111": true, "192.168.1.1": false, "fc00::1": false,
		"fe80::1": false, "224.0.0.1": false, "198.18.0.1": false, "::ffff:10.0.0.1": false} {
		if got := p.Reachable(netip.MustParseAddr(ip)); got != want {
			t.Errorf("%s: %v, want %v", ip, got, want)
		}
	}
}

// TestDialerRefusesAtConnect: a name that passed the check but dials a private address
// (DNS rebinding) is refused when the connection is made.
func TestDialerRefusesAtConnect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	cl := &http.Client{Transport: &http.Transport{DialContext: Policy{}.Dialer("rebinding.example").DialContext}}
	if _, err := cl.Get(srv.URL); err == nil {
		t.Fatal("the dialer connected to loopback")
	}
	host, _, _ := net.SplitHostPort(srv.Listener.Addr().String())
	allowed := &http.Client{Transport: &http.Transport{DialContext: Policy{Allow: []string{host}}.Dialer("x").DialContext}}
	resp, err := allowed.Get(srv.URL)
	if err != nil {
		t.Fatalf("an allowed address was refused: %v", err)
	}
	resp.Body.Close()
}
