package temporal

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// issue makes a key and a certificate for name signed by parent (self-signed when nil).
func issue(t *testing.T, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, ca bool) (*x509.Certificate, *ecdsa.PrivateKey, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{name},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: ca, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// TestTLSFilesAuthenticateToAMutualTLSFrontend: the files named by SVC_TEMPORAL_TLS_*
// give svcd a client that a frontend requiring client certificates accepts, and one
// without them is refused (the embedded dev server cannot ask for them: DESIGN.md,
// "Local surfaces").
func TestTLSFilesAuthenticateToAMutualTLSFrontend(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca, caKey, caPEM, _ := issue(t, "svc test CA", nil, nil, true)
	_, _, serverPEM, serverKey := issue(t, "temporal.test", ca, caKey, false)
	_, _, clientPEM, clientKey := issue(t, "svcd", ca, caKey, false)
	files := TLSFiles{Cert: write("client.pem", clientPEM), Key: write("client.key", clientKey), CA: write("ca.pem", caPEM),
		ServerName: "temporal.test"}

	pair, err := tls.X509KeyPair(serverPEM, serverKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _ = c.(*tls.Conn).Handshake(); _, _ = c.Write([]byte("ok")); c.Close() }()
		}
	}()
	dial := func(cfg *tls.Config) error {
		c, err := tls.Dial("tcp", l.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		// TLS 1.3 reports a refused client certificate on the first read.
		_, err = c.Read(make([]byte, 2))
		return err
	}
	cfg, err := files.Config()
	if err != nil {
		t.Fatal(err)
	}
	if err := dial(cfg); err != nil {
		t.Fatalf("svcd's certificate refused: %v", err)
	}
	if err := dial(&tls.Config{RootCAs: cfg.RootCAs, ServerName: "temporal.test"}); err == nil {
		t.Fatal("a client without a certificate was served")
	}

	f := func(files TLSFiles, ok bool) {
		t.Helper()
		if _, err := files.Config(); (err == nil) != ok {
			t.Errorf("TLSFiles%+v.Config() = %v, want ok=%v", files, err, ok)
		}
	}
	f(TLSFiles{}, true)
	f(TLSFiles{Cert: files.Cert}, false)
	f(TLSFiles{Cert: files.Cert, Key: files.Key, CA: files.Key}, false) // no certificate in the CA file
}
