package clickhouse_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	chproto "github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chdb"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
)

// The benchmarks put the engine process (chengine, reached through clickhouse-go over HTTP)
// beside the engine's direct path: libchdb loaded into the benchmark process through the cgo
// binding, fed and read in the same Native encoding. Each iteration does the work both ways
// and reports both times and their ratio (chengine-x).

const benchTable = "CREATE TABLE bench (id UInt64, name String, at DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY id"

var direct struct {
	once sync.Once
	dir  string // removed by TestMain
	conn *chdb.Conn
	err  error
}

// directConn opens libchdb in this process, once, on its own directory.
func directConn(b *testing.B) *chdb.Conn {
	b.Helper()
	lib := chtest.Lib(b)
	direct.once.Do(func() {
		dir, err := os.MkdirTemp("", "chdb-bench-")
		if err != nil {
			direct.err = err
			return
		}
		direct.dir = dir
		_ = os.MkdirAll(filepath.Join(dir, "metadata"), 0o750)
		if direct.err = chdb.Load(lib); direct.err != nil {
			return
		}
		direct.conn, direct.err = chdb.Connect("--path="+dir, "--max_server_memory_usage=1073741824")
	})
	if direct.err != nil {
		b.Fatal(direct.err)
	}
	return direct.conn
}

// benchEngines returns a clickhouse-go connection to a fresh chengine and the in-process
// connection, each with an empty bench table.
func benchEngines(b *testing.B) (driver.Conn, *chdb.Conn) {
	b.Helper()
	dc := directConn(b)
	p := chtest.Start(b, clickhouse.ProcessConfig{})
	conn := chtest.Open(b, p.URL())
	ctx := context.Background()
	if err := conn.Exec(ctx, benchTable); err != nil {
		b.Fatal(err)
	}
	if _, err := dc.Query("DROP TABLE IF EXISTS bench SYNC", "TabSeparated"); err != nil {
		b.Fatal(err)
	}
	if _, err := dc.Query(benchTable, "TabSeparated"); err != nil {
		b.Fatal(err)
	}
	return conn, dc
}

type benchRow struct {
	id   uint64
	name string
	at   time.Time
}

func benchRows(from, n int) []benchRow {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := make([]benchRow, n)
	for i := range rows {
		id := from + i
		rows[i] = benchRow{uint64(id), "name-" + strconv.Itoa(id%10_000), base.Add(time.Duration(id) * time.Millisecond)}
	}
	return rows
}

// nativeBlock encodes rows as clickhouse-go encodes a batch over HTTP (revision 0).
func nativeBlock(b *testing.B, rows []benchRow) []byte {
	b.Helper()
	block := proto.NewBlock()
	for _, c := range [][2]string{{"id", "UInt64"}, {"name", "String"}, {"at", "DateTime64(3, 'UTC')"}} {
		if err := block.AddColumn(c[0], column.Type(c[1])); err != nil {
			b.Fatal(err)
		}
	}
	for _, r := range rows {
		if err := block.Append(r.id, r.name, r.at); err != nil {
			b.Fatal(err)
		}
	}
	var buf chproto.Buffer
	if err := block.Encode(&buf, 0); err != nil {
		b.Fatal(err)
	}
	return buf.Buf
}

// directInsert inserts a Native body through a pipe, as chengine does, minus HTTP.
func directInsert(dc *chdb.Conn, body []byte) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	go func() {
		_, _ = pw.Write(body)
		_ = pw.Close()
	}()
	_, err = dc.Query(fmt.Sprintf("INSERT INTO bench FROM INFILE '/proc/self/fd/%d' COMPRESSION 'none' FORMAT Native", pr.Fd()), "TabSeparated")
	return err
}

func reportRatio(b *testing.B, viaEngine, viaDirect time.Duration) {
	n := float64(b.N)
	b.ReportMetric(float64(viaEngine.Nanoseconds())/n, "chengine-ns/op")
	b.ReportMetric(float64(viaDirect.Nanoseconds())/n, "direct-ns/op")
	b.ReportMetric(float64(viaEngine)/float64(viaDirect), "chengine-x")
	b.ReportMetric(0, "ns/op") // the two figures above are the result
}

func BenchmarkBatchInsert(b *testing.B) {
	const rowsPerBatch = 100_000
	conn, dc := benchEngines(b)
	ctx := context.Background()
	var viaEngine, viaDirect time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows := benchRows(i*rowsPerBatch, rowsPerBatch)

		t0 := time.Now()
		batch, err := conn.PrepareBatch(ctx, "INSERT INTO bench")
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rows {
			if err := batch.Append(r.id, r.name, r.at); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Send(); err != nil {
			b.Fatal(err)
		}
		viaEngine += time.Since(t0)

		t0 = time.Now()
		if err := directInsert(dc, nativeBlock(b, rows)); err != nil {
			b.Fatal(err)
		}
		viaDirect += time.Since(t0)
	}
	b.StopTimer()
	reportRatio(b, viaEngine, viaDirect)
	b.ReportMetric(rowsPerBatch, "rows/op")
}

func BenchmarkScan(b *testing.B) {
	const rows = 1_000_000
	conn, dc := benchEngines(b)
	ctx := context.Background()
	for i := 0; i < rows; i += 250_000 {
		chunk := benchRows(i, 250_000)
		batch, err := conn.PrepareBatch(ctx, "INSERT INTO bench")
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range chunk {
			if err := batch.Append(r.id, r.name, r.at); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Send(); err != nil {
			b.Fatal(err)
		}
		if err := directInsert(dc, nativeBlock(b, chunk)); err != nil {
			b.Fatal(err)
		}
	}
	const q = "SELECT id, name, at FROM bench"
	var viaEngine, viaDirect time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, err := conn.Query(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		var r benchRow
		n := 0
		for res.Next() {
			if err := res.Scan(&r.id, &r.name, &r.at); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if err := res.Err(); err != nil {
			b.Fatal(err)
		}
		res.Close()
		viaEngine += time.Since(t0)
		if n != rows {
			b.Fatalf("chengine scanned %d rows", n)
		}

		t0 = time.Now()
		if n, err = directScan(dc, q); err != nil {
			b.Fatal(err)
		}
		viaDirect += time.Since(t0)
		if n != rows {
			b.Fatalf("direct path scanned %d rows", n)
		}
	}
	b.StopTimer()
	reportRatio(b, viaEngine, viaDirect)
	b.ReportMetric(rows, "rows/op")
}

// directScan streams q as Native from the in-process engine and decodes every value into Go,
// as clickhouse-go's Scan does.
func directScan(dc *chdb.Conn, q string) (int, error) {
	s, err := dc.Stream(q, "Native")
	if err != nil {
		return 0, err
	}
	defer s.Close()
	var (
		r benchRow
		n int
	)
	dest := []any{&r.id, &r.name, &r.at}
	for {
		chunk, err := s.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		rd := chproto.NewReader(bytes.NewReader(chunk))
		for {
			block := proto.Block{ServerContext: &column.ServerContext{Timezone: time.UTC}}
			if err := block.Decode(rd, 0); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return n, err
			}
			for i := 0; i < block.Rows(); i++ {
				for j, c := range block.Columns {
					if err := c.ScanRow(dest[j], i); err != nil {
						return n, err
					}
				}
				n++
			}
		}
	}
}
