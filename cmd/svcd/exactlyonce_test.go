package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

// TestTenantCannotForgeTheNextBatchToken runs the attack of issue 10 item 1: a
// read_write key inserts with the deduplication token the pipeline would give the next
// batch of every partition, so that the engine would discard that batch as a repeat
// while the row was acknowledged. The setting is refused, naming it, and the victim's
// row lands.
func TestTenantCannotForgeTheNextBatchToken(t *testing.T) {
	s := svcdtest.Start(t)
	var table struct {
		ID string `json:"id"`
	}
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "events"}).JSON(t, &table)
	var clusters struct {
		Clusters []struct {
			ID string `json:"id"`
		} `json:"clusters"`
	}
	s.Must(200, "GET", "/v1/clusters?organization=default", nil).JSON(t, &clusters)
	if len(clusters.Clusters) != 1 || table.ID == "" {
		t.Fatalf("clusters %s, table %q", s.Must(200, "GET", "/v1/clusters?organization=default", nil).Body, table.ID)
	}
	// A first row gives the table its generation, where both the tenant's INSERT and
	// the next batch go.
	s.Must(202, "POST", "/v1/tables/events", `{"who":"first"}`)
	s.WaitCount("events", 1, time.Minute)

	attacker, _ := createKey(t, s, map[string]any{"name": "attacker", "permission": "read_write"})
	topic := "svc." + clusters.Clusters[0].ID + ".ingest"
	forged := 0
	for p := range 4 {
		for start := range 2 { // the next batch starts at 0, or at 1 after the first row
			token := fmt.Sprintf("%s/%d/%d-%d/%s", topic, p, start, start+1, table.ID)
			for _, sql := range []string{
				"INSERT INTO events SELECT 'attacker' AS who SETTINGS insert_deduplication_token = '" + token + "'",
				"INSERT INTO events SETTINGS insert_deduplication_token = '" + token + "' SELECT 'attacker' AS who",
			} {
				r, err := s.Do("POST", "/v1/query", map[string]string{"sql": sql}, "Authorization", "Bearer "+attacker)
				if err != nil {
					t.Fatal(err)
				}
				var e struct {
					Error struct{ Code, Message string } `json:"error"`
				}
				_ = json.Unmarshal(r.Body, &e)
				if r.Status != 400 || e.Error.Code != "setting_not_allowed" || !strings.Contains(e.Error.Message, "insert_deduplication_token") {
					forged++
					t.Errorf("forged token accepted: %d %s", r.Status, r.Body)
				}
			}
		}
	}
	// The victim's row, acknowledged, must land whatever the tenant did.
	s.Must(202, "POST", "/v1/tables/events", `{"who":"victim"}`)
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		rows := s.Query("SELECT count() AS n FROM events WHERE who = 'victim'")
		n, _ := rows[0]["n"].(float64)
		if n > 1 {
			t.Fatalf("victim's acknowledged row stored %v times (%d forged inserts accepted)", n, forged)
		}
		return n == 1, fmt.Sprintf("victim's acknowledged row stored %v times (%d forged inserts accepted)", n, forged)
	})
}

// TestAKeyTheRowsCannotTypeDoesNotStallThePartition: a table keyed by a path whose rows
// are arrays of numbers gets the key type Array(Nullable(Int64)), which the engine
// refuses in a sorting key. Creating the generation fails on every attempt; those rows
// go to dead letters and the partition (one, so every table shares it) goes on.
func TestAKeyTheRowsCannotTypeDoesNotStallThePartition(t *testing.T) {
	s := svcdtest.Start(t, "SVC_INGEST_PARTITIONS=1")
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "arrays", "sorting_key": "tags"})
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "plain"})
	s.Must(202, "POST", "/v1/tables/arrays", `{"tags":[{"a":1}]}`)
	s.Must(202, "POST", "/v1/tables/plain", `{"a":1}`)
	s.WaitCaughtUp("plain", time.Minute)
	if n := s.Count("plain"); n != 1 {
		t.Fatalf("plain holds %d rows, want 1", n)
	}
	var fresh struct {
		DeadLettered int64 `json:"dead_lettered"`
	}
	s.Must(200, "GET", "/v1/tables/arrays/freshness", nil).JSON(t, &fresh)
	if fresh.DeadLettered != 1 {
		t.Fatalf("arrays: %d rows dead-lettered, want 1; %d rows stored; %s", fresh.DeadLettered, s.Count("arrays"),
			s.Must(200, "GET", "/v1/tables/arrays", nil).Body)
	}
}
