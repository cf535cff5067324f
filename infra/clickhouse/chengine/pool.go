package chengine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/svc-data/svc/infra/clickhouse/chdb"
)

// session is one pooled engine connection. A request holds it from its first statement to its
// last; dirty marks a connection whose session state (settings, current database, query
// parameters, temporary tables) the request may have changed in ways state does not record.
// state is the prologue (database and settings, see prologueKey) applied to the connection
// since it was opened: a request whose prologue is the same runs on it without applying it
// again.
type session struct {
	conn  *chdb.Conn
	dirty bool
	state string
}

// pool holds the engine connections requests run on. Its capacity is fixed; a request that
// finds none free waits up to the acquire timeout and is then refused with 503. A request
// takes a free connection whose state matches its prologue when there is one, else a fresh
// one, else any (which is then replaced before use).
type pool struct {
	connect func() (*chdb.Conn, error)
	slots   chan struct{} // one token per free connection
	mu      sync.Mutex
	free    []*session
	size    int
	wait    time.Duration
	log     *slog.Logger
}

func newPool(size int, wait time.Duration, connect func() (*chdb.Conn, error), log *slog.Logger) (*pool, error) {
	p := &pool{connect: connect, slots: make(chan struct{}, size), size: size, wait: wait, log: log}
	for range size {
		c, err := connect()
		if err != nil {
			return nil, errors.Join(err, p.closeFree())
		}
		p.release(&session{conn: c})
	}
	return p, nil
}

func (p *pool) release(s *session) {
	p.mu.Lock()
	p.free = append(p.free, s)
	p.mu.Unlock()
	p.slots <- struct{}{}
}

// take removes the best free connection for state; a token must be held.
func (p *pool) take(state string) *session {
	p.mu.Lock()
	defer p.mu.Unlock()
	best := len(p.free) - 1 // the most recently used
	for i := len(p.free) - 1; i >= 0; i-- {
		if p.free[i].state == state {
			best = i
			break
		}
		if p.free[i].state == "" && p.free[best].state != "" {
			best = i
		}
	}
	s := p.free[best]
	p.free = append(p.free[:best], p.free[best+1:]...)
	return s
}

// get returns a free connection, preferably one in state, waiting up to the acquire timeout.
func (p *pool) get(ctx context.Context, state string) (*session, error) {
	select {
	case <-p.slots:
		return p.ready(p.take(state))
	default:
	}
	t := time.NewTimer(p.wait)
	defer t.Stop()
	select {
	case <-p.slots:
		return p.ready(p.take(state))
	case <-t.C:
		ex := newException(codeTooManySimultaneous,
			"all %d engine connections stayed busy for %s; raise chengine --pool, lower the client's concurrency, or retry later",
			p.size, p.wait)
		ex.status = 503
		return nil, ex
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ready reconnects a slot whose connection was lost, so that a failed reconnect costs one
// request rather than a slot.
func (p *pool) ready(s *session) (*session, error) {
	if s.conn != nil {
		return s, nil
	}
	c, err := p.connect()
	if err != nil {
		p.release(s)
		ex := newException(codeUnknownException, "engine connection unavailable: %v; see the engine log", err)
		ex.status = 503
		return nil, ex
	}
	s.conn, s.state = c, ""
	return s, nil
}

// reset replaces s's connection by a fresh one: chdb sessions keep SET, USE, query
// parameters and temporary tables, and nothing of one request may reach the next. A
// reconnect costs well under a millisecond.
func (p *pool) reset(s *session) error {
	s.dirty, s.state = false, ""
	old := s.conn
	c, err := p.connect()
	s.conn = c
	if old != nil {
		// The new connection opens before the old one closes, so the engine never sees its
		// last connection go.
		_ = old.Close()
	}
	return err
}

// put returns s to the pool; a dirty connection is replaced first.
func (p *pool) put(s *session) {
	if s.dirty {
		if err := p.reset(s); err != nil {
			p.log.Error("replace engine connection", slog.Any("error", err))
			s.conn = nil
		}
	}
	p.release(s)
}

// closeFree closes the connections that are free now.
func (p *pool) closeFree() error {
	var errs []error
	for {
		select {
		case <-p.slots:
			if s := p.take(""); s.conn != nil {
				errs = append(errs, s.conn.Close())
			}
		default:
			return errors.Join(errs...)
		}
	}
}

// drain waits until every connection is back in the pool or ctx ends, then closes them.
func (p *pool) drain(ctx context.Context) error {
	var errs []error
	for n := 0; n < p.size; n++ {
		select {
		case <-p.slots:
			if s := p.take(""); s.conn != nil {
				errs = append(errs, s.conn.Close())
			}
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("close engine connections: %d still busy: %w", p.size-n, ctx.Err()))
			return errors.Join(errs...)
		}
	}
	return errors.Join(errs...)
}
