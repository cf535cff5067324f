package chclient_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chclient"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/infra/kafka/kafkatest"
	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/target"
)

// TestClassifyAgainstTheEngine checks each class on the real engine's answers: rows
// that do not parse are permanent, statements naming what does not exist or that do
// not parse are fatal, and an engine that is away is retryable.
func TestClassifyAgainstTheEngine(t *testing.T) {
	p := chtest.Start(t, clickhouse.ProcessConfig{})
	c := chtest.Client(t, p.URL())
	ctx := context.Background()
	for _, stmt := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (doc JSON) ENGINE = MergeTree ORDER BY tuple()"} {
		if err := c.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	f := func(name string, err error, want engineerr.Class, code int32) {
		t.Helper()
		e, ok := engineerr.As(err)
		if !ok || e.Class != want || e.Code != code {
			t.Errorf("%s: %v (engine error %v), want %s code %d", name, err, ok, want, code)
			return
		}
		if got := engineerr.ClassOf(err); got != want {
			t.Errorf("%s: ClassOf %s", name, got)
		}
		if errors.Is(err, engineerr.Permanent) != (want == engineerr.Permanent) || errors.Is(err, engineerr.Fatal) != (want == engineerr.Fatal) {
			t.Errorf("%s: errors.Is does not match class %s: %v", name, want, err)
		}
	}
	f("row that is not JSON", c.InsertRows(ctx, "d", "t", "", "tok-1", []byte("{\"a\":1}\n{not json\n")), engineerr.Permanent, 117)
	f("number that does not parse", c.Exec(ctx, "SELECT toInt64('twelve')"), engineerr.Permanent, 6)
	f("a key the rows type as Nullable", c.Exec(ctx, "CREATE TABLE d.k (doc JSON) ENGINE = MergeTree ORDER BY (doc.tags.:`Array(Nullable(Int64))`)"),
		engineerr.Permanent, 44)
	f("a key over a Dynamic path", c.Exec(ctx, "CREATE TABLE d.k (doc JSON) ENGINE = MergeTree ORDER BY (doc.tags)"), engineerr.Permanent, 549)
	f("missing table", c.InsertRows(ctx, "d", "gone", "", "tok-2", []byte("{\"a\":1}\n")), engineerr.Fatal, 60)
	f("missing database", c.Exec(ctx, "SELECT 1 FROM nowhere.t"), engineerr.Fatal, 81)
	f("syntax error", c.Exec(ctx, "SELEC 1"), engineerr.Fatal, 62)
	f("unknown setting", c.Exec(ctx, "SELECT 1 SETTINGS no_such_setting_at_all = 1"), engineerr.Fatal, 115)
	f("throwIf", c.Exec(ctx, "SELECT throwIf(1, 'transient')"), engineerr.Retryable, 395)
	_, err := c.QueryStrings(ctx, "SELECT name FROM system.no_such_table")
	f("query of a missing table", err, engineerr.Fatal, 60)

	// The kinds callers branch on, named by the classifier from the engine's own codes.
	kind := func(name string, err error, pred func(error) bool, want bool) {
		t.Helper()
		if pred(err) != want {
			t.Errorf("%s: predicate %v, want %v (%v)", name, !want, want, err)
		}
	}
	gone := c.InsertRows(ctx, "d", "gone", "", "tok-4", []byte("{\"a\":1}\n"))
	nowhere := c.Exec(ctx, "SELECT 1 FROM nowhere.t")
	wrongType := c.Exec(ctx, "SELECT sum('a')")
	kind("missing table", gone, engineerr.IsUnknownTable, true)
	kind("missing table", gone, engineerr.IsUnknownDatabase, false)
	kind("missing database", nowhere, engineerr.IsUnknownDatabase, true)
	kind("missing database", nowhere, engineerr.IsUnknownTable, false)
	kind("sum of a string", wrongType, engineerr.IsWrongType, true)
	kind("sum of a string", wrongType, engineerr.IsTypeRefused, true)
	kind("missing table", gone, engineerr.IsWrongType, false)

	// The engine away: not an engine answer, so retryable, of no class errors.Is matches.
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	err = c.InsertRows(ctx, "d", "t", "", "tok-3", []byte("{\"a\":1}\n"))
	if err == nil || engineerr.ClassOf(err) != engineerr.Retryable || errors.Is(err, engineerr.Permanent) || errors.Is(err, engineerr.Fatal) || engineerr.IsUnknownTable(err) {
		t.Errorf("engine down: %v, class %s", err, engineerr.ClassOf(err))
	}
}

// tables resolves three tables of the test: good always, late into a generation the
// test creates only after the consumer paused on it, and impossible by failing the
// way a generation create fails on rows it cannot key (a real engine data error).
type tables struct {
	eng                    *chclient.Client
	good, late, impossible uuid.UUID
}

func (ts tables) Target(ctx context.Context, id uuid.UUID, _ [][]byte) (target.Table, bool, error) {
	if id == ts.impossible {
		return target.Table{}, false, ts.eng.Exec(ctx, "SELECT toInt64('not a number')")
	}
	return ts.Generation(ctx, id, 1)
}

func (ts tables) Generation(_ context.Context, id uuid.UUID, gen int) (target.Table, bool, error) {
	name := map[uuid.UUID]string{ts.good: "good", ts.late: "late"}[id]
	if name == "" {
		return target.Table{}, false, nil
	}
	return target.Table{TableID: id, Database: "d", Table: fmt.Sprintf("%s__g%d", name, gen), Gen: gen}, true, nil
}

// TestNoEngineErrorLeavesThePartitionUnserved runs the consumer on the real broker and
// engine through each class: a poison row (permanent) goes to dead letters beside
// its neighbours; rows whose generation cannot be made go to dead letters before the
// plan; an insert into a generation that is not there (fatal) pauses the partition,
// which replays its committed plan once the table exists. Every other row lands
// exactly once and the partition commits to its end.
func TestNoEngineErrorLeavesThePartitionUnserved(t *testing.T) {
	conn := kafkatest.Conn(t)
	proc := chtest.Start(t, clickhouse.ProcessConfig{Restart: true})
	eng := chtest.Client(t, proc.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := pipeline.EnsureSchema(ctx, eng); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{"CREATE DATABASE d",
		"CREATE TABLE d.good__g1 (doc JSON) ENGINE = MergeTree ORDER BY tuple() SETTINGS non_replicated_deduplication_window = 1000"} {
		if err := eng.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	run := uuid.NewString()
	topic, dead, group := "test.classify."+run, "test.classify."+run+".dead", "test.classify."+run
	if err := kafka.EnsureTopics(ctx, conn, 1, topic, dead); err != nil {
		t.Fatal(err)
	}
	prod, err := kafka.NewProducer(kafka.ProducerConfig{Conn: conn})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var deadMu sync.Mutex
	var deadRows []string
	deadLog := producerFunc(func(ctx context.Context, recs ...*pipeline.Record) error {
		deadMu.Lock()
		for _, r := range recs {
			deadRows = append(deadRows, strings.TrimSpace(string(r.Value)))
		}
		deadMu.Unlock()
		return prod.Produce(ctx, recs...)
	})
	ts := tables{eng: eng, good: uuid.New(), late: uuid.New(), impossible: uuid.New()}
	cons, err := pipeline.NewConsumer(pipeline.ConsumerConfig{MaxRows: 1000, Linger: 20 * time.Millisecond,
		RetryMin: 10 * time.Millisecond, RetryMax: 100 * time.Millisecond, Dead: deadLog,
		DeadTopic: func(string) string { return dead }, TokenKey: []byte("test-key-of-sixteen-bytes")}, eng, ts)
	if err != nil {
		t.Fatal(err)
	}
	_, stop := runGroup(t, ctx, conn, group, topic, cons)
	defer stop()
	var idem string // the Idempotency-Key of the next record, if any
	produce := func(table uuid.UUID, rows ...string) {
		t.Helper()
		rec := &pipeline.Record{Topic: topic, Value: []byte(strings.Join(rows, "\n") + "\n"),
			Headers: map[string]string{pipeline.HeaderTable: table.String(), pipeline.HeaderDatabase: "d"}}
		if idem != "" {
			rec.Headers[pipeline.HeaderIdem] = idem
		}
		if err := prod.Produce(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	count := func(table string) int {
		t.Helper()
		n, err := eng.QueryStrings(context.Background(), "SELECT toString(count()) FROM d."+table)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := strconv.Atoi(n[0])
		return v
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if ctx.Err() != nil {
				deadMu.Lock()
				defer deadMu.Unlock()
				t.Fatalf("timed out waiting for %s; dead letters %q, pauses %d", what, deadRows, cons.Stats().Pauses())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	deadCount := func() int { deadMu.Lock(); defer deadMu.Unlock(); return len(deadRows) }

	// Permanent: the poison row alone goes to dead letters.
	produce(ts.good, `{"i":1}`, `{not json`, `{"i":2}`)
	waitFor("the poison row's neighbours", func() bool { return count("good__g1") == 2 && deadCount() == 1 })

	// Permanent at generation create, and fatal at insert, in one batch.
	produce(ts.impossible, `{"k":"x"}`)
	produce(ts.late, `{"l":1}`, `{"l":2}`)
	produce(ts.good, `{"i":3}`)
	waitFor("a pause on the missing generation", func() bool { return cons.Stats().Pauses() > 0 })
	if err := eng.Exec(ctx, "CREATE TABLE d.late__g1 (doc JSON) ENGINE = MergeTree ORDER BY tuple() SETTINGS non_replicated_deduplication_window = 1000"); err != nil {
		t.Fatal(err)
	}
	waitFor("the late generation's rows", func() bool { return count("late__g1") == 2 })
	// Then the partition goes on serving.
	produce(ts.good, `{"i":4}`)
	waitFor("a row after the pause", func() bool { return count("good__g1") == 4 })
	// Retryable: the engine is killed and restarted by its supervisor; the rows sent
	// meanwhile land once it is back.
	retriesBefore := func() int64 { _, r, _, _, _ := cons.Stats().Totals(); return r }()
	if err := syscall.Kill(proc.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	produce(ts.good, `{"i":4.5}`)
	waitFor("the row sent while the engine was down", func() bool {
		n, err := eng.QueryStrings(context.Background(), "SELECT toString(count()) FROM d.good__g1")
		return err == nil && len(n) == 1 && n[0] == "5"
	})
	if _, r, _, _, _ := cons.Stats().Totals(); r == retriesBefore {
		t.Error("no step was retried while the engine was down")
	}
	// Idempotency keys with quotes and backslashes reach the key store intact: the
	// retry of a request lands once.
	idem = `it's a \ key ''`
	produce(ts.good, `{"i":5}`)
	produce(ts.good, `{"i":5}`)
	idem = ""
	produce(ts.good, `{"i":6}`)
	waitFor("the rows after the retried request", func() bool { return count("good__g1") >= 7 })
	if got := count("good__g1"); got != 7 {
		t.Errorf("good table holds %d rows, want 7", got)
	}
	deadMu.Lock()
	defer deadMu.Unlock()
	if len(deadRows) != 2 || deadRows[0] != "{not json" || deadRows[1] != `{"k":"x"}` {
		t.Errorf("dead letters %q, want the poison row and the impossible table's row", deadRows)
	}
}

// runGroup starts a group member feeding cons; the function it returns stops both.
func runGroup(t *testing.T, ctx context.Context, conn kafka.Conn, group, topic string, cons *pipeline.Consumer, opts ...func(*kafka.GroupConfig)) (*kafka.GroupReader, func()) {
	t.Helper()
	cfg := kafka.GroupConfig{Conn: conn, Group: group, Topics: []string{topic}}
	for _, o := range opts {
		o(&cfg)
	}
	gr, err := kafka.NewGroupReader(cfg, cons)
	if err != nil {
		t.Fatal(err)
	}
	if err := gr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return gr, func() {
		// A partition still paused cannot drain: Shutdown then cancels it, as svcd does.
		sctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		if err := gr.Shutdown(sctx); err != nil && !t.Failed() {
			t.Error(err)
		}
		if err := cons.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

type producerFunc func(ctx context.Context, recs ...*pipeline.Record) error

func (f producerFunc) Produce(ctx context.Context, recs ...*pipeline.Record) error {
	return f(ctx, recs...)
}
