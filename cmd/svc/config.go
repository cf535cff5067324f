package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

const (
	tokenOAuth  = "oauth"
	tokenAPIKey = "api_key"
)

// config is what login and the select commands save, in os.UserConfigDir()/svc/config.json
// with mode 0600 (the directory 0700): it holds a credential.
type config struct {
	URL       string `json:"url,omitempty"`
	Token     string `json:"token,omitempty"`
	TokenType string `json:"token_type,omitempty"` // oauth or api_key
	User      string `json:"user,omitempty"`
	Org       string `json:"org,omitempty"`
	Cluster   string `json:"cluster,omitempty"`
	Database  string `json:"database,omitempty"`
}

func (a *app) loadConfig() error {
	dir, err := os.UserConfigDir()
	if err != nil {
		return fmt.Errorf("no user configuration directory: %w", err)
	}
	a.cfgPath = filepath.Join(dir, "svc", "config.json")
	b, err := os.ReadFile(a.cfgPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &a.cfg); err != nil {
		return fmt.Errorf("%s is not valid JSON (%v); delete it and log in again", a.cfgPath, err)
	}
	return nil
}

// saveConfig writes the configuration atomically with mode 0600.
func (a *app) saveConfig() error {
	if err := os.MkdirAll(filepath.Dir(a.cfgPath), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(a.cfg, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(a.cfgPath), ".config-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), a.cfgPath)
}
