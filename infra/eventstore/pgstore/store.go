// Package pgstore is the event store on PostgreSQL: one database several svcd nodes
// share (SVC_EVENTSTORE_URL=postgres://...).
//
// Every append takes the row lock of a one-row head table first and holds it to commit,
// so appends are serialized: positions are handed out in commit order, a reader's
// snapshot always holds a prefix of the positions, and a catch-up reader that resumes
// after the last position it saw can never skip an event that commits later with a lower
// one (what a plain sequence would allow). The expected version is checked under that
// lock, and a unique (stream, version) constraint backs it. Each append notifies the
// channel es_events at commit; Watch turns that into wake-ups for followers, which still
// poll as the fallback.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svc-data/svc/projections/es"
)

// channel is the LISTEN/NOTIFY channel every append notifies at commit.
const channel = "es_events"

// pageSize bounds how many events one read query returns.
const pageSize = 512

// schemaLock is the advisory lock key that serializes schema creation between nodes
// starting together (CREATE TABLE IF NOT EXISTS races on the catalog otherwise).
const schemaLock = 0x7376636573 // "svces"

const schema = `
CREATE TABLE IF NOT EXISTS es_head (
	id       smallint PRIMARY KEY CHECK (id = 1),
	position bigint NOT NULL
);
INSERT INTO es_head (id, position) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
CREATE TABLE IF NOT EXISTS es_events (
	position bigint PRIMARY KEY,
	stream   text NOT NULL,
	version  bigint NOT NULL,
	id       uuid NOT NULL,
	type     text NOT NULL,
	data     bytea,
	metadata bytea,
	time     timestamptz NOT NULL,
	UNIQUE (stream, version)
);`

// Store is an es.Store on PostgreSQL.
type Store struct {
	pool *pgxpool.Pool
	log  *slog.Logger
}

var (
	_ es.Store   = (*Store)(nil)
	_ es.Watcher = (*Store)(nil)
)

// Option configures Open.
type Option func(*Store)

// WithLogger logs reconnections of the notification listener.
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// Open connects to the database named by url (postgres://user@host:port/db?...) and
// creates the tables if they do not exist.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message quotes the URL, password included: say only what is wrong.
		return nil, errors.New("event store: SVC_EVENTSTORE_URL is not a valid PostgreSQL connection string")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("event store: connect to PostgreSQL: %w", err)
	}
	s := &Store{pool: pool, log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(s)
	}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("event store: prepare PostgreSQL tables: %w", err)
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, schema)
		return err
	})
}

// Append implements es.Store.
func (s *Store) Append(ctx context.Context, stream string, expected es.Expected, events ...es.NewEvent) (es.AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return es.AppendResult{}, err
	}
	if stream == "" {
		return es.AppendResult{}, errors.New("append: empty stream name")
	}
	if len(events) == 0 {
		return es.AppendResult{}, fmt.Errorf("append to %s: no events", stream)
	}
	for _, e := range events {
		if e.Type == "" {
			return es.AppendResult{}, fmt.Errorf("append to %s: event without a type", stream)
		}
	}
	var res es.AppendResult
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		// The head's row lock, held to commit: appends commit in position order.
		var head int64
		if err := tx.QueryRow(ctx, `UPDATE es_head SET position = position + $1 WHERE id = 1 RETURNING position`,
			int64(len(events))).Scan(&head); err != nil {
			return fmt.Errorf("take the head: %w", err)
		}
		// Read under the lock, in a statement of its own: READ COMMITTED gives it a
		// snapshot taken after every earlier append committed.
		var last *int64
		if err := tx.QueryRow(ctx, `SELECT max(version) FROM es_events WHERE stream = $1`, stream).Scan(&last); err != nil {
			return fmt.Errorf("read the stream's version: %w", err)
		}
		var lastVersion uint64
		if last != nil {
			lastVersion = uint64(*last)
		}
		if err := expected.Check(lastVersion, last != nil); err != nil {
			return err
		}
		next := uint64(0)
		if last != nil {
			next = lastVersion + 1
		}
		pos := uint64(head) - uint64(len(events)) + 1
		now := time.Now().UTC()
		batch := &pgx.Batch{}
		for _, e := range events {
			id := e.ID
			if id == uuid.Nil {
				id = uuid.New()
			}
			batch.Queue(`INSERT INTO es_events (position, stream, version, id, type, data, metadata, time)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
				int64(pos), stream, int64(next), id, e.Type, nilIfEmpty(e.Data), nilIfEmpty(e.Metadata), now)
			res = es.AppendResult{Version: next, Position: pos}
			pos++
			next++
		}
		batch.Queue(`SELECT pg_notify($1, $2)`, channel, fmt.Sprint(head))
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
			return es.AppendResult{}, fmt.Errorf("%w: %s was appended to concurrently", es.ErrConcurrency, stream)
		}
		if errors.Is(err, es.ErrConcurrency) {
			return es.AppendResult{}, err
		}
		return es.AppendResult{}, fmt.Errorf("append to %s: %w", stream, classify(err))
	}
	return res, nil
}

// classify marks err with es.ErrUnavailable when PostgreSQL gave no answer in time: the
// connection could not be made or broke (a network error, EOF, a timeout, the caller's
// deadline), or the server refused work for now (a connection exception, too few
// resources, a shutdown). An answer the server gave (a constraint, a refused login) is
// left as it is, and so is a cancelled call.
func classify(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code[:min(2, len(pe.Code))] {
		case "08", "53", "57": // connection exception, insufficient resources, operator intervention
			return fmt.Errorf("%w: %w", es.ErrUnavailable, err)
		}
		return err
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", es.ErrUnavailable, err)
	}
	return err
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

const columns = `position, stream, version, id, type, data, metadata, time`

// ReadStream implements es.Store.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64) es.Iterator {
	return &pager{key: func(e es.Event) uint64 { return e.Version }, fetch: func(ctx context.Context, after *uint64) ([]es.Event, error) {
		start := int64(from)
		if after != nil {
			start = int64(*after) + 1
		}
		return s.query(ctx, `SELECT `+columns+` FROM es_events WHERE stream = $1 AND version >= $2 ORDER BY version LIMIT $3`,
			stream, start, pageSize)
	}}
}

// ReadAll implements es.Store.
func (s *Store) ReadAll(ctx context.Context, after uint64) es.Iterator {
	return &pager{key: func(e es.Event) uint64 { return e.Position }, fetch: func(ctx context.Context, cursor *uint64) ([]es.Event, error) {
		start := int64(after)
		if cursor != nil {
			start = int64(*cursor)
		}
		return s.query(ctx, `SELECT `+columns+` FROM es_events WHERE position > $1 ORDER BY position LIMIT $2`,
			start, pageSize)
	}}
}

func (s *Store) query(ctx context.Context, sql string, args ...any) ([]es.Event, error) {
	events, err := s.queryEvents(ctx, sql, args...)
	return events, classify(err)
}

func (s *Store) queryEvents(ctx context.Context, sql string, args ...any) ([]es.Event, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	out := make([]es.Event, 0, 16)
	for rows.Next() {
		var (
			e        es.Event
			pos, ver int64
		)
		if err := rows.Scan(&pos, &e.Stream, &ver, &e.ID, &e.Type, &e.Data, &e.Metadata, &e.Time); err != nil {
			rows.Close()
			return nil, err
		}
		e.Position, e.Version, e.Time = uint64(pos), uint64(ver), e.Time.UTC()
		out = append(out, e)
	}
	return out, rows.Err()
}

// Watch implements es.Watcher: a LISTEN on its own connection, which signals on every
// append notification and after every reconnection (notifications sent while it was
// away are lost, so the follower must look). The channel closes when ctx ends.
func (s *Store) Watch(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	signal := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	go func() {
		defer close(ch)
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			err := s.listen(ctx, signal)
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("event store: notification listener lost its connection; reconnecting", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}()
	return ch
}

func (s *Store) listen(ctx context.Context, signal func()) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection that listened goes back to nobody: taken out of the pool and closed.
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	signal()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		signal()
	}
}

// Close implements es.Store.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// pager turns page-wise reads into an es.Iterator.
type pager struct {
	fetch  func(ctx context.Context, after *uint64) ([]es.Event, error)
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
	page, err := p.fetch(ctx, p.last)
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
