package s3store_test

import (
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
	disk := c.DiskSetting("lake", "/db/data/")
	if disk != "disk = disk(type = object_storage, object_storage_type = s3, metadata_type = plain_rewritable, endpoint = 'http://127.0.0.1:9000/lake/db/data/', use_environment_credentials = 1)" || strings.Contains(disk, "s3cr3t") {
		t.Fatalf("disk setting %s", disk)
	}
	if u := (s3store.Config{Region: "eu-west-1"}).URL("b", "p"); u != "https://b.s3.eu-west-1.amazonaws.com/p/" {
		t.Fatalf("AWS address %s", u)
	}
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
