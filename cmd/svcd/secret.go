package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// secretFile holds the service secret in the data directory when none is configured.
const secretFile = "service.secret"

// serviceSecret returns the key of what only this service may compute: the
// configured SVC_SERVICE_SECRET, else <data dir>/service.secret, created with 32
// random bytes (mode 0600) at the first start. Nodes consuming the same clusters must
// share it (set SVC_SERVICE_SECRET on each), since a batch replayed on another node
// has to repeat the original deduplication tokens.
func serviceSecret(cfg *Config) ([]byte, error) {
	if cfg.ServiceSecret != "" {
		if len(cfg.ServiceSecret) < 16 {
			return nil, errors.New("SVC_SERVICE_SECRET: want at least 16 characters")
		}
		return []byte(cfg.ServiceSecret), nil
	}
	path := filepath.Join(cfg.DataDir, secretFile)
	b, err := os.ReadFile(path)
	if err == nil {
		s := strings.TrimSpace(string(b))
		if len(s) < 16 {
			return nil, fmt.Errorf("%s: want at least 16 characters; restore it from a backup (a new one duplicates replayed batches)", path)
		}
		return []byte(s), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read service secret: %w", err)
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	s := hex.EncodeToString(raw)
	// O_EXCL: of two processes starting on one data directory, one writes and the
	// other reads what was written.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return serviceSecret(cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("create service secret: %w", err)
	}
	_, werr := f.WriteString(s + "\n")
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return nil, fmt.Errorf("write service secret: %w", err)
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
