package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestAllowed(t *testing.T) {
	f := func(addr string, want bool) {
		t.Helper()
		if got := (Policy{}).Allowed(netip.MustParseAddr(addr)); got != want {
			t.Fatalf("Allowed(%s) = %v, want %v", addr, got, want)
		}
	}
	f("93.184.216.34", true)
	f("2606:2800:220:1:248:1893:25c8:1946", true)
	for _, a := range []string{"127.0.0.1", "10.1.2.3", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fc00::1",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", // mapped
		"::127.0.0.1", "::7f00:1", "::93.184.216.34", // compatible, even of a public address
		"::ffff:0:127.0.0.1",                                            // SIIT
		"64:ff9b::7f00:1", "64:ff9b::93.184.216.34", "64:ff9b:1::a00:1", // NAT64
		"2002:7f00:1::1", "2002:5db8:d822::1", // 6to4
		"2001:0:4136:e378:8000:63bf:80ff:fffe",                            // Teredo
		"2606:2800:220:1:0:5efe:7f00:1", "2606:2800:220:1:200:5efe:a00:1", // ISATAP
	} {
		f(a, false)
	}
	if !(Policy{Allow: []string{"10.1.0.0/16"}}).Allowed(netip.MustParseAddr("::ffff:10.1.2.3")) {
		t.Fatal("an allowed network is refused in its mapped form")
	}
}

func TestCheck(t *testing.T) {
	f := func(raw string, ok bool) {
		t.Helper()
		_, err := Policy{Allow: []string{"files.internal"}}.Check(context.Background(), raw)
		var r *Refused
		if (err == nil) != ok || err != nil && !errors.As(err, &r) {
			t.Fatalf("Check(%q) = %v, want ok %v", raw, err, ok)
		}
	}
	f("http://93.184.216.34/x.json", true)
	f("https://files.internal/x", true)
	f("http://[::127.0.0.1]:8123/", false)
	f("http://[::ffff:7f00:1]/", false)
	f("http://[64:ff9b::a9fe:a9fe]/latest/meta-data", false)
	f("ftp://93.184.216.34/", false)
	f("http://user:pw@93.184.216.34/", false)
	f("/relative", false)
}

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
