package main

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestAFailingBucketDoesNotHoldBackOtherTables is issue 23's finding 4: a table on a
// bucket that stops answering must not hold back a local table whose rows share its
// partition (one partition here, so they do). While the bucket is unreachable, 40 rows
// of the local table posted after 10 rows of the bucket's table become queryable; the
// bucket's table is parked: its rows go to its dead letters (the freshness view says so
// and counts them), and svcd logs the stall; tried again after each step, it is sent no
// insert while its endpoint does not answer, and deleting its database or the table
// answers 503 at once without blocking the engine. Once the bucket answers again and the park
// step ran out, new rows land in it, and none of its rows is there twice.
func TestAFailingBucketDoesNotHoldBackOtherTables(t *testing.T) {
	t.Parallel() // see TestMain
	env, cfg, bucket := s3Storage(t)
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newProxy(t, "127.0.0.1", u.Host)
	for i, kv := range env {
		if strings.HasPrefix(kv, "SVC_S3_ENDPOINT=") {
			env[i] = "SVC_S3_ENDPOINT=http://" + proxy.ln.Addr().String()
		}
	}
	role := s3Role(t, cfg, "ext-stall")
	s := startControlPlane(t, append(env, "SVC_INGEST_PARTITIONS=1", "SVC_REMOTE_INSERT_TIMEOUT=3s", "SVC_REMOTE_RETRY_MIN=2s")...)
	a := newClusterAdmin(t, s)
	a.create("lake")
	key := a.key("lake")
	s.Must(200, "POST", "/v1/databases", map[string]any{"name": "lake", "s3_storage": map[string]any{
		"data": map[string]string{"bucket": bucket, "path": "stall/data"}, "backups": map[string]string{"bucket": bucket, "path": "stall/backups"},
		"role_arn": role, "external_id": "ext-stall"}}, key...)
	s.Must(200, "POST", "/v1/tables?database=lake", map[string]string{"name": "events", "sorting_key": "i"}, key...)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "local", "sorting_key": "i"}, key...)
	s.Must(202, "POST", "/v1/tables/events?database=lake", rows(0, 5), key...)
	s.Must(202, "POST", "/v1/tables/local", rows(0, 5), key...)
	waitCountAs(t, s, key, "lake.events", 5)
	waitCountAs(t, s, key, "local", 5)

	proxy.set(false)
	s.Must(202, "POST", "/v1/tables/events?database=lake", rows(5, 10), key...)
	s.Must(202, "POST", "/v1/tables/local", rows(5, 40), key...)
	// Today's consumer holds the partition behind the bucket's insert: these stay invisible.
	waitCountAs(t, s, key, "local", 45)

	type freshness struct {
		DeadLettered       int64 `json:"dead_lettered"`
		StorageUnavailable *struct {
			RetryAt  time.Time `json:"retry_at"`
			Attempts int
			Reason   string
		} `json:"storage_unavailable"`
	}
	fresh := func() freshness {
		var f freshness
		s.Must(200, "GET", "/v1/tables/events/freshness?database=lake", nil, key...).JSON(t, &f)
		return f
	}
	f := fresh()
	if f.StorageUnavailable == nil || f.DeadLettered != 10 || strings.Contains(f.StorageUnavailable.Reason, "INSERT") {
		t.Fatalf("freshness of the bucket's table while it is unreachable: %+v", f)
	}
	if logs := s.Logs(); !strings.Contains(logs, "table's storage unavailable") {
		t.Fatalf("the stall is not logged:\n%s", tail(logs, 4000))
	}

	// Tried again after each step while the bucket still does not answer, the table is not
	// sent another insert (the engine keeps one it cannot finish running, holding one of its
	// connections): the storage's endpoint is asked first, and the table parked again.
	deadline := time.Now().Add(2 * time.Minute)
	for from := 50; ; from += 10 {
		s.Must(202, "POST", "/v1/tables/events?database=lake", rows(from, 1), key...)
		if f = fresh(); f.StorageUnavailable != nil && f.StorageUnavailable.Attempts >= 3 {
			if !strings.Contains(f.StorageUnavailable.Reason, "endpoint does not answer") {
				t.Fatalf("tried again while the bucket does not answer: %+v", f.StorageUnavailable)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not tried again: %+v", f)
		}
		time.Sleep(time.Second)
	}

	// Deleting the database answers at once, 503 naming the storage, and sends the engine
	// no DROP (which would block on the bucket, holding an engine connection): the
	// organization's queries go on.
	if r := s.Must(503, "DELETE", "/v1/databases/lake", nil, key...); !strings.Contains(string(r.Body), `"storage_unavailable"`) {
		t.Fatalf("deleting the database on the silent bucket: %s", r.Body)
	}
	if r := s.Must(503, "DELETE", "/v1/tables/events?database=lake", nil, key...); !strings.Contains(string(r.Body), `"storage_unavailable"`) {
		t.Fatalf("deleting the table on the silent bucket: %s", r.Body)
	}
	for range 8 {
		waitCountAs(t, s, key, "local", 45)
	}

	// The bucket answers again. Rows posted while the table is still parked go to its dead
	// letters, so a few rows are posted each round until a round lands (svcd's clock, which
	// retry_at is read on, is not the test's).
	proxy.set(true)
	deadline = time.Now().Add(3 * time.Minute)
	for from := 100; ; from += 10 {
		s.Must(202, "POST", "/v1/tables/events?database=lake", rows(from, 3), key...)
		var res struct {
			Data []struct{ New, All, Distinct string }
		}
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT toString(countIf(i >= 100)) AS New, toString(count()) AS All, toString(uniqExact(i)) AS Distinct FROM lake.events"}, key...).JSON(t, &res)
		if len(res.Data) != 1 {
			t.Fatalf("count: %+v", res)
		}
		got := res.Data[0]
		if got.All != got.Distinct {
			t.Fatalf("a row of the bucket's table is there twice: %+v", got)
		}
		if got.New != "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rows after the bucket came back: %+v, freshness %+v\n%s", got, fresh(), tail(s.Logs(), 4000))
		}
		time.Sleep(time.Second)
	}
	if f := fresh(); f.StorageUnavailable != nil {
		t.Fatalf("still parked after rows landed: %+v", f)
	}
	// With the bucket back, the database is deleted.
	s.Must(200, "DELETE", "/v1/databases/lake", nil, key...)
	waitCountAs(t, s, key, "local", 45)
}
