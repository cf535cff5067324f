package pipeline

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
)

// A table on object storage (a customer's bucket) can fail on its own while the engine
// and every other table are fine: the bucket is unreachable, its endpoint hangs, its
// credentials are refused. Its inserts are bounded (ConsumerConfig.RemoteInsertTimeout,
// retries included); one that does not finish in time parks the table. A parked table's
// rows go to its dead letters, durably, before the partition's offset moves past them,
// and the partition's other tables go on. Once a backoff step (ParkMin doubling to
// ParkMax) has passed, one batch tries the table again; its success unparks it. See
// DESIGN.md, "A failing bucket never blocks others".

// Parked is a table whose storage failed: its rows go to its dead letters until RetryAt,
// when one batch tries it again. Reason names the table and the bound, never the
// engine's text.
type Parked struct {
	Since    time.Time `json:"since"`
	RetryAt  time.Time `json:"retry_at"`
	Attempts int       `json:"attempts"`
	Reason   string    `json:"reason"`
	step     time.Duration
	trying   bool // a batch is trying the table again
}

// parking holds the consumer's parked tables (shared by its partitions' workers).
type parking struct {
	mu     sync.Mutex
	tables map[uuid.UUID]*Parked
}

// skip reports whether rows of table id go to dead letters without an attempt: the table
// is parked and its step has not run out, or another batch is trying it again. When the
// step ran out, the caller is the one batch that tries it, and skip answers false.
func (p *parking) skip(id uuid.UUID, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tables[id]
	if t == nil {
		return false
	}
	if t.trying || now.Before(t.RetryAt) {
		return true
	}
	t.trying = true
	return false
}

// holds reports, without claiming the retry, whether rows of table id go to dead
// letters now: the batch plan records such a table as dead-lettered before the insert.
func (p *parking) holds(id uuid.UUID, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tables[id]
	return t != nil && (t.trying || now.Before(t.RetryAt))
}

// park records that table id's storage failed (an insert ran out of its bound, or a try
// found the endpoint silent) and sets its next step. It logs once per table and step.
func (p *parking) park(id uuid.UUID, now time.Time, minStep, maxStep time.Duration, reason string, log *slog.Logger) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tables[id]
	if t == nil {
		t = &Parked{Since: now, step: minStep}
		p.tables[id] = t
	} else if t.trying || !now.Before(t.RetryAt) {
		t.step = min(2*t.step, maxStep)
	} else {
		return // a concurrent batch of another partition parked it in this step already
	}
	t.trying = false
	t.Attempts++
	t.RetryAt = now.Add(t.step)
	t.Reason = reason
	log.Error("table's storage unavailable; its rows go to its dead letters and the partition goes on",
		"table", id, "reason", reason, "attempts", t.Attempts, "since", t.Since, "retry_in", t.step)
}

// landed clears table id's parking after an insert into it succeeded.
func (p *parking) landed(id uuid.UUID, log *slog.Logger) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tables[id]
	if t == nil {
		return
	}
	delete(p.tables, id)
	log.Info("table's storage available again", "table", id, "parked_for", time.Since(t.Since).Round(time.Millisecond))
}

// get returns table id's parking, if it is parked.
func (p *parking) get(id uuid.UUID) (Parked, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tables[id]
	if t == nil {
		return Parked{}, false
	}
	return *t, true
}

// StorageUnavailableError is the reason a parked table's rows carry in its dead letters.
type StorageUnavailableError struct {
	Table   uuid.UUID
	Timeout time.Duration
	Parked  bool // the table was parked already: no insert was tried
	// Unreachable: tried again after a step, its storage did not answer at all, so no
	// insert was sent.
	Unreachable bool
}

func (e *StorageUnavailableError) Error() string {
	if e.Unreachable {
		return fmt.Sprintf("the storage of table %s is unavailable: its endpoint does not answer (an insert did not finish within %s before); the rows were not inserted", e.Table, e.Timeout)
	}
	if e.Parked {
		return fmt.Sprintf("the storage of table %s is unavailable (parked after an insert did not finish within %s); the rows were not inserted", e.Table, e.Timeout)
	}
	return fmt.Sprintf("the storage of table %s is unavailable: an insert did not finish within %s; the rows were not inserted", e.Table, e.Timeout)
}

// release ends a batch's attempt on table id that neither landed nor ran out of time
// (the partition was revoked, the consumer shut down): the next batch may try.
func (p *parking) release(id uuid.UUID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.tables[id]; t != nil {
		t.trying = false
	}
}
