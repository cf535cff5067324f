package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
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

// TestRefusalsNeverQuoteTheURL: a refused URL's reason reaches the API's answer and the
// request log, and a URL can carry a secret in its user info, path or query: no reason
// quotes it, nor url.Parse's error, which quotes the whole URL (and, when the user name's
// "@" is missing, the password as a port).
func TestRefusalsNeverQuoteTheURL(t *testing.T) {
	for _, raw := range []string{
		"http://user:s3cret/hook?token=s3cret",      // the password parses as a port
		"http://user:s3cret@exa mple.com/?k=s3cret", // a space in the host
		"http://user:s3cret@93.184.216.34/",         // credentials
		"/hook?token=s3cret",                        // relative
		"http://10.0.0.1/hook?token=s3cret",         // private
		"ftp://93.184.216.34/s3cret",                // scheme
		"%zz://s3cret",                              // no scheme
	} {
		_, err := Policy{}.Check(context.Background(), raw)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Check(%q) = %v, want a refusal that does not quote the URL", raw, err)
		}
	}
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
