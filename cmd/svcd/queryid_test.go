package main

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/testenv"
)

// sharedEngine starts one engine for every cluster of an svcd, as one ClickHouse
// server for all would be.
func sharedEngine(t *testing.T) *clickhouse.Process {
	t.Helper()
	svcdtest.Requirements(t)
	eng, err := clickhouse.NewProcess(clickhouse.ProcessConfig{Binary: svcdtest.Binary(t, "chengine"), Lib: testenv.Engine(t),
		DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Shutdown(context.Background()) })
	return eng
}

// secondOrganization makes user mallory with organization "evil", cluster c1 and an
// admin key there, and returns the key's Authorization value.
func secondOrganization(t *testing.T, s *svcdtest.Service) string {
	t.Helper()
	admin := login(t, s, "admin", adminPassword)
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "mallory", "password": "mallory's password"}, "Authorization", "Bearer "+admin)
	mallory := login(t, s, "mallory", "mallory's password")
	s.Must(200, "POST", "/v1/organizations", map[string]string{"name": "evil"}, "Authorization", "Bearer "+mallory)
	s.Must(200, "POST", "/v1/clusters?organization=evil", map[string]any{"name": "c1", "replicas": 1,
		"size": map[string]any{"cpu_cores": 1, "memory_gib": 4}}, "Authorization", "Bearer "+mallory)
	var k struct{ Token string }
	s.Must(200, "POST", "/v1/keys?organization=evil&cluster=c1", map[string]any{"name": "other", "permission": "admin"},
		"Authorization", "Bearer "+mallory).JSON(t, &k)
	return "Bearer " + k.Token
}

// TestQueryIDsAreScopedByOrganization runs organization B's query under an id that
// organization A then uses, on one shared engine: A neither gets 409 nor reaches B's
// query, and B's query runs on.
func TestQueryIDsAreScopedByOrganization(t *testing.T) {
	eng := sharedEngine(t)
	s := svcdtest.Start(t, "SVC_CLICKHOUSE_URL="+eng.URL(), "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	other := secondOrganization(t, s)

	const long = "SELECT sum(number) FROM numbers(100000000000)"
	var wg sync.WaitGroup
	var status int
	var body []byte
	wg.Go(func() {
		for {
			r, err := s.Do("POST", "/v1/query?query_id=report-43", map[string]string{"sql": long})
			if err != nil {
				return
			}
			if status, body = r.Status, r.Body; status != 409 {
				return
			}
		}
	})
	waitRunning := func() {
		t.Helper()
		testenv.Eventually(t, time.Minute, func() (bool, string) {
			r, err := s.Do("POST", "/v1/query?query_id=report-43", map[string]string{"sql": "SELECT 1"})
			if err != nil {
				t.Fatal(err)
			}
			return r.Status == 409, fmt.Sprintf("the long query never ran: last answer %d %s", r.Status, r.Body)
		})
	}
	waitRunning()
	// The other organization uses the same id on the same engine, twice in a row.
	for range 2 {
		r := s.Must(200, "POST", "/v1/query?query_id=report-43", map[string]string{"sql": "SELECT 42 AS x"}, "Authorization", other)
		if got := r.Header.Get("X-Engine-Query-Id"); got != "report-43" {
			t.Errorf("X-Engine-Query-Id %q, want the caller's own id", got)
		}
		if !bytes.Contains(r.Body, []byte("42")) {
			t.Errorf("the other organization's query answered %s", r.Body)
		}
	}
	// Nor can it cancel the first organization's query.
	s.Must(404, "POST", "/v1/query/cancel", map[string]string{"query_id": "report-43"}, "Authorization", other)
	waitRunning() // still running
	s.Must(200, "POST", "/v1/query/cancel", map[string]string{"query_id": "report-43"})
	wg.Wait()
	if status != 499 {
		t.Fatalf("canceled query answered %d %s", status, body)
	}
}

// TestQueryIDIsValidated checks caller-chosen query ids at the edge.
func TestQueryIDIsValidated(t *testing.T) {
	s := svcdtest.Start(t)
	bad := []string{"has space", "quote'", "a\"b", "semi;colon", "slash/x", "%00", strings.Repeat("x", 129), "ünïcode"}
	for _, id := range bad {
		for _, path := range []string{"/v1/query?query_id=", "/v1/query/cancel?query_id="} {
			r, err := s.Do("POST", path+url.QueryEscape(id), map[string]string{"sql": "SELECT 1"})
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != 400 || !bytes.Contains(r.Body, []byte(`"invalid_query_id"`)) || !bytes.Contains(r.Body, []byte(`"field":"query_id"`)) {
				t.Errorf("%s%q: %d %s, want 400 invalid_query_id naming query_id", path, id, r.Status, r.Body)
			}
		}
	}
	s.Must(200, "POST", "/v1/query?query_id="+strings.Repeat("x", 128), map[string]string{"sql": "SELECT 1"})
	s.Must(200, "POST", "/v1/query?query_id=A-z_0.9:x", map[string]string{"sql": "SELECT 1"})
}
