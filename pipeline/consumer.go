package pipeline

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/target"
)

// DefaultMaxBytes is ConsumerConfig.MaxBytes when unset.
const DefaultMaxBytes = 16 << 20

// ConsumerConfig sizes batches and retries.
type ConsumerConfig struct {
	// MaxRows, MaxSamples, MaxBytes and Linger close a batch: whichever comes first.
	MaxRows  int
	MaxBytes int
	Linger   time.Duration
	// MaxSamples bounds the samples (and histograms and exemplars) of a batch's
	// Prometheus records, which count towards it instead of MaxRows; MetricsLinger is the
	// linger of a batch holding only Prometheus records (one record of another table
	// brings it back to Linger, counted from the batch's first record). A sample costs
	// the engine little beside an insert's own cost (about 4 ms of engine CPU each, a
	// part, its merges), so metrics batches are larger and fewer: in the remote-write
	// benchmark a second's batches took the engine's CPU per sample from 1.0 to 0.45
	// core-seconds per million.
	MaxSamples    int
	MetricsLinger time.Duration
	// RetryMin and RetryMax bound the backoff while the engine is unavailable.
	RetryMin, RetryMax time.Duration
	// Dead, when set, receives rows the engine rejects; without it they are retried.
	Dead Producer
	// DeadTopic names the dead-letter topic of a source topic.
	DeadTopic func(topic string) string
	// TokenKey keys the deduplication tokens of new batch plans (HMAC-SHA256), so that
	// nobody without it can compute the token of a batch before it is inserted. Every
	// node consuming a topic must hold the same key, or a replay on another node
	// would not repeat the original tokens.
	TokenKey []byte
	Logger   *slog.Logger
	// RemoteInsertTimeout bounds an insert into a table on object storage (Target.Remote),
	// its retries included. One that does not finish in time parks the table: its rows go
	// to its dead letters and the partition's other tables go on (park.go). It needs Dead;
	// without it such inserts are retried like any other.
	RemoteInsertTimeout time.Duration
	// ParkMin and ParkMax bound how long a parked table's rows go to its dead letters
	// before a batch tries it again (the step doubles from ParkMin to ParkMax).
	ParkMin, ParkMax time.Duration
	// PrometheusDDL returns the statements creating the Prometheus app's tables in an
	// engine database (promstore.DDL); without it Prometheus records are not inserted.
	PrometheusDDL func(database string) []string
	// Cluster is the cluster whose topic this consumer reads, and Homes the catalog: a
	// record whose headers name a table or database that is not this cluster's, or not
	// in the database or organization they name, is dropped and counted (Stats.Refused),
	// never inserted (claims.go). Without Homes headers are not checked (unit tests of
	// batching only).
	Cluster uuid.UUID
	Homes   Homes
}

// Validate fills defaults.
func (c *ConsumerConfig) Validate() error {
	if c.MaxRows <= 0 {
		c.MaxRows = 100_000
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Linger <= 0 {
		c.Linger = 200 * time.Millisecond
	}
	if c.MaxSamples <= 0 {
		c.MaxSamples = 1_000_000
	}
	if c.MetricsLinger <= 0 {
		c.MetricsLinger = time.Second
	}
	if c.RetryMin <= 0 {
		c.RetryMin = 100 * time.Millisecond
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 5 * time.Second
	}
	if c.RemoteInsertTimeout <= 0 {
		c.RemoteInsertTimeout = time.Minute
	}
	if c.ParkMin <= 0 {
		c.ParkMin = 30 * time.Second
	}
	if c.ParkMax < c.ParkMin {
		c.ParkMax = max(c.ParkMin, 10*time.Minute)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Dead != nil && c.DeadTopic == nil {
		return errors.New("consumer: dead-letter producer without a topic mapping")
	}
	if len(c.TokenKey) < 16 {
		return errors.New("consumer: a token key of at least 16 bytes is needed (the service secret)")
	}
	return nil
}

// Consumer batches records of assigned partitions into the engine, exactly once (see
// DESIGN.md, "Exactly-once from Kafka to the engine").
type Consumer struct {
	cfg     ConsumerConfig
	engine  Engine
	tables  Tables
	stats   *Stats
	mu      sync.Mutex
	workers map[partitionID]*worker
	// closed (under mu) is set by Drain and Shutdown before they wait for the workers:
	// an assignment the group hands over after it starts no worker, so no worker is
	// added to wg while it is waited on (the partition is read again, from its committed
	// offset, by its next owner).
	closed bool
	wg     sync.WaitGroup
	// draining is closed by Drain: workers flush what they hold and stop.
	draining  chan struct{}
	drainOnce sync.Once
	shapes    *shapeCache // row shapes whose paths were recorded (paths.go)
	promReady sync.Map    // engine databases whose Prometheus tables exist (prometheus.go)
}

type partitionID struct {
	topic     string
	partition int32
}

// NewConsumer returns a consumer inserting into engine.
func NewConsumer(cfg ConsumerConfig, engine Engine, tables Tables) (*Consumer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Consumer{cfg: cfg, engine: engine, tables: tables, stats: newStats(), workers: map[partitionID]*worker{},
		draining: make(chan struct{}), shapes: newShapeCache()}, nil
}

// Stats returns the consumer's live counters.
func (c *Consumer) Stats() *Stats { return c.stats }

// Assigned starts consuming a partition from its committed offset.
func (c *Consumer) Assigned(a Assignment) {
	id := partitionID{a.Topic(), a.Partition()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if old := c.workers[id]; old != nil {
		old.stop()
	}
	off, meta := a.Committed()
	ctx, cancel := context.WithCancel(context.Background())
	w := &worker{c: c, a: a, in: make(chan []Record, 4), next: off, cancel: cancel, done: make(chan struct{})}
	if p, err := decodePlan(meta); err != nil {
		c.cfg.Logger.Error("ignoring unreadable batch plan", "topic", id.topic, "partition", id.partition, "metadata", meta, "err", err)
	} else {
		w.plan = p
	}
	c.workers[id] = w
	c.wg.Go(func() { w.run(ctx) })
}

// Revoked stops consuming a partition and waits for its worker to stop. Unflushed rows
// are dropped: the next owner reads them again from the committed offset.
func (c *Consumer) Revoked(topic string, partition int32) {
	id := partitionID{topic, partition}
	c.mu.Lock()
	w := c.workers[id]
	delete(c.workers, id)
	c.mu.Unlock()
	if w != nil {
		w.stop()
	}
}

// Deliver hands fetched records of one partition to its worker, blocking while the
// worker is busy: that is the backpressure that stops fetching the partition when its
// table is slow or failing.
func (c *Consumer) Deliver(ctx context.Context, topic string, partition int32, recs []Record) error {
	return c.deliver(ctx, partitionID{topic, partition}, nil, recs)
}

// DeliverTo is Deliver for the worker of assignment a only: records fetched for an
// earlier assignment of the partition are dropped, not handed to a later owner's worker
// (which starts again from the committed offset).
func (c *Consumer) DeliverTo(ctx context.Context, a Assignment, recs []Record) error {
	return c.deliver(ctx, partitionID{a.Topic(), a.Partition()}, a, recs)
}

func (c *Consumer) deliver(ctx context.Context, id partitionID, a Assignment, recs []Record) error {
	c.mu.Lock()
	w := c.workers[id]
	c.mu.Unlock()
	if w == nil || (a != nil && w.a != a) {
		return nil // revoked meanwhile; the new owner reads these again
	}
	select {
	case w.in <- recs:
		return nil
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Drain makes every worker insert and commit the records it holds, then stop; it returns
// when they did or ctx ended. The log adapter calls it after it stopped fetching and
// before it leaves the group, so that a clean shutdown leaves nothing behind.
func (c *Consumer) Drain(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.drainOnce.Do(func() { close(c.draining) })
	return c.wait(ctx)
}

// Shutdown stops every worker. Unflushed rows stay in the log, uncommitted.
func (c *Consumer) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	ws := c.workers
	c.workers = map[partitionID]*worker{}
	c.mu.Unlock()
	for _, w := range ws {
		w.cancel()
	}
	return c.wait(ctx)
}

// wait returns when every worker has stopped or ctx ended.
func (c *Consumer) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deadLettered is the generation a plan gives a table whose rows went to dead letters
// before the plan was committed: a replay inserts nothing for it.
const deadLettered = -1

// plan is a flush's identity, stored with the committed offset before the insert.
type plan struct {
	end  int64
	gens map[uuid.UUID]int
	// version is the format the plan was committed in, which also fixes how its
	// tokens are made: v1 plans (written before tokens were keyed) replay with their
	// plain tokens, so an upgrade in the middle of a plan does not duplicate rows.
	version string
}

const (
	planV1 = "v1" // tokens <topic>/<partition>/<C>-<E>/<table id>, guessable
	planV2 = "v2" // tokens HMAC-SHA256(service secret, the v1 token), hex
	// planVersion is the format new plans are committed in.
	planVersion = planV2
)

func (p *plan) encode() string {
	var b strings.Builder
	b.WriteString(p.version)
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(p.end, 10))
	for id, g := range p.gens {
		fmt.Fprintf(&b, " %s=%d", id, g)
	}
	return b.String()
}

func decodePlan(s string) (*plan, error) {
	if s == "" {
		return nil, nil
	}
	f := strings.Fields(s)
	if len(f) < 2 || (f[0] != planV1 && f[0] != planV2) {
		return nil, fmt.Errorf("unknown plan format %q", s)
	}
	end, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("plan end: %w", err)
	}
	p := &plan{end: end, gens: map[uuid.UUID]int{}, version: f[0]}
	for _, kv := range f[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("plan entry %q", kv)
		}
		id, err := uuid.Parse(k)
		if err != nil {
			return nil, fmt.Errorf("plan table id: %w", err)
		}
		g, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("plan generation: %w", err)
		}
		p.gens[id] = g
	}
	return p, nil
}

// worker consumes one partition.
type worker struct {
	c     *Consumer
	a     Assignment
	in    chan []Record
	next  int64 // first offset of the pending batch, -1 until known
	plan  *plan // a plan committed by an earlier owner, replayed first
	buf   []Record
	bytes int // bytes of buf
	rows  int // rows of buf's table records: each holds newline-terminated rows
	// samples are the rows of buf's Prometheus records (HeaderRows); metricsOnly says
	// buf holds no other record, opened when its first record was held.
	samples     int
	metricsOnly bool
	opened      time.Time
	cancel      context.CancelFunc
	done        chan struct{}
}

func (w *worker) stop() {
	w.cancel()
	<-w.done
}

func (w *worker) run(ctx context.Context) {
	defer close(w.done)
	defer w.c.stats.unstalled(partitionID{w.a.Topic(), w.a.Partition()})
	defer func() { w.c.stats.held.Add(-int64(len(w.buf))) }()
	log := w.c.cfg.Logger.With("topic", w.a.Topic(), "partition", w.a.Partition())
	// The linger runs from the moment a new batch's first record is held: arrivals do
	// not extend it, so a steady trickle still closes a batch every linger. A batch of
	// Prometheus records only lingers MetricsLinger; a record of a table shortens it to
	// Linger from the same moment.
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	armed := false
	var deadline time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case recs := <-w.in:
			w.hold(recs)
		case <-linger.C:
			armed = false
			if w.plan == nil && len(w.buf) > 0 {
				if err := w.flushOrPause(ctx, log, len(w.buf)); err != nil {
					return
				}
			}
		case <-w.c.draining:
			// Records already handed over are held too: the reader stopped fetching
			// before the drain, so nothing else arrives. A replayed plan still waiting
			// for its last records stays for the next owner; everything else is
			// flushed now.
			for pending := true; pending; {
				select {
				case recs := <-w.in:
					w.hold(recs)
				default:
					pending = false
				}
			}
			if w.plan == nil && len(w.buf) > 0 {
				_ = w.flushOrPause(ctx, log, len(w.buf))
			}
			return
		}
		if err := w.closeBatches(ctx, log); err != nil {
			return
		}
		switch open := w.plan == nil && len(w.buf) > 0; {
		case open && (!armed || !deadline.Equal(w.deadline())):
			deadline = w.deadline()
			linger.Reset(time.Until(deadline))
			armed = true
		case !open && armed:
			linger.Stop()
			armed = false
		}
	}
}

// hold appends fetched records to the pending batch.
func (w *worker) hold(recs []Record) {
	for _, r := range recs {
		if w.next < 0 {
			w.next = r.Offset
		}
		w.count(&r)
		w.buf = append(w.buf, r)
	}
	w.c.stats.held.Add(int64(len(recs)))
}

// count adds r to the pending batch's sizes (before r joins buf).
func (w *worker) count(r *Record) {
	metrics := r.Headers[HeaderFormat] == FormatPrometheus
	if len(w.buf) == 0 {
		w.opened, w.metricsOnly = time.Now(), true
	}
	w.metricsOnly = w.metricsOnly && metrics
	w.bytes += len(r.Value)
	if metrics {
		w.samples += recordRows(r)
	} else {
		w.rows += recordRows(r)
	}
}

// deadline is when the pending batch closes on time.
func (w *worker) deadline() time.Time {
	if w.metricsOnly {
		return w.opened.Add(w.c.cfg.MetricsLinger)
	}
	return w.opened.Add(w.c.cfg.Linger)
}

// closeBatches flushes what is due without waiting: a replayed plan as soon as its last
// record arrived, exactly as planned, and a new batch once it reached its size limits.
// Batches close on time in run.
func (w *worker) closeBatches(ctx context.Context, log *slog.Logger) error {
	if w.plan != nil {
		n := 0
		for n < len(w.buf) && w.buf[n].Offset < w.plan.end {
			n++
		}
		if n == 0 || (n == len(w.buf) && w.buf[n-1].Offset != w.plan.end-1) {
			return nil
		}
		if err := w.flushOrPause(ctx, log, n); err != nil {
			return err
		}
	}
	if w.rows >= w.c.cfg.MaxRows || w.samples >= w.c.cfg.MaxSamples || w.bytes >= w.c.cfg.MaxBytes {
		return w.flushOrPause(ctx, log, len(w.buf))
	}
	return nil
}

// stallAfter is how many failed attempts in a row make a paused partition stalled:
// reported in Stats.Stalls (the connector's state) and logged with its reason.
const stallAfter = 5

// flushOrPause flushes the first n held records. A flush fails only on a fatal error
// (or when ctx ends: the partition was revoked or the consumer shut down): the worker
// then keeps the partition and its records, pauses (fetching stops behind it, the
// node's other partitions go on), and replays the batch from its committed plan, so
// that tables are resolved again, with backoff up to 4×RetryMax. After stallAfter
// attempts the partition is reported stalled until its batch lands. It never skips
// the rows nor leaves the partition owned and unserved. The error returned is ctx's.
func (w *worker) flushOrPause(ctx context.Context, log *slog.Logger, n int) error {
	delay := w.c.cfg.RetryMin
	id := partitionID{w.a.Topic(), w.a.Partition()}
	var since time.Time
	for attempt := 1; ; attempt++ {
		err := w.flush(ctx, n)
		if err == nil || ctx.Err() != nil {
			if attempt > stallAfter {
				w.c.stats.unstalled(id)
				log.Info("stalled partition recovered", "attempts", attempt-1, "stalled_for", time.Since(since).Round(time.Millisecond))
			}
			return ctx.Err()
		}
		if attempt == 1 {
			since = time.Now()
		}
		w.c.stats.paused()
		reason := stallReason(err)
		if attempt >= stallAfter {
			w.c.stats.stalled(id, since, attempt, reason)
		}
		if attempt == 1 || attempt == stallAfter || attempt%10 == 0 {
			log.Error("batch failed; partition paused, the batch is replayed from its plan", "attempt", attempt,
				"stalled", attempt >= stallAfter, "reason", reason, "pause", delay)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 4*w.c.cfg.RetryMax)
	}
}

// stepError names the table whose step of a batch failed.
type stepError struct {
	step  string
	table uuid.UUID
	err   error
}

func (e *stepError) Error() string { return fmt.Sprintf("%s table %s: %v", e.step, e.table, e.err) }
func (e *stepError) Unwrap() error { return e.err }

// stallReason describes a failed batch without the engine's text: the step, the table,
// the class and the engine's error code when there is one.
func stallReason(err error) string {
	var b strings.Builder
	var se *stepError
	if errors.As(err, &se) {
		fmt.Fprintf(&b, "%s table %s: ", se.step, se.table)
	}
	switch {
	case errors.Is(err, engineerr.Fatal):
		b.WriteString("statement refused by the engine")
	case errors.Is(err, engineerr.Permanent):
		b.WriteString("rows rejected by the engine")
	default:
		b.WriteString("batch failed")
	}
	if e, ok := engineerr.As(err); ok {
		fmt.Fprintf(&b, " (engine error code %d)", e.Code)
	}
	return b.String()
}

// flush inserts the first n buffered records as one planned batch.
func (w *worker) flush(ctx context.Context, n int) error {
	recs := w.buf[:n]
	start := w.next
	end := recs[n-1].Offset + 1
	replay := w.plan
	if replay != nil {
		end = replay.end
	}
	groups := w.groupByTable(recs, replay == nil)
	p := replay
	if p == nil {
		p = &plan{end: end, gens: map[uuid.UUID]int{}, version: planVersion}
		for _, g := range groups {
			if isPrometheus(g) {
				p.gens[g.table] = 0 // plain tables: no generations
				continue
			}
			if w.c.cfg.Dead != nil && w.c.stats.parked.holds(g.table, time.Now()) {
				// Its storage failed within the current step: its rows go to its dead
				// letters before the plan is committed, which records that, and the
				// partition goes on.
				if err := w.deadLetterGroup(ctx, g, w.parkedReason(g.table, true)); err != nil {
					return err
				}
				p.gens[g.table] = deadLettered
				continue
			}
			var t target.Table
			var ok bool
			err := w.retry(ctx, func() (err error) {
				t, ok, err = w.c.tables.Target(ctx, g.table, sample(g.recs))
				return err
			})
			if errors.Is(err, engineerr.Permanent) && w.c.cfg.Dead != nil {
				// These rows make a generation impossible. They go to dead letters
				// before the plan is committed, which records that.
				if err := w.deadLetterGroup(ctx, g, err); err != nil {
					return err
				}
				p.gens[g.table] = deadLettered
				continue
			}
			if err != nil {
				return &stepError{step: "resolve", table: g.table, err: err}
			}
			if ok {
				p.gens[g.table] = t.Gen
			}
		}
		// A node that lost the partition is fenced here: the group coordinator refuses
		// its commit, so it never inserts a batch the new owner did not plan. Its
		// revocation cancels ctx and ends the retries.
		if err := w.retry(ctx, func() error { return w.a.Commit(ctx, start, p.encode()) }); err != nil {
			return fmt.Errorf("commit batch plan [%d, %d): %w", start, end, err)
		}
		// From here the batch is the committed plan: a failure replays exactly it.
		w.plan = p
	}
	if err := w.recordPaths(ctx, groups); err != nil {
		return err
	}
	for _, g := range groups {
		if p.gens[g.table] == deadLettered {
			continue
		}
		if err := w.insertGroup(ctx, p, start, end, g); err != nil {
			return &stepError{step: "insert into", table: g.table, err: err}
		}
	}
	if err := w.recordKeys(ctx, p, start, end, groups); err != nil {
		return err
	}
	if err := w.retry(ctx, func() error { return w.a.Commit(ctx, end, "") }); err != nil {
		return fmt.Errorf("commit offset %d: %w", end, err)
	}
	now := time.Now()
	for _, g := range groups {
		if !g.dead {
			w.c.stats.inserted(g.table, g.rows, now.Sub(g.oldest))
		}
	}
	rest := w.buf[n:]
	w.buf = w.buf[:0]
	w.c.stats.held.Add(-int64(n))
	w.bytes, w.rows, w.samples = 0, 0, 0
	for _, r := range rest {
		w.count(&r)
		w.buf = append(w.buf, r)
	}
	w.next, w.plan = end, nil
	return nil
}

var newline = []byte{'\n'}

func countLines(b []byte) int { return bytes.Count(b, newline) }

type group struct {
	table  uuid.UUID
	recs   []Record
	rows   int
	oldest time.Time
	dead   bool // its rows went to dead letters whole
}

// groupByTable groups the records of a batch by table, leaving out those whose headers
// the catalog does not confirm (checkClaim). The catalog answers the same on a replay
// unless a table was deleted meanwhile, whose rows are dropped either way. What it
// leaves out is counted and logged once, by the first attempt (count).
func (w *worker) groupByTable(recs []Record, count bool) []*group {
	var out []*group
	idx := map[uuid.UUID]*group{}
	refused, missing := 0, 0
	claims := map[[4]string]claim{}
	defer func() {
		if !count {
			return
		}
		if refused > 0 {
			w.c.stats.refused.Add(int64(refused))
			w.c.cfg.Logger.Warn("records whose headers name a table or database not of this cluster, or of another organization, dropped",
				"topic", w.a.Topic(), "partition", w.a.Partition(), "records", refused)
		}
		if missing > 0 {
			w.c.cfg.Logger.Warn("records for a deleted table or database dropped", "topic", w.a.Topic(), "partition", w.a.Partition(), "records", missing)
		}
	}()
	for _, r := range recs {
		id, err := uuid.Parse(r.Headers[HeaderTable])
		if err != nil {
			continue // not written by this service; nothing to insert
		}
		if w.c.cfg.Homes != nil {
			// A batch's records mostly make the same few claims: each is looked up once.
			k := [4]string{r.Headers[HeaderTable], r.Headers[HeaderDatabase], r.Headers[HeaderOrg], r.Headers[HeaderFormat]}
			c, seen := claims[k]
			if !seen {
				c = checkClaim(w.c.cfg.Homes, w.c.cfg.Cluster, &r)
				claims[k] = c
			}
			switch c {
			case claimForged:
				refused++
				continue
			case claimMissing:
				missing++
				if count {
					w.c.stats.droppedForMissingTable(recordRows(&r))
				}
				continue
			}
		}
		g := idx[id]
		if g == nil {
			g = &group{table: id, oldest: r.Timestamp}
			idx[id] = g
			out = append(out, g)
		}
		g.recs = append(g.recs, r)
		g.rows += recordRows(&r)
		if r.Timestamp.Before(g.oldest) {
			g.oldest = r.Timestamp
		}
	}
	return out
}

// sample returns up to 1,000 rows to infer sorting-key types from.
func sample(recs []Record) [][]byte {
	var out [][]byte
	for _, r := range recs {
		for line := range bytes.Lines(r.Value) {
			out = append(out, bytes.TrimRight(line, "\n"))
			if len(out) == 1000 {
				return out
			}
		}
	}
	return out
}

// token is the deduplication token of one insert of a plan; what names what it
// deduplicates (a table id, or "keys").
func (w *worker) token(p *plan, start, end int64, what string) string {
	plain := fmt.Sprintf("%s/%d/%d-%d/%s", w.a.Topic(), w.a.Partition(), start, end, what)
	if p.version == planV1 {
		return plain
	}
	m := hmac.New(sha256.New, w.c.cfg.TokenKey)
	m.Write([]byte(plain))
	return hex.EncodeToString(m.Sum(nil))
}

func (w *worker) insertGroup(ctx context.Context, p *plan, start, end int64, g *group) error {
	gen, planned := p.gens[g.table]
	if planned && isPrometheus(g) {
		return w.insertPrometheus(ctx, p, start, end, g)
	}
	if !planned {
		w.c.stats.droppedForMissingTable(g.rows)
		w.c.cfg.Logger.Warn("rows for a deleted table dropped", "table", g.table, "rows", g.rows)
		return nil
	}
	var tgt target.Table
	var ok bool
	err := w.retry(ctx, func() (err error) {
		tgt, ok, err = w.c.tables.Generation(ctx, g.table, gen)
		return err
	})
	if err != nil {
		return fmt.Errorf("resolve table %s generation %d: %w", g.table, gen, err)
	}
	if !ok {
		w.c.stats.droppedForMissingTable(g.rows)
		return nil
	}
	if tgt.Remote && w.c.cfg.Dead != nil {
		return w.insertRemote(ctx, p, start, end, g, tgt)
	}
	return w.insertRows(ctx, p, start, end, g, tgt)
}

// insertRemote inserts a group into a table on object storage within
// RemoteInsertTimeout. A parked table's rows, and those of an insert that ran out of
// time, go to the table's dead letters instead (durably, before the batch's offset is
// committed), so that its storage never holds the partition's other tables. A replay of
// the plan repeats the insert with the same token, so rows the engine took after all are
// not inserted twice; a row may then be both in the table and in its dead letters.
func (w *worker) insertRemote(ctx context.Context, p *plan, start, end int64, g *group, tgt target.Table) error {
	parked := &w.c.stats.parked
	if parked.skip(g.table, time.Now()) {
		return w.deadLetterGroup(ctx, g, w.parkedReason(g.table, true))
	}
	log := w.c.cfg.Logger.With("topic", w.a.Topic(), "partition", w.a.Partition())
	if _, retry := parked.get(g.table); retry {
		// Tried again after a step: only if the storage answers at all. The engine keeps
		// an insert it cannot finish running after its client left, holding one of its
		// connections, so an insert sent to a storage that still does not answer would
		// add one more each step.
		if prober, ok := w.c.tables.(StorageProber); ok {
			if err := prober.ProbeStorage(ctx, g.table); err != nil && ctx.Err() == nil {
				reason := &StorageUnavailableError{Table: g.table, Timeout: w.c.cfg.RemoteInsertTimeout, Unreachable: true}
				parked.park(g.table, time.Now(), w.c.cfg.ParkMin, w.c.cfg.ParkMax, reason.Error(), log)
				return w.deadLetterGroup(ctx, g, reason)
			}
		}
	}
	ictx, cancel := context.WithTimeout(ctx, w.c.cfg.RemoteInsertTimeout)
	err := w.insertRows(ictx, p, start, end, g, tgt)
	timedOut := ictx.Err() != nil && ctx.Err() == nil
	cancel()
	switch {
	case err == nil:
		parked.landed(g.table, log)
		return nil
	case timedOut:
		reason := w.parkedReason(g.table, false)
		parked.park(g.table, time.Now(), w.c.cfg.ParkMin, w.c.cfg.ParkMax, reason.Error(), log)
		return w.deadLetterGroup(ctx, g, reason)
	default:
		parked.release(g.table)
		return err
	}
}

func (w *worker) parkedReason(table uuid.UUID, parked bool) error {
	return &StorageUnavailableError{Table: table, Timeout: w.c.cfg.RemoteInsertTimeout, Parked: parked}
}

// insertRows inserts a group's rows, without those whose idempotency key was seen.
func (w *worker) insertRows(ctx context.Context, p *plan, start, end int64, g *group, tgt target.Table) error {
	recs, err := w.withoutSeenKeys(ctx, g)
	if err != nil {
		return err
	}
	// The record values go to the engine as they are (read only), not joined into one
	// copy first: the engine client reads them straight into its request.
	rows := make([][]byte, 0, len(recs))
	for _, r := range recs {
		if len(r.Value) > 0 {
			rows = append(rows, r.Value)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	token := w.token(p, start, end, g.table.String())
	if !w.encodesRows() {
		return w.insert(ctx, tgt, token, rows, recs[0])
	}
	// Encoded once: the paths the encoding brings are recorded before the rows go in, so
	// rows visible to queries are always typed, and a retry sends the same block.
	enc := w.c.engine.(RowsEncoder)
	e := enc.EncodeRows(ctx, tgt.ColumnType, rows...)
	if err := w.recordEncodedPaths(ctx, g.table, e); err != nil {
		return err
	}
	err = w.retry(ctx, func() error { return enc.InsertEncoded(ctx, tgt.Database, tgt.Table, token, e) })
	if err != nil && e.Block != nil && errors.Is(err, engineerr.Permanent) {
		// A rejected block is sent again as text under the same token (the rejected
		// insert took nothing), so that an encoding the engine does not read costs no row;
		// what the engine rejects as text is isolated as text.
		// The engine's code only: its message may quote the rows.
		var code int32
		if ee := (*engineerr.Error)(nil); errors.As(err, &ee) {
			code = ee.Code
		}
		w.c.cfg.Logger.Warn("encoded rows rejected; inserting them as text", "table", g.table, "engine_code", code)
		e.Block = nil
		if err := w.recordShapes(ctx, g.table, rows); err != nil {
			return err
		}
		err = w.retry(ctx, func() error { return enc.InsertEncoded(ctx, tgt.Database, tgt.Table, token, e) })
	}
	if err == nil || !errors.Is(err, engineerr.Permanent) || w.c.cfg.Dead == nil {
		return err
	}
	return w.isolate(ctx, tgt, token, rows, recs[0], err)
}

// insert inserts rows, retrying while the engine is unavailable. Rows the engine rejects
// are split in halves until the rejected ones are isolated and sent to dead letters;
// every split has its own token, derived from the parent's, so replays repeat it.
func (w *worker) insert(ctx context.Context, t target.Table, token string, rows [][]byte, origin Record) error {
	err := w.retry(ctx, func() error { return w.c.engine.InsertRows(ctx, t.Database, t.Table, t.ColumnType, token, rows...) })
	if err == nil || !errors.Is(err, engineerr.Permanent) {
		return err
	}
	if w.c.cfg.Dead == nil {
		return err
	}
	return w.isolate(ctx, t, token, rows, origin, err)
}

// isolate inserts rows the engine rejected under token (with err) in halves, each under
// its own token derived from it, down to the rejected rows, which go to dead letters.
func (w *worker) isolate(ctx context.Context, t target.Table, token string, rows [][]byte, origin Record, err error) error {
	var lines [][]byte
	for _, part := range rows {
		lines = append(lines, bytes.SplitAfter(part, []byte{'\n'})...)
	}
	lines = slices.DeleteFunc(lines, func(l []byte) bool { return len(l) == 0 })
	if len(lines) <= 1 {
		return w.deadLetter(ctx, t, token, bytes.Join(lines, nil), origin, err)
	}
	half := len(lines) / 2
	if e := w.insert(ctx, t, token+"/a", lines[:half], origin); e != nil {
		return e
	}
	return w.insert(ctx, t, token+"/b", lines[half:], origin)
}

// deadLetterGroup sends every record of a group to dead letters, whole.
func (w *worker) deadLetterGroup(ctx context.Context, g *group, reason error) error {
	g.dead = true
	for _, r := range g.recs {
		t := target.Table{TableID: g.table, Database: r.Headers[HeaderDatabase]}
		key := fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)
		if err := w.deadLetter(ctx, t, key, r.Value, r, reason); err != nil {
			return err
		}
	}
	return nil
}

func (w *worker) deadLetter(ctx context.Context, t target.Table, token string, row []byte, origin Record, reason error) error {
	rec := &Record{
		Topic: w.c.cfg.DeadTopic(w.a.Topic()),
		Key:   []byte(token),
		Value: row,
		Headers: map[string]string{
			HeaderTable:    t.TableID.String(),
			HeaderDatabase: t.Database,
			HeaderName:     origin.Headers[HeaderName],
			HeaderOrg:      origin.Headers[HeaderOrg],
			HeaderReason:   reason.Error(),
			"source":       fmt.Sprintf("%s/%d/%d", origin.Topic, origin.Partition, origin.Offset),
		},
	}
	if err := w.retry(ctx, func() error { return w.c.cfg.Dead.Produce(ctx, rec) }); err != nil {
		return fmt.Errorf("dead-letter a rejected row: %w", err)
	}
	w.c.stats.deadLettered(t.TableID, bytes.Count(row, newline))
	return nil
}

// retry runs op until it succeeds, fails with an engineerr.Permanent or engineerr.Fatal error, or ctx ends.
// Other errors are the engine or the log being away: they are retried with backoff,
// which ctx (revocation, shutdown) interrupts.
func (w *worker) retry(ctx context.Context, op func() error) error {
	delay := w.c.cfg.RetryMin
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || errors.Is(err, engineerr.Permanent) || errors.Is(err, engineerr.Fatal) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.c.stats.retried()
		if attempt == 1 || attempt%20 == 0 {
			w.c.cfg.Logger.Warn("batch step failed; retrying", "topic", w.a.Topic(), "partition", w.a.Partition(),
				"attempt", attempt, "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, w.c.cfg.RetryMax)
	}
}

// PlannedGenerations reads the table generations a committed batch plan will insert
// into; empty metadata plans nothing.
func PlannedGenerations(metadata string) (map[uuid.UUID]int, error) {
	p, err := decodePlan(metadata)
	if err != nil || p == nil {
		return nil, err
	}
	out := map[uuid.UUID]int{}
	for id, g := range p.gens {
		if g != deadLettered {
			out[id] = g
		}
	}
	return out, nil
}
