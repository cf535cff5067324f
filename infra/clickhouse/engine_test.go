package clickhouse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
)

// The tests talk to a real engine through clickhouse-go/v2 in HTTP mode. They skip when
// SVC_CHDB_LIB is unset. They assert outcomes, never durations: a cancellation that does not
// work shows as a test that runs into its deadline.

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestHandshake(t *testing.T) {
	_, conn := chtest.Engine(t)
	v, err := conn.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Version.Major < 25 || v.Timezone == nil {
		t.Fatalf("server version %+v", v)
	}
	var one uint8
	if err := conn.QueryRow(testCtx(t), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
}

func TestDDL(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := testCtx(t)
	for _, q := range []string{
		"CREATE DATABASE d1",
		"CREATE TABLE d1.t (a UInt64, s String) ENGINE = MergeTree ORDER BY a",
		"ALTER TABLE d1.t ADD COLUMN b Nullable(Int32)",
		"RENAME TABLE d1.t TO d1.u",
	} {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var cols []string
	rows, err := conn.Query(ctx, "SELECT name FROM system.columns WHERE database = 'd1' AND table = 'u' ORDER BY position")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "s", "b"}; !reflect.DeepEqual(cols, want) {
		t.Fatalf("columns = %v, want %v", cols, want)
	}
	if err := conn.Exec(ctx, "DROP DATABASE d1 SYNC"); err != nil {
		t.Fatal(err)
	}
}

type typedRow struct {
	ID    uint64            `ch:"id"`
	Level string            `ch:"level"`
	Score *int64            `ch:"score"`
	Attrs map[string]uint64 `ch:"attrs"`
	Tags  []string          `ch:"tags"`
	At    time.Time         `ch:"at"`
	Doc   string            `ch:"doc"`
}

func makeRow(i int, base time.Time) typedRow {
	r := typedRow{
		ID:    uint64(i),
		Level: []string{"debug", "info", "warn", "error"}[i%4],
		Attrs: map[string]uint64{},
		Tags:  []string{},
		At:    base.Add(time.Duration(i) * time.Millisecond),
		Doc:   fmt.Sprintf(`{"user":{"id":%d,"name":"u%d"},"n":[%d,%d]}`, i, i%100, i, i+1),
	}
	if i%3 != 0 {
		v := int64(i) * -7
		r.Score = &v
	}
	for j := range i % 4 {
		r.Attrs[fmt.Sprintf("k%d", j)] = uint64(i * j)
		r.Tags = append(r.Tags, fmt.Sprintf("t%d\n\nwith blank lines", j))
	}
	return r
}

func TestBatchInsertTypes(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := testCtx(t)
	err := conn.Exec(ctx, `CREATE TABLE typed (
		id UInt64,
		level LowCardinality(String),
		score Nullable(Int64),
		attrs Map(String, UInt64),
		tags Array(String),
		at DateTime64(3, 'UTC'),
		doc JSON
	) ENGINE = MergeTree ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100_000
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO typed")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := makeRow(i, base)
		if err := batch.Append(r.ID, r.Level, r.Score, r.Attrs, r.Tags, r.At, r.Doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}

	qctx := ch.Context(ctx, ch.WithSettings(ch.Settings{"output_format_json_quote_64bit_integers": 0}))
	rows, err := conn.Query(qctx, "SELECT id, level, score, attrs, tags, at, toJSONString(doc) AS doc FROM typed ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var got typedRow
		if err := rows.ScanStruct(&got); err != nil {
			t.Fatal(err)
		}
		want := makeRow(i, base)
		if !sameJSON(got.Doc, want.Doc) {
			t.Fatalf("row %d: doc %s, want %s", i, got.Doc, want.Doc)
		}
		got.Doc, want.Doc = "", ""
		got.At = got.At.UTC()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("row %d:\n got %+v\nwant %+v", i, got, want)
		}
		i++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if i != n {
		t.Fatalf("scanned %d rows, want %d", i, n)
	}

	// The JSON column decodes natively too.
	var doc map[string]any
	if err := conn.QueryRow(ctx, "SELECT doc FROM typed WHERE id = 5").Scan(&doc); err != nil {
		t.Fatal(err)
	}
	if user, ok := doc["user"].(map[string]any); !ok || fmt.Sprint(user["id"]) != "5" {
		t.Fatalf("doc = %v", doc)
	}
}

// sameJSON compares two JSON documents by value.
func sameJSON(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

func TestTypedError(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := testCtx(t)
	var ex *ch.Exception

	// Before the first byte: a non-200 answer.
	err := conn.Exec(ctx, "SELECT * FROM no_such_table")
	if !errors.As(err, &ex) || ex.Code != 60 {
		t.Fatalf("unknown table: %v (%T), want *clickhouse.Exception code 60", err, err)
	}
	_, err = conn.Query(ctx, "SELECT throwIf(1)")
	if !errors.As(err, &ex) || ex.Code != 395 {
		t.Fatalf("throwIf: %v, want code 395", err)
	}

	// Mid-stream: the framed exception after rows went out.
	rows, err := conn.Query(ctx, "SELECT number, throwIf(number = 3000000) FROM numbers(5000000)")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	err = rows.Err()
	rows.Close()
	if !errors.As(err, &ex) || ex.Code != 395 {
		t.Fatalf("mid-stream: %v, want code 395", err)
	}
}

// waitRunning waits until the engine runs the statement of query id. A statement killed
// earlier under the same id may still be listed (libchdb lists a failed statement until its
// connection closes): cancelled statements do not count.
func waitRunning(t *testing.T, ctx context.Context, conn driver.Conn, id string) {
	t.Helper()
	for {
		var n uint64
		err := conn.QueryRow(ctx, "SELECT count() FROM system.processes WHERE position(query, {m:String}) > 0 AND NOT is_cancelled AND query_id != queryID()",
			ch.Named("m", "svc:qid="+id+" */")).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("statement %s never ran: %v", id, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitGone waits until the engine no longer runs the statement of query id.
func waitGone(t *testing.T, ctx context.Context, conn driver.Conn, id string) {
	t.Helper()
	for {
		var n uint64
		err := conn.QueryRow(ctx, "SELECT count() FROM system.processes WHERE position(query, {m:String}) > 0 AND query_id != queryID()",
			ch.Named("m", "svc:qid="+id+" */")).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("statement %s still runs: %v", id, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// endless runs for hours unless cancelled.
const endless = "SELECT count() FROM numbers(1000000000000) WHERE sipHash64(number) = 7"

// runEndless starts the endless statement under query id and waits until the engine runs
// it; cancel ends the client's request, errc receives its outcome.
func runEndless(t *testing.T, ctx context.Context, conn driver.Conn, id string) (cancel context.CancelFunc, errc <-chan error) {
	t.Helper()
	qctx, cancel := context.WithCancel(ch.Context(ctx, ch.WithQueryID(id)))
	ec := make(chan error, 1)
	go func() {
		var n uint64
		ec <- conn.QueryRow(qctx, endless).Scan(&n)
	}()
	waitRunning(t, ctx, conn, id)
	return cancel, ec
}

func TestCancelByContext(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := testCtx(t)
	id := uuid.NewString()
	cancel, errc := runEndless(t, ctx, conn, id)
	t0 := time.Now()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled query: %v", err)
	}
	waitGone(t, ctx, conn, id)
	t.Logf("engine dropped the statement %s after the client cancelled", time.Since(t0))
}

func TestKillQuery(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := testCtx(t)
	for _, mode := range []string{"SYNC", "ASYNC"} {
		id := "kill-" + strings.ToLower(mode) + "-" + uuid.NewString()
		errc := make(chan error, 1)
		go func() {
			var n uint64
			errc <- conn.QueryRow(ch.Context(ctx, ch.WithQueryID(id)), endless).Scan(&n)
		}()
		waitRunning(t, ctx, conn, id)
		t0 := time.Now()
		if err := conn.Exec(ctx, fmt.Sprintf("KILL QUERY WHERE query_id = '%s' %s", id, mode)); err != nil {
			t.Fatal(err)
		}
		var ex *ch.Exception
		if err := <-errc; !errors.As(err, &ex) || ex.Code != 394 {
			t.Fatalf("%s: killed query: %v, want code 394 (QUERY_WAS_CANCELLED)", mode, err)
		}
		t.Logf("KILL %s ended the statement after %s", mode, time.Since(t0))
	}
	// An id nobody runs: an empty answer, as ClickHouse gives.
	if err := conn.Exec(ctx, "KILL QUERY WHERE query_id = 'nobody' SYNC"); err != nil {
		t.Fatal(err)
	}
}

// TestShortStreamsEndWhole runs short streamed statements back to back under one query id,
// each after a cancelled one of the same id, and checks every result whole: a KILL meant for
// the cancelled statement must not cut the next one short.
func TestShortStreamsEndWhole(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := testCtx(t)
	id := "short-" + uuid.NewString()
	for i := range 20 {
		cancel, errc := runEndless(t, ctx, conn, id)
		cancel()
		<-errc
		rows, err := conn.Query(ch.Context(ctx, ch.WithQueryID(id)), "SELECT number FROM numbers(5000)")
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		var n, sum uint64
		for rows.Next() {
			var v uint64
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			n, sum = n+1, sum+v
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		_ = rows.Close()
		if n != 5000 || sum != 4999*5000/2 {
			t.Fatalf("run %d: %d rows summing to %d, want 5000 summing to %d", i, n, sum, 4999*5000/2)
		}
	}
}

func TestSettingsAndDatabaseDoNotLeak(t *testing.T) {
	// One connection in the engine, so every request lands on the same chdb session.
	p := chtest.Start(t, clickhouse.ProcessConfig{Pool: 1})
	conn := chtest.Open(t, p.URL())
	ctx := testCtx(t)
	if err := conn.Exec(ctx, "CREATE DATABASE other"); err != nil {
		t.Fatal(err)
	}
	setting := func(ctx context.Context) string {
		t.Helper()
		var v string
		if err := conn.QueryRow(ctx, "SELECT getSetting('max_threads')::String").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	database := func(c driver.Conn) string {
		t.Helper()
		var v string
		if err := c.QueryRow(ctx, "SELECT currentDatabase()").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	base := setting(ctx)
	if got := setting(ch.Context(ctx, ch.WithSettings(ch.Settings{"max_threads": 1}))); got != "1" {
		t.Fatalf("max_threads with the setting = %s, want 1", got)
	}
	if got := setting(ctx); got != base {
		t.Fatalf("max_threads after a request that set it = %s, want %s", got, base)
	}
	if err := conn.Exec(ctx, "SET max_threads = 1"); err != nil {
		t.Fatal(err)
	}
	if got := setting(ctx); got != base {
		t.Fatalf("max_threads after SET = %s, want %s", got, base)
	}
	if err := conn.Exec(ctx, "USE other"); err != nil {
		t.Fatal(err)
	}
	if got := database(conn); got != "default" {
		t.Fatalf("database after USE = %s, want default", got)
	}
	inOther := chtest.Open(t, p.URL(), func(o *ch.Options) { o.Auth.Database = "other" })
	if got := database(inOther); got != "other" {
		t.Fatalf("database of a connection opened on other = %s", got)
	}
	if got := database(conn); got != "default" {
		t.Fatalf("database after a request on other = %s, want default", got)
	}
	if err := conn.Exec(ctx, "SET param_leak = 1"); err != nil {
		t.Fatal(err)
	}
	var v uint8
	if err := conn.QueryRow(ctx, "SELECT {leak:UInt8}").Scan(&v); err == nil {
		t.Fatalf("a query parameter set by an earlier request is still bound (%d)", v)
	}
}

func TestConcurrentQueries(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Go(func() {
			for i := range 5 {
				var sum uint64
				n := uint64(100_000 * (g + 1))
				if err := conn.QueryRow(ctx, "SELECT sum(number) FROM numbers({n:UInt64})", ch.Named("n", n)).Scan(&sum); err != nil {
					errs <- fmt.Errorf("goroutine %d query %d: %w", g, i, err)
					return
				}
				if sum != n*(n-1)/2 {
					errs <- fmt.Errorf("goroutine %d: sum = %d, want %d", g, sum, n*(n-1)/2)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestPoolExhausted(t *testing.T) {
	p := chtest.Start(t, clickhouse.ProcessConfig{Pool: 1, Env: []string{"SVC_CHENGINE_ACQUIRE_TIMEOUT=100ms"}})
	conn := chtest.Open(t, p.URL())
	ctx := testCtx(t)
	id := uuid.NewString()
	qctx, cancel := context.WithCancel(ch.Context(ctx, ch.WithQueryID(id)))
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var n uint64
		_ = conn.QueryRow(qctx, endless).Scan(&n)
	}()
	// The only connection is busy once a second request is refused.
	var ex *ch.Exception
	for {
		err := conn.Exec(ctx, "SELECT 1")
		if errors.As(err, &ex) && ex.Code == 202 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the pool never filled")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(ex.Message, "--pool") {
		t.Fatalf("503 message %q names no remedy", ex.Message)
	}
	var httpErr *ch.HTTPError
	if err := conn.Exec(ctx, "SELECT 1"); !errors.As(err, &httpErr) || httpErr.StatusCode != 503 {
		t.Fatalf("busy pool: %v, want HTTP 503", err)
	}
	cancel()
	<-done
}

func TestInlineInsertDeduplicated(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := testCtx(t)
	err := conn.Exec(ctx, `CREATE TABLE docs (doc JSON) ENGINE = MergeTree ORDER BY tuple()
		SETTINGS non_replicated_deduplication_window = 100`)
	if err != nil {
		t.Fatal(err)
	}
	// Blank lines inside the data: inline data handed to chdb as query text is cut there.
	body := "{\"a\":1,\"s\":\"x\"}\n\n{\"a\":2,\"s\":\"two\\n\\nlines\"}\n\n\n{\"a\":3}\n"
	insert := "INSERT INTO docs SETTINGS insert_deduplication_token='batch-1' FORMAT JSONAsObject\n" + body
	for range 2 { // the retry is deduplicated
		if err := conn.Exec(ctx, insert); err != nil {
			t.Fatal(err)
		}
	}
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM docs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("count = %d after an insert and its retry, want 3", n)
	}
	var s string
	if err := conn.QueryRow(ctx, "SELECT doc.s::String FROM docs WHERE doc.a = 2").Scan(&s); err != nil {
		t.Fatal(err)
	}
	if s != "two\n\nlines" {
		t.Fatalf("doc.s = %q", s)
	}
	// A new token inserts again.
	if err := conn.Exec(ctx, strings.Replace(insert, "batch-1", "batch-2", 1)); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT count() FROM docs").Scan(&n); err != nil || n != 6 {
		t.Fatalf("count = %d, %v after a second batch, want 6", n, err)
	}
	// Values too go through the pipe.
	if err := conn.Exec(ctx, `INSERT INTO docs VALUES ('{"a":7}'), ('{"a":8}')`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT count() FROM docs").Scan(&n); err != nil || n != 8 {
		t.Fatalf("count = %d, %v after VALUES, want 8", n, err)
	}
}

func TestQueryFormatAndInsertFormat(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := testCtx(t)
	if err := conn.Exec(ctx, "CREATE TABLE j (a UInt64, s String) ENGINE = MergeTree ORDER BY a SETTINGS non_replicated_deduplication_window = 10"); err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	for i := range 50_000 {
		fmt.Fprintf(&body, "{\"a\":%d,\"s\":\"v%d\"}\n", i, i)
	}
	tok := ch.Context(ctx, ch.WithSettings(ch.Settings{"insert_deduplication_token": "fmt-1"}))
	for range 2 { // the retry is deduplicated
		if err := conn.InsertFormat(tok, "JSONEachRow", "INSERT INTO j", strings.NewReader(body.String())); err != nil {
			t.Fatal(err)
		}
	}
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM j").Scan(&n); err != nil || n != 50_000 {
		t.Fatalf("count = %d, %v after an insert and its retry, want 50000", n, err)
	}
	if err := conn.InsertFormat(ctx, "JSONEachRow", "INSERT INTO j", strings.NewReader("{\"a\":\"not a number\"}\n")); err == nil {
		t.Fatal("a bad row was accepted")
	}

	// A streamed format, read to the end.
	rc, err := conn.QueryFormat(ctx, "JSONEachRow", "SELECT a, s FROM j ORDER BY a")
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out, []byte("\n")); n != 50_000 {
		t.Fatalf("%d JSONEachRow lines, want 50000", n)
	}
	// A format that runs buffered is one document.
	rc, err = conn.QueryFormat(ctx, "JSON", "SELECT count() AS n FROM j")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data []struct {
			N any `json:"n"`
		} `json:"data"`
	}
	err = json.NewDecoder(rc).Decode(&doc)
	rc.Close()
	if err != nil || len(doc.Data) != 1 || fmt.Sprint(doc.Data[0].N) != "50000" {
		t.Fatalf("JSON = %+v, %v", doc, err)
	}
	// An error after output began surfaces from Read as a typed exception.
	rc, err = conn.QueryFormat(ctx, "TabSeparated", "SELECT number, throwIf(number = 3000000) FROM numbers(5000000)")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, rc)
	rc.Close()
	var ex *ch.Exception
	if !errors.As(err, &ex) || ex.Code != 395 {
		t.Fatalf("mid-stream error: %v", err)
	}
}

// TestKillRightAfterStart kills the endless statement with KILL QUERY ... ASYNC as soon as
// the engine runs it, many times in a row, under one id and under fresh ones: every killed
// request must answer, with the cancel (code 394), never hang. A request that does not
// answer within killAnswerBound fails the test with the engine's goroutines.
func TestKillRightAfterStart(t *testing.T) {
	dir := t.TempDir()
	p := chtest.Start(t, clickhouse.ProcessConfig{DataDir: dir})
	conn := chtest.Open(t, p.URL())
	ctx := testCtx(t)
	same := "kill-again-" + uuid.NewString()
	for _, mode := range []string{"same", "fresh"} {
		for i := range 20 {
			id := same
			if mode == "fresh" {
				id = "kill-fresh-" + uuid.NewString()
			}
			_, errc := runEndless(t, ctx, conn, id)
			if err := conn.Exec(ctx, fmt.Sprintf("KILL QUERY WHERE query_id = '%s' ASYNC", id)); err != nil {
				t.Fatalf("%s id, kill %d: %v", mode, i, err)
			}
			select {
			case err := <-errc:
				var ex *ch.Exception
				if !errors.As(err, &ex) || ex.Code != 394 {
					t.Fatalf("%s id, kill %d: killed query answered %v, want code 394 (QUERY_WAS_CANCELLED)", mode, i, err)
				}
			case <-time.After(killAnswerBound):
				t.Fatalf("%s id, kill %d: the killed request did not answer within %s\n%s", mode, i, killAnswerBound, engineStacks(p, dir))
			}
		}
	}
}

// killAnswerBound bounds how long a killed request may take to answer before a test calls
// it a hang (a kill takes well under a second).
const killAnswerBound = 30 * time.Second

// engineStacks makes the engine in dir dump its goroutines (SIGQUIT ends it) and returns
// its log.
func engineStacks(p *clickhouse.Process, dir string) string {
	pid := p.PID()
	if pid == 0 {
		return "(engine not running)"
	}
	if err := syscall.Kill(pid, syscall.SIGQUIT); err != nil {
		return err.Error()
	}
	// The dump is complete when the process is gone (its supervisor reaps it).
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			break
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, clickhouse.LogFile))
	if err != nil {
		return err.Error()
	}
	return string(b)
}
