package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/eventstore/pgstore/pgtest"
	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/infra/testenv"
)

// The multi-node tests (issue 28) run three svcd on one PostgreSQL event store, one
// engine process (SVC_CLICKHOUSE_URL), one Temporal task queue, one service secret and a
// three-broker Kafka (replication 3, min.insync.replicas 2) that the tests of this file
// share: it takes half a minute to start. Each test has a database of its own on the
// harness's PostgreSQL, so its clusters, topics and consumer groups are its own. Loads
// are bounded by acknowledged rows, not by time: each phase waits until the load has
// had a given number of rows acknowledged.

var threeBrokers struct {
	once sync.Once
	c    *kafka.Cluster
	dir  string
	err  error
}

// sharedKafka returns the file's three-broker cluster, started on first use and stopped
// by TestMain.
func sharedKafka(t *testing.T) *kafka.Cluster {
	t.Helper()
	libs := testenv.KafkaLibs(t)
	threeBrokers.once.Do(func() {
		threeBrokers.dir, threeBrokers.err = os.MkdirTemp("", "svc-kafka3-*")
		if threeBrokers.err != nil {
			return
		}
		threeBrokers.c, threeBrokers.err = startThreeBrokers(libs, threeBrokers.dir, "")
	})
	if threeBrokers.err != nil {
		t.Fatalf("three-broker Kafka: %v", threeBrokers.err)
	}
	return threeBrokers.c
}

// startThreeBrokers starts a three-broker cluster in dir, serving on loopback and on
// linkHost when it is set.
func startThreeBrokers(libs, dir, linkHost string) (*kafka.Cluster, error) {
	c, err := kafka.NewCluster(kafka.ClusterConfig{LibsDir: libs, Dir: dir, Brokers: 3, HeapMB: 320, LinkHost: linkHost,
		ReadyTimeout: 3 * time.Minute})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	return c, c.Start(ctx)
}

// TestMain stops the shared three-broker cluster after the tests.
//
// The longest tests of this package call t.Parallel, so that two of them (-parallel
// defaults to GOMAXPROCS) run at a time once the others are done: each starts its own
// svcd, engine or Temporal and shares only the harness's broker, Temporal and PostgreSQL
// and this file's three brokers, on which every test has names of its own. A test that
// stops or kills something another test uses (a broker of the shared three, the
// harness's services), sets the environment, or times what a busier machine would slow
// (an idle timeout of seconds) stays serial; the parallel tests only start once every
// serial one has ended, so none of them sees a shared broker killed. This keeps the
// package, the suite's longest, well inside CI's 30 minutes.
func TestMain(m *testing.M) {
	code := m.Run()
	if threeBrokers.c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_ = threeBrokers.c.Shutdown(ctx)
		cancel()
	}
	if threeBrokers.dir != "" {
		_ = os.RemoveAll(threeBrokers.dir)
	}
	os.Exit(code)
}

// deployment is n svcd nodes sharing everything a deployment shares.
type deployment struct {
	t      *testing.T
	kafka  *kafka.Cluster
	events string // the PostgreSQL event store
	env    []string
	nodes  []*svcdtest.Service

	mu   sync.Mutex
	urls []string     // the nodes' addresses, for the load's goroutines (a restart moves a node)
	out  map[int]bool // nodes out of the load's rotation
}

func newDeployment(t *testing.T, n int, extra ...string) *deployment {
	t.Helper()
	svcdtest.Requirements(t)
	return deploy(t, sharedKafka(t), "127.0.0.1", n, extra...)
}

// deploy starts n nodes on brokers k with an engine of their own listening on
// engineHost.
func deploy(t *testing.T, k *kafka.Cluster, engineHost string, n int, extra ...string) *deployment {
	t.Helper()
	events := pgtest.Database(t)
	bin := testenv.BinDir(t)
	eng, err := clickhouse.NewProcess(clickhouse.ProcessConfig{Binary: filepath.Join(bin, "chengine"), Lib: os.Getenv("SVC_CHDB_LIB"),
		DataDir: t.TempDir(), Listen: net.JoinHostPort(engineHost, "0")})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Shutdown(context.Background()) })
	d := &deployment{t: t, kafka: k, events: events, out: map[int]bool{}, env: append([]string{
		"SVC_EVENTSTORE_URL=" + events,
		"SVC_CLICKHOUSE_URL=" + eng.URL(),
		"SVC_KAFKA_SEEDS=" + k.Seeds(),
		"SVC_KAFKA_SASL_FILE=" + k.CredentialsFile(),
		"SVC_KAFKA_REPLICATION=3",
		"SVC_KAFKA_MIN_INSYNC_REPLICAS=2",
		// A killed node's partitions move after 10 s rather than the default 45 s.
		"SVC_KAFKA_SESSION_TIMEOUT=10s",
		"SVC_SERVICE_SECRET=nodes-service-secret-0123456789abcdef",
		"SVC_BOOTSTRAP_PASSWORD=" + adminPassword,
		fmt.Sprintf("SVC_TEMPORAL_TASK_QUEUE=nodes-%d-%d", os.Getpid(), time.Now().UnixNano()),
	}, extra...)}
	// The first node bootstraps the deployment; the others find it in the event store.
	for range n {
		d.add(svcdtest.Start(t, d.env...))
	}
	return d
}

// add makes s one of the deployment's nodes. A test that fails shows the end of every
// node's log: what one node did is often the other's failure.
func (d *deployment) add(s *svcdtest.Service) {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := len(d.nodes)
	d.nodes = append(d.nodes, s)
	d.urls = append(d.urls, s.URL)
	d.t.Cleanup(func() {
		if d.t.Failed() {
			d.t.Logf("node %d (%s), the end of its log:\n%s", i, s.URL, tail(s.Logs(), 8000))
		}
	})
}

// rotate takes node i out of the load's rotation or puts it back, as a load balancer
// would; a probe (load.probe) still writes to it.
func (d *deployment) rotate(i int, in bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.out[i] = !in
}

// pick is the node the load's request r goes to: the r-th in rotation, round the nodes.
func (d *deployment) pick(r int) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k := range len(d.urls) {
		if i := (r + k) % len(d.urls); !d.out[i] {
			return i
		}
	}
	return r % len(d.urls)
}

// moved records node i's address after a restart.
func (d *deployment) moved(i int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.urls[i] = d.nodes[i].URL
}

func (d *deployment) url(i int) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.urls[i]
}

// load sends rows {w, i} (writer w, sequence i, each pair sent once) to the nodes from
// one goroutine per node, each going round the nodes in rotation, and records which were
// acknowledged (202) and every answer. A request that fails is not retried: its rows may
// or may not be stored, but never twice. Probes (load.probe) retry theirs.
type load struct {
	d      *deployment
	table  string
	batch  int
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	client *http.Client

	mu       sync.Mutex
	acked    map[int][]int // writer -> acknowledged sequence numbers
	nAcked   int
	failures int
	answers  []answer
}

// answer is one request of the load: the node it went to, when, and what came back.
type answer struct {
	node       int
	sent, done time.Time
	status     int  // 0: no answer (the connection failed or the client gave up)
	retryAfter bool // a Retry-After header came with it
}

func startLoad(d *deployment, table string) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{d: d, table: table, batch: 10, ctx: ctx, cancel: cancel, acked: map[int][]int{},
		client: &http.Client{Timeout: 30 * time.Second}}
	for w := range len(d.nodes) {
		l.wg.Go(func() { l.write(w, false, func(req int) int { return d.pick(w + req) }) })
	}
	return l
}

// probe adds n writers (100(i+1), 100(i+1)+1, ...) that write to node i alone, whether it
// is in rotation or not, as clients told to retry do: each request carries an
// Idempotency-Key, and one that is not acknowledged is sent again, the same rows with
// the same key, until it is.
func (l *load) probe(i, n int) {
	for j := range n {
		l.wg.Go(func() { l.write(100*(i+1)+j, true, func(int) int { return i }) })
	}
}

// write is writer w until the load stops: request req goes to node pick(req); keyed, it
// repeats a request until it is acknowledged.
func (l *load) write(w int, keyed bool, pick func(req int) int) {
	for seq, req := 0, 0; l.ctx.Err() == nil; req++ {
		rows := make([]map[string]int, l.batch)
		for j := range rows {
			rows[j] = map[string]int{"w": w, "i": seq + j}
		}
		body, _ := json.Marshal(rows)
		a := answer{node: pick(req), sent: time.Now()}
		rq, _ := http.NewRequestWithContext(context.WithoutCancel(l.ctx), "POST", l.d.url(a.node)+"/v1/tables/"+l.table, bytes.NewReader(body))
		rq.Header.Set("Authorization", "Bearer "+l.d.nodes[0].AdminKey)
		rq.Header.Set("Content-Type", "application/json")
		if keyed {
			rq.Header.Set("Idempotency-Key", fmt.Sprintf("w%d-%d", w, seq))
		}
		resp, err := l.client.Do(rq)
		if err == nil {
			a.status, a.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After") != ""
			resp.Body.Close()
		}
		a.done = time.Now()
		ok := a.status == http.StatusAccepted
		l.mu.Lock()
		if ok {
			for j := range l.batch {
				l.acked[w] = append(l.acked[w], seq+j)
			}
			l.nAcked += l.batch
		} else {
			l.failures++
		}
		l.answers = append(l.answers, a)
		l.mu.Unlock()
		if ok || !keyed {
			seq += l.batch
		}
		if !ok {
			// A node that is down answers at once; the next request goes to the next.
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// answersOf returns node i's answers that came after since.
func (l *load) answersOf(i int, since time.Time) []answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []answer
	for _, a := range l.answers {
		if a.node == i && a.done.After(since) {
			out = append(out, a)
		}
	}
	return out
}

func (l *load) count() (acked, failures int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nAcked, l.failures
}

// more waits until n more rows than now were acknowledged: the load goes on through
// whatever the test did meanwhile.
func (l *load) more(t *testing.T, n int, timeout time.Duration, what string) {
	t.Helper()
	start, _ := l.count()
	testenv.Eventually(t, timeout, func() (bool, string) {
		got, failed := l.count()
		return got >= start+n, fmt.Sprintf("%s: %d rows acknowledged since, want %d (%d requests failed)", what, got-start, n, failed)
	})
}

func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
}

// verify waits until node s's consumers caught up, then checks that every acknowledged
// row is stored exactly once and no row is stored twice.
func (l *load) verify(t *testing.T, s *svcdtest.Service) {
	t.Helper()
	s.WaitCaughtUp(l.table, 3*time.Minute)
	agg := s.Query("SELECT count() AS n, uniqExact(w, i) AS u FROM " + l.table)
	n, u := agg[0]["n"].(float64), agg[0]["u"].(float64)
	if n != u {
		t.Errorf("%s holds %v rows of %v distinct: duplicates", l.table, n, u)
	}
	acked, failures := l.count()
	for w, seqs := range l.acked {
		stored := map[int]int{}
		for _, r := range s.Query(fmt.Sprintf("SELECT toInt64(i) AS i FROM %s WHERE w = %d", l.table, w)) {
			stored[int(r["i"].(float64))]++
		}
		var lost []int
		for _, i := range seqs {
			if stored[i] != 1 {
				lost = append(lost, i)
			}
		}
		if len(lost) > 0 {
			sort.Ints(lost)
			t.Errorf("writer %d: %d acknowledged rows not stored exactly once, e.g. %v", w, len(lost), lost[:min(len(lost), 10)])
		}
	}
	t.Logf("%d rows acknowledged (%d requests failed while a part was down), %v stored, %v distinct; %v stored without an acknowledgment",
		acked, failures, n, u, int(n)-acked)
}

// session signs the admin in on the first node and waits until the session works on
// every node (a session is a control-plane event like any other).
func (d *deployment) session() []string {
	d.t.Helper()
	auth := []string{"Authorization", "Bearer " + login(d.t, d.nodes[0], "admin", adminPassword)}
	for _, s := range d.nodes[1:] {
		testenv.Eventually(d.t, propagationBound, func() (bool, string) {
			r, err := s.Do("GET", "/v1/organizations", nil, auth...)
			return err == nil && r.Status == 200, fmt.Sprintf("the session on %s: %v %v", s.URL, err, r)
		})
	}
	return auth
}

func (d *deployment) createTable(name string) {
	d.t.Helper()
	d.nodes[0].Must(200, "POST", "/v1/tables", map[string]string{"name": name})
	// Every node knows the table before the load reaches it.
	for _, s := range d.nodes[1:] {
		testenv.Eventually(d.t, propagationBound, func() (bool, string) {
			r, err := s.Do("GET", "/v1/tables/"+name, nil)
			return err == nil && r.Status == 200, fmt.Sprintf("table %s on %s: %v %v", name, s.URL, err, r)
		})
	}
}

// TestNodeKilledUnderLoad (issue 28, test 1): a load through three nodes; one is killed
// with SIGKILL mid-load, the load goes on through the other two, and the node comes back
// on its data directory. Every acknowledged row is stored exactly once; the log says
// how long its partitions took to be served again.
func TestNodeKilledUnderLoad(t *testing.T) {
	t.Parallel() // see TestMain
	d := newDeployment(t, 3)
	d.createTable("events")
	l := startLoad(d, "events")
	defer l.stop()
	l.more(t, 300, 2*time.Minute, "before the kill")

	victim := d.nodes[1]
	victim.Kill()
	killed := time.Now()
	l.more(t, 300, 2*time.Minute, "with a node dead")
	victim.Resume()
	d.moved(1)
	resumed := time.Now()
	l.more(t, 300, 2*time.Minute, "after the restart")
	l.stop()
	// The group hands the dead member's partitions on when its session ends (10 s here),
	// or when it rejoins; served again means consumer lag 0 on every partition.
	d.nodes[0].WaitCaughtUp("events", 3*time.Minute)
	t.Logf("every partition served again %v after the kill, %v after the restart",
		time.Since(killed).Round(time.Millisecond), time.Since(resumed).Round(time.Millisecond))
	l.verify(t, d.nodes[2])
}

// TestBrokerKilledUnderLoad (issue 28, test 2): one broker of three is killed with
// SIGKILL mid-load and started again; with replication 3 and min.insync.replicas 2 the
// load goes on, and nothing acknowledged is lost or doubled.
func TestBrokerKilledUnderLoad(t *testing.T) {
	d := newDeployment(t, 3)
	d.createTable("events")
	l := startLoad(d, "events")
	defer l.stop()
	l.more(t, 300, 2*time.Minute, "before the broker's kill")

	if err := d.kafka.KillBroker(2); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() { // the next test needs all three
		if !restarted {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			_ = d.kafka.StartBroker(ctx, 2)
		}
	}()
	l.more(t, 300, 2*time.Minute, "with a broker dead")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := d.kafka.StartBroker(ctx, 2); err != nil {
		t.Fatal(err)
	}
	restarted = true
	l.more(t, 300, 2*time.Minute, "after the broker's restart")
	l.stop()
	l.verify(t, d.nodes[0])
}

// TestRollingRestartUnderLoad (issue 28, test 3): every node in turn is stopped
// (SIGTERM: it drains) and started again, under load; exact.
func TestRollingRestartUnderLoad(t *testing.T) {
	t.Parallel() // see TestMain
	d := newDeployment(t, 3)
	d.createTable("events")
	l := startLoad(d, "events")
	defer l.stop()
	for i, s := range d.nodes {
		l.more(t, 200, 2*time.Minute, fmt.Sprintf("before restarting node %d", i+1))
		s.Restart()
		d.moved(i)
	}
	l.more(t, 200, 2*time.Minute, "after the rolling restart")
	l.stop()
	l.verify(t, d.nodes[0])
}

// TestConcurrentCommandsOnThreeNodes (issue 28, test 5): the same cluster and database
// names created on three nodes at once make one each (the others 409 already_exists),
// and distinct tables and keys created at once on all three are all kept: decisions
// are appended at the version they were made on, so a race is refused or retried, never
// written over.
func TestConcurrentCommandsOnThreeNodes(t *testing.T) {
	d := newDeployment(t, 3)
	session := d.session()
	// every node runs fn(node) at once; the answers come back in node order.
	onAll := func(fn func(i int, s *svcdtest.Service) *svcdtest.Response) []*svcdtest.Response {
		out := make([]*svcdtest.Response, len(d.nodes))
		var wg sync.WaitGroup
		for i, s := range d.nodes {
			wg.Add(1)
			go func() { defer wg.Done(); out[i] = fn(i, s) }()
		}
		wg.Wait()
		return out
	}
	oneWins := func(what string, rs []*svcdtest.Response) {
		t.Helper()
		won := 0
		for _, r := range rs {
			switch {
			case r == nil:
				t.Errorf("%s: a request failed", what)
			case r.Status/100 == 2:
				won++
			case r.Status != 409 || !bytes.Contains(r.Body, []byte("already_exists")):
				t.Errorf("%s: %d %s", what, r.Status, r.Body)
			}
		}
		if won != 1 {
			t.Errorf("%s: %d of three nodes created it, want 1", what, won)
		}
	}
	do := func(s *svcdtest.Service, method, path string, body any, h ...string) *svcdtest.Response {
		r, err := s.Do(method, path, body, h...)
		if err != nil {
			t.Errorf("%s %s: %v", method, path, err)
		}
		return r
	}
	for _, name := range []string{"race-a", "race-b"} {
		oneWins("cluster "+name, onAll(func(_ int, s *svcdtest.Service) *svcdtest.Response {
			return do(s, "POST", "/v1/clusters?organization=default", map[string]any{"name": name, "replicas": 1,
				"size": map[string]any{"cpu_cores": 1, "memory_gib": 4}}, session...)
		}))
	}
	for _, name := range []string{"race_db1", "race_db2"} {
		oneWins("database "+name, onAll(func(_ int, s *svcdtest.Service) *svcdtest.Response {
			return do(s, "POST", "/v1/databases", map[string]string{"name": name})
		}))
	}
	const each = 4
	for _, r := range onAll(func(i int, s *svcdtest.Service) *svcdtest.Response {
		for j := range each {
			if r := do(s, "POST", "/v1/tables?database=race_db1", map[string]string{"name": fmt.Sprintf("t_%d_%d", i, j)}); r == nil || r.Status != 200 {
				return r
			}
			if r := do(s, "POST", "/v1/keys?database=race_db1", map[string]string{"name": fmt.Sprintf("k-%d-%d", i, j), "permission": "read_only"}); r == nil || r.Status != 200 {
				return r
			}
		}
		return &svcdtest.Response{Status: 200}
	}) {
		if r == nil || r.Status != 200 {
			t.Fatalf("a distinct table or key was refused: %+v", r)
		}
	}
	// Every node sees every one of them, and each name once.
	for _, s := range d.nodes {
		testenv.Eventually(t, propagationBound, func() (bool, string) {
			var clusters struct{ Clusters []struct{ Name string } }
			s.Must(200, "GET", "/v1/clusters?organization=default", nil, session...).JSON(t, &clusters)
			var tables struct{ Tables []struct{ Name string } }
			s.Must(200, "GET", "/v1/tables?database=race_db1", nil).JSON(t, &tables)
			var keys struct{ Keys []struct{ Name string } }
			s.Must(200, "GET", "/v1/keys?database=race_db1", nil).JSON(t, &keys)
			names := map[string]int{}
			for _, c := range clusters.Clusters {
				names["cluster "+c.Name]++
			}
			for _, x := range tables.Tables {
				names["table "+x.Name]++
			}
			for _, k := range keys.Keys {
				names["key "+k.Name]++
			}
			want := []string{"cluster race-a", "cluster race-b"}
			for i := range d.nodes {
				for j := range each {
					want = append(want, fmt.Sprintf("table t_%d_%d", i, j), fmt.Sprintf("key k-%d-%d", i, j))
				}
			}
			for _, n := range want {
				if names[n] != 1 {
					return false, fmt.Sprintf("%s: %s listed %d times; %v", s.URL, n, names[n], names)
				}
			}
			return true, ""
		})
	}
}

// TestScheduledRunsOnceAcrossNodes (issue 28, test 6): a workflow scheduled every second
// on a three-node deployment has one Temporal schedule, whichever node made or
// reconciled it; each scheduled evaluation runs once (its table sink gets one row per
// run: no double evaluation), and runs go on after a node dies.
func TestScheduledRunsOnceAcrossNodes(t *testing.T) {
	testenv.Temporal(t)
	d := newDeployment(t, 3)
	a, b := d.nodes[0], d.nodes[1]
	a.Must(200, "POST", "/v1/tables", map[string]string{"name": "ticks"})
	wf := createWorkflow(t, a, map[string]any{"name": "tick", "interval_seconds": 1,
		"query": map[string]any{"database": "default", "sql": "SELECT 1 AS one"},
		"sinks": []any{map[string]any{"type": "table", "settings": map[string]any{"database": "default", "table": "ticks"}}}})
	// seen is false while the workflow, created on a, has not reached s's read model yet
	// (a control-plane change reaches the other nodes within the stated bound).
	scheduled := func(s *svcdtest.Service) (all, completed int, seen bool) {
		t.Helper()
		r, err := s.Do("GET", "/v1/workflows/"+wf.ID+"/runs"+wfScope+"&limit=100", nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == 404 {
			return 0, 0, false
		}
		if r.Status != 200 {
			t.Fatalf("runs: %d %s", r.Status, r.Body)
		}
		var p runsPage
		r.JSON(t, &p)
		for _, r := range p.Runs {
			if r.Source == "scheduled" {
				all++
				if r.Status == "completed" {
					completed++
				}
			}
		}
		return all, completed, true
	}
	waitRuns := func(s *svcdtest.Service, n int, what string) {
		t.Helper()
		testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
			_, c, seen := scheduled(s)
			return seen && c >= n, fmt.Sprintf("%s: %d scheduled runs completed, want %d (workflow seen on the node: %v)", what, c, n, seen)
		})
	}
	waitRuns(b, 3, "three nodes up")
	d.nodes[2].Kill()
	_, before, _ := scheduled(b)
	waitRuns(b, before+3, "after a node died")
	// Paused from another node; then nothing is running and the counts are final.
	b.Must(200, "PATCH", "/v1/workflows/"+wf.ID+wfScope, map[string]any{"enabled": false})
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		all, c, _ := scheduled(a)
		return all == c, fmt.Sprintf("%d scheduled runs, %d completed", all, c)
	})
	all, _, _ := scheduled(a)
	if all >= 100 {
		t.Fatalf("%d runs: more than one page", all)
	}
	queue := ""
	for _, e := range d.env {
		if v, ok := strings.CutPrefix(e, "SVC_TEMPORAL_TASK_QUEUE="); ok {
			queue = v
		}
	}
	cl, err := client.Dial(client.Options{HostPort: os.Getenv("TEMPORAL_ADDR"), Namespace: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	desc, err := cl.ScheduleClient().GetHandle(context.Background(), queue+"."+wf.ID).Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	schedules := 0
	it, err := cl.ScheduleClient().List(context.Background(), client.ScheduleListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.ID, queue+".") {
			schedules++
		}
	}
	rows := a.Count("ticks")
	t.Logf("%d scheduled runs, %d schedule actions, %d schedules of this deployment, %d sink rows", all, desc.Info.NumActions, schedules, rows)
	if schedules != 1 || desc.Info.NumActions != all || rows != all {
		t.Fatalf("%d schedules (want 1), %d actions and %d sink rows for %d scheduled runs", schedules, desc.Info.NumActions, rows, all)
	}
}

// TestStopAndResumeFromDifferentNodes (issue 28, test 7): a cluster on the shared engine
// stopped from all three nodes at once, then resumed from all three at once: every node
// sees each phase, rows acknowledged while it was stopped land after the resume, and the
// cluster's stream holds one transition each (stopping, stopped, resuming, ready): the
// nodes do not fight over it. Idle stop and wake are not run here: an idle timeout is
// at least 15 minutes.
func TestStopAndResumeFromDifferentNodes(t *testing.T) {
	d := newDeployment(t, 3)
	session := d.session()
	admins := make([]*clusterAdmin, len(d.nodes))
	for i, s := range d.nodes {
		admins[i] = &clusterAdmin{t: t, s: s, auth: session}
	}
	var list struct{ Clusters []clusterJSON }
	admins[0].do(200, "GET", "/v1/clusters", nil).JSON(t, &list)
	if len(list.Clusters) != 1 {
		t.Fatalf("clusters: %+v", list.Clusters)
	}
	id := list.Clusters[0].ID
	d.createTable("ev")
	d.nodes[1].Must(202, "POST", "/v1/tables/ev", `{"n":1}`)
	waitRows(t, d.nodes[0], "ev", 1)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.events)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	phases := func() []string {
		rows, err := conn.Query(ctx, `SELECT convert_from(data, 'UTF8')::jsonb->>'phase' FROM es_events
			WHERE stream = $1 AND type = 'cluster.phase_changed' ORDER BY position`, "cluster-"+id)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := len(phases())
	all := func(action string) {
		var wg sync.WaitGroup
		for _, a := range admins {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := a.s.Do("POST", "/v1/clusters/"+id+"/"+action+"?organization=default", nil, session...)
				if err != nil {
					t.Errorf("%s on %s: %v", action, a.s.URL, err)
				} else if r.Status != 200 && r.Status != 409 {
					t.Errorf("%s on %s: %d %s", action, a.s.URL, r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
	}
	all("stop")
	for _, a := range admins {
		a.waitPhase(id, "stopped", 2*time.Minute)
	}
	for _, s := range d.nodes {
		r, err := s.Do("POST", "/v1/query", map[string]string{"sql": "SELECT count() FROM ev"})
		if err != nil || r.Status != 503 || !bytes.Contains(r.Body, []byte("cluster_stopped")) {
			t.Fatalf("a query on %s while stopped: %v %+v", s.URL, err, r)
		}
	}
	d.nodes[2].Must(202, "POST", "/v1/tables/ev", `{"n":2}`)
	all("resume")
	for _, a := range admins {
		a.waitPhase(id, "ready", 2*time.Minute)
	}
	waitRows(t, d.nodes[0], "ev", 2)
	d.nodes[0].WaitCaughtUp("ev", time.Minute)
	got := phases()[before:]
	if want := []string{"stopping", "stopped", "resuming", "ready"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the cluster's transitions %v, want %v", got, want)
	}
}

// waitRows waits until a table on node s holds n rows. A query may answer 503 while the
// node (re)starts the cluster's engine client ("retry shortly"): it is asked again.
func waitRows(t *testing.T, s *svcdtest.Service, table string, n int) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		r, err := s.Do("POST", "/v1/query", map[string]string{"sql": "SELECT count() AS n FROM " + table})
		if err != nil || r.Status != 200 {
			return false, fmt.Sprintf("count of %s: %v %v", table, err, r)
		}
		var res struct{ Data []struct{ N float64 } }
		r.JSON(t, &res)
		if len(res.Data) == 1 && int(res.Data[0].N) > n {
			t.Fatalf("%s holds %v rows, more than the %d acknowledged", table, res.Data[0].N, n)
		}
		return len(res.Data) == 1 && int(res.Data[0].N) == n, fmt.Sprintf("%s holds %v rows, want %d", table, res.Data, n)
	})
}

// TestIdleTimeoutCountsUseOnEveryNode (issue 28, test 7, idle stop and wake): a cluster
// queried through one node only is not stopped as idle by another that sees no use of
// it; once nobody uses it, it stops once, and a query on the other node wakes it once.
// SVC_CLUSTER_IDLE_MINUTE makes its 15-minute idle timeout 6 s.
func TestIdleTimeoutCountsUseOnEveryNode(t *testing.T) {
	d := newDeployment(t, 2, "SVC_CLUSTER_IDLE_MINUTE=400ms")
	a, b := d.nodes[0], d.nodes[1]
	session := d.session()
	admin := &clusterAdmin{t: t, s: a, auth: session}
	var list struct{ Clusters []clusterJSON }
	admin.do(200, "GET", "/v1/clusters", nil).JSON(t, &list)
	id := list.Clusters[0].ID
	d.createTable("ev")
	a.Must(202, "POST", "/v1/tables/ev", `{"n":1}`)
	waitRows(t, b, "ev", 1)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.events)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var before int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM es_events WHERE stream = $1 AND type = 'cluster.phase_changed'`, "cluster-"+id).Scan(&before); err != nil {
		t.Fatal(err)
	}
	admin.do(200, "PATCH", "/v1/clusters/"+id, map[string]any{"idle_timeout_minutes": 15})
	const timeout = 15 * 400 * time.Millisecond
	// Used through b only, for three idle timeouts: a must not stop it.
	for start := time.Now(); time.Since(start) < 3*timeout; {
		r, err := b.Do("POST", "/v1/query", map[string]string{"sql": "SELECT count() AS n FROM ev"})
		if err != nil || r.Status != 200 {
			t.Fatalf("a query on the node in use: %v %+v", err, r)
		}
		time.Sleep(200 * time.Millisecond) // the load's pace, not an assertion
	}
	phases := func() []string {
		rows, err := conn.Query(ctx, `SELECT convert_from(data, 'UTF8')::jsonb->>'phase' FROM es_events
			WHERE stream = $1 AND type = 'cluster.phase_changed' ORDER BY position OFFSET $2`, "cluster-"+id, before)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := phases(); len(got) != 0 {
		t.Fatalf("the cluster, queried through one node all along, went %v", got)
	}
	// Nobody uses it: it stops; a query on the other node wakes it.
	admin.waitPhase(id, "stopped", time.Minute)
	(&clusterAdmin{t: t, s: b, auth: session}).waitPhase(id, "stopped", time.Minute)
	waitRows(t, a, "ev", 1)
	admin.do(200, "PATCH", "/v1/clusters/"+id, map[string]any{"idle_timeout_minutes": 0})
	admin.waitPhase(id, "ready", time.Minute)
	(&clusterAdmin{t: t, s: b, auth: session}).waitPhase(id, "ready", time.Minute)
	if got := phases(); strings.Join(got, ",") != "stopping,stopped,resuming,ready" {
		t.Fatalf("the cluster's transitions %v, want one idle stop and one wake", got)
	}
}
