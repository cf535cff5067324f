package workflows

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Sealer encrypts sink secrets (HTTP URLs and headers) at rest with AES-256-GCM, so the
// event log never holds them in clear.
type Sealer struct{ aead cipher.AEAD }

// NewSealer derives the key from secret (SVC_SECRET_KEY) when given, else from the
// random key file `<dataDir>/workflow.key`, created 0600 at first use.
func NewSealer(secret, dataDir string) (*Sealer, error) {
	var key [32]byte
	if secret != "" {
		key = sha256.Sum256([]byte("svc/workflow-sinks\x00" + secret))
	} else {
		file := filepath.Join(dataDir, "workflow.key")
		raw, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) {
			raw = make([]byte, 32)
			if _, err := rand.Read(raw); err != nil {
				return nil, err
			}
			if err := os.MkdirAll(dataDir, 0o700); err != nil {
				return nil, err
			}
			if err := os.WriteFile(file, raw, 0o600); err != nil {
				return nil, fmt.Errorf("write workflow key: %w", err)
			}
		} else if err != nil {
			return nil, fmt.Errorf("read workflow key: %w", err)
		}
		if len(raw) != 32 {
			return nil, fmt.Errorf("workflow key %s is not 32 bytes", file)
		}
		copy(key[:], raw)
	}
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plain under a fresh nonce; the sink id is bound as additional data, so
// a sealed value cannot be moved to another sink.
func (s *Sealer) Seal(plain, bound string) string {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawStdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, []byte(plain), []byte(bound)))
}

// Open decrypts a sealed value; it fails when the key changed or the value was altered.
func (s *Sealer) Open(sealed, bound string) (string, error) {
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return "", errors.New("sealed value is malformed")
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(bound))
	if err != nil {
		return "", errors.New("sealed value cannot be decrypted with this key")
	}
	return string(plain), nil
}
