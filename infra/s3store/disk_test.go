package s3store_test

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chclient"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/infra/s3store"
)

// TestTableOnBucketAttachesFromTheBucketAlone runs the real engine on DiskSetting's
// plain_rewritable disk in the S3-compatible server, signing with the assumed role's
// session credentials it fetches from EngineCredentials: a replayed insert (same
// deduplication token) lands once, parts merge, and after the engine's whole data
// directory is lost a new engine attaches the table by its definition and UUID alone,
// reads every row, and still drops a replay of an insert made before; DROP TABLE removes
// every object; no secret is in the engine's directory.
func TestTableOnBucketAttachesFromTheBucketAlone(t *testing.T) {
	c := server(t)
	f := setup(t, c)
	var fetched atomic.Int32
	creds, err := s3store.NewEngineCredentials(c, func(uuid.UUID) s3store.Role {
		fetched.Add(1)
		return s3store.Role{ARN: arn(f.role), ExternalID: f.ext}
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer creds.Close()
	cluster := uuid.New()
	ctx := context.Background()
	disk, err := c.DiskSetting(f.tagged, "lake/"+cluster.String())
	if err != nil {
		t.Fatal(err)
	}
	table := "CREATE TABLE IF NOT EXISTS d.t UUID '" + uuid.NewString() + "' (doc JSON) ENGINE = MergeTree ORDER BY (doc.id::Int64) SETTINGS non_replicated_deduplication_window = 100, " + disk
	engine := func(dir string) (*clickhouse.Process, *chclient.Client) {
		p := chtest.Start(t, clickhouse.ProcessConfig{DataDir: dir, Env: creds.EngineEnv(cluster)})
		cl := chtest.Client(t, p.URL())
		return p, cl
	}
	exec := func(cl *chclient.Client, stmts ...string) {
		t.Helper()
		for _, s := range stmts {
			if err := cl.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	query := func(cl *chclient.Client, sql string) string {
		t.Helper()
		out, err := cl.QueryStrings(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return strings.Join(out, ",")
	}
	insert := func(token, id string) string {
		return "INSERT INTO d.t SETTINGS insert_deduplication_token = '" + token + "' VALUES ('{\"id\":" + id + "}')"
	}
	dir := t.TempDir()
	p, cl := engine(dir)
	exec(cl, "CREATE DATABASE d", table, insert("a", "1"), insert("a", "1"), insert("b", "2"), insert("c", "3"))
	if got := query(cl, "SELECT toString(count()) FROM d.t"); got != "3" {
		t.Fatalf("%s rows after a replayed insert, want 3", got)
	}
	if fetched.Load() == 0 {
		t.Fatal("the engine did not fetch its credentials from the endpoint")
	}
	exec(cl, "OPTIMIZE TABLE d.t FINAL")
	if got := query(cl, "SELECT toString(count()) FROM system.parts WHERE database = 'd' AND table = 't' AND active"); got != "1" {
		t.Fatalf("%s active parts after OPTIMIZE FINAL, want 1", got)
	}
	keys, err := c.ListObjects(ctx, f.tagged, "lake/"+cluster.String()+"/")
	if err != nil || len(keys) == 0 {
		t.Fatalf("objects: %v %v", keys, err)
	}
	served, err := creds.Credentials(ctx, s3store.Role{ARN: arn(f.role), ExternalID: f.ext})
	if err != nil {
		t.Fatal(err)
	}

	// The engine and its whole directory are gone; a new one has only the definition.
	cl.Close()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	walk(t, dir, served.SecretAccessKey, served.SessionToken, c.SecretAccessKey)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	_, cl = engine(t.TempDir())
	exec(cl, "CREATE DATABASE d", strings.Replace(table, "CREATE TABLE", "ATTACH TABLE", 1))
	if got := query(cl, "SELECT toString(doc.id) FROM d.t ORDER BY doc.id::Int64"); got != "1,2,3" {
		t.Fatalf("rows attached from the bucket: %q, want 1,2,3", got)
	}
	exec(cl, insert("b", "2"), insert("d", "4"))
	if got := query(cl, "SELECT toString(count()) FROM d.t"); got != "4" {
		t.Fatalf("%s rows after replaying an insert made before the loss, want 4", got)
	}
	exec(cl, "DROP TABLE d.t SYNC")
	if keys, err := c.ListObjects(ctx, f.tagged, "lake/"+cluster.String()+"/"); err != nil || len(keys) != 0 {
		t.Fatalf("objects left after DROP TABLE: %v %v", keys, err)
	}
}

// walk fails the test if a file under dir holds one of secrets.
func walk(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("a secret is in %s", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
