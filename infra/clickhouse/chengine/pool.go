package chengine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/svc-data/svc/infra/clickhouse/chdb"
)

// session is one pooled engine connection. A request holds it from its first statement to its
// last; dirty marks a connection whose session state (settings, current database, query
// parameters, temporary tables) the request may have changed.
type session struct {
	conn  *chdb.Conn
	dirty bool
}

// pool holds the engine connections requests run on. Its capacity is fixed; a request that
// finds none free waits up to the acquire timeout and is then refused with 503.
type pool struct {
	connect func() (*chdb.Conn, error)
	free    chan *session
	size    int
	wait    time.Duration
	log     *slog.Logger
}

func newPool(size int, wait time.Duration, connect func() (*chdb.Conn, error), log *slog.Logger) (*pool, error) {
	p := &pool{connect: connect, free: make(chan *session, size), size: size, wait: wait, log: log}
	for range size {
		c, err := connect()
		if err != nil {
			return nil, errors.Join(err, p.closeFree())
		}
		p.free <- &session{conn: c}
	}
	return p, nil
}

// get returns a free connection, waiting up to the acquire timeout.
func (p *pool) get(ctx context.Context) (*session, error) {
	select {
	case s := <-p.free:
		return p.ready(s)
	default:
	}
	t := time.NewTimer(p.wait)
	defer t.Stop()
	select {
	case s := <-p.free:
		return p.ready(s)
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
		p.free <- s
		ex := newException(codeUnknownException, "engine connection unavailable: %v; see the engine log", err)
		ex.status = 503
		return nil, ex
	}
	s.conn = c
	return s, nil
}

// put returns s to the pool. A dirty connection is replaced by a fresh one: chdb sessions keep
// SET, USE, query parameters and temporary tables, and nothing of one request may reach the
// next. A reconnect costs well under a millisecond.
func (p *pool) put(s *session) {
	if s.dirty {
		s.dirty = false
		old := s.conn
		c, err := p.connect()
		if err != nil {
			p.log.Error("replace engine connection", slog.Any("error", err))
			c = nil
		}
		s.conn = c
		if old != nil {
			// The new connection opens before the old one closes, so the engine never sees its
			// last connection go.
			_ = old.Close()
		}
	}
	p.free <- s
}

// closeFree closes the connections that are free now.
func (p *pool) closeFree() error {
	var errs []error
	for {
		select {
		case s := <-p.free:
			if s.conn != nil {
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
		case s := <-p.free:
			if s.conn != nil {
				errs = append(errs, s.conn.Close())
			}
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("close engine connections: %d still busy: %w", p.size-n, ctx.Err()))
			return errors.Join(errs...)
		}
	}
	return errors.Join(errs...)
}
