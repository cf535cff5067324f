package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/google/uuid"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/s3store"
	"github.com/svc-data/svc/infra/testenv"
)

// s3Role creates a role in the test server whose trust policy asks for externalID,
// tagged `svc-data.dev/cluster = team-a` as verify-s3-access wants, and returns its ARN.
func s3Role(t *testing.T, cfg s3store.Config, externalID string) string {
	t.Helper()
	name := "svc-engine-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	ic := iam.NewFromConfig(aws.Config{Region: cfg.Region, BaseEndpoint: aws.String(cfg.Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, "")})
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:root"},"Action":"sts:AssumeRole","Condition":{"StringEquals":{"sts:ExternalId":%q}}}]}`, externalID)
	out, err := ic.CreateRole(context.Background(), &iam.CreateRoleInput{RoleName: aws.String(name), AssumeRolePolicyDocument: aws.String(policy),
		Tags: []iamtypes.Tag{{Key: aws.String(cfg.TagKey()), Value: aws.String("team-a")}}})
	if err == nil {
		return aws.ToString(out.Role.Arn)
	}
	// The SDK retries a create whose answer was slow; the retry finds the role made.
	got, gerr := ic.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String(name)})
	if gerr != nil {
		t.Fatal(err)
	}
	return aws.ToString(got.Role.Arn)
}

// engineCredentials fetches, as the engine whose data directory is dir does, the
// credentials svcd serves it: the endpoint and token are read from the running engine
// process's environment.
func engineCredentials(t *testing.T, dir string) (id, secret, token string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmd, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(cmd, []byte("\x00--path\x00"+dir+"\x00")) {
			continue
		}
		environ, err := os.ReadFile(filepath.Join(filepath.Dir(p), "environ"))
		if err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		for _, kv := range bytes.Split(environ, []byte{0}) {
			k, v, _ := strings.Cut(string(kv), "=")
			env[k] = v
		}
		if env["AWS_ACCESS_KEY_ID"] != "" || env["AWS_SECRET_ACCESS_KEY"] != "" || env["AWS_SESSION_TOKEN"] != "" {
			t.Fatal("the engine's environment holds a credential")
		}
		req, _ := http.NewRequest("GET", env["AWS_CONTAINER_CREDENTIALS_FULL_URI"], nil)
		req.Header.Set("Authorization", env["AWS_CONTAINER_AUTHORIZATION_TOKEN"])
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var c struct{ AccessKeyId, SecretAccessKey, Token string }
		if err := json.NewDecoder(r.Body).Decode(&c); err != nil || r.StatusCode != 200 {
			t.Fatalf("engine credentials: %d %v", r.StatusCode, err)
		}
		return c.AccessKeyId, c.SecretAccessKey, c.Token
	}
	t.Fatalf("no engine process runs on %s", dir)
	return
}

// TestDatabaseOnS3ReadBackWithoutLocalParts is the test: a database on S3 whose
// rows are read back after an engine restart with the local data directory's parts gone.
// Generation 1 is re-sorted into a new key first. The cluster is stopped, everything the engine kept locally for the database (its
// metadata and its tables' directories) is deleted, and on resume svcd attaches the
// tables again from the catalog's definitions and the bucket (plain_rewritable disk):
// the rows read back identical and ingestion goes on. The engine writes with the
// session credentials of the database's role, assumed with its external id; neither
// their secret nor their session token (nor the service's secret) is in an answer, the
// request log, svcd's log or a file of the data directory; a database naming another role is refused.
// Deleting the database deletes its objects.
func TestDatabaseOnS3ReadBackWithoutLocalParts(t *testing.T) {
	t.Parallel() // see TestMain
	env, cfg, bucket := s3Storage(t)
	role := s3Role(t, cfg, "ext-lake")
	s := startControlPlane(t, env...)
	a := newClusterAdmin(t, s)
	c := a.create("lake")
	key := a.key("lake")
	ctx := context.Background()
	var answers bytes.Buffer
	must := func(want int, method, path string, body any) *svcdtest.Response {
		t.Helper()
		r := s.Must(want, method, path, body, key...)
		answers.Write(r.Body)
		return r
	}
	must(200, "POST", "/v1/databases", map[string]any{"name": "lake", "s3_storage": map[string]any{
		"data": map[string]string{"bucket": bucket, "path": "lake/data"}, "backups": map[string]string{"bucket": bucket, "path": "lake/backups"},
		"role_arn": role, "external_id": "ext-lake"}})
	// One engine holds one role's credentials: another role on this cluster is refused.
	if r := must(400, "POST", "/v1/databases", map[string]any{"name": "other", "s3_storage": map[string]any{
		"data": map[string]string{"bucket": bucket, "path": "other/data"}, "backups": map[string]string{"bucket": bucket, "path": "other/backups"},
		"role_arn": s3Role(t, cfg, "ext-lake"), "external_id": "ext-lake"}}); !bytes.Contains(r.Body, []byte(`"field":"s3_storage"`)) || !bytes.Contains(r.Body, []byte("role_arn: ")) {
		t.Fatalf("a second role: %s", r.Body)
	}
	must(200, "POST", "/v1/tables?database=lake", map[string]string{"name": "events", "sorting_key": "i"})
	for b := range 4 {
		must(202, "POST", "/v1/tables/events?database=lake", rows(b*125, 125))
	}
	waitCountAs(t, s, key, "lake.events", 500)
	// A new key: the next rows make generation 2, and the background re-sort copies
	// generation 1 into the new key (a generation with the next catalog UUID).
	must(200, "POST", "/v1/query", map[string]string{"sql": "ALTER TABLE lake.events MODIFY ORDER BY (i, j)"})
	must(202, "POST", "/v1/tables/events?database=lake", `[{"i":500,"j":1},{"i":501,"j":2}]`)
	waitCountAs(t, s, key, "lake.events", 502)
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		var desc struct {
			Generations []struct {
				Key string `json:"physical_sorting_key"`
			}
		}
		must(200, "GET", "/v1/tables/events?database=lake", nil).JSON(t, &desc)
		return len(desc.Generations) == 2 && desc.Generations[0].Key == desc.Generations[1].Key,
			fmt.Sprintf("generation 1 not re-sorted: %+v", desc)
	})
	read := func() string {
		t.Helper()
		var res struct{ Data json.RawMessage }
		must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT i FROM lake.events ORDER BY i"}).JSON(t, &res)
		return string(res.Data)
	}
	before := read()
	if keys, err := cfg.ListObjects(ctx, bucket, "lake/data/"); err != nil || len(keys) == 0 {
		t.Fatalf("objects under the database's path: %d %v", len(keys), err)
	}
	engineDir := filepath.Join(s.DataDir, "clusters", c.ID, "engine")
	id, secret, token := engineCredentials(t, engineDir)
	if id == "" || id == cfg.AccessKeyID || secret == cfg.SecretAccessKey || token == "" {
		t.Fatalf("the engine is served %q with a session token %v, not the role's session credentials", id, token != "")
	}

	a.cluster(200, "POST", "/v1/clusters/"+c.ID+"/stop", nil)
	a.waitPhase(c.ID, "stopped", 2*time.Minute)
	// The database's engine metadata (metadata/<db>.sql, the metadata/<db> link and the
	// store directory it points to, with every table's definition and local state).
	meta, err := filepath.Glob(filepath.Join(engineDir, "metadata", "*__lake*"))
	if err != nil || len(meta) != 2 {
		t.Fatalf("the database's local metadata: %v %v", meta, err)
	}
	tables := 0 // generation definitions deleted
	for _, p := range meta {
		if target, err := filepath.EvalSymlinks(p); err == nil && target != p {
			gens, _ := filepath.Glob(filepath.Join(target, "events__g*.sql"))
			tables += len(gens)
			if err := os.RemoveAll(target); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	if tables != 2 {
		t.Fatalf("the deleted store directory held %d generations of the table, want 2", tables)
	}
	a.cluster(200, "POST", "/v1/clusters/"+c.ID+"/resume", nil)
	a.waitPhase(c.ID, "ready", 2*time.Minute)
	if after := read(); after != before || !strings.Contains(before, `{"i":501}`) {
		t.Fatalf("after the local parts were lost:\n%.300s\nwant\n%.300s", after, before)
	}
	must(202, "POST", "/v1/tables/events?database=lake", rows(502, 5))
	waitCountAs(t, s, key, "lake.events", 507)

	// The request log (which holds request bodies, redacted) once it has the database's
	// creation: it is searched with the other answers below.
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		r := must(200, "GET", "/v1/logs?limit=200", nil)
		if bytes.Contains(r.Body, []byte(`/v1/databases`)) {
			if bytes.Contains(r.Body, []byte(role)) || bytes.Contains(r.Body, []byte("ext-lake")) {
				t.Errorf("the request log holds the role or the external id")
			}
			return true, ""
		}
		return false, fmt.Sprintf("the request log has no database creation: %.500s", r.Body)
	})
	logs := s.Logs()
	for what, v := range map[string]string{"the session secret": secret, "the session token": token, "the service's secret": cfg.SecretAccessKey} {
		if bytes.Contains(answers.Bytes(), []byte(v)) || strings.Contains(logs, v) {
			t.Errorf("%s is in an answer or svcd's log", what)
		}
	}
	walkFor(t, s.DataDir, secret, token, cfg.SecretAccessKey)

	must(200, "DELETE", "/v1/databases/lake", nil)
	if keys, err := cfg.ListObjects(ctx, bucket, "lake/data/"); err != nil || len(keys) != 0 {
		t.Fatalf("objects left after the database was deleted: %d %v", len(keys), err)
	}
}

// walkFor fails the test if a file under dir holds one of secrets.
func walkFor(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil // removed while walking
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, v := range secrets {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("a secret is in %s", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
