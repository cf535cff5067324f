package pipeline

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Stats counts what the consumer did, for metrics and freshness.
type Stats struct {
	rows, retries, duplicates, dropped, dead atomic.Int64
	// pauses counts batches that failed fatally and were replayed after a pause.
	pauses atomic.Int64
	// held counts log records fetched and waiting for their batch to close.
	held atomic.Int64
	// refused counts records whose headers the catalog contradicts (claims.go).
	refused atomic.Int64

	mu     sync.Mutex
	tables map[uuid.UUID]*TableStats
	stalls map[partitionID]*Stall
	// parked are tables whose storage failed (park.go).
	parked parking
}

// Stall is a partition whose batch failed fatally several times in a row: it stays
// with this node, paused, and replays its batch with backoff until the cause is fixed
// (its rows are never skipped). Reason names the step, the table and the engine's
// error code, never the engine's text (a statement echoed in it would carry the
// batch's deduplication token).
type Stall struct {
	Topic     string    `json:"-"`
	Partition int32     `json:"partition"`
	Since     time.Time `json:"since"`
	Attempts  int       `json:"attempts"`
	Reason    string    `json:"reason"`
}

// TableStats is the freshness of one table: how long rows took from the log's
// acknowledgment to being queryable.
type TableStats struct {
	Rows         int64
	DeadLettered int64
	LastInsert   time.Time
	LastLag      time.Duration
	lags         []time.Duration // recent lags, bounded
}

const lagWindow = 1024

func newStats() *Stats {
	return &Stats{tables: map[uuid.UUID]*TableStats{}, stalls: map[partitionID]*Stall{},
		parked: parking{tables: map[uuid.UUID]*Parked{}}}
}

// stalled records that a partition's batch failed attempts times in a row since since.
func (s *Stats) stalled(id partitionID, since time.Time, attempts int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalls[id] = &Stall{Topic: id.topic, Partition: id.partition, Since: since, Attempts: attempts, Reason: reason}
}

// unstalled clears a partition's stall: its batch landed, or it is no longer ours.
func (s *Stats) unstalled(id partitionID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.stalls, id)
}

// Stalls returns the partitions of this consumer that are stalled, by topic and partition.
func (s *Stats) Stalls() []Stall {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Stall, 0, len(s.stalls))
	for _, st := range s.stalls {
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

func (s *Stats) table(id uuid.UUID) *TableStats {
	t := s.tables[id]
	if t == nil {
		t = &TableStats{}
		s.tables[id] = t
	}
	return t
}

func (s *Stats) inserted(id uuid.UUID, rows int, lag time.Duration) {
	s.rows.Add(int64(rows))
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.table(id)
	t.Rows += int64(rows)
	t.LastInsert, t.LastLag = time.Now(), lag
	if len(t.lags) == lagWindow {
		copy(t.lags, t.lags[1:])
		t.lags = t.lags[:lagWindow-1]
	}
	t.lags = append(t.lags, lag)
}

func (s *Stats) deadLettered(id uuid.UUID, rows int) {
	s.dead.Add(int64(rows))
	s.mu.Lock()
	s.table(id).DeadLettered += int64(rows)
	s.mu.Unlock()
}

func (s *Stats) retried()                        { s.retries.Add(1) }
func (s *Stats) paused()                         { s.pauses.Add(1) }
func (s *Stats) duplicateRequest()               { s.duplicates.Add(1) }
func (s *Stats) droppedForMissingTable(rows int) { s.dropped.Add(int64(rows)) }

// Refused returns how many records were dropped because their headers named a table or
// database not of the consumer's cluster, or of another organization than they said.
func (s *Stats) Refused() int64 { return s.refused.Load() }

// Totals returns the consumer-wide counters.
func (s *Stats) Totals() (rows, retries, duplicateRequests, droppedRows, deadLettered int64) {
	return s.rows.Load(), s.retries.Load(), s.duplicates.Load(), s.dropped.Load(), s.dead.Load()
}

// Pauses returns how many times a batch failed fatally and its partition paused
// before replaying it.
func (s *Stats) Pauses() int64 { return s.pauses.Load() }

// Held returns how many log records (accepted requests) this consumer fetched and holds
// in batches that have not closed yet.
func (s *Stats) Held() int64 { return s.held.Load() }

// Freshness returns a table's last insert, row count and ack-to-queryable lag
// percentiles over its recent batches.
func (s *Stats) Freshness(id uuid.UUID) (t TableStats, p50, p99 time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.tables[id]
	if ts == nil {
		return TableStats{}, 0, 0, false
	}
	lags := append([]time.Duration(nil), ts.lags...)
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	pct := func(p float64) time.Duration {
		if len(lags) == 0 {
			return 0
		}
		return lags[min(len(lags)-1, int(p*float64(len(lags))))]
	}
	out := *ts
	out.lags = nil
	return out, pct(0.50), pct(0.99), true
}

// Parked returns the parking of a table whose storage failed: its rows go to its dead
// letters until it is tried again.
func (s *Stats) Parked(id uuid.UUID) (Parked, bool) { return s.parked.get(id) }

// Tables returns the ids of the tables this consumer inserted into.
func (s *Stats) Tables() []uuid.UUID {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]uuid.UUID, 0, len(s.tables))
	for id := range s.tables {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
