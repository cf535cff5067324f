// Package memstore is an es.Store kept in memory: the event store of tests that need a
// real catalog (projector, commands, read model) without a file or a driver. It passes
// the same conformance suite (estest) as the production adapters.
package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// memory is the data every handle on one store shares.
type memory struct {
	mu      sync.Mutex
	all     []es.Event          // position i+1 is all[i]
	streams map[string][]uint64 // stream -> positions, by version
}

// Store is one handle on a memory; Close ends the handle, not the data.
type Store struct {
	mem    *memory
	mu     sync.Mutex
	closed bool
}

var _ es.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store { return &Store{mem: &memory{streams: map[string][]uint64{}}} }

// Reopen returns a new open handle on s's data, as reopening a file would.
func (s *Store) Reopen() *Store { return &Store{mem: s.mem} }

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Append implements es.Store.
func (s *Store) Append(ctx context.Context, stream string, expected es.Expected, events ...es.NewEvent) (es.AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return es.AppendResult{}, err
	}
	if s.isClosed() {
		return es.AppendResult{}, es.ErrClosed
	}
	if stream == "" {
		return es.AppendResult{}, fmt.Errorf("append: empty stream name")
	}
	if len(events) == 0 {
		return es.AppendResult{}, fmt.Errorf("append to %s: no events", stream)
	}
	for _, e := range events {
		if e.Type == "" {
			return es.AppendResult{}, fmt.Errorf("append to %s: event without a type", stream)
		}
	}
	m := s.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	positions := m.streams[stream]
	exists := len(positions) > 0
	var last uint64
	if exists {
		last = uint64(len(positions) - 1)
	}
	if err := expected.Check(last, exists); err != nil {
		return es.AppendResult{}, err
	}
	now := time.Now().UTC()
	var res es.AppendResult
	for _, e := range events {
		id := e.ID
		if id == uuid.Nil {
			id = uuid.New()
		}
		ev := es.Event{ID: id, Stream: stream, Type: e.Type, Data: clone(e.Data), Metadata: clone(e.Metadata),
			Version: uint64(len(positions)), Position: uint64(len(m.all) + 1), Time: now}
		m.all = append(m.all, ev)
		positions = append(positions, ev.Position)
		res = es.AppendResult{Version: ev.Version, Position: ev.Position}
	}
	m.streams[stream] = positions
	return res, nil
}

func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return slices.Clone(b)
}

// ReadStream implements es.Store.
func (s *Store) ReadStream(_ context.Context, stream string, from uint64) es.Iterator {
	next := from
	return s.iterate(func(m *memory) (es.Event, bool) {
		positions := m.streams[stream]
		if next >= uint64(len(positions)) {
			return es.Event{}, false
		}
		e := m.all[positions[next]-1]
		next++
		return e, true
	})
}

// ReadAll implements es.Store.
func (s *Store) ReadAll(_ context.Context, after uint64) es.Iterator {
	next := after // the index in all of the event at position after+1
	return s.iterate(func(m *memory) (es.Event, bool) {
		if next >= uint64(len(m.all)) {
			return es.Event{}, false
		}
		e := m.all[next]
		next++
		return e, true
	})
}

// Close implements es.Store.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

func (s *Store) iterate(next func(*memory) (es.Event, bool)) es.Iterator {
	return &iterator{s: s, next: next}
}

// iterator reads one event at a time under the lock, so it sees what was appended
// while it walks, as the paging adapters do.
type iterator struct {
	s      *Store
	next   func(*memory) (es.Event, bool)
	ev     es.Event
	err    error
	closed bool
}

func (it *iterator) Next(ctx context.Context) bool {
	if it.err != nil || it.closed {
		return false
	}
	if err := ctx.Err(); err != nil {
		it.err = err
		return false
	}
	if it.s.isClosed() {
		it.err = es.ErrClosed
		return false
	}
	m := it.s.mem
	m.mu.Lock()
	e, ok := it.next(m)
	m.mu.Unlock()
	if !ok {
		return false
	}
	e.Data, e.Metadata = clone(e.Data), clone(e.Metadata)
	it.ev = e
	return true
}

func (it *iterator) Event() es.Event { return it.ev }
func (it *iterator) Err() error      { return it.err }
func (it *iterator) Close()          { it.closed = true }
