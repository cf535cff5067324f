package pipeline

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/testenv"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/target"
)

// These tests check the exactly-once protocol as pure logic: the engine below keeps rows
// and deduplicates by token the way MergeTree's deduplication window does, and can fail
// at chosen moments to stand for a crash. End-to-end tests run the same code against
// the real broker and engine.

var testKey = []byte("0123456789abcdef-test-key")

type memEngine struct {
	mu        sync.Mutex
	tokens    map[string]bool
	rows      map[string][]string // table → rows
	keys      map[string]bool
	failOn    func(call string) error
	inserts   int
	encoded   int               // inserts of encoded rows (InsertEncoded with a block)
	badBlocks bool              // InsertEncoded rejects every block as bad data
	types     map[string]string // table → the column type its last insert declared
}

func newMemEngine() *memEngine {
	return &memEngine{tokens: map[string]bool{}, rows: map[string][]string{}, keys: map[string]bool{}, types: map[string]string{}}
}

func (e *memEngine) InsertRows(_ context.Context, db, table, columnType, token string, parts ...[]byte) error {
	rows := bytes.Join(parts, nil)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.types[db+"."+table] = columnType
	if e.failOn != nil {
		if err := e.failOn("insert"); err != nil {
			return err
		}
	}
	e.inserts++
	if e.tokens[token] {
		return nil
	}
	for _, l := range strings.Split(strings.TrimSpace(string(rows)), "\n") {
		if strings.Contains(l, "poison") {
			return fmt.Errorf("%w: bad row", engineerr.Permanent)
		}
	}
	e.tokens[token] = true
	for _, l := range strings.Split(strings.TrimSpace(string(rows)), "\n") {
		e.rows[db+"."+table] = append(e.rows[db+"."+table], l)
	}
	return nil
}

// EncodeRows implements RowsEncoder: rows holding "text" travel as text, the others
// "encoded" as their own bytes, reporting one path.
func (e *memEngine) EncodeRows(_ context.Context, columnType string, rows ...[]byte) EncodedRows {
	out := EncodedRows{ColumnType: columnType, Rows: rows}
	if joined := bytes.Join(rows, nil); !bytes.Contains(joined, []byte("text")) {
		out.Block, out.Paths = joined, map[string][]string{"i": {"Int64"}}
	}
	return out
}

// InsertEncoded implements RowsEncoder as InsertRows, counting the encoded inserts.
func (e *memEngine) InsertEncoded(ctx context.Context, db, table, token string, rows EncodedRows) error {
	if rows.Block == nil {
		return e.InsertRows(ctx, db, table, rows.ColumnType, token, rows.Rows...)
	}
	e.mu.Lock()
	bad := e.badBlocks
	if !bad {
		e.encoded++
	}
	e.mu.Unlock()
	if bad {
		return fmt.Errorf("%w: the block does not read", engineerr.Permanent)
	}
	return e.InsertRows(ctx, db, table, rows.ColumnType, token, rows.Block)
}

func (e *memEngine) ExecArgs(_ context.Context, sql string, args ...any) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failOn != nil {
		if err := e.failOn("keys"); err != nil {
			return err
		}
	}
	// INSERT INTO _svc.ingest_keys (key, table_id) SETTINGS insert_deduplication_token = ? VALUES (?, ?),...
	if strings.HasPrefix(sql, "INSERT") {
		for i := 1; i+1 < len(args); i += 2 {
			e.keys[args[i].(string)] = true
		}
	}
	return nil
}

func (e *memEngine) QueryStringsArgs(_ context.Context, sql string, args ...any) ([]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	// SELECT key FROM _svc.ingest_keys WHERE has(?, key)
	var out []string
	for _, k := range args[0].([]string) {
		if e.keys[k] {
			out = append(out, k)
		}
	}
	return out, nil
}

func (e *memEngine) count(table string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.rows[table])
}

type oneTable struct{ id uuid.UUID }

// oneTableType is oneTable's column type: typed paths, as logsearch_events has.
const oneTableType = "JSON(_time DateTime64(3, 'UTC'), _raw String)"

func (o oneTable) Target(context.Context, uuid.UUID, [][]byte) (target.Table, bool, error) {
	return target.Table{TableID: o.id, Database: "db", Table: "t__g1", Gen: 1, ColumnType: oneTableType}, true, nil
}

func (o oneTable) Generation(_ context.Context, _ uuid.UUID, gen int) (target.Table, bool, error) {
	return target.Table{TableID: o.id, Database: "db", Table: fmt.Sprintf("t__g%d", gen), Gen: gen, ColumnType: oneTableType}, true, nil
}

// pathTables is oneTable keeping a path schema: it logs how each batch's paths were
// recorded ("encoded" or "shapes") with the rows the engine held then.
type pathTables struct {
	oneTable
	eng *memEngine
	mu  *sync.Mutex
	log *[]string
}

func newPathTables(table uuid.UUID, eng *memEngine) pathTables {
	return pathTables{oneTable: oneTable{table}, eng: eng, mu: &sync.Mutex{}, log: new([]string)}
}

func (p pathTables) RecordPaths(_ context.Context, _ uuid.UUID, rows [][]byte) error {
	p.note("shapes", len(rows))
	return nil
}

func (p pathTables) RecordPathTypes(_ context.Context, _ uuid.UUID, seen map[string][]string) error {
	p.note("encoded", len(seen))
	return nil
}

func (p pathTables) note(how string, n int) {
	held := p.eng.count("db.t__g1")
	p.mu.Lock()
	defer p.mu.Unlock()
	*p.log = append(*p.log, fmt.Sprintf("%s %d before row %d", how, n, held))
}

func (p pathTables) entries() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(*p.log)
}

// memPartition is the committed state of one partition, shared by its successive owners.
type memPartition struct {
	mu      sync.Mutex
	offset  int64
	meta    string
	commits []string
	failOn  func(offset int64, meta string) error
	records []Record
}

type memAssignment struct{ p *memPartition }

func (a memAssignment) Topic() string    { return "topic" }
func (a memAssignment) Partition() int32 { return 0 }
func (a memAssignment) Committed() (int64, string) {
	a.p.mu.Lock()
	defer a.p.mu.Unlock()
	return a.p.offset, a.p.meta
}

func (a memAssignment) Commit(_ context.Context, off int64, meta string) error {
	a.p.mu.Lock()
	defer a.p.mu.Unlock()
	if a.p.failOn != nil {
		if err := a.p.failOn(off, meta); err != nil {
			return err
		}
	}
	a.p.offset, a.p.meta = off, meta
	a.p.commits = append(a.p.commits, fmt.Sprintf("%d %q", off, meta))
	return nil
}

func makeRecords(table uuid.UUID, n int, rowsPer int) []Record {
	var out []Record
	for i := range n {
		var v strings.Builder
		for j := range rowsPer {
			fmt.Fprintf(&v, "{\"i\":%d,\"j\":%d}\n", i, j)
		}
		out = append(out, Record{Topic: "topic", Offset: int64(i), Value: []byte(v.String()), Timestamp: time.Now(),
			Headers: map[string]string{HeaderTable: table.String()}})
	}
	return out
}

// own runs one owner of the partition: it delivers records from the committed offset
// until the consumer is shut down or ctx ends.
func own(t *testing.T, eng *memEngine, part *memPartition, table uuid.UUID, linger time.Duration, until func() bool) {
	t.Helper()
	ownWith(t, eng, oneTable{table}, part, linger, until)
}

// ownWith is own with the tables given.
func ownWith(t *testing.T, eng *memEngine, tables Tables, part *memPartition, linger time.Duration, until func() bool) {
	t.Helper()
	c, err := NewConsumer(ConsumerConfig{TokenKey: testKey, MaxRows: 25, Linger: linger, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond,
		Dead: producerFunc(func(context.Context, ...*Record) error { return nil }), DeadTopic: func(s string) string { return s + ".dead" }},
		eng, tables)
	if err != nil {
		t.Fatal(err)
	}
	a := memAssignment{part}
	c.Assigned(a)
	off, _ := a.Committed()
	if off < 0 {
		off = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	delivered := make(chan struct{})
	go func() {
		defer close(delivered)
		for i := off; i < int64(len(part.records)); i += 3 {
			end := min(i+3, int64(len(part.records)))
			if err := c.Deliver(ctx, "topic", 0, part.records[i:end]); err != nil {
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
	<-delivered
	c.Revoked("topic", 0)
}

type producerFunc func(ctx context.Context, recs ...*Record) error

func (f producerFunc) Produce(ctx context.Context, recs ...*Record) error { return f(ctx, recs...) }

func TestCrashesAtEveryStepNeverLoseOrDuplicate(t *testing.T) {
	table := uuid.New()
	const records, rowsPer = 40, 3
	// Each case crashes the first owner at one step of a flush (or the owner loses the
	// partition there); the second owner must end with every row exactly once.
	cases := map[string]func(eng *memEngine, part *memPartition){
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
			eng.failOn = func(call string) error { return errors.New("engine down") }
		},
		"final commit lost": func(eng *memEngine, part *memPartition) {
			n := 0
			part.failOn = func(off int64, meta string) error {
				if meta == "" {
					if n++; n >= 2 {
						return errors.New("coordinator moved")
					}
				}
				return nil
			}
		},
	}
	// Each runs with rows inserted as given and with rows encoded ahead of the insert
	// (tables that record the paths of an encoding).
	for name, crash := range cases {
		for _, encoded := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, encoded %v", name, encoded), func(t *testing.T) {
				eng := newMemEngine()
				var tables Tables = oneTable{table}
				if encoded {
					tables = newPathTables(table, eng)
				}
				part := &memPartition{offset: -1, records: makeRecords(table, records, rowsPer)}
				crash(eng, part)
				// First owner: runs into the crash for a while, then is revoked.
				start := time.Now()
				ownWith(t, eng, tables, part, time.Millisecond, func() bool { return time.Since(start) > 100*time.Millisecond })
				eng.failOn, part.failOn = nil, nil
				// Second owner: runs until everything is committed.
				ownWith(t, eng, tables, part, time.Millisecond, func() bool {
					off, meta := memAssignment{part}.Committed()
					return off == records && meta == ""
				})
				if got := eng.count("db.t__g1"); got != records*rowsPer {
					t.Fatalf("%d rows in the table, want exactly %d (commits: %v)", got, records*rowsPer, part.commits)
				}
				if encoded != (eng.encoded > 0) {
					t.Fatalf("%d encoded inserts, encoded %v", eng.encoded, encoded)
				}
			})
		}
	}
}

func TestReplayedPlanIsFlushedExactlyAsPlanned(t *testing.T) {
	table := uuid.New()
	plain := "topic/0/0-7/" + table.String()
	mac := hmac.New(sha256.New, testKey)
	mac.Write([]byte(plain))
	// A v1 plan was committed by a node before tokens were keyed: its replay must
	// repeat the plain token, or an upgrade in the middle of a plan duplicates rows.
	for version, token := range map[string]string{planV1: plain, planV2: hex.EncodeToString(mac.Sum(nil))} {
		t.Run(version, func(t *testing.T) {
			eng := newMemEngine()
			// An earlier owner committed offset 0 with a plan ending at 7, then died.
			part := &memPartition{offset: 0, meta: (&plan{end: 7, gens: map[uuid.UUID]int{table: 1}, version: version}).encode(),
				records: makeRecords(table, 20, 1)}
			own(t, eng, part, table, time.Millisecond, func() bool {
				off, _ := memAssignment{part}.Committed()
				return off == 20
			})
			if len(part.commits) == 0 || part.commits[0] != `7 ""` {
				t.Fatalf("first commit %v, want the replayed plan's end 7", part.commits)
			}
			if !eng.tokens[token] {
				t.Fatalf("replay did not reuse the planned token %s; tokens %v", token, eng.tokens)
			}
			if got := eng.count("db.t__g1"); got != 20 {
				t.Fatalf("%d rows, want 20", got)
			}
		})
	}
}

// TestNewTokensAreKeyed checks that a new plan's tokens are not computable from what
// a tenant can know (topic, partition, offsets, table id): only from the service key.
func TestNewTokensAreKeyed(t *testing.T) {
	table := uuid.New()
	eng := newMemEngine()
	part := &memPartition{offset: -1, records: makeRecords(table, 10, 1)}
	own(t, eng, part, table, time.Millisecond, func() bool {
		off, meta := memAssignment{part}.Committed()
		return off == 10 && meta == ""
	})
	if len(eng.tokens) == 0 {
		t.Fatal("no insert")
	}
	for tok := range eng.tokens {
		if strings.Contains(tok, "topic") || strings.Contains(tok, table.String()) || len(tok) != 64 {
			t.Errorf("token %q is not an HMAC", tok)
		}
	}
	for _, c := range part.commits {
		if strings.Contains(c, `"v1 `) {
			t.Errorf("new plan committed in the old format: %s", c)
		}
	}
}

func TestIdempotencyKeysDropRetriedRequests(t *testing.T) {
	table := uuid.New()
	eng := newMemEngine()
	recs := makeRecords(table, 6, 2)
	// Records 3 and 5 are client retries of records 1 and 2.
	for i, k := range []string{"a", "b", "c", "b", "d", "c"} {
		recs[i].Headers[HeaderIdem] = k
	}
	part := &memPartition{offset: -1, records: recs}
	own(t, eng, part, table, time.Millisecond, func() bool {
		off, _ := memAssignment{part}.Committed()
		return off == 6
	})
	if got := eng.count("db.t__g1"); got != 8 {
		t.Fatalf("%d rows, want 8 (4 distinct requests of 2 rows)", got)
	}
}

func TestPoisonRowsGoToDeadLettersWhileNeighboursLand(t *testing.T) {
	table := uuid.New()
	eng := newMemEngine()
	recs := makeRecords(table, 10, 4)
	recs[4].Value = []byte("{\"i\":4,\"j\":0}\n{\"poison\":true}\n{\"i\":4,\"j\":2}\n")
	part := &memPartition{offset: -1, records: recs}
	var dead []string
	var mu sync.Mutex
	c, err := NewConsumer(ConsumerConfig{TokenKey: testKey, MaxRows: 1000, Linger: time.Millisecond, RetryMin: time.Millisecond,
		Dead: producerFunc(func(_ context.Context, rs ...*Record) error {
			mu.Lock()
			defer mu.Unlock()
			for _, r := range rs {
				dead = append(dead, string(r.Value)+" because "+r.Headers[HeaderReason])
			}
			return nil
		}), DeadTopic: func(s string) string { return s + ".dead" }}, eng, oneTable{table})
	if err != nil {
		t.Fatal(err)
	}
	c.Assigned(memAssignment{part})
	if err := c.Deliver(context.Background(), "topic", 0, recs); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for off, _ := (memAssignment{part}).Committed(); off != 10 && time.Now().Before(deadline); off, _ = (memAssignment{part}).Committed() {
		time.Sleep(time.Millisecond)
	}
	c.Revoked("topic", 0)
	if got := eng.count("db.t__g1"); got != 9*4+2 {
		t.Fatalf("%d rows landed, want %d", got, 9*4+2)
	}
	if len(dead) != 1 || !strings.Contains(dead[0], "poison") || !strings.Contains(dead[0], "bad row") {
		t.Fatalf("dead letters %q", dead)
	}
}

// newDeadLetteringConsumer is a consumer of single batches (a millisecond's linger)
// whose dead letters' values are appended to dead.
func newDeadLetteringConsumer(t *testing.T, eng *memEngine, tables Tables, dead *[]string) *Consumer {
	t.Helper()
	c, err := NewConsumer(ConsumerConfig{TokenKey: testKey, MaxRows: 1000, Linger: time.Millisecond, RetryMin: time.Millisecond,
		Dead: producerFunc(func(_ context.Context, rs ...*Record) error {
			for _, r := range rs {
				*dead = append(*dead, string(r.Value))
			}
			return nil
		}), DeadTopic: func(s string) string { return s + ".dead" }}, eng, tables)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEncodedRowsArePathRecordedBeforeTheyGoIn: where the engine encodes rows ahead of
// their insert, each batch's paths are recorded from the encoding, or from the rows'
// shapes where they travel as text, before any of its rows is in the table; and a
// rejected row of an encoded batch goes to dead letters while its neighbours land.
func TestEncodedRowsArePathRecordedBeforeTheyGoIn(t *testing.T) {
	table := uuid.New()
	eng := newMemEngine()
	tables := newPathTables(table, eng)
	recs := makeRecords(table, 6, 2)
	recs[3].Value = []byte("{\"i\":3,\"text\":1}\n")                 // the second batch travels as text
	recs[5].Value = []byte("{\"i\":5,\"j\":0}\n{\"poison\":true}\n") // the third is rejected whole, then in halves
	part := &memPartition{offset: -1, records: recs}
	var dead []string
	c := newDeadLetteringConsumer(t, eng, tables, &dead)
	c.Assigned(memAssignment{part})
	for i := 0; i < len(recs); i += 2 { // a batch each: records 0-1, 2-3, 4-5
		if err := c.Deliver(context.Background(), "topic", 0, recs[i:i+2]); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for off, _ := (memAssignment{part}).Committed(); off != int64(i+2) && time.Now().Before(deadline); off, _ = (memAssignment{part}).Committed() {
			time.Sleep(time.Millisecond)
		}
	}
	c.Revoked("topic", 0)
	// The text batch's two shapes are new: the encoded batch recorded no shapes. The
	// rejected block is sent again as text, its one new shape recorded, then isolated.
	want := []string{"encoded 1 before row 0", "shapes 2 before row 4", "encoded 1 before row 7", "shapes 1 before row 7"}
	if got := tables.entries(); !slices.Equal(got, want) {
		t.Errorf("paths recorded %q, want %q", got, want)
	}
	if got := eng.count("db.t__g1"); got != 10 {
		t.Errorf("%d rows landed, want 10", got)
	}
	if len(dead) != 1 || !strings.Contains(dead[0], "poison") {
		t.Errorf("dead letters %q", dead)
	}
}

// TestRejectedBlocksAreInsertedAsText: an encoded batch the engine rejects as bad data is
// sent again as text under the same token (its shapes recorded), and no row goes to
// dead letters for the encoding's sake.
func TestRejectedBlocksAreInsertedAsText(t *testing.T) {
	table := uuid.New()
	eng := newMemEngine()
	eng.badBlocks = true
	tables := newPathTables(table, eng)
	part := &memPartition{offset: -1, records: makeRecords(table, 6, 2)}
	var dead []string
	c := newDeadLetteringConsumer(t, eng, tables, &dead)
	c.Assigned(memAssignment{part})
	if err := c.Deliver(context.Background(), "topic", 0, part.records); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for off, _ := (memAssignment{part}).Committed(); off != 6 && time.Now().Before(deadline); off, _ = (memAssignment{part}).Committed() {
		time.Sleep(time.Millisecond)
	}
	c.Revoked("topic", 0)
	if got := eng.count("db.t__g1"); got != 12 || len(dead) != 0 || eng.encoded != 0 {
		t.Fatalf("%d rows landed (want 12), %d encoded, dead letters %q", got, eng.encoded, dead)
	}
	if got, want := tables.entries(), []string{"encoded 1 before row 0", "shapes 1 before row 0"}; !slices.Equal(got, want) {
		t.Errorf("paths recorded %q, want %q", got, want)
	}
}

func TestPlanRoundTrip(t *testing.T) {
	id := uuid.New()
	p := &plan{end: 42, gens: map[uuid.UUID]int{id: 3}, version: planVersion}
	got, err := decodePlan(p.encode())
	if err != nil || got.end != 42 || got.gens[id] != 3 || got.version != planVersion {
		t.Fatalf("round trip: %v %+v", err, got)
	}
	for _, bad := range []string{"v3 1", "v1", "v1 x", "v1 1 nope", "v1 1 " + id.String() + "=x"} {
		if _, err := decodePlan(bad); err == nil {
			t.Errorf("decodePlan(%q) accepted", bad)
		}
	}
	if p, err := decodePlan(""); p != nil || err != nil {
		t.Fatalf("empty metadata: %v %v", p, err)
	}
}

func TestDrainFlushesWhatIsHeldAndCommits(t *testing.T) {
	table := uuid.New()
	eng := newMemEngine()
	part := &memPartition{offset: -1, records: makeRecords(table, 7, 3)}
	// A linger of an hour: only the drain can flush these.
	c, err := NewConsumer(ConsumerConfig{TokenKey: testKey, MaxRows: 1000, Linger: time.Hour, RetryMin: time.Millisecond}, eng, oneTable{table})
	if err != nil {
		t.Fatal(err)
	}
	c.Assigned(memAssignment{part})
	if err := c.Deliver(context.Background(), "topic", 0, part.records); err != nil {
		t.Fatal(err)
	}
	// The drain flushes records handed over but not yet taken by the worker as well.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := eng.count("db.t__g1"); got != 21 {
		t.Fatalf("%d rows after the drain, want 21", got)
	}
	if off, meta := (memAssignment{part}).Committed(); off != 7 || meta != "" {
		t.Fatalf("committed %d %q after the drain", off, meta)
	}
	if h := c.Stats().Held(); h != 0 {
		t.Fatalf("%d records held after the drain", h)
	}
	c.Shutdown(ctx)
}

// TestAnAssignmentDuringTheDrainStartsNoWorker: the group can hand a partition over
// while the consumer drains (the client leaves the group only after the drain). No worker
// may start then: it would be added to the wait group the drain is waiting on (a data race
// svcd's race build reported while a new cluster was stopped at once), and the partition is
// read again by its next owner from its committed offset, so nothing is skipped.
func TestAnAssignmentDuringTheDrainStartsNoWorker(t *testing.T) {
	table := uuid.New()
	c, err := NewConsumer(ConsumerConfig{TokenKey: testKey, MaxRows: 1000, Linger: time.Hour, RetryMin: time.Millisecond}, newMemEngine(), oneTable{table})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	part := &memPartition{offset: -1, records: makeRecords(table, 7, 3)}
	c.Assigned(memAssignment{part})
	c.mu.Lock()
	n := len(c.workers)
	c.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d workers started after the drain", n)
	}
	if off, _ := (memAssignment{part}).Committed(); off != -1 {
		t.Fatalf("committed %d after an assignment during the drain", off)
	}
	c.Shutdown(ctx)
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() (bool, string) { return cond(), "waiting for " + what })
}

func TestBatchesCloseOnRowsNotRecords(t *testing.T) {
	table := uuid.New()
	eng := newMemEngine()
	part := &memPartition{offset: -1, records: makeRecords(table, 4, 3)}
	// Four records of three rows: the fourth reaches 10 rows and closes the batch; with
	// a linger of an hour nothing else could.
	c, err := NewConsumer(ConsumerConfig{TokenKey: testKey, MaxRows: 10, Linger: time.Hour, RetryMin: time.Millisecond}, eng, oneTable{table})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Shutdown(context.Background())
	c.Assigned(memAssignment{part})
	for i := range part.records {
		if err := c.Deliver(context.Background(), "topic", 0, part.records[i:i+1]); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the batch of 12 rows", func() bool { return eng.count("db.t__g1") == 12 })
	if eng.inserts != 1 {
		t.Fatalf("%d inserts, want one batch", eng.inserts)
	}
	// The insert declares the table's own column type, which the engine parses the rows
	// into without a cast from plain JSON (issue 27).
	if got := eng.types["db.t__g1"]; got != oneTableType {
		t.Fatalf("the insert declared column type %q, want the table's %q", got, oneTableType)
	}
	waitFor(t, "nothing held", func() bool { return c.Stats().Held() == 0 })
}

func TestLingerRunsFromTheFirstHeldRecord(t *testing.T) {
	table := uuid.New()
	eng := newMemEngine()
	const n = 5000
	part := &memPartition{offset: -1, records: makeRecords(table, n, 1)}
	// A trickle faster than the linger must not hold its batch open until the size
	// limit: the linger counts from the batch's first record, not its last.
	c, err := NewConsumer(ConsumerConfig{TokenKey: testKey, MaxRows: 1 << 30, Linger: 50 * time.Millisecond, RetryMin: time.Millisecond}, eng, oneTable{table})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Shutdown(context.Background())
	c.Assigned(memAssignment{part})
	i := 0
	for ; i < n && eng.count("db.t__g1") == 0; i++ {
		if err := c.Deliver(context.Background(), "topic", 0, part.records[i:i+1]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if i == n {
		t.Fatalf("no batch closed while %d records trickled in every 5 ms with a 50 ms linger", n)
	}
	t.Logf("first batch closed after %d records", i)
}

// failingTables resolves like oneTable, except that tables in impossible make
// generation creation fail because of their rows.
type failingTables struct {
	oneTable
	impossible uuid.UUID
}

func (f failingTables) Target(ctx context.Context, id uuid.UUID, sample [][]byte) (target.Table, bool, error) {
	if id == f.impossible {
		return target.Table{}, false, fmt.Errorf("create generation 1: %w", engineerr.Permanent)
	}
	return f.oneTable.Target(ctx, id, sample)
}

// TestNoErrorLeavesThePartitionUnserved: rows that make a generation impossible go to
// dead letters, and a fatal insert error pauses the partition and replays its
// committed plan; in both cases the partition goes on to commit everything.
func TestNoErrorLeavesThePartitionUnserved(t *testing.T) {
	good, bad := uuid.New(), uuid.New()
	eng := newMemEngine()
	fatal := 3
	eng.failOn = func(call string) error {
		if call == "insert" && fatal > 0 {
			fatal--
			return fmt.Errorf("%w: code: 60, unknown table", engineerr.Fatal)
		}
		return nil
	}
	recs := append(makeRecords(good, 4, 2), makeRecords(bad, 2, 1)...)
	for i := range recs {
		recs[i].Offset = int64(i)
	}
	part := &memPartition{offset: -1, records: recs}
	var mu sync.Mutex
	var dead []string
	c, err := NewConsumer(ConsumerConfig{TokenKey: testKey, MaxRows: 1000, Linger: time.Millisecond, RetryMin: time.Millisecond,
		Dead: producerFunc(func(_ context.Context, rs ...*Record) error {
			mu.Lock()
			defer mu.Unlock()
			for _, r := range rs {
				dead = append(dead, r.Headers[HeaderTable])
			}
			return nil
		}), DeadTopic: func(s string) string { return s + ".dead" }}, eng, failingTables{oneTable{good}, bad})
	if err != nil {
		t.Fatal(err)
	}
	c.Assigned(memAssignment{part})
	defer c.Revoked("topic", 0)
	if err := c.Deliver(context.Background(), "topic", 0, recs); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		off, meta := (memAssignment{part}).Committed()
		// The reason is built on every poll, while the consumer commits: under its lock.
		part.mu.Lock()
		defer part.mu.Unlock()
		return off == int64(len(recs)) && meta == "", fmt.Sprintf("partition stalled at %d %q; commits %v", off, meta, part.commits)
	})
	if got := eng.count("db.t__g1"); got != 8 {
		t.Errorf("%d rows of the good table, want 8", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dead) != 2 || dead[0] != bad.String() {
		t.Errorf("dead letters %v, want the 2 records of %s", dead, bad)
	}
	if c.Stats().Pauses() != 3 {
		t.Errorf("%d pauses, want 3", c.Stats().Pauses())
	}
	if gens, _ := PlannedGenerations(part.meta); len(gens) != 0 {
		t.Errorf("planned generations %v", gens)
	}
}

// TestManyIdempotencyKeysAreLookedUpInBoundedStatements: a batch of many keyed requests
// is checked and recorded in statements of at most keysPerStatement keys (a statement
// with all of them outgrew the engine's max_query_size and stalled the partition), and
// their retries are still dropped.
func TestManyIdempotencyKeysAreLookedUpInBoundedStatements(t *testing.T) {
	table := uuid.New()
	eng := newMemEngine()
	const n = 2*keysPerStatement + 50
	recs := makeRecords(table, 2*n, 1)
	for i := range recs {
		recs[i].Headers[HeaderIdem] = fmt.Sprintf("key-%d", i%n) // the second half retries the first
	}
	var biggest int
	var mu sync.Mutex
	part := &memPartition{offset: -1, records: recs}
	c, err := NewConsumer(ConsumerConfig{TokenKey: testKey, MaxRows: n, Linger: time.Millisecond, RetryMin: time.Millisecond},
		boundedEngine{eng, func(args int) { mu.Lock(); biggest = max(biggest, args); mu.Unlock() }}, oneTable{table})
	if err != nil {
		t.Fatal(err)
	}
	c.Assigned(memAssignment{part})
	defer c.Revoked("topic", 0)
	if err := c.Deliver(context.Background(), "topic", 0, recs); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		off, _ := (memAssignment{part}).Committed()
		return off == int64(len(recs)), fmt.Sprintf("partition stalled at %d", off)
	})
	if got := eng.count("db.t__g1"); got != n {
		t.Errorf("%d rows, want %d (each request once)", got, n)
	}
	mu.Lock()
	defer mu.Unlock()
	if biggest > 2*keysPerStatement+1 {
		t.Errorf("a statement carried %d values", biggest)
	}
}

// boundedEngine reports how many values each keys statement carries.
type boundedEngine struct {
	*memEngine
	seen func(args int)
}

func (b boundedEngine) ExecArgs(ctx context.Context, sql string, args ...any) error {
	b.seen(len(args))
	return b.memEngine.ExecArgs(ctx, sql, args...)
}

func (b boundedEngine) QueryStringsArgs(ctx context.Context, sql string, args ...any) ([]string, error) {
	b.seen(len(args[0].([]string)))
	return b.memEngine.QueryStringsArgs(ctx, sql, args...)
}
