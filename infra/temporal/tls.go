package temporal

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSFiles names the files of a mutual-TLS connection to an operator's Temporal
// frontend: this client's certificate and key, and the CA the server's certificate is
// checked against (empty: the system's).
type TLSFiles struct {
	Cert, Key, CA string
	// ServerName overrides the name checked in the server's certificate.
	ServerName string
}

// Config loads the files; nil when none is named.
func (f TLSFiles) Config() (*tls.Config, error) {
	if f == (TLSFiles{}) {
		return nil, nil
	}
	if f.Cert == "" || f.Key == "" {
		return nil, errors.New("temporal TLS: a client certificate and its key are both needed (SVC_TEMPORAL_TLS_CERT, SVC_TEMPORAL_TLS_KEY)")
	}
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("temporal TLS: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, ServerName: f.ServerName, MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("temporal TLS: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("temporal TLS: no certificate in %s", f.CA)
		}
	}
	return cfg, nil
}
