package clickhouse_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
)

// peakRSS is the peak resident memory of process pid, from /proc.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

func TestLargeResultStreams(t *testing.T) {
	p := chtest.Start(t, clickhouse.ProcessConfig{})
	conn := chtest.Open(t, p.URL())
	ctx := testCtx(t)
	var one uint8
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	before := peakRSS(t, p.PID())

	const n = 16_000_000
	rows, err := conn.Query(ctx, "SELECT number, toString(number) FROM numbers({n:UInt64})", ch.Named("n", uint64(n)))
	if err != nil {
		t.Fatal(err)
	}
	var count, resultBytes int64
	for rows.Next() {
		var (
			id uint64
			s  string
		)
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		if id != uint64(count) {
			t.Fatalf("row %d has id %d", count, id)
		}
		count++
		resultBytes += 8 + 1 + int64(len(s))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if count != n {
		t.Fatalf("%d rows, want %d", count, n)
	}
	grew := peakRSS(t, p.PID()) - before
	t.Logf("result %d MiB; engine peak memory grew %d MiB", resultBytes>>20, grew>>20)
	// Buffered, the engine would hold the whole result at least once.
	if grew > resultBytes/2 {
		t.Fatalf("engine peak memory grew by %d MiB for a %d MiB result: the result was buffered", grew>>20, resultBytes>>20)
	}
}

// insertBatch inserts rows [from, from+n) with a deduplication token, as the pipeline does.
func insertBatch(ctx context.Context, conn driver.Conn, token string, from, n int) error {
	ctx = ch.Context(ctx, ch.WithSettings(ch.Settings{"insert_deduplication_token": token}))
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO events")
	if err != nil {
		return err
	}
	for i := from; i < from+n; i++ {
		if err := batch.Append(uint64(i), fmt.Sprintf("payload %d %s", i, strings.Repeat("x", i%50))); err != nil {
			return err
		}
	}
	return batch.Send()
}

const eventsTable = `CREATE TABLE events (id UInt64, payload String) ENGINE = MergeTree ORDER BY id
	SETTINGS non_replicated_deduplication_window = 1000`

func count(t *testing.T, ctx context.Context, conn driver.Conn, q string) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestKillDuringInsertLoad(t *testing.T) {
	dir := t.TempDir()
	p := chtest.Start(t, clickhouse.ProcessConfig{DataDir: dir, Restart: true})
	conn := chtest.Open(t, p.URL())
	ctx := testCtx(t)
	if err := conn.Exec(ctx, eventsTable); err != nil {
		t.Fatal(err)
	}

	const rowsPerBatch = 20_000
	acked := make(chan int, 1000) // batch numbers the engine acknowledged
	failed := make(chan int, 1)   // the batch in flight when the engine died
	go func() {
		for b := 0; ; b++ {
			if err := insertBatch(ctx, conn, fmt.Sprintf("batch-%d", b), b*rowsPerBatch, rowsPerBatch); err != nil {
				failed <- b
				return
			}
			acked <- b
		}
	}()
	// Let a few batches land, then kill the engine while inserts run.
	last := -1
	for range 3 {
		last = <-acked
	}
	oldPID := p.PID()
	if err := syscall.Kill(oldPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	inflight := <-failed
	close(acked)
	for b := range acked {
		last = b
	}
	if last+1 != inflight {
		t.Fatalf("acknowledged up to batch %d, but batch %d failed", last, inflight)
	}

	// The supervisor restarts the engine on the same address.
	for {
		if pid := p.PID(); pid != 0 && pid != oldPID {
			if err := conn.Ping(ctx); err == nil {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatal("the engine did not come back")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The unacknowledged batch is retried with its token; whether or not it landed before
	// the kill, it is there exactly once afterwards.
	if err := insertBatch(ctx, conn, fmt.Sprintf("batch-%d", inflight), inflight*rowsPerBatch, rowsPerBatch); err != nil {
		t.Fatal(err)
	}
	want := uint64((inflight + 1) * rowsPerBatch)
	if got := count(t, ctx, conn, "SELECT count() FROM events"); got != want {
		t.Fatalf("count = %d, want %d (%d acknowledged batches and the retried one)", got, want, inflight)
	}
	if got := count(t, ctx, conn, "SELECT uniqExact(id) FROM events"); got != want {
		t.Fatalf("%d distinct ids, want %d", got, want)
	}
	if got := count(t, ctx, conn, "SELECT count() FROM system.detached_parts"); got != 0 {
		t.Fatalf("%d detached (broken) parts after the kill", got)
	}
	var ok uint8
	single := ch.Context(ctx, ch.WithSettings(ch.Settings{"check_query_single_value_result": 1}))
	if err := conn.QueryRow(single, "CHECK TABLE events").Scan(&ok); err != nil || ok != 1 {
		t.Fatalf("CHECK TABLE = %d, %v", ok, err)
	}
}

func TestCleanRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	cfg := clickhouse.ProcessConfig{DataDir: dir, Lib: chtest.Lib(t), Binary: chtest.Binary(t), MaxMemory: 1 << 30}
	p, err := clickhouse.NewProcess(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	conn := chtest.Open(t, p.URL())
	if err := conn.Exec(ctx, eventsTable); err != nil {
		t.Fatal(err)
	}
	if err := insertBatch(ctx, conn, "only", 0, 50_000); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatalf("clean shutdown: %v", err)
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}

	p2 := chtest.Start(t, cfg)
	conn2 := chtest.Open(t, p2.URL())
	if got := count(t, ctx, conn2, "SELECT count() FROM events"); got != 50_000 {
		t.Fatalf("count after restart = %d, want 50000", got)
	}
	// The restarted engine drops tables synchronously too (metadata/ exists from the start).
	if err := conn2.Exec(ctx, "DROP TABLE events SYNC"); err != nil {
		t.Fatal(err)
	}
}

func TestSecondEngineOnSamePathRefused(t *testing.T) {
	dir := t.TempDir()
	chtest.Start(t, clickhouse.ProcessConfig{DataDir: dir})
	p, err := clickhouse.NewProcess(clickhouse.ProcessConfig{
		DataDir: dir, Lib: chtest.Lib(t), Binary: chtest.Binary(t), StartTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Start(context.Background())
	if !errors.Is(err, clickhouse.ErrEngineExited) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second engine on one path: %v", err)
	}
}

func TestShutdownCancelsStatementsAfterDeadline(t *testing.T) {
	ctx := testCtx(t)
	p, err := clickhouse.NewProcess(clickhouse.ProcessConfig{
		DataDir: t.TempDir(), Lib: chtest.Lib(t), Binary: chtest.Binary(t), MaxMemory: 1 << 30,
		ShutdownTimeout: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	conn := chtest.Open(t, p.URL())
	id := "endless-at-shutdown"
	errc := make(chan error, 1)
	go func() {
		var n uint64
		errc <- conn.QueryRow(ch.Context(ctx, ch.WithQueryID(id)), endless).Scan(&n)
	}()
	waitRunning(t, ctx, conn, id)
	// The engine gives the statement its grace period, cancels it, and exits cleanly.
	if err := p.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a running statement: %v", err)
	}
	if err := <-errc; err == nil {
		t.Fatal("the statement running at shutdown succeeded")
	}
}

// countHandler counts log records whose message is msg.
type countHandler struct {
	msg string
	n   *atomic.Int64
}

func (h countHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	return nil
}
func (h countHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countHandler) WithGroup(string) slog.Handler      { return h }

// TestShutdownHonoursItsDeadlineWhileRestarting: an engine that keeps failing to
// restart has its supervisor in a long backoff; Shutdown must still return by its
// deadline instead of waiting the backoff out.
func TestShutdownHonoursItsDeadlineWhileRestarting(t *testing.T) {
	ctx := testCtx(t)
	bin := filepath.Join(t.TempDir(), "chengine")
	raw, err := os.ReadFile(chtest.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	var restarts atomic.Int64
	p, err := clickhouse.NewProcess(clickhouse.ProcessConfig{
		DataDir: t.TempDir(), Lib: chtest.Lib(t), Binary: bin, MaxMemory: 1 << 30, Restart: true,
		Logger: slog.New(countHandler{msg: "restart chengine", n: &restarts}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Every restart now fails at once, doubling the backoff: 250 ms, 0.5, 1, 2, 4 s...
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for restarts.Load() < 5 { // the next wait is 8 s
		if ctx.Err() != nil {
			t.Fatal("the supervisor never retried")
		}
		time.Sleep(50 * time.Millisecond)
	}
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	start := time.Now()
	_ = p.Shutdown(sctx)
	if waited := time.Since(start); waited > 4*time.Second {
		t.Fatalf("Shutdown with a 1 s deadline took %s", waited)
	}
}

// TestStartWaitsForAHeldPath: an engine whose directory is still held (by the engine of
// a killed supervisor, shutting down) starts once it is released, within WaitForPath.
func TestStartWaitsForAHeldPath(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	first, err := clickhouse.NewProcess(clickhouse.ProcessConfig{DataDir: dir, Lib: chtest.Lib(t), Binary: chtest.Binary(t), MaxMemory: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var waits atomic.Int64
	second, err := clickhouse.NewProcess(clickhouse.ProcessConfig{DataDir: dir, Lib: chtest.Lib(t), Binary: chtest.Binary(t),
		MaxMemory: 1 << 30, WaitForPath: time.Minute,
		Logger: slog.New(countHandler{msg: "engine data directory held by another engine; waiting", n: &waits})})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan error, 1)
	go func() { started <- second.Start(ctx) }()
	for waits.Load() == 0 {
		select {
		case err := <-started:
			t.Fatalf("second engine on a held path: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatalf("the second engine did not start once the path was free: %v", err)
	}
	if err := second.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
