package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/s3store"
	"github.com/svc-data/svc/infra/testenv"
)

// s3Storage is svcd's environment for the S3-compatible test server (SVC_S3_ENDPOINT;
// `go tool task test` starts moto) with a secret unique to the test, and a fresh bucket
// tagged `svc-data.dev/cluster = team-a`. It skips when SVC_S3_ENDPOINT is unset.
func s3Storage(t *testing.T) (env []string, cfg s3store.Config, bucket string) {
	t.Helper()
	ep := testenv.S3(t)
	id := strings.ReplaceAll(uuid.NewString(), "-", "")
	cfg = s3store.Config{Endpoint: ep, Region: "us-east-1", TagDomain: "svc-data.dev",
		AccessKeyID: "svc-test-key-" + id[:8], SecretAccessKey: "svc-test-secret-" + id}
	bucket = "lake-" + id[:12]
	ctx := context.Background()
	cl := cfg.S3Client()
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(bucket),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String(cfg.TagKey()), Value: aws.String("team-a")}}}}); err != nil {
		t.Fatal(err)
	}
	env = []string{"SVC_S3_ENDPOINT=" + ep, "SVC_S3_ACCESS_KEY_ID=" + cfg.AccessKeyID, "SVC_S3_SECRET_ACCESS_KEY=" + cfg.SecretAccessKey}
	return env, cfg, bucket
}

// TestDatabaseOnS3 keeps a database's rows in a customer bucket through the engine's S3
// disk: verify-s3-access passes for the bucket and names a missing one; the rows land as
// objects under the database's path (the default database's do not); after svcd and its
// engine restart they read back exactly; and the service's secret is nowhere in its data
// directory (logs, engine metadata, events).
func TestDatabaseOnS3(t *testing.T) {
	env, cfg, bucket := s3Storage(t)
	s := startControlPlane(t, env...)
	admin := []string{"Authorization", "Bearer " + login(t, s, "admin", adminPassword)}
	ctx := context.Background()

	verify := func(data string) map[string]any {
		var v map[string]any
		s.Must(200, "POST", "/v1/clusters/verify-s3-access?organization=default", map[string]any{
			"s3_storage": map[string]any{"data": map[string]string{"bucket": data, "path": "lake/data"},
				"backups": map[string]string{"bucket": bucket, "path": "lake/backups"}},
			"database_s3_access": map[string]string{"external_id": "ext-1", "database_bucket_tag": "team-a"}}, admin...).JSON(t, &v)
		return v
	}
	if v := verify(bucket); v["verified"] != true {
		t.Fatalf("verify: %v", v)
	}
	if v := verify("missing-" + bucket); v["verified"] != false || !strings.HasPrefix(v["message"].(string), "data_bucket: ") {
		t.Fatalf("verify of a missing bucket: %v", v)
	}

	s.Must(200, "POST", "/v1/databases", map[string]any{"name": "lake", "s3_storage": map[string]any{
		"data": map[string]string{"bucket": bucket, "path": "lake/data"}, "backups": map[string]string{"bucket": bucket, "path": "lake/backups"},
		"role_arn": s3Role(t, cfg, "ext-1"), "external_id": "ext-1"}})
	list := s.Must(200, "GET", "/v1/databases", nil)
	if !bytes.Contains(list.Body, []byte(`"bucket":"`+bucket+`"`)) || bytes.Contains(list.Body, []byte("arn:aws")) || bytes.Contains(list.Body, []byte("ext-1")) {
		t.Fatalf("listing: %s", list.Body)
	}
	s.Must(200, "POST", "/v1/tables?database=lake", map[string]string{"name": "events", "sorting_key": "id"})
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "local"})
	const batches, per = 4, 125
	for b := range batches {
		rows := make([]map[string]any, per)
		for i := range rows {
			n := b*per + i
			rows[i] = map[string]any{"id": n, "v": fmt.Sprintf("row-%d", n)}
		}
		s.Must(202, "POST", "/v1/tables/events?database=lake", rows)
	}
	s.Must(202, "POST", "/v1/tables/local", `{"id":1}`)
	s.WaitCount("lake.events", batches*per, 60*time.Second)
	s.WaitCount("local", 1, 60*time.Second)

	keys, err := cfg.ListObjects(ctx, bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("no object in the bucket: the rows did not land on S3")
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "lake/data/") {
			t.Fatalf("object %s outside the database's data path", k)
		}
	}
	read := func() []map[string]any {
		return s.Query("SELECT id, v FROM lake.events ORDER BY id")
	}
	before := read()
	if len(before) != batches*per || before[0]["v"] != "row-0" || before[len(before)-1]["v"] != fmt.Sprintf("row-%d", batches*per-1) {
		t.Fatalf("read %d rows: first %v", len(before), before[:min(1, len(before))])
	}

	s.Restart() // svcd and its engines: the engine re-opens the parts from the bucket
	if after := read(); !reflect.DeepEqual(after, before) {
		t.Fatalf("after restart %d rows, want the %d read before", len(after), len(before))
	}
	after, err := cfg.ListObjects(ctx, bucket, "lake/data/")
	if err != nil || len(after) == 0 {
		t.Fatalf("objects after restart: %d, %v", len(after), err)
	}

	// The rows are read from the bucket, not a local copy: with the objects gone the
	// engine cannot answer.
	for _, k := range after {
		if _, err := cfg.S3Client().DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := s.Do("POST", "/v1/query", map[string]string{"sql": "SELECT id, v FROM lake.events ORDER BY id"}); err != nil || r.Status == 200 && bytes.Contains(r.Body, []byte("row-0")) {
		t.Fatalf("rows still read with their objects deleted: %v %d", err, r.Status)
	}

	// The secret reaches the engine in its environment only: not in a log, the engine's
	// table metadata (which the query API does not answer anyway) or the event store.
	walkFor(t, s.DataDir, cfg.SecretAccessKey)
}

// TestClusterOnS3: a cluster created with s3_storage keeps the tables of its databases
// (here `default`, which has no storage of its own) in the bucket, and deleting the
// cluster deletes their objects; a database's own bucket must use the external id of
// the cluster's database_s3_access. The storage names no role (the operator opted in):
// its engine is served federated session credentials, never the service's own secret.
func TestClusterOnS3(t *testing.T) {
	env, cfg, bucket := s3Storage(t)
	// Storage without a role: the operator's opt-in.
	s := startControlPlane(t, append(env, "SVC_S3_ALLOW_SERVICE_CREDENTIALS=true")...)
	a := newClusterAdmin(t, s)
	c := a.cluster(200, "POST", "/v1/clusters", map[string]any{"name": "lakehouse", "replicas": 1,
		"size": map[string]any{"cpu_cores": 1, "memory_gib": 4},
		"s3_storage": map[string]any{"data": map[string]string{"bucket": bucket, "path": "cl/data"},
			"backups": map[string]string{"bucket": bucket, "path": "cl/backups"}, "external_id": "ext-1"},
		"database_s3_access": map[string]string{"external_id": "ext-1", "database_bucket_tag": "team-a"}})
	key := a.key("lakehouse")
	// A database with its own bucket uses the cluster's database_s3_access external id.
	own := func(ext string) map[string]any {
		return map[string]any{"name": "own", "s3_storage": map[string]any{"data": map[string]string{"bucket": bucket, "path": "own/data"},
			"backups": map[string]string{"bucket": bucket, "path": "own/backups"}, "external_id": ext}}
	}
	if r := s.Must(400, "POST", "/v1/databases", own("ext-2"), key...); !bytes.Contains(r.Body, []byte(`"field":"s3_storage.external_id"`)) {
		t.Fatalf("another external id: %s", r.Body)
	}
	s.Must(200, "POST", "/v1/databases", own("ext-1"), key...)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "ev"}, key...)
	s.Must(202, "POST", "/v1/tables/ev", rows(0, 50), key...)
	waitCountAs(t, s, key, "ev", 50)
	ctx := context.Background()
	if keys, err := cfg.ListObjects(ctx, bucket, "cl/data/"); err != nil || len(keys) == 0 {
		t.Fatalf("objects of the cluster's default database: %d, %v", len(keys), err)
	}
	// The engine writes them with federated session credentials scoped to the cluster's
	// storage: the service's long-lived key and secret are never served to it.
	id, secret, token := engineCredentials(t, filepath.Join(s.DataDir, "clusters", c.ID, "engine"))
	if id == "" || id == cfg.AccessKeyID || secret == cfg.SecretAccessKey || token == "" {
		t.Fatalf("the engine is served the service's own key %v (session token %v)", id == cfg.AccessKeyID, token != "")
	}
	a.do(200, "DELETE", "/v1/clusters/"+c.ID, nil)
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		r, err := s.Do("GET", "/v1/clusters/"+c.ID+"?organization=default", nil, a.auth...)
		return err == nil && r.Status == 404, fmt.Sprintf("cluster not deleted: %v %v", r, err)
	})
	if keys, err := cfg.ListObjects(ctx, bucket, "cl/data/"); err != nil || len(keys) != 0 {
		t.Fatalf("objects left after the cluster was deleted: %v, %v", keys, err)
	}
}
