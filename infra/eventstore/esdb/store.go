// Package esdb is the EventStoreDB (KurrentDB) adapter of the control plane's event-store
// port: an es.Store over the gRPC client github.com/EventStore/EventStore-Client-Go/v4.
//
// Mapping, in short (README.md has the operator's side):
//
//   - Append: es.Any, es.NoStream and es.Exact(v) become the client's Any, NoStream and
//     StreamRevision{v}; the server's wrong-expected-version answer becomes
//     es.ErrConcurrency with the stream's actual version in the message. Event ids are
//     generated when zero, the type is the caller's explicit string and the content type
//     is JSON. The server is idempotent on event ids: appending events whose ids it already
//     stored at that place succeeds without writing them again.
//   - Positions are $all commit positions. Every event appended through gRPC is an
//     implicit transaction of self-committed records, for which the server reports commit
//     position == prepare position == the event's own log position, on a single node and in
//     a cluster alike; so one uint64 identifies the event and grows with commit order.
//     ReadAll(after) reads $all from (after, after), which is inclusive, and drops events at
//     or before after. Events written by the legacy TCP API in explicit transactions have no
//     position of their own and make ReadAll fail rather than be skipped silently.
//   - ReadStream reads from revision from; a missing stream reads empty. Stream reads carry
//     the same positions on servers since 22.x (0 where the server does not say).
//   - ReadAll skips EventStoreDB's own events: system streams and types starting with $.
//
// Every call takes ctx and returns when it ends, even while the client is blocked in node
// discovery (which takes no context). Iterators read ahead a bounded number of events on
// their own goroutine and close their server stream on Close, at the end, or on error.
package esdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"sync"
	"time"

	esclient "github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

const (
	// readAhead bounds how many events an iterator holds before its reader asks for them.
	readAhead = 32
	// closeWait bounds how long Close waits for calls under way before it leaves the
	// client to be closed once they return.
	closeWait = 2 * time.Second
)

// Option configures Open.
type Option func(*options)

type options struct {
	log *slog.Logger
}

// WithLogger sends the client library's own log lines (connection and discovery chatter,
// and the failures it also returns to us) to log at debug level. Without it they are
// dropped.
func WithLogger(log *slog.Logger) Option {
	return func(o *options) {
		if log != nil {
			o.log = log
		}
	}
}

// Store is an es.Store on an EventStoreDB server or cluster.
type Store struct {
	cfg  esclient.Configuration // parsed once; every client is built from a copy
	addr string                 // the connection string without its password, for messages
	log  *slog.Logger

	base context.Context // ends when the store closes, cancelling every call under way
	stop context.CancelFunc

	mu       sync.Mutex
	client   *esclient.Client // nil until needed
	closed   bool
	inflight sync.WaitGroup // calls and iterators that hold a client
}

var _ es.Store = (*Store)(nil)

// Open connects to the EventStoreDB named by connectionString, for example
// "esdb://localhost:2113?tls=false" or "esdb+discover://admin:changeit@cluster.example:2113"
// (kurrentdb://, kurrent:// and kdb:// are accepted as spellings of esdb://), and checks
// that the server answers and is recent enough. It fails if the server is not
// reachable before ctx ends or the client's discovery gives up (maxDiscoverAttempts in the
// connection string, 10 by default).
func Open(ctx context.Context, connectionString string, opts ...Option) (*Store, error) {
	s, err := newStore(connectionString, opts...)
	if err != nil {
		return nil, err
	}
	var version *esclient.ServerVersion
	err = s.do(ctx, func(_ context.Context, c *esclient.Client) error {
		var err error
		version, err = c.GetServerVersion()
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("connect to EventStoreDB at %s (is it running and reachable?): %w", s.addr, context.Cause(ctx))
		} else {
			err = describe(ctx, "connect to EventStoreDB", s.addr, err)
		}
		// Do not wait for the client: the caller's time is up, or the client has failed.
		return nil, errors.Join(err, s.shutdown(0))
	}
	if version.Major == 0 && version.Minor == 0 && version.Patch == 0 {
		// Servers without the server-features API (older ones) do not say.
		s.log.Warn("EventStoreDB did not report its version; it must be 22.10 or later",
			"url", s.addr)
	} else if older(*version) {
		err := fmt.Errorf("EventStoreDB at %s is version %d.%d.%d; this adapter needs %d.%d or later",
			s.addr, version.Major, version.Minor, version.Patch, minMajor, minMinor)
		return nil, errors.Join(err, s.shutdown(0))
	} else {
		s.log.Debug("connected to EventStoreDB", "url", s.addr,
			"version", fmt.Sprintf("%d.%d.%d", version.Major, version.Minor, version.Patch))
	}
	return s, nil
}

// newStore parses the connection string and sets the store up without connecting.
func newStore(connectionString string, opts ...Option) (*Store, error) {
	o := options{log: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	connectionString = normalizeScheme(connectionString)
	addr := redact(connectionString)
	cfg, err := esclient.ParseConnectionString(connectionString)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message would repeat the string, password included
		}
		return nil, fmt.Errorf("parse EventStoreDB connection string %s: %v", addr, err)
	}
	cfg.Logger = clientLogger(o.log)
	base, stop := context.WithCancel(context.Background())
	return &Store{cfg: *cfg, addr: addr, log: o.log, base: base, stop: stop}, nil
}

// clientLogger adapts the client's printf-style logging. Everything goes to debug: the
// client logs every failed call as an error, and each of those is also returned to our
// caller, with more context, to log as it sees fit.
func clientLogger(log *slog.Logger) esclient.LoggingFunc {
	return func(level esclient.LogLevel, format string, args ...any) {
		ctx := context.Background()
		if !log.Enabled(ctx, slog.LevelDebug) {
			return
		}
		log.LogAttrs(ctx, slog.LevelDebug, fmt.Sprintf(format, args...),
			slog.String("component", "eventstore-client"), slog.String("client_level", level))
	}
}

// Append implements es.Store. If ctx ends while the append is under way, the append may
// or may not have happened.
func (s *Store) Append(ctx context.Context, stream string, expected es.Expected, events ...es.NewEvent) (es.AppendResult, error) {
	if err := validateAppend(stream, events); err != nil {
		return es.AppendResult{}, err
	}
	step := "append to " + stream
	if err := ctx.Err(); err != nil {
		return es.AppendResult{}, fmt.Errorf("%s: %w", step, err)
	}
	proposed := make([]esclient.EventData, len(events))
	for i, e := range events {
		id := e.ID
		if id == uuid.Nil {
			id = uuid.New()
		}
		proposed[i] = esclient.EventData{EventID: id, EventType: e.Type,
			ContentType: esclient.ContentTypeJson, Data: e.Data, Metadata: e.Metadata}
	}
	opts := esclient.AppendToStreamOptions{ExpectedRevision: expectedRevision(expected)}
	var res *esclient.WriteResult
	err := s.do(ctx, func(ctx context.Context, c *esclient.Client) error {
		var err error
		res, err = c.AppendToStream(ctx, stream, opts, proposed...)
		return err
	})
	switch {
	case err == nil:
	case errors.Is(err, es.ErrClosed):
		return es.AppendResult{}, fmt.Errorf("%s: %w", step, err)
	case ctx.Err() == nil && classify(err) == failConcurrency:
		return es.AppendResult{}, concurrencyError(stream, expected, err)
	default:
		return es.AppendResult{}, describe(ctx, step, s.addr, err)
	}
	// NextExpectedVersion is the revision of the last event written. The commit position
	// is that of the last event too: the server acknowledges an implicit transaction at its
	// last record. It is 0 only if the server reported no position.
	return es.AppendResult{Version: res.NextExpectedVersion, Position: res.CommitPosition}, nil
}

// ReadStream implements es.Store. The server stream lives as long as ctx, the iterator
// and the store; Next also honours its own ctx.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64) es.Iterator {
	opts := esclient.ReadStreamOptions{Direction: esclient.Forwards, From: esclient.Revision(from)}
	return s.read(ctx, "read stream "+stream, func(ctx context.Context, c *esclient.Client) (recvStream, error) {
		rs, err := c.ReadStream(ctx, stream, opts, math.MaxUint64)
		if err != nil {
			return nil, err
		}
		return rs, nil
	}, fromStreamRead, true)
}

// ReadAll implements es.Store.
func (s *Store) ReadAll(ctx context.Context, after uint64) es.Iterator {
	start, ok := allStart(after)
	if !ok {
		return &es.SliceIterator{}
	}
	opts := esclient.ReadAllOptions{Direction: esclient.Forwards, From: start}
	return s.read(ctx, "read $all", func(ctx context.Context, c *esclient.Client) (recvStream, error) {
		rs, err := c.ReadAll(ctx, opts, math.MaxUint64)
		if err != nil {
			return nil, err
		}
		return rs, nil
	}, fromAllRead(after), false)
}

// read starts an iterator over a server stream that open creates.
func (s *Store) read(ctx context.Context, step string, open func(context.Context, *esclient.Client) (recvStream, error),
	conv func(*esclient.ResolvedEvent) (es.Event, bool, error), missingIsEmpty bool) es.Iterator {
	c, release, err := s.acquire()
	if err != nil {
		return &es.SliceIterator{Error: fmt.Errorf("%s: %w", step, err)}
	}
	callCtx, cancel := s.callContext(ctx)
	return startIterator(callCtx, cancel, release, reader{
		step: step,
		addr: s.addr,
		open: func(ctx context.Context) (recvStream, error) {
			rs, err := open(ctx, c)
			if isConnectionClosed(err) {
				if c2, ok := s.replace(c); ok {
					rs, err = open(ctx, c2)
				}
			}
			return rs, err
		},
		conv:           conv,
		missingIsEmpty: missingIsEmpty,
	})
}

// Close implements es.Store: calls under way are cancelled (they fail with
// es.ErrClosed), open iterators end, and later calls fail with es.ErrClosed. Safe to call
// more than once. It waits a moment for cancelled calls to return; a call blocked in node
// discovery (which takes no context) can outlast that, and the client is then closed in
// the background once it returns.
func (s *Store) Close() error { return s.shutdown(closeWait) }

// shutdown closes the store, waiting up to wait for calls under way before it leaves the
// client to be closed in the background.
func (s *Store) shutdown(wait time.Duration) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	c := s.client
	s.client = nil
	s.mu.Unlock()
	s.stop()
	if c == nil {
		return nil
	}
	// The client panics if it is closed while a call still inside it reports a broken
	// connection (a send on its closed channel), so it is closed only once every call has
	// returned. Cancelled calls return at once, except one blocked in node discovery.
	drained := make(chan struct{})
	go func() {
		s.inflight.Wait()
		close(drained)
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-drained:
		return c.Close()
	case <-timer.C:
		if wait > 0 {
			s.log.Warn("EventStoreDB calls still under way after close; the client will close when they return",
				"url", s.addr, "waited", wait)
		}
		go func() {
			<-drained
			c.Close()
		}()
		return nil
	}
}

// acquire returns the client for one call or iterator, and release to call when it no
// longer uses it.
func (s *Store) acquire() (*esclient.Client, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, es.ErrClosed
	}
	if s.client == nil {
		c, err := s.newClient()
		if err != nil {
			return nil, nil, err
		}
		s.client = c
	}
	s.inflight.Add(1)
	return s.client, s.inflight.Done, nil
}

// replace swaps in a new client for old, which has given up. When a node discovery fails,
// the client marks itself closed and stops its connection goroutine for good: every later
// call fails with ErrorCodeConnectionClosed before sending anything. Without a new client
// the store would stay broken after EventStoreDB was briefly unreachable. The old client is
// not closed: its goroutine is gone, and closing its channel could only turn a straggler's
// blocked send into a panic. It returns false once the store is closed.
func (s *Store) replace(old *esclient.Client) (*esclient.Client, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	if s.client == old {
		c, err := s.newClient()
		if err != nil {
			return nil, false
		}
		s.log.Debug("EventStoreDB client gave up after a failed discovery; using a new one", "url", s.addr)
		s.client = c
	}
	return s.client, true
}

func (s *Store) newClient() (*esclient.Client, error) {
	cfg := s.cfg // NewClient keeps the pointer; each client gets its own copy
	c, err := esclient.NewClient(&cfg)
	if err != nil {
		return nil, fmt.Errorf("create EventStoreDB client for %s: %w", s.addr, err)
	}
	return c, nil
}

// callContext derives the context of one call from the caller's: it also ends, with
// cause es.ErrClosed, when the store closes.
func (s *Store) callContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := context.AfterFunc(s.base, func() { cancel(es.ErrClosed) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// do runs fn with a client on its own goroutine and waits for it or for ctx. The
// goroutine is what lets a caller go when ctx ends even though the client cannot be
// interrupted while it discovers a node.
func (s *Store) do(ctx context.Context, fn func(context.Context, *esclient.Client) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c, release, err := s.acquire()
	if err != nil {
		return err
	}
	callCtx, cancel := s.callContext(ctx)
	done := make(chan error, 1)
	go func() {
		defer release()
		defer cancel()
		defer recoverInto(done)
		err := fn(callCtx, c)
		if isConnectionClosed(err) {
			// Nothing reached the server, so one retry on a new client is safe.
			if c2, ok := s.replace(c); ok {
				err = fn(callCtx, c2)
			}
		}
		if err != nil && callCtx.Err() != nil {
			err = fmt.Errorf("%w (%v)", context.Cause(callCtx), err)
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		select {
		case err := <-done: // finished at the same moment: its answer is the truth
			return err
		default:
			return ctx.Err()
		}
	}
}

// recoverInto reports a panic of the client as the call's error. The client panics on
// a read response it does not know ("unreachable code"), which a newer server could send;
// that must fail the call, not the process.
func recoverInto(done chan<- error) {
	if v := recover(); v != nil {
		done <- clientPanic(v)
	}
}

func clientPanic(v any) error {
	return fmt.Errorf("EventStoreDB client failed (please report this with the server version): %v", v)
}

// recvStream is what an iterator reads: the client's *esdb.ReadStream, or a fake in tests.
type recvStream interface {
	Recv() (*esclient.ResolvedEvent, error)
	Close()
}

// reader says how an iterator opens and maps its server stream.
type reader struct {
	step           string
	addr           string
	open           func(context.Context) (recvStream, error)
	conv           func(*esclient.ResolvedEvent) (es.Event, bool, error)
	missingIsEmpty bool
}

// iterator is an es.Iterator fed by a goroutine (pump) that receives from the server
// stream, maps and filters events, and hands them over through a bounded channel.
type iterator struct {
	events chan es.Event
	cancel context.CancelFunc // ends the server stream and the pump
	perr   error              // the pump's error, written before it closes events

	cur  es.Event
	err  error
	done bool
}

func startIterator(ctx context.Context, cancel context.CancelFunc, release func(), r reader) *iterator {
	it := &iterator{events: make(chan es.Event, readAhead), cancel: cancel}
	go it.pump(ctx, release, r)
	return it
}

func (it *iterator) pump(ctx context.Context, release func(), r reader) {
	defer release()
	defer close(it.events)
	defer it.cancel()
	defer func() {
		if v := recover(); v != nil {
			it.perr = fmt.Errorf("%s: %w", r.step, clientPanic(v))
		}
	}()
	if ctx.Err() != nil {
		it.perr = describe(ctx, r.step, r.addr, ctx.Err())
		return
	}
	rs, err := r.open(ctx)
	if err != nil {
		it.perr = describe(ctx, r.step, r.addr, err)
		return
	}
	defer rs.Close()
	for {
		re, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			// The client also answers io.EOF once its stream was closed: a cancelled
			// context is what tells a cut-off stream from the end of one.
			if ctx.Err() != nil {
				it.perr = describe(ctx, r.step, r.addr, err)
			}
			return
		}
		if err != nil {
			if r.missingIsEmpty && ctx.Err() == nil && classify(err) == failNotFound {
				return // a stream that does not exist reads empty
			}
			it.perr = describe(ctx, r.step, r.addr, err)
			return
		}
		e, keep, err := r.conv(re)
		if err != nil {
			it.perr = fmt.Errorf("%s: %w", r.step, err)
			return
		}
		if !keep {
			continue
		}
		select {
		case it.events <- e:
		case <-ctx.Done():
			it.perr = describe(ctx, r.step, r.addr, ctx.Err())
			return
		}
	}
}

// Next implements es.Iterator.
func (it *iterator) Next(ctx context.Context) bool {
	if it.done {
		return false
	}
	if err := ctx.Err(); err != nil {
		it.fail(err)
		return false
	}
	select {
	case e, ok := <-it.events:
		if !ok {
			it.done, it.err = true, it.perr
			return false
		}
		it.cur = e
		return true
	case <-ctx.Done():
		it.fail(ctx.Err())
		return false
	}
}

func (it *iterator) fail(err error) {
	it.done, it.err = true, err
	it.cancel()
}

// Event implements es.Iterator.
func (it *iterator) Event() es.Event { return it.cur }

// Err implements es.Iterator.
func (it *iterator) Err() error { return it.err }

// Close implements es.Iterator: it ends the server stream without waiting for the pump.
func (it *iterator) Close() {
	it.done = true
	it.cancel()
}
