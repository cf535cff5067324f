package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/eventstore/pgstore/pgtest"
	"github.com/svc-data/svc/infra/testenv"
)

// propagationBound is how long a control-plane change made on one node may take to work
// on another sharing its PostgreSQL event store (DESIGN.md, Event store port): the
// follower wakes on the append's NOTIFY and polls every second besides; the bound leaves
// room for a loaded test machine.
const propagationBound = 10 * time.Second

// TestTwoNodesShareThePostgresEventStore runs two svcd on one PostgreSQL event store, one
// Kafka, one engine (SVC_CLICKHOUSE_URL), one service secret and one Temporal task
// queue: an organization, a database, a table and a key made on the first work on the
// second, which started after them; then, with both running, a key made on the first
// works on the second within propagationBound, and once revoked on the first is refused
// on the second within it.
func TestTwoNodesShareThePostgresEventStore(t *testing.T) {
	svcdtest.Requirements(t)
	events := pgtest.Database(t)
	bin := testenv.BinDir(t)
	eng, err := clickhouse.NewProcess(clickhouse.ProcessConfig{Binary: filepath.Join(bin, "chengine"), Lib: os.Getenv("SVC_CHDB_LIB"),
		DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer eng.Shutdown(context.Background())
	shared := []string{
		"SVC_EVENTSTORE_URL=" + events,
		"SVC_CLICKHOUSE_URL=" + eng.URL(),
		"SVC_SERVICE_SECRET=two-nodes-service-secret-0123456789",
		"SVC_BOOTSTRAP_PASSWORD=" + adminPassword,
		fmt.Sprintf("SVC_TEMPORAL_TASK_QUEUE=two-nodes-%d-%d", os.Getpid(), time.Now().UnixNano()),
	}

	a := svcdtest.Start(t, shared...)
	session := login(t, a, "admin", adminPassword)
	a.Must(200, "POST", "/v1/organizations", map[string]string{"name": "second-org"}, "Authorization", "Bearer "+session)
	if r, err := a.Do("POST", "/v1/databases", map[string]string{"name": "shared_db"}); err != nil || r.Status/100 != 2 {
		t.Fatalf("create database on the first node: %v %+v", err, r)
	}
	a.Must(200, "POST", "/v1/tables?database=shared_db", map[string]string{"name": "events"})
	var k1 struct{ Token, ID string }
	a.Must(200, "POST", "/v1/keys?database=shared_db", map[string]string{"name": "writer", "permission": "read_write"}).JSON(t, &k1)

	b := svcdtest.Start(t, shared...)
	// The second node's bootstrap found the first's: one organization of that name.
	var orgs struct{ Organizations []struct{ Name string } }
	b.Must(200, "GET", "/v1/organizations", nil, "Authorization", "Bearer "+session).JSON(t, &orgs)
	names := map[string]int{}
	for _, o := range orgs.Organizations {
		names[o.Name]++
	}
	if names["second-org"] != 1 || len(orgs.Organizations) != 2 {
		t.Fatalf("organizations on the second node (with the first's session): %+v", orgs.Organizations)
	}
	writer := "Bearer " + k1.Token
	b.Must(202, "POST", "/v1/tables/events", `{"node":"b","n":1}`, "Authorization", writer)
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		r := b.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT count() AS n FROM events"}, "Authorization", writer)
		var res struct{ Data []map[string]any }
		r.JSON(t, &res)
		return len(res.Data) == 1 && res.Data[0]["n"] == float64(1), fmt.Sprintf("count on the second node: %v", res.Data)
	})

	// Both running: a key made on the first works on the second.
	var k2 struct{ Token, ID string }
	a.Must(200, "POST", "/v1/keys?database=shared_db", map[string]string{"name": "reader", "permission": "read_only"}).JSON(t, &k2)
	made := time.Now()
	testenv.Eventually(t, propagationBound, func() (bool, string) {
		r, err := b.Do("GET", "/v1/tables", nil, "Authorization", "Bearer "+k2.Token)
		if err != nil {
			return false, err.Error()
		}
		return r.Status == 200, fmt.Sprintf("the second node answers %d to a key made on the first", r.Status)
	})
	t.Logf("a key made on the first node worked on the second after %v", time.Since(made).Round(time.Millisecond))

	// Revoked on the first: refused on the second.
	a.Must(200, "DELETE", "/v1/keys/"+k2.ID, nil)
	revoked := time.Now()
	testenv.Eventually(t, propagationBound, func() (bool, string) {
		r, err := b.Do("GET", "/v1/tables", nil, "Authorization", "Bearer "+k2.Token)
		if err != nil {
			return false, err.Error()
		}
		return r.Status == 401, fmt.Sprintf("the second node answers %d to a key revoked on the first", r.Status)
	})
	t.Logf("a key revoked on the first node was refused on the second after %v", time.Since(revoked).Round(time.Millisecond))
}
