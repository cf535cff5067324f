package main

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/svc-data/svc/query/sqlquote"
)

// Direct insert formats the engine can take the same rows in. The fastest one measured
// on plain JSON is the "best direct" baseline of every workload. fmtNativeText is the
// consumer's own insert (chclient.EncodeRows and InsertEncoded: one Native block whose
// JSON column is in the flattened serialization where the rows can be, else carries each
// row as text), run straight from here: where it wins, the edge is measured against its
// own insert without the rest of the pipeline.
const (
	fmtJSONAsObject = "JSONAsObject"
	fmtJSONEachRow  = "JSONEachRow"
	fmtNative       = "Native"
	fmtNativeText   = "Native (svc's insert)"
)

// directFormats are the candidates, in the order they are measured.
var directFormats = []string{fmtJSONAsObject, fmtJSONEachRow, fmtNative, fmtNativeText}

// chunk concatenates newline-terminated row bodies into batches of at least n rows.
func chunk(bodies [][]byte, n int) [][]byte {
	var out [][]byte
	var cur []byte
	rows := 0
	for _, b := range bodies {
		cur = append(cur, b...)
		rows += bytes.Count(b, newline)
		if rows >= n {
			out = append(out, cur)
			cur, rows = nil, 0
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

var newline = []byte{'\n'}

// directInserter inserts batches of rows into one engine table in one format.
type directInserter struct {
	st     *stack
	native driver.Conn
}

func (st *stack) directInserter() (*directInserter, error) {
	u, err := url.Parse(st.engine.URL())
	if err != nil {
		return nil, err
	}
	conn, err := clickhouse.Open(&clickhouse.Options{Protocol: clickhouse.HTTP, Addr: []string{u.Host},
		Compression: &clickhouse.Compression{Method: clickhouse.CompressionNone}, MaxOpenConns: 16, MaxIdleConns: 16})
	if err != nil {
		return nil, err
	}
	return &directInserter{st: st, native: conn}, nil
}

func (d *directInserter) Close() { d.native.Close() }

// insert sends one batch of newline-terminated JSON rows into db.table (one JSON column
// doc) in format, with a deduplication token as the pipeline sends.
func (d *directInserter) insert(ctx context.Context, format, db, table, token string, rows []byte) error {
	settings := " SETTINGS insert_deduplication_token = " + sqlquote.String(token) + ", type_json_skip_duplicated_paths = 1"
	target := sqlquote.Ident(db) + "." + sqlquote.Ident(table)
	switch format {
	case fmtJSONAsObject:
		return d.st.direct.Exec(ctx, "INSERT INTO "+target+settings+" FORMAT JSONAsObject\n"+string(rows))
	case fmtJSONEachRow:
		// The same documents as the value of their column.
		var b bytes.Buffer
		b.Grow(len(rows) + len(rows)/16 + 256)
		b.WriteString("INSERT INTO " + target + settings + " FORMAT JSONEachRow\n")
		for line := range bytes.Lines(rows) {
			b.WriteString(`{"doc":`)
			b.Write(bytes.TrimRight(line, "\n"))
			b.WriteString("}\n")
		}
		return d.st.direct.Exec(ctx, b.String())
	case fmtNativeText:
		// As the consumer inserts: encoded where it can be, else as text.
		return d.st.direct.InsertEncoded(ctx, db, table, token, d.st.direct.EncodeRows(ctx, "", rows))
	case fmtNative:
		// clickhouse-go's batch: Native blocks, the JSON column sent as strings.
		batch, err := d.native.PrepareBatch(clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{
			"insert_deduplication_token": token, "type_json_skip_duplicated_paths": 1})), "INSERT INTO "+target)
		if err != nil {
			return err
		}
		for line := range bytes.Lines(rows) {
			if err := batch.Append(string(bytes.TrimRight(line, "\n"))); err != nil {
				batch.Abort()
				return err
			}
		}
		return batch.Send()
	}
	return fmt.Errorf("unknown format %q", format)
}

// run inserts every batch with workers concurrent inserts and returns the time taken.
func (d *directInserter) run(ctx context.Context, format, db, table string, batches [][]byte, workers int) (time.Duration, error) {
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var derr atomic.Value
	for range min(workers, len(batches)) {
		wg.Go(func() {
			for {
				j := int(next.Add(1)) - 1
				if j >= len(batches) {
					return
				}
				if err := d.insert(ctx, format, db, table, fmt.Sprintf("d-%d", j), batches[j]); err != nil {
					derr.Store(err)
				}
			}
		})
	}
	wg.Wait()
	if e, ok := derr.Load().(error); ok {
		return 0, fmt.Errorf("direct %s into %s: %w", format, table, e)
	}
	return time.Since(start), nil
}

// procs are the processes whose CPU the benchmark reports.
type procs struct{ engine, broker, svcd int }

func (st *stack) procs() procs {
	return procs{engine: st.engine.PID(), broker: st.broker.PID(), svcd: st.svcd.Process.Pid}
}

// cpu is user+system seconds of each process.
type cpu struct{ engine, broker, svcd float64 }

func (p procs) read() cpu {
	return cpu{engine: cpuSeconds(p.engine), broker: cpuSeconds(p.broker), svcd: cpuSeconds(p.svcd)}
}

// perMillion is the CPU spent between a and b per million of n rows.
func perMillion(a, b cpu, n int) cpu {
	f := 1e6 / float64(n)
	return cpu{engine: (b.engine - a.engine) * f, broker: (b.broker - a.broker) * f, svcd: (b.svcd - a.svcd) * f}
}

func (c cpu) String() string {
	return fmt.Sprintf("%.2f / %.2f / %.2f = %.2f", c.engine, c.broker, c.svcd, c.engine+c.broker+c.svcd)
}

// quiet waits (up to 30 s) until the engine runs no merge, so that one phase's merges
// do not slow the next.
func (st *stack) quiet(ctx context.Context) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		n, err := st.direct.QueryStrings(ctx, "SELECT toString(count()) FROM system.merges")
		if err != nil || (len(n) == 1 && n[0] == "0") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// profileWhile runs run over and over while svcd's CPU profile is taken (profile), until
// the profile is written or run fails; without a profile directory it returns at once.
func (st *stack) profileWhile(dir, name string, run func() error) error {
	if dir == "" || st.pprof == "" {
		return nil
	}
	done := st.profile(dir, name)
	for {
		if err := run(); err != nil {
			return err
		}
		select {
		case <-done:
			return nil
		default:
		}
	}
}

// profile fetches a 5-second CPU profile of svcd into dir/<name>.prof in the background;
// the channel closes when it is written (at once when no profile is asked for).
func (st *stack) profile(dir, name string) <-chan struct{} {
	return st.profileFor(dir, name, 5*time.Second)
}

// warmUp sends a quarter of w's requests (at most 50) through the edge into a table of
// its own and runs every direct format once, so that no measured phase pays for a cold
// process (the broker's JIT compiler above all).
func (st *stack) warmUp(ctx context.Context, conn *grpc.ClientConn, di *directInserter, w *workload, engineDB string, workers, directWorkers, directBatch int) error {
	if code, b, err := st.post(ctx, "/v1/tables", []byte(`{"name":"warmup"}`), nil); err != nil || code != 200 {
		return fmt.Errorf("create warmup: %d %s %v", code, b, err)
	}
	n := min(len(w.bodies), max(1, len(w.bodies)/4), 50)
	headers := map[string]string{}
	for k, v := range w.headers {
		if v == "KEY" {
			v = st.key
		}
		headers[k] = v
	}
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := int(next.Add(1)) - 1; j < n; j = int(next.Add(1)) - 1 {
				st.send(ctx, conn, w, "warmup", headers, j)
			}
		})
	}
	wg.Wait()
	rows := 0
	for _, b := range w.rows[:n] {
		rows += bytes.Count(b, newline)
	}
	if err := st.waitCount(ctx, engineDB, "warmup", rows, start); err != nil {
		return err
	}
	for i, f := range directFormats {
		t := fmt.Sprintf("warm%d", i)
		if err := st.direct.Exec(ctx, "CREATE TABLE bench_direct."+t+" (doc JSON) ENGINE = MergeTree ORDER BY tuple()"); err != nil {
			return err
		}
		if _, err := di.run(ctx, f, "bench_direct", t, chunk(w.rows[:n], directBatch), directWorkers); err != nil {
			return err
		}
	}
	return nil
}
