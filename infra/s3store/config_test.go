package s3store_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-data/svc/infra/s3store"
)

// TestConfigFromEnvAndFile reads credentials from the environment or a file, and the
// engine's disk setting names the bucket's address without any credential.
func TestConfigFromEnvAndFile(t *testing.T) {
	t.Setenv("SVC_S3_ENDPOINT", "http://127.0.0.1:9000/")
	t.Setenv("SVC_S3_ACCESS_KEY_ID", "")
	t.Setenv("SVC_S3_SECRET_ACCESS_KEY", "")
	f := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(f, []byte("# service storage\naccess_key_id = AKID\nsecret_access_key = s3cr3t-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SVC_S3_CREDENTIALS_FILE", f)
	c, err := s3store.FromEnv()
	if err != nil || !c.Configured() || c.AccessKeyID != "AKID" || c.SecretAccessKey != "s3cr3t-from-file" || c.Region != "us-east-1" || c.TagKey() != "svc-data.dev/cluster" {
		t.Fatalf("config %+v, %v", c, err)
	}
	disk, err := c.DiskSetting("lake", "/db/data/")
	if err != nil || disk != "disk = disk(type = object_storage, object_storage_type = s3, metadata_type = plain_rewritable, endpoint = 'http://127.0.0.1:9000/lake/db/data/', use_environment_credentials = 1)" || strings.Contains(disk, "s3cr3t") {
		t.Fatalf("disk setting %s %v", disk, err)
	}
	if u, err := (s3store.Config{Region: "eu-west-1"}).URL("b", "p"); err != nil || u != "https://s3.eu-west-1.amazonaws.com/b/p/" {
		t.Fatalf("AWS address %s %v", u, err)
	}
	// Tenant text is only ever the URL's path: the bucket cannot name a host or a
	// port, with the operator's endpoint or AWS's (creation refuses it before: catalog).
	for _, cfg := range []s3store.Config{c, {Region: "us-east-1"}} {
		u, err := cfg.URL("probe-s3.test:19603/ssrf?", "x")
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := url.Parse(u)
		if err != nil || parsed.Host != map[bool]string{true: "127.0.0.1:9000", false: "s3.us-east-1.amazonaws.com"}[cfg.Endpoint != ""] || parsed.RawQuery != "" {
			t.Fatalf("a bucket name became part of the host or query: %s", u)
		}
	}
	t.Setenv("SVC_S3_ALLOW_SERVICE_CREDENTIALS", "")
	if c, _ := s3store.FromEnv(); c.ServiceCredentialsAllowed() {
		t.Fatal("storage without a role is allowed by default")
	}
	t.Setenv("SVC_S3_ALLOW_SERVICE_CREDENTIALS", "true")
	if c, _ := s3store.FromEnv(); !c.ServiceCredentialsAllowed() {
		t.Fatal("SVC_S3_ALLOW_SERVICE_CREDENTIALS=true does not opt in")
	}
	t.Setenv("SVC_S3_ALLOW_SERVICE_CREDENTIALS", "")
	if err := os.WriteFile(f, []byte("nothing useful\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s3store.FromEnv(); err == nil || !strings.Contains(err.Error(), "SVC_S3_CREDENTIALS_FILE") {
		t.Fatalf("a file without credentials: %v", err)
	}
	t.Setenv("SVC_S3_CREDENTIALS_FILE", "")
	if c, err := s3store.FromEnv(); err != nil || c.Configured() {
		t.Fatalf("no credentials: %+v %v", c, err)
	}
}
