package pipeline

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/testenv"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/promstore"
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
	var rows []string
	switch {
	case format == "Native" && table == "prometheus_data" && columns == "id, timestamp, value":
		// Three columns of n rows: ids of 16 bytes after the column's name and type.
		cols, k := binary.Uvarint(data)
		n, k2 := binary.Uvarint(data[k:])
		head := 1 + 2 + 1 + 4 // len "id", "id", len "UUID", "UUID"
		if cols != 3 || k != 1 {
			return fmt.Errorf("%w: native block of %d columns", engineerr.Permanent, cols)
		}
		ids := data[k+k2+head:]
		for i := range int(n) {
			rows = append(rows, string(ids[16*i:16*i+16]))
		}
	case format == "RowBinary" && table == "prometheus_tags":
		series, err := parseSeriesRows(nil, data)
		if err != nil {
			return fmt.Errorf("%w: %v", engineerr.Permanent, err)
		}
		for _, r := range series {
			rows = append(rows, fmt.Sprintf("%x %d %d", r.head, r.min, r.max))
		}
	default:
		return fmt.Errorf("%w: format %s, table %s, columns %q", engineerr.Fatal, format, table, columns)
	}
	if e.tokens[token] {
		return nil
	}
	e.tokens[token] = true
	e.rows[db+"."+table] = append(e.rows[db+"."+table], rows...)
	return nil
}

func (e *promEngine) QueryStringsArgs(ctx context.Context, sql string, args ...any) ([]string, error) {
	if strings.Contains(sql, "system.databases") {
		return []string{args[0].(string)}, nil
	}
	if strings.Contains(sql, "sorting_key") {
		return []string{"id, timestamp"}, nil // a data table made before metric_hash
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
// Requests alternate between the record layouts: sections with formats (samples packed)
// and the first layout (RowBinary only), which records already in Kafka have.
func promRecords(n int) []Record {
	table := PrometheusTableID("db")
	var out []Record
	for i := range n {
		req := i / 2
		key := fmt.Sprintf("prw-%d", req)
		id := [16]byte{0: byte(req), 15: 1}
		tags := append(id[:], 1, 'm', 0)
		tags = binary.LittleEndian.AppendUint64(tags, 1000)
		tags = binary.LittleEndian.AppendUint64(tags, 3000)
		var v []byte
		if req%2 == 0 {
			data := AppendPackedSeries(nil, &id, 3, func(i int) (int64, float64) { return int64(i+1) * 1000, float64(i) })
			v = EncodeSections([]Section{{Table: "prometheus_data", Columns: "id, timestamp, value", Format: SectionPackedSamples, Rows: 3, Data: data},
				{Table: "prometheus_tags", Columns: "id, metric_name, tags, min_time, max_time", Rows: 1, Data: tags}})
		} else {
			var data []byte
			for i := range 3 {
				data = append(data, id[:]...)
				data = binary.LittleEndian.AppendUint64(data, uint64(i+1)*1000)
				data = binary.LittleEndian.AppendUint64(data, math.Float64bits(float64(i)))
			}
			v = encodeSectionsV1([]Section{{Table: "prometheus_data", Columns: "id, timestamp, value", Rows: 3, Data: data},
				{Table: "prometheus_tags", Columns: "id, metric_name, tags, min_time, max_time", Rows: 1, Data: tags}})
		}
		out = append(out, Record{Topic: "topic", Offset: int64(i), Value: v, Timestamp: time.Now(),
			Headers: map[string]string{HeaderTable: table.String(), HeaderDatabase: "db", HeaderFormat: FormatPrometheus, HeaderRows: "3", HeaderIdem: key}})
	}
	return out
}

// encodeSectionsV1 is EncodeSections as it was before sections had formats.
func encodeSectionsV1(sections []Section) []byte {
	var b []byte
	for _, s := range sections {
		b = binary.AppendUvarint(b, uint64(len(s.Table)))
		b = append(b, s.Table...)
		b = binary.AppendUvarint(b, uint64(len(s.Columns)))
		b = append(b, s.Columns...)
		b = binary.AppendUvarint(b, uint64(s.Rows))
		b = binary.AppendUvarint(b, uint64(len(s.Data)))
		b = append(b, s.Data...)
	}
	return b
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

// TestPackedSamplesAreTheRowBinarySamples: samples packed per series (irregular,
// decreasing and extreme timestamps; a stale marker's bits) become the same Native
// columns as the same samples in the first layout's RowBinary rows.
func TestPackedSamplesAreTheRowBinarySamples(t *testing.T) {
	ts := []int64{0, 15000, 30000, 45001, 44000, math.MaxInt64, math.MinInt64, -5}
	vs := []float64{1, math.Float64frombits(0x7ff0000000000002), math.Inf(-1), 0, -0.5, 1e300, 3, math.NaN()}
	ids := [][16]byte{{1, 2, 3}, {';', 15: 9}}
	var packed, rows []byte
	for _, id := range ids {
		packed = AppendPackedSeries(packed, &id, len(ts), func(i int) (int64, float64) { return ts[i], vs[i] })
		for i := range ts {
			rows = append(rows, id[:]...)
			rows = binary.LittleEndian.AppendUint64(rows, uint64(ts[i]))
			rows = binary.LittleEndian.AppendUint64(rows, math.Float64bits(vs[i]))
		}
	}
	var a, b sampleColumns
	if err := a.addPacked(packed, 2*len(ts)); err != nil {
		t.Fatal(err)
	}
	if err := b.addRowBinary(rows); err != nil {
		t.Fatal(err)
	}
	if a.rows != 16 || string(a.native(nil)) != string(b.native(nil)) {
		t.Fatalf("packed %d rows %x\nrow binary %x", a.rows, a.native(nil), b.native(nil))
	}
	for _, bad := range [][]byte{packed[:len(packed)-1], packed[:20], append(packed, 1)} {
		var c sampleColumns
		if err := c.addPacked(bad, 2*len(ts)); err == nil {
			t.Errorf("malformed packed samples %x read", bad)
		}
	}
	var c sampleColumns
	if err := c.addPacked(packed, 2*len(ts)+1); err == nil {
		t.Error("a section with fewer samples than its row count read")
	}
}

// TestSeriesRowsFoldPerBatch: a batch's rows of one series become one row with the
// earliest min_time and the latest max_time, in the order series first appear.
func TestSeriesRowsFoldPerBatch(t *testing.T) {
	row := func(id byte, lo, hi int64) []byte {
		b := append([]byte{id, 15: 0}, 1, 'm', 1, 3, 'j', 'o', 'b', 1, 'a')
		b = binary.LittleEndian.AppendUint64(b, uint64(lo))
		return binary.LittleEndian.AppendUint64(b, uint64(hi))
	}
	var s seriesRows
	for _, data := range [][]byte{append(row(2, 50, 60), row(1, 10, 20)...), row(2, 40, 55), row(2, 55, 70)} {
		rs, err := parseSeriesRows(nil, data)
		if err != nil {
			t.Fatal(err)
		}
		s.add(rs)
	}
	if got, want := s.rowBinary(), append(row(2, 40, 70), row(1, 10, 20)...); string(got) != string(want) {
		t.Fatalf("folded %x, want %x", got, want)
	}
	if _, err := parseSeriesRows(nil, row(1, 1, 2)[:30]); err == nil {
		t.Fatal("a truncated row parsed")
	}
}

// TestPackedSamplesGoInSortedBySeries: a batch's packed series go to the engine in the
// data table's order (the id as the engine compares a UUID, second half first, then
// time), each with its own samples.
func TestPackedSamplesGoInSortedBySeries(t *testing.T) {
	var batch sampleColumns
	for _, rec := range [][][16]byte{{{15: 2}, {15: 1, 0: 9}}, {{15: 1}, {15: 2}}} {
		var packed []byte
		for _, id := range rec {
			t0 := int64(len(batch.runs)) * 100 // 0 in the first record, 200 in the second
			packed = AppendPackedSeries(packed, &id, 2, func(i int) (int64, float64) { return t0 + int64(i), float64(id[0] + id[15]) })
		}
		var r sampleColumns
		if err := r.addPacked(packed, 4); err != nil {
			t.Fatal(err)
		}
		batch.add(&r)
	}
	ids, times, values := nativeColumns(t, batch.sorted(false).native(nil))
	var got []string
	for i := range len(ids) / 16 {
		got = append(got, fmt.Sprintf("%x/%d/%v", ids[16*i:16*i+16], int64(binary.LittleEndian.Uint64(times[8*i:])), math.Float64frombits(binary.LittleEndian.Uint64(values[8*i:]))))
	}
	want := []string{
		"00000000000000000000000000000001/200/1", "00000000000000000000000000000001/201/1",
		"09000000000000000000000000000001/0/10", "09000000000000000000000000000001/1/10",
		"00000000000000000000000000000002/0/2", "00000000000000000000000000000002/1/2",
		"00000000000000000000000000000002/200/2", "00000000000000000000000000000002/201/2",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows\n%v\nwant\n%v", got, want)
	}
}

// TestPackedSamplesGoInByMetric: into a data table that leads with metric_hash, a
// batch's samples carry their series' promstore.MetricHash (from the series rows of the
// records) as a first column and go in ordered by it, then by series and time; a series
// without a series row gets 0.
func TestPackedSamplesGoInByMetric(t *testing.T) {
	seriesRow := func(id [16]byte, name string) []byte {
		b := append(id[:], byte(len(name)))
		b = append(b, name...)
		b = append(b, 0) // no tags
		b = binary.LittleEndian.AppendUint64(b, 0)
		return binary.LittleEndian.AppendUint64(b, 0)
	}
	a, b, c, orphan := [16]byte{15: 1}, [16]byte{15: 2}, [16]byte{15: 3}, [16]byte{15: 4}
	names := map[[16]byte]string{a: "up", b: "http_requests_total", c: "up"}
	var batch sampleColumns
	var series seriesRows
	for ri, rec := range [][][16]byte{{b, a, orphan}, {c, b}} {
		var packed, tags []byte
		for pos, id := range rec {
			at := int64(10*ri + pos)
			packed = AppendPackedSeries(packed, &id, 1, func(int) (int64, float64) { return at, float64(id[15]) })
			if name, ok := names[id]; ok {
				tags = append(tags, seriesRow(id, name)...)
			}
		}
		var r sampleColumns
		if err := r.addPacked(packed, len(rec)); err != nil {
			t.Fatal(err)
		}
		rows, err := parseSeriesRows(nil, tags)
		if err != nil {
			t.Fatal(err)
		}
		batch.add(&r)
		series.add(rows)
	}
	batch.metricHashes(&series)
	cols := nativeBlock(t, batch.sorted(true).native(&series), "metric_hash UInt64", "id UUID", "timestamp DateTime64(3, 'UTC')", "value Float64")
	type row struct {
		mh uint64
		id byte
		t  int64
	}
	var got []row
	for i := range len(cols[1]) / 16 {
		got = append(got, row{binary.LittleEndian.Uint64(cols[0][8*i:]), cols[1][16*i+15], int64(binary.LittleEndian.Uint64(cols[2][8*i:]))})
	}
	up, hr := promstore.MetricHash([]byte("up")), promstore.MetricHash([]byte("http_requests_total"))
	want := []row{{0, 4, 2}, {up, 1, 1}, {up, 3, 10}, {hr, 2, 0}, {hr, 2, 11}}
	slices.SortStableFunc(want, func(x, y row) int { return cmp.Compare(x.mh, y.mh) })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows\n%v\nwant\n%v", got, want)
	}
}

// TestMetricsBatchesCountSamplesAndLingerLonger: Prometheus records count their samples
// towards MaxSamples, not MaxRows, and a batch of them only closes on MetricsLinger; a
// record of a table in it brings the batch back to Linger.
func TestMetricsBatchesCountSamplesAndLingerLonger(t *testing.T) {
	flushes := func(t *testing.T, cfg ConsumerConfig, recs []Record, want int, within time.Duration) time.Duration {
		t.Helper()
		eng := &promEngine{memEngine: newMemEngine()}
		part := &memPartition{offset: -1, records: recs}
		cfg.TokenKey, cfg.RetryMin = testKey, time.Millisecond
		cfg.PrometheusDDL = func(string) []string { return []string{"CREATE TABLE x"} }
		c, err := NewConsumer(cfg, eng, oneTable{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Shutdown(context.Background())
		c.Assigned(memAssignment{part})
		start := time.Now()
		for i := range part.records {
			if err := c.Deliver(context.Background(), "topic", 0, part.records[i:i+1]); err != nil {
				t.Fatal(err)
			}
		}
		testenv.Eventually(t, within+5*time.Second, func() (bool, string) {
			off, meta := memAssignment{part}.Committed()
			return off == int64(len(recs)) && meta == "", fmt.Sprintf("committed %d of %d", off, len(recs))
		})
		took := time.Since(start)
		if commits := len(part.commits); commits != 2*want {
			t.Fatalf("%d commits, want %d batches (a plan and a commit each): %v", commits, want, part.commits)
		}
		return took
	}
	// Ten requests of 3 samples, 5 distinct: 30 samples are past MaxRows, within
	// MaxSamples; nothing closes the batch before MetricsLinger.
	recs := promRecords(10)
	if took := flushes(t, ConsumerConfig{MaxRows: 10, MaxSamples: 1000, Linger: time.Millisecond, MetricsLinger: 300 * time.Millisecond}, recs, 1, time.Second); took < 300*time.Millisecond {
		t.Fatalf("a batch of Prometheus records closed after %v, before the metrics linger of 300ms", took)
	}
	// MaxSamples closes batches of 9 samples: three requests each, four batches (the
	// last on the linger).
	flushes(t, ConsumerConfig{MaxRows: 1 << 20, MaxSamples: 9, Linger: time.Hour, MetricsLinger: 100 * time.Millisecond}, recs, 4, time.Second)
	// A record of a table joins: the batch closes on Linger.
	mixed := append(promRecords(2), makeRecords(uuid.New(), 1, 1)...)
	mixed[2].Offset = 2
	flushes(t, ConsumerConfig{MaxRows: 1 << 20, Linger: 50 * time.Millisecond, MetricsLinger: time.Hour}, mixed, 1, time.Second)
}

// nativeColumns reads the data of the three columns of a samples block (native).
func nativeColumns(t *testing.T, b []byte) (ids, times, values []byte) {
	t.Helper()
	cols := nativeBlock(t, b, "id UUID", "timestamp DateTime64(3, 'UTC')", "value Float64")
	return cols[0], cols[1], cols[2]
}

// nativeBlock reads a Native block of the fixed-width columns want ("name type").
func nativeBlock(t *testing.T, b []byte, want ...string) [][]byte {
	t.Helper()
	cols, k := binary.Uvarint(b)
	rows, k2 := binary.Uvarint(b[k:])
	if cols != uint64(len(want)) {
		t.Fatalf("%d columns, want %d", cols, len(want))
	}
	b = b[k+k2:]
	widths := map[string]int{"UUID": 16, "DateTime64(3, 'UTC')": 8, "Float64": 8, "UInt64": 8}
	var data [][]byte
	for i, w := range want {
		var parts []string
		for range 2 {
			n, k := binary.Uvarint(b)
			parts, b = append(parts, string(b[k:k+int(n)])), b[k+int(n):]
		}
		if got := strings.Join(parts, " "); got != w {
			t.Fatalf("column %d is %q, want %q", i, got, w)
		}
		width := widths[parts[1]] * int(rows)
		data, b = append(data, b[:width]), b[width:]
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes after the columns", len(b))
	}
	return data
}
