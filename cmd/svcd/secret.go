package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// secretFile holds the service secret when SVC_SERVICE_SECRET is unset.
const secretFile = "service.secret"

// loadServiceSecret returns the service's secret: SVC_SERVICE_SECRET, else the content of
// <data>/service.secret, created with 32 random bytes (mode 0600) at first start. Keys
// that only svcd may know are derived from it.
func loadServiceSecret(dataDir string) ([]byte, error) {
	if s := os.Getenv("SVC_SERVICE_SECRET"); s != "" {
		if len(s) < 16 {
			return nil, errors.New("SVC_SERVICE_SECRET: at least 16 characters are required")
		}
		return []byte(s), nil
	}
	path := filepath.Join(dataDir, secretFile)
	if b, err := os.ReadFile(path); err == nil {
		s := strings.TrimSpace(string(b))
		if len(s) < 16 {
			return nil, fmt.Errorf("%s: the secret is shorter than 16 characters; remove the file to make a new one", path)
		}
		return []byte(s), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, err
	}
	s := hex.EncodeToString(raw[:])
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	_, err = f.WriteString(s + "\n")
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return []byte(s), nil
}

// enginePassword is the password of a cluster's embedded engine: only svcd, which holds
// the service secret, can compute it, and each engine has its own.
func enginePassword(secret []byte, cluster uuid.UUID) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("engine-password/" + cluster.String()))
	return hex.EncodeToString(m.Sum(nil))
}
