package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestStorageOnlyWhereAllowed reproduces issue 23's storage findings against svcd and the
// S3-compatible server, with no operator opt-in to storage without a role:
//   - a bucket naming a host, port, path and query (the engine connected to a port of the
//     caller's choice), `../victim-bucket` and a path leaving its prefix are refused with
//     a 400 naming the field, on database and cluster creation and verify-s3-access;
//   - a database with no role_arn on someone else's bucket (the service's own credentials
//     wrote beside the owner's files) is refused;
//   - another organization cannot put a cluster on the owner's bucket and path, nor on a
//     bucket whose role and tag are not its database_bucket_tag;
//   - a second database on an overlapping path is refused, also when created at once;
//   - nothing refused wrote to the bucket.
func TestStorageOnlyWhereAllowed(t *testing.T) {
	env, cfg, bucket := s3Storage(t)
	s := startControlPlane(t, env...)
	admin := login(t, s, "admin", adminPassword)
	asAdmin := []string{"Authorization", "Bearer " + admin}
	role := s3Role(t, cfg, "ext-1")
	storage := func(dataBucket, dataPath string, more ...string) map[string]any {
		st := map[string]any{"data": map[string]string{"bucket": dataBucket, "path": dataPath},
			"backups": map[string]string{"bucket": bucket, "path": dataPath + "-backups"}}
		for i := 0; i+1 < len(more); i += 2 {
			st[more[i]] = more[i+1]
		}
		return st
	}
	withRole := func(b, p string) map[string]any { return storage(b, p, "role_arn", role, "external_id", "ext-1") }
	refused := func(r []byte, field, says string) {
		t.Helper()
		if !bytes.Contains(r, []byte(`"field":"`+field+`"`)) || !strings.Contains(string(r), says) {
			t.Fatalf("want a 400 on %s saying %q: %s", field, says, r)
		}
	}
	cluster := func(st map[string]any, more ...string) map[string]any {
		c := map[string]any{"name": "c-" + strings.ReplaceAll(st["data"].(map[string]string)["path"], "/", "-"), "replicas": 1,
			"size": map[string]any{"cpu_cores": 1, "memory_gib": 4}, "s3_storage": st}
		if len(more) == 2 {
			c["database_s3_access"] = map[string]string{"external_id": more[0], "database_bucket_tag": more[1]}
		}
		return c
	}

	// Finding 3: the bucket is tenant text, never a host; `..` never leaves the endpoint's path.
	for _, b := range []string{"probe-s3.test:19603/ssrf?", "../victim-bucket"} {
		refused(s.Must(400, "POST", "/v1/databases", map[string]any{"name": "ssrf", "s3_storage": withRole(b, "p")}).Body,
			"s3_storage.data.bucket", "S3's naming rules")
		refused(s.Must(400, "POST", "/v1/clusters?organization=default", cluster(withRole(b, "p")), asAdmin...).Body,
			"s3_storage.data.bucket", "bucket name")
		refused(s.Must(400, "POST", "/v1/clusters/verify-s3-access?organization=default", map[string]any{"s3_storage": withRole(b, "p")}, asAdmin...).Body,
			"s3_storage.data.bucket", "bucket name")
	}
	refused(s.Must(400, "POST", "/v1/databases", map[string]any{"name": "up", "s3_storage": withRole(bucket, "../victim")}).Body,
		"s3_storage.data.path", "segment")

	// Finding 5: no role, the service's own credentials: refused without the opt-in.
	refused(s.Must(400, "POST", "/v1/databases", map[string]any{"name": "squat", "s3_storage": storage(bucket, "lake/data")}).Body,
		"s3_storage.role_arn", "SVC_S3_ALLOW_SERVICE_CREDENTIALS")

	// The owner's database, verified at creation (a probe is written and deleted).
	s.Must(200, "POST", "/v1/databases", map[string]any{"name": "lake", "s3_storage": withRole(bucket, "lake/data")})
	refused(s.Must(400, "POST", "/v1/databases", map[string]any{"name": "inside", "s3_storage": withRole(bucket, "lake/data/inside")}).Body,
		"s3_storage", "overlaps")

	// Creations at once on one path: one wins, the others are told it overlaps.
	var wg sync.WaitGroup
	status := make([]int, 4)
	for i := range status {
		wg.Go(func() {
			r, err := s.Do("POST", "/v1/databases", map[string]any{"name": fmt.Sprintf("race%d", i), "s3_storage": withRole(bucket, "race")})
			if err == nil {
				status[i] = r.Status
			}
		})
	}
	wg.Wait()
	if won := slices.Index(status, 200); won < 0 || slices.Index(status[won+1:], 200) >= 0 || slices.ContainsFunc(status, func(c int) bool { return c != 200 && c != 400 }) {
		t.Fatalf("four creations at once on one path answered %v, want one 200 and three 400", status)
	}

	// Another organization, with a role of its own.
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "mallory", "password": "mallory's password"}, asAdmin...)
	mallory := []string{"Authorization", "Bearer " + login(t, s, "mallory", "mallory's password")}
	s.Must(200, "POST", "/v1/organizations", map[string]string{"name": "evil"}, mallory...)
	theirs := s3Role(t, cfg, "ext-m")
	st := storage(bucket, "lake", "role_arn", theirs, "external_id", "ext-m")
	refused(s.Must(400, "POST", "/v1/clusters?organization=evil", cluster(st), mallory...).Body, "s3_storage", "overlaps")
	// Its database_bucket_tag is not the bucket's and role's tag: verify-s3-access's checks run.
	st = storage(bucket, "evil/data", "role_arn", theirs, "external_id", "ext-m")
	refused(s.Must(400, "POST", "/v1/clusters?organization=evil", cluster(st, "ext-m", "team-b"), mallory...).Body,
		"s3_storage", "did not pass verify-s3-access")
	var list struct{ Clusters []struct{ Name string } }
	s.Must(200, "GET", "/v1/clusters?organization=evil", nil, mallory...).JSON(t, &list)
	if len(list.Clusters) != 0 {
		t.Fatalf("clusters created on refused storage: %+v", list.Clusters)
	}

	keys, err := cfg.ListObjects(context.Background(), bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "lake/data/") && !strings.HasPrefix(k, "race/") {
			t.Errorf("object %s written outside the owner's database", k)
		}
	}
}
