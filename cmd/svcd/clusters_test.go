package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/infra/kafka/kafkatest"
	"github.com/svc-data/svc/infra/testenv"
	"github.com/svc-data/svc/pipeline"
)

type clusterJSON struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status struct {
		Phase   string  `json:"phase"`
		Ready   bool    `json:"ready"`
		Message *string `json:"message"`
	} `json:"status"`
	CanPause           bool `json:"can_pause"`
	CanResume          bool `json:"can_resume"`
	IdleTimeoutMinutes int  `json:"idle_timeout_minutes"`
}

// clusterAdmin is an organization administrator's session on svcd's default organization.
type clusterAdmin struct {
	t    *testing.T
	s    *svcdtest.Service
	auth []string
}

func newClusterAdmin(t *testing.T, s *svcdtest.Service) *clusterAdmin {
	return &clusterAdmin{t: t, s: s, auth: []string{"Authorization", "Bearer " + login(t, s, "admin", adminPassword)}}
}

func (a *clusterAdmin) do(want int, method, path string, body any) *svcdtest.Response {
	a.t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return a.s.Must(want, method, path+sep+"organization=default", body, a.auth...)
}

func (a *clusterAdmin) cluster(want int, method, path string, body any) clusterJSON {
	a.t.Helper()
	var c clusterJSON
	a.do(want, method, path, body).JSON(a.t, &c)
	return c
}

func (a *clusterAdmin) create(name string) clusterJSON {
	a.t.Helper()
	return a.cluster(200, "POST", "/v1/clusters", map[string]any{"name": name, "replicas": 1,
		"size": map[string]any{"cpu_cores": 1, "memory_gib": 4}})
}

// key returns an admin API key bound to cluster name.
func (a *clusterAdmin) key(name string) []string {
	a.t.Helper()
	var k struct{ Token string }
	a.do(200, "POST", "/v1/keys?cluster="+name, map[string]any{"name": "k", "permission": "admin"}).JSON(a.t, &k)
	return []string{"Authorization", "Bearer " + k.Token}
}

// waitPhase waits until the cluster is in phase.
func (a *clusterAdmin) waitPhase(id, phase string, timeout time.Duration) clusterJSON {
	a.t.Helper()
	var c clusterJSON
	testenv.Eventually(a.t, timeout, func() (bool, string) {
		c = a.cluster(200, "GET", "/v1/clusters/"+id, nil)
		return c.Status.Phase == phase, fmt.Sprintf("cluster %s is %s, want %s\n%s", id, c.Status.Phase, phase, tail(a.s.Logs(), 4000))
	})
	return c
}

func checkCluster(t *testing.T, c clusterJSON, phase string, ready, canPause, canResume bool) {
	t.Helper()
	if c.Status.Phase != phase || c.Status.Ready != ready || c.CanPause != canPause || c.CanResume != canResume {
		t.Fatalf("cluster %+v, want phase %s ready %v can_pause %v can_resume %v", c, phase, ready, canPause, canResume)
	}
}

func countAs(t *testing.T, s *svcdtest.Service, key []string, table string) (int, *svcdtest.Response) {
	t.Helper()
	r, err := s.Do("POST", "/v1/query", map[string]string{"sql": "SELECT count() AS n FROM " + table}, key...)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 200 {
		return -1, r
	}
	var res struct{ Data []struct{ N float64 } }
	r.JSON(t, &res)
	return int(res.Data[0].N), r
}

// waitCountAs waits until table holds want rows and returns how many queries it ran.
func waitCountAs(t *testing.T, s *svcdtest.Service, key []string, table string, want int) int {
	t.Helper()
	queries := 0
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		queries++
		n, r := countAs(t, s, key, table)
		if n > want {
			t.Fatalf("%s holds %d rows, more than the %d acknowledged", table, n, want)
		}
		return n == want, fmt.Sprintf("%s holds %d rows, want %d (%d %s)\n%s", table, n, want, r.Status, r.Body, tail(s.Logs(), 4000))
	})
	return queries
}

func rows(from, n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := from; i < from+n; i++ {
		if i > from {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "{\"i\":%d}", i)
	}
	b.WriteString("]")
	return b.String()
}

// The cluster lifecycle table, row by row, against the real engine and broker.
func TestClusterLifecycle(t *testing.T) {
	t.Parallel() // see TestMain
	s := startControlPlane(t)
	a := newClusterAdmin(t, s)

	// Created: provisioning is completed before the answer.
	c := a.create("life")
	checkCluster(t, c, "ready", true, true, false)
	key := a.key("life")
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "ev"}, key...)
	s.Must(202, "POST", "/v1/tables/ev", rows(0, 100), key...)
	waitCountAs(t, s, key, "ev", 100)

	// API keys and members who are not administrators cannot manage it.
	s.Must(403, "POST", "/v1/clusters/"+c.ID+"/stop?organization=default", nil, key...)

	// running -> stop, with rows in flight: nothing is lost, they land on resume.
	// A producer keeps ingesting 10-row batches until the stop has answered.
	stopDone := make(chan struct{})
	acked := make(chan int)
	go func() {
		n := 100
		for {
			select {
			case <-stopDone:
				acked <- n
				return
			default:
			}
			r, err := s.Do("POST", "/v1/tables/ev", rows(n, 10), key...)
			if err != nil || r.Status != 202 {
				t.Errorf("ingest during stop: %v %v", err, r)
				acked <- n
				return
			}
			n += 10
		}
	}()
	for i := 0; ; i++ { // let some batches be acknowledged first
		if n, _ := countAs(t, s, key, "ev"); n > 100 || i > 200 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	c = a.cluster(200, "POST", "/v1/clusters/"+c.ID+"/stop", nil)
	close(stopDone)
	total := <-acked
	checkCluster(t, c, "stopped", false, false, true)

	// While stopped: ingestion is accepted into Kafka; queries answer 503 with the hint.
	s.Must(202, "POST", "/v1/tables/ev", rows(total, 50), key...)
	total += 50
	r, _ := s.Do("POST", "/v1/query", map[string]string{"sql": "SELECT count() FROM ev"}, key...)
	if r.Status != 503 || !strings.Contains(string(r.Body), "cluster_stopped") || !strings.Contains(string(r.Body), "/resume") {
		t.Fatalf("query on a stopped cluster: %d %s", r.Status, r.Body)
	}
	// Stop again: nothing to do, same answer.
	checkCluster(t, a.cluster(200, "POST", "/v1/clusters/"+c.ID+"/stop", nil), "stopped", false, false, true)

	// paused -> resume.
	c = a.cluster(200, "POST", "/v1/clusters/"+c.ID+"/resume", nil)
	checkCluster(t, c, "ready", true, true, false)
	waitCountAs(t, s, key, "ev", total)
	var distinct struct{ Data []struct{ N float64 } }
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT uniqExact(i) AS n FROM ev"}, key...).JSON(t, &distinct)
	if int(distinct.Data[0].N) != total {
		t.Fatalf("%v distinct rows, want %d", distinct.Data[0].N, total)
	}
	t.Logf("%d rows acknowledged around the stop, all landed once after resume", total)

	// A conflicting transition: resume while the cluster is stopping answers 409. A long
	// query keeps the engine stopping (running statements may finish) while we resume.
	sawConflict := false
	for attempt := 0; attempt < 5 && !sawConflict; attempt++ {
		a.waitPhase(c.ID, "ready", time.Minute)
		q := make(chan struct{})
		go func() {
			defer close(q)
			_, _ = s.Do("POST", "/v1/query", map[string]string{"sql": "SELECT sleepEachRow(0.5) FROM numbers(8) SETTINGS max_block_size = 1"}, key...)
		}()
		time.Sleep(200 * time.Millisecond) // let the query start; the assertion below waits on state
		done := make(chan struct{})
		go func() { defer close(done); a.cluster(200, "POST", "/v1/clusters/"+c.ID+"/stop", nil) }()
		for {
			got := a.cluster(200, "GET", "/v1/clusters/"+c.ID, nil)
			if got.Status.Phase == "stopping" {
				checkCluster(t, got, "stopping", false, false, false)
				r := a.do(409, "POST", "/v1/clusters/"+c.ID+"/resume", nil)
				if !strings.Contains(string(r.Body), "stopping") {
					t.Fatalf("409 body %s", r.Body)
				}
				sawConflict = true
				break
			}
			if got.Status.Phase == "stopped" {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		<-done
		<-q
		a.cluster(200, "POST", "/v1/clusters/"+c.ID+"/resume", nil)
	}
	if !sawConflict {
		t.Fatal("never observed the stopping phase to test the conflicting resume")
	}

	// PATCH: name and idle timeout; omitted fields stay; bad values are 400 naming the field.
	other := a.create("other")
	c = a.cluster(200, "PATCH", "/v1/clusters/"+c.ID, map[string]any{"name": "life2"})
	if c.Name != "life2" || c.IdleTimeoutMinutes != 0 {
		t.Fatalf("patched %+v", c)
	}
	a.do(409, "PATCH", "/v1/clusters/"+c.ID, map[string]any{"name": "other"})
	for _, bad := range []int{-1, 1, 14, 43201} {
		r := a.do(400, "PATCH", "/v1/clusters/"+c.ID, map[string]any{"idle_timeout_minutes": bad})
		if !strings.Contains(string(r.Body), `"field":"idle_timeout_minutes"`) {
			t.Fatalf("idle %d: %s", bad, r.Body)
		}
	}
	c = a.cluster(200, "PATCH", "/v1/clusters/"+c.ID, map[string]any{"idle_timeout_minutes": 60})
	if c.Name != "life2" || c.IdleTimeoutMinutes != 60 {
		t.Fatalf("patched %+v", c)
	}

	// any -> DELETE: data, topics, keys and catalog state go; the name is free again.
	dir := filepath.Join(s.DataDir, "clusters", c.ID)
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	var del struct{ Deleted bool }
	a.do(200, "DELETE", "/v1/clusters/"+c.ID, nil).JSON(t, &del)
	if !del.Deleted {
		t.Fatal("deleted: false")
	}
	a.do(404, "GET", "/v1/clusters/"+c.ID, nil)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("cluster data still there: %v", err)
	}
	conn := kafkatest.Conn(t)
	for _, topic := range []string{pipeline.IngestTopic(uuid.MustParse(c.ID)), pipeline.DeadTopic(uuid.MustParse(c.ID))} {
		if ok, err := kafka.TopicExists(context.Background(), conn, topic); err != nil || ok {
			t.Fatalf("topic %s still exists (%v)", topic, err)
		}
	}
	if r, _ := s.Do("POST", "/v1/query", map[string]string{"sql": "SELECT 1"}, key...); r.Status != 401 {
		t.Fatalf("the deleted cluster's key: %d %s", r.Status, r.Body)
	}
	checkCluster(t, a.create("life2"), "ready", true, true, false)
	// The other cluster was not touched.
	checkCluster(t, a.cluster(200, "GET", "/v1/clusters/"+other.ID, nil), "ready", true, true, false)
}

// Idle timeout: a cluster with no queries and no ingestion for its timeout stops by
// itself, and the next query wakes it. SVC_CLUSTER_IDLE_MINUTE shortens the minute.
func TestClusterIdleStopAndWakeOnQuery(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword, "SVC_CLUSTER_IDLE_MINUTE=100ms")
	a := newClusterAdmin(t, s)
	c := a.create("sleepy")
	key := a.key("sleepy")
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "ev"}, key...)
	s.Must(202, "POST", "/v1/tables/ev", rows(0, 10), key...)
	waitCountAs(t, s, key, "ev", 10)
	c = a.cluster(200, "PATCH", "/v1/clusters/"+c.ID, map[string]any{"idle_timeout_minutes": 15}) // 1.5 s here
	c = a.waitPhase(c.ID, "stopped", time.Minute)
	checkCluster(t, c, "stopped", false, false, true)
	// Rows ingested while idle land after the wake.
	s.Must(202, "POST", "/v1/tables/ev", rows(10, 5), key...)
	start := time.Now()
	n, r := countAs(t, s, key, "ev")
	if r.Status != 200 {
		t.Fatalf("the waking query: %d %s", r.Status, r.Body)
	}
	t.Logf("first query after idle stop answered in %s (count %d)", time.Since(start), n)
	if c := a.cluster(200, "GET", "/v1/clusters/"+c.ID, nil); c.Status.Phase != "ready" && c.Status.Phase != "stopping" {
		t.Fatalf("after the waking query the cluster is %s", c.Status.Phase)
	}
	a.cluster(200, "PATCH", "/v1/clusters/"+c.ID, map[string]any{"idle_timeout_minutes": 0})
	a.waitPhase(c.ID, "ready", time.Minute)
	waitCountAs(t, s, key, "ev", 15)
	// The bootstrap cluster (idle timeout 0) never stopped.
	var list struct{ Clusters []clusterJSON }
	a.do(200, "GET", "/v1/clusters", nil).JSON(t, &list)
	for _, cl := range list.Clusters {
		if cl.Name == "default" && cl.Status.Phase != "ready" {
			t.Fatalf("the bootstrap cluster is %s", cl.Status.Phase)
		}
	}
}

// engineWrapper is a chengine that fails to start while failFile names a string found in
// its arguments (the data directory holds the cluster id).
func engineWrapper(t *testing.T, failFile string) string {
	t.Helper()
	real := filepath.Join(svcdtest.BinDir(t), "chengine")
	script := filepath.Join(t.TempDir(), "chengine-wrapper")
	body := fmt.Sprintf(`#!/bin/sh
if [ -s %[1]q ]; then
  pat=$(cat %[1]q)
  case "$*" in *"$pat"*) echo "injected engine failure" >&2; exit 7;; esac
fi
exec %[2]q "$@"
`, failFile, real)
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return script
}

// A failing engine start leaves the cluster failed with a message, never half-created;
// every node's reconciler completes it once the engine starts (engine, schema, topics,
// consumer and the default database); a failing cluster does not stop the node starting.
func TestAHalfCreatedClusterIsCompleted(t *testing.T) {
	t.Parallel() // see TestMain
	failFile := filepath.Join(t.TempDir(), "fail")
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword, "SVC_ENGINE_BIN="+engineWrapper(t, failFile))
	a := newClusterAdmin(t, s)
	if err := os.WriteFile(failFile, []byte("/clusters/"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := a.create("half")
	if c.Status.Phase != "failed" || c.Status.Ready || c.Status.Message == nil || !strings.Contains(*c.Status.Message, "exit status 7") || !c.CanResume {
		t.Fatalf("cluster whose engine cannot start: %+v", c)
	}

	// The node restarts with the cluster still failing: it starts anyway and serves the others.
	if err := os.WriteFile(failFile, []byte(c.ID), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	a = newClusterAdmin(t, s)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "alive"})
	if got := a.cluster(200, "GET", "/v1/clusters/"+c.ID, nil); got.Status.Phase != "failed" {
		t.Fatalf("after restart: %+v", got)
	}

	// The engine can start again: the reconciler completes the cluster by itself.
	if err := os.Remove(failFile); err != nil {
		t.Fatal(err)
	}
	got := a.waitPhase(c.ID, "ready", 2*time.Minute)
	checkCluster(t, got, "ready", true, true, false)
	if got.Status.Message != nil {
		t.Fatalf("ready cluster keeps message %q", *got.Status.Message)
	}
	key := a.key("half")
	var dbs struct {
		Databases []struct{ Name string } `json:"databases"`
	}
	s.Must(200, "GET", "/v1/databases", nil, key...).JSON(t, &dbs)
	if len(dbs.Databases) == 0 || !strings.Contains(fmt.Sprint(dbs.Databases), "default") {
		t.Fatalf("databases of the completed cluster: %+v", dbs)
	}
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "ev"}, key...)
	s.Must(202, "POST", "/v1/tables/ev", rows(0, 20), key...)
	waitCountAs(t, s, key, "ev", 20)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// A size maps onto the engine process's limits, and resources report what it got.
func TestClusterSizeLimitsReachTheEngine(t *testing.T) {
	s := startControlPlane(t)
	a := newClusterAdmin(t, s)
	size := func(cpu, gib int) map[string]any { return map[string]any{"cpu_cores": cpu, "memory_gib": gib} }
	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "x", "replicas": 2, "size": size(2, 8)}, "replicas"},
		{map[string]any{"name": "x", "replicas": 1, "size": size(3, 8)}, "size"},
		{map[string]any{"name": "x", "replicas": 1, "size": size(1, 4), "autoscaling": map[string]any{"min_size": size(2, 8)}}, "size"},
		{map[string]any{"name": "x", "replicas": 1, "size": size(8, 32), "autoscaling": map[string]any{"max_size": size(4, 16)}}, "size"},
		{map[string]any{"name": "x", "replicas": 1, "size": size(2, 8), "autoscaling": map[string]any{"min_size": size(2, 7)}}, "autoscaling"},
		{map[string]any{"name": "x", "replicas": 1, "size": size(2, 8), "idle_timeout_minutes": 43201}, "idle_timeout_minutes"},
	} {
		r := a.do(400, "POST", "/v1/clusters", bad.body)
		if !strings.Contains(string(r.Body), `"field":"`+bad.field+`"`) {
			t.Fatalf("%v: %s", bad.body, r.Body)
		}
	}
	var c struct {
		clusterJSON
		Resources *struct {
			Replicas              int     `json:"replicas"`
			CPUCoresPerReplica    float64 `json:"cpu_cores_per_replica"`
			MemoryBytesPerReplica int64   `json:"memory_bytes_per_replica"`
		} `json:"resources"`
	}
	// One core on a machine with more: the engine's default would be the machine's cores.
	a.do(200, "POST", "/v1/clusters", map[string]any{"name": "one", "replicas": 1, "size": size(1, 4)}).JSON(t, &c)
	if c.Resources == nil || c.Resources.CPUCoresPerReplica != 1 || c.Resources.MemoryBytesPerReplica != 4<<30 || c.Resources.Replicas != 1 {
		t.Fatalf("resources of a 1-core 4 GiB cluster: %+v", c.Resources)
	}
	key := a.key("one")
	var res struct{ Data []map[string]any }
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT toUInt64(getSetting('max_threads')) AS t"}, key...).JSON(t, &res)
	if fmt.Sprint(res.Data[0]["t"]) != "1" {
		t.Fatalf("max_threads in the engine: %v", res.Data)
	}
	// Stopped: nothing runs, so resources are unknown.
	c.Resources = nil
	a.do(200, "POST", "/v1/clusters/"+c.ID+"/stop", nil).JSON(t, &c)
	if c.Resources != nil {
		t.Fatalf("resources of a stopped cluster: %+v", c.Resources)
	}
}

// TestClusterSizesNeedAUser: the size catalog answers users (session or OAuth token)
// like the rest of the cluster API; without credentials it is 401, and API keys are
// refused (issue 25, audit row 8: it answered anyone).
func TestClusterSizesNeedAUser(t *testing.T) {
	s := startControlPlane(t)
	s.Must(401, "GET", "/v1/clusters/sizes", nil, "Authorization", "")
	s.Must(403, "GET", "/v1/clusters/sizes", nil)
	session := login(t, s, "admin", adminPassword)
	var cat struct{ Sizes []any }
	s.Must(200, "GET", "/v1/clusters/sizes", nil, "Authorization", "Bearer "+session).JSON(t, &cat)
	if len(cat.Sizes) == 0 {
		t.Fatalf("size catalog: %+v", cat)
	}
}
