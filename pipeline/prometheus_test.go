package pipeline

import (
	"context"
	"errors"
	"fmt"
	"github.com/svc-data/svc/query/engineerr"
	"strings"
	"testing"
	"time"
)

// promEngine is memEngine with RawInserter: every 8 bytes of RowBinary data stand for one
// row, and a repeated token is a no-op, as in the engine.
type promEngine struct {
	*memEngine
	created []string
}

func (e *promEngine) InsertFormat(_ context.Context, db, table, columns, format, token string, data []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failOn != nil {
		if err := e.failOn("insert"); err != nil {
			return err
		}
	}
	if format != "RowBinary" || columns == "" {
		return fmt.Errorf("%w: format %s, columns %q", engineerr.Fatal, format, columns)
	}
	if e.tokens[token] {
		return nil
	}
	e.tokens[token] = true
	for i := 0; i+8 <= len(data); i += 8 {
		e.rows[db+"."+table] = append(e.rows[db+"."+table], string(data[i:i+8]))
	}
	return nil
}

func (e *promEngine) QueryStringsArgs(ctx context.Context, sql string, args ...any) ([]string, error) {
	if strings.Contains(sql, "system.databases") {
		return []string{args[0].(string)}, nil
	}
	return e.memEngine.QueryStringsArgs(ctx, sql, args...)
}

func (e *promEngine) ExecArgs(ctx context.Context, sql string, args ...any) error {
	if strings.HasPrefix(sql, "CREATE") {
		e.mu.Lock()
		e.created = append(e.created, sql)
		e.mu.Unlock()
		return nil
	}
	return e.memEngine.ExecArgs(ctx, sql, args...)
}

// promRecords makes n Prometheus records of one database, each with 3 samples and 1
// series row; records 2k and 2k+1 carry the same idempotency key (a retried request).
func promRecords(n int) []Record {
	table := PrometheusTableID("db")
	var out []Record
	for i := range n {
		key := fmt.Sprintf("prw-%d", i/2)
		data := []byte(fmt.Sprintf("%02d-a....%02d-b....%02d-c....", i/2, i/2, i/2))[:24]
		v := EncodeSections([]Section{{Table: "prometheus_data", Columns: "id, timestamp, value", Rows: 3, Data: data},
			{Table: "prometheus_tags", Columns: "id, metric_name, tags, min_time, max_time", Rows: 1, Data: []byte(fmt.Sprintf("series%02d", i/2))}})
		out = append(out, Record{Topic: "topic", Offset: int64(i), Value: v, Timestamp: time.Now(),
			Headers: map[string]string{HeaderTable: table.String(), HeaderDatabase: "db", HeaderFormat: FormatPrometheus, HeaderRows: "3", HeaderIdem: key}})
	}
	return out
}

// TestPrometheusRecordsLandOnceThroughCrashes crashes the first owner at each step of a
// flush; the second owner ends with every sample and series row of every distinct
// request exactly once, in tables created before the first insert.
func TestPrometheusRecordsLandOnceThroughCrashes(t *testing.T) {
	const records = 30
	for name, crash := range map[string]func(eng *memEngine, part *memPartition){
		"none": func(*memEngine, *memPartition) {},
		"after plan commit": func(eng *memEngine, part *memPartition) {
			part.failOn = func(off int64, meta string) error {
				if meta == "" && off > 0 {
					return errors.New("partition lost")
				}
				return nil
			}
		},
		"after insert, before keys": func(eng *memEngine, part *memPartition) {
			eng.failOn = func(call string) error {
				if call == "keys" {
					return errors.New("engine died")
				}
				return nil
			}
		},
		"insert failing": func(eng *memEngine, part *memPartition) {
			eng.failOn = func(string) error { return errors.New("engine down") }
		},
	} {
		t.Run(name, func(t *testing.T) {
			eng := &promEngine{memEngine: newMemEngine()}
			part := &memPartition{offset: -1, records: promRecords(records)}
			crash(eng.memEngine, part)
			start := time.Now()
			ownPrometheus(t, eng, part, func() bool { return time.Since(start) > 100*time.Millisecond })
			eng.failOn, part.failOn = nil, nil
			ownPrometheus(t, eng, part, func() bool {
				off, meta := memAssignment{part}.Committed()
				return off == records && meta == ""
			})
			if got := eng.count("db.prometheus_data"); got != 3*records/2 {
				t.Fatalf("%d samples, want exactly %d (commits %v)", got, 3*records/2, part.commits)
			}
			if got := eng.count("db.prometheus_tags"); got != records/2 {
				t.Fatalf("%d series rows, want exactly %d", got, records/2)
			}
			if len(eng.created) == 0 {
				t.Fatal("no table created before the inserts")
			}
		})
	}
}

// ownPrometheus is own for a consumer that inserts Prometheus records.
func ownPrometheus(t *testing.T, eng *promEngine, part *memPartition, until func() bool) {
	t.Helper()
	c, err := NewConsumer(ConsumerConfig{TokenKey: testKey, MaxRows: 25, Linger: time.Millisecond, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond,
		PrometheusDDL: func(db string) []string { return []string{"CREATE TABLE " + db + ".prometheus_data"} }},
		eng, oneTable{})
	if err != nil {
		t.Fatal(err)
	}
	a := memAssignment{part}
	c.Assigned(a)
	off, _ := a.Committed()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		for i := max(off, 0); i < int64(len(part.records)); i += 4 {
			if c.Deliver(ctx, "topic", 0, part.records[i:min(i+4, int64(len(part.records)))]) != nil {
				return
			}
		}
	}()
	for !until() && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if ctx.Err() != nil {
		t.Errorf("owner timed out; commits %v", part.commits)
	}
	cancel()
	c.Revoked("topic", 0)
}

func TestSectionsRoundTrip(t *testing.T) {
	in := []Section{{Table: "a", Columns: "x", Rows: 2, Data: []byte{0, 1, 2}}, {Table: "b", Columns: "y, z", Rows: 0, Data: nil}}
	out, err := DecodeSections(EncodeSections(in))
	if err != nil || len(out) != 2 || out[0].Table != "a" || string(out[0].Data) != "\x00\x01\x02" || out[1].Columns != "y, z" || out[0].Rows != 2 {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := DecodeSections(EncodeSections(in)[:5]); err == nil {
		t.Fatal("a truncated record decoded")
	}
}
