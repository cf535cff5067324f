// Package boltstore is the embedded event store: every event in one bbolt file, the
// default for a single machine.
package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/svc-data/svc/projections/es"
)

var (
	bucketAll     = []byte("all")     // position → record
	bucketStreams = []byte("streams") // stream name → bucket of version → position
)

// pageSize bounds how many events one read transaction returns, so a long replay never
// holds a read transaction (and with it the file's free pages) open for long.
const pageSize = 512

// Store is an es.Store in one bbolt file.
type Store struct {
	db *bolt.DB
}

var _ es.Store = (*Store)(nil)

// Open opens or creates the store file at path.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open event store %s: %w (is another svcd using this data dir?)", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketAll); err != nil {
			return err
		}
		_, err := tx.CreateBucketIfNotExists(bucketStreams)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("initialize event store %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// record is the stored form of an event.
type record struct {
	ID       uuid.UUID       `json:"id"`
	Stream   string          `json:"stream"`
	Type     string          `json:"type"`
	Version  uint64          `json:"version"`
	Time     time.Time       `json:"time"`
	Data     json.RawMessage `json:"data,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// Append implements es.Store.
func (s *Store) Append(ctx context.Context, stream string, expected es.Expected, events ...es.NewEvent) (es.AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return es.AppendResult{}, err
	}
	if stream == "" {
		return es.AppendResult{}, fmt.Errorf("append: empty stream name")
	}
	if len(events) == 0 {
		return es.AppendResult{}, fmt.Errorf("append to %s: no events", stream)
	}
	var res es.AppendResult
	err := s.db.Update(func(tx *bolt.Tx) error {
		streams := tx.Bucket(bucketStreams)
		sb := streams.Bucket([]byte(stream))
		var last uint64
		exists := false
		if sb != nil {
			if k, _ := sb.Cursor().Last(); k != nil {
				last, exists = binary.BigEndian.Uint64(k), true
			}
		}
		if err := expected.Check(last, exists); err != nil {
			return err
		}
		if sb == nil {
			var err error
			if sb, err = streams.CreateBucket([]byte(stream)); err != nil {
				return err
			}
		}
		all := tx.Bucket(bucketAll)
		next := uint64(0)
		if exists {
			next = last + 1
		}
		now := time.Now().UTC()
		for _, e := range events {
			if e.Type == "" {
				return fmt.Errorf("append to %s: event without a type", stream)
			}
			id := e.ID
			if id == uuid.Nil {
				id = uuid.New()
			}
			pos, err := all.NextSequence()
			if err != nil {
				return err
			}
			val, err := json.Marshal(record{ID: id, Stream: stream, Type: e.Type, Version: next, Time: now,
				Data: rawOrNil(e.Data), Metadata: rawOrNil(e.Metadata)})
			if err != nil {
				return fmt.Errorf("encode %s event: %w", e.Type, err)
			}
			if err := all.Put(u64(pos), val); err != nil {
				return err
			}
			if err := sb.Put(u64(next), u64(pos)); err != nil {
				return err
			}
			res = es.AppendResult{Version: next, Position: pos}
			next++
		}
		return nil
	})
	if err != nil {
		return es.AppendResult{}, err
	}
	return res, nil
}

func rawOrNil(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

// ReadStream implements es.Store.
func (s *Store) ReadStream(_ context.Context, stream string, from uint64) es.Iterator {
	return &pager{fetch: func(after *uint64) ([]es.Event, error) {
		var out []es.Event
		err := s.db.View(func(tx *bolt.Tx) error {
			sb := tx.Bucket(bucketStreams).Bucket([]byte(stream))
			if sb == nil {
				return nil
			}
			all := tx.Bucket(bucketAll)
			c := sb.Cursor()
			start := from
			if after != nil {
				start = *after + 1
			}
			for k, v := c.Seek(u64(start)); k != nil && len(out) < pageSize; k, v = c.Next() {
				e, err := decode(all.Get(v), binary.BigEndian.Uint64(v))
				if err != nil {
					return err
				}
				out = append(out, e)
			}
			return nil
		})
		return out, err
	}, key: func(e es.Event) uint64 { return e.Version }}
}

// ReadAll implements es.Store.
func (s *Store) ReadAll(_ context.Context, after uint64) es.Iterator {
	return &pager{fetch: func(cursor *uint64) ([]es.Event, error) {
		start := after + 1
		if cursor != nil {
			start = *cursor + 1
		}
		var out []es.Event
		err := s.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketAll).Cursor()
			for k, v := c.Seek(u64(start)); k != nil && len(out) < pageSize; k, v = c.Next() {
				e, err := decode(v, binary.BigEndian.Uint64(k))
				if err != nil {
					return err
				}
				out = append(out, e)
			}
			return nil
		})
		return out, err
	}, key: func(e es.Event) uint64 { return e.Position }}
}

// Close implements es.Store.
func (s *Store) Close() error { return s.db.Close() }

func decode(val []byte, pos uint64) (es.Event, error) {
	if val == nil {
		return es.Event{}, fmt.Errorf("event store corrupt: no event at position %d", pos)
	}
	var r record
	dec := json.NewDecoder(bytes.NewReader(val))
	if err := dec.Decode(&r); err != nil {
		return es.Event{}, fmt.Errorf("decode event at position %d: %w", pos, err)
	}
	return es.Event{ID: r.ID, Stream: r.Stream, Type: r.Type, Data: r.Data, Metadata: r.Metadata,
		Version: r.Version, Position: pos, Time: r.Time}, nil
}

// pager turns page-wise reads into an es.Iterator.
type pager struct {
	fetch  func(after *uint64) ([]es.Event, error)
	key    func(es.Event) uint64
	page   []es.Event
	i      int
	last   *uint64
	done   bool
	err    error
	closed bool
}

func (p *pager) Next(ctx context.Context) bool {
	if p.err != nil || p.closed {
		return false
	}
	if err := ctx.Err(); err != nil {
		p.err = err
		return false
	}
	if p.i < len(p.page) {
		p.i++
		return true
	}
	if p.done {
		return false
	}
	page, err := p.fetch(p.last)
	if err != nil {
		p.err = err
		return false
	}
	if len(page) < pageSize {
		p.done = true
	}
	if len(page) == 0 {
		return false
	}
	k := p.key(page[len(page)-1])
	p.last = &k
	p.page, p.i = page, 1
	return true
}

func (p *pager) Event() es.Event { return p.page[p.i-1] }
func (p *pager) Err() error      { return p.err }
func (p *pager) Close()          { p.closed = true }

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}
