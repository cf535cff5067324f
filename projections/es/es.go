// Package es is the event-store port of the control plane: the event type, the store
// interface every adapter implements, and the errors callers branch on.
package es

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Errors callers branch on.
var (
	// ErrConcurrency means the stream was not at the expected version: another writer
	// appended first. Reload the aggregate and retry the command.
	ErrConcurrency = errors.New("es: stream is not at the expected version")

	// ErrClosed is returned by a store that was closed.
	ErrClosed = errors.New("es: store is closed")

	// ErrUnavailable means the store did not answer: it is down, refuses work for now,
	// or cannot be reached (a network partition). The call may succeed later; an append
	// that failed so may still have been committed.
	ErrUnavailable = errors.New("es: the event store is unavailable")
)

// Event is one recorded fact. Type is an explicit, stable name such as
// "organization.created": it is stored and must never be derived by reflection.
type Event struct {
	ID       uuid.UUID
	Stream   string
	Type     string
	Data     []byte // JSON
	Metadata []byte // JSON, optional
	// Version is the event's 0-based position within its stream.
	Version uint64
	// Position is the event's position in the store-wide order ($all). Positions grow
	// with commit order but need not be contiguous.
	Position uint64
	Time     time.Time
}

// Expected states what a writer believes about a stream before appending.
type Expected struct {
	kind    int
	version uint64
}

const (
	expectAny = iota
	expectNoStream
	expectExact
)

// Any appends regardless of the stream's state.
func Any() Expected { return Expected{kind: expectAny} }

// NoStream appends only if the stream does not exist yet.
func NoStream() Expected { return Expected{kind: expectNoStream} }

// Exact appends only if the stream's last event has version v.
func Exact(v uint64) Expected { return Expected{kind: expectExact, version: v} }

// IsAny reports whether e places no condition.
func (e Expected) IsAny() bool { return e.kind == expectAny }

// IsNoStream reports whether e requires the stream to be absent.
func (e Expected) IsNoStream() bool { return e.kind == expectNoStream }

// Version returns the exact version e requires and whether it requires one.
func (e Expected) Version() (uint64, bool) { return e.version, e.kind == expectExact }

// Check tells whether a stream whose last version is last (exists=false for a missing
// stream) satisfies e.
func (e Expected) Check(last uint64, exists bool) error {
	switch e.kind {
	case expectNoStream:
		if exists {
			return fmt.Errorf("%w: stream exists at version %d", ErrConcurrency, last)
		}
	case expectExact:
		if !exists {
			return fmt.Errorf("%w: stream does not exist, expected version %d", ErrConcurrency, e.version)
		}
		if last != e.version {
			return fmt.Errorf("%w: stream at version %d, expected %d", ErrConcurrency, last, e.version)
		}
	}
	return nil
}

func (e Expected) String() string {
	switch e.kind {
	case expectNoStream:
		return "no stream"
	case expectExact:
		return fmt.Sprintf("version %d", e.version)
	}
	return "any"
}

// NewEvent is what a command appends: the store assigns version, position and time.
type NewEvent struct {
	ID       uuid.UUID // zero means the store generates one
	Type     string
	Data     []byte
	Metadata []byte
}

// AppendResult tells where the appended events landed.
type AppendResult struct {
	// Version of the last appended event in its stream.
	Version uint64
	// Position of the last appended event in the store-wide order.
	Position uint64
}

// Iterator walks events in order. Next returns false at the end or on error; Err tells
// which. Close releases resources and is safe to call more than once.
type Iterator interface {
	Next(ctx context.Context) bool
	Event() Event
	Err() error
	Close()
}

// Store is the port every event-store adapter implements. Every call takes ctx.
type Store interface {
	// Append writes events to stream atomically if expected holds, else ErrConcurrency.
	Append(ctx context.Context, stream string, expected Expected, events ...NewEvent) (AppendResult, error)
	// ReadStream reads a stream from version from (inclusive). A missing stream reads empty.
	ReadStream(ctx context.Context, stream string, from uint64) Iterator
	// ReadAll reads every stream's events in store order, starting after position after
	// (0 reads from the beginning).
	ReadAll(ctx context.Context, after uint64) Iterator
	// Close releases the store.
	Close() error
}

// Watcher is implemented by stores other processes append to (a shared database): Watch
// signals, coalesced, whenever events may have been appended since the last signal, and
// once at the start; the channel closes when ctx ends. It only wakes a follower early:
// followers keep polling, since a signal can be lost with a connection.
type Watcher interface {
	Watch(ctx context.Context) <-chan struct{}
}

// Collect drains an iterator into a slice.
func Collect(ctx context.Context, it Iterator) ([]Event, error) {
	defer it.Close()
	var out []Event
	for it.Next(ctx) {
		out = append(out, it.Event())
	}
	return out, it.Err()
}

// SliceIterator iterates over events already in memory; adapters may use it.
type SliceIterator struct {
	Events []Event
	Error  error
	i      int
}

// Next implements Iterator.
func (s *SliceIterator) Next(ctx context.Context) bool {
	if s.Error != nil || s.i >= len(s.Events) {
		return false
	}
	if err := ctx.Err(); err != nil {
		s.Error = err
		return false
	}
	s.i++
	return true
}

// Event implements Iterator.
func (s *SliceIterator) Event() Event { return s.Events[s.i-1] }

// Err implements Iterator.
func (s *SliceIterator) Err() error { return s.Error }

// Close implements Iterator.
func (s *SliceIterator) Close() {}
