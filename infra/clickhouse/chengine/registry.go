package chengine

import (
	"context"
	"encoding/hex"
	"regexp"
	"sync"
	"time"

	"github.com/svc-data/svc/query/sqlquote"
)

// chdb takes no query id from its caller, so every statement carries a marker comment with
// the client's id; a KILL QUERY matching the marker cancels it from another connection.

var plainQueryID = regexp.MustCompile(`^[A-Za-z0-9._:@-]{1,128}$`)

// marker is the comment prefixed to the statement of query id. Ids outside a plain alphabet
// are hex-encoded so that no id can end the comment.
func marker(id string) string {
	return "/* svc:qid=" + markerID(id) + " */ "
}

func markerID(id string) string {
	if plainQueryID.MatchString(id) {
		return id
	}
	return "x" + hex.EncodeToString([]byte(id))
}

// killStatement cancels the statement of query id. The marker is assembled by concat so that
// the KILL's own text does not match it.
func killStatement(id string) string {
	return "KILL QUERY WHERE position(query, concat('/* svc:qid=', " + sqlquote.String(markerID(id)) + ", ' */')) > 0 ASYNC FORMAT Null"
}

// running is a statement in flight.
type running struct {
	id    string
	query string
	done  chan struct{} // closed when the statement ended
	// gone is closed when the id is free again: the statement ended and no abort of it is
	// still in flight. A KILL from a late abort would otherwise reach the next statement of
	// the same id, whose stream libchdb would then end as if complete (see serveStream).
	gone chan struct{}

	mu        sync.Mutex
	cancelled bool
	ended     bool
	abort     func()        // cancels the statement; called at most once
	aborting  chan struct{} // closed when the abort returned; nil while none started
}

// cancel stops the statement: once, and without waiting for it to end. A statement that
// already ended is only marked.
func (r *running) cancel() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancelled {
		return
	}
	r.cancelled = true
	if r.abort != nil && !r.ended {
		r.startAbort()
	}
}

// startAbort runs the abort in the background; r.mu is held.
func (r *running) startAbort() {
	f, ch := r.abort, make(chan struct{})
	r.aborting = ch
	go func() {
		defer close(ch)
		f()
	}()
}

// setAbort installs how to cancel the statement; if a cancel came first it runs at once.
func (r *running) setAbort(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.abort = f
	if r.cancelled && !r.ended && r.aborting == nil {
		r.startAbort()
	}
}

// wasCancelled reports whether anyone asked to cancel the statement: a client that went
// away, a KILL QUERY, a shutdown. Every cancel chengine issues passes through cancel, and
// the mark is set before any abort starts.
func (r *running) wasCancelled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancelled
}

// registry tracks running statements by query id.
type registry struct {
	mu sync.Mutex
	m  map[string]*running
}

func newRegistry() *registry { return &registry{m: map[string]*running{}} }

// idReuseWait is how long a statement waits for an earlier one of the same id to end.
const idReuseWait = 2 * time.Second

// add registers a statement. A client that runs statements back to back under one id
// (log search does) may send the next before this side has finished closing the previous
// one, so an id still registered is waited for up to idReuseWait; one still running then
// is refused as ClickHouse refuses it.
func (g *registry) add(id, query string) (*running, error) {
	deadline := time.Now().Add(idReuseWait)
	for {
		g.mu.Lock()
		prev, ok := g.m[id]
		if !ok {
			r := &running{id: id, query: query, done: make(chan struct{}), gone: make(chan struct{})}
			g.m[id] = r
			g.mu.Unlock()
			return r, nil
		}
		g.mu.Unlock()
		wait := time.Until(deadline)
		if wait <= 0 {
			return nil, newException(codeQueryIDAlreadyRunning, "Query with id = %s is already running", id)
		}
		t := time.NewTimer(wait)
		select {
		case <-prev.gone:
		case <-t.C:
		}
		t.Stop()
	}
}

// remove ends the statement. Its id is freed once an abort in flight has returned.
func (g *registry) remove(r *running) {
	r.mu.Lock()
	r.ended = true
	aborting := r.aborting
	r.mu.Unlock()
	close(r.done)
	free := func() {
		g.mu.Lock()
		if g.m[r.id] == r {
			delete(g.m, r.id)
		}
		g.mu.Unlock()
		close(r.gone)
	}
	if aborting == nil {
		free()
		return
	}
	go func() {
		<-aborting
		free()
	}()
}

func (g *registry) get(id string) *running {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[id]
}

// cancelAll cancels every running statement.
func (g *registry) cancelAll() int {
	g.mu.Lock()
	rs := make([]*running, 0, len(g.m))
	for _, r := range g.m {
		rs = append(rs, r)
	}
	g.mu.Unlock()
	for _, r := range rs {
		r.cancel()
	}
	return len(rs)
}

// killLoop issues kill until done closes: a KILL that runs before the engine registered the
// statement matches nothing, so it repeats until the statement is gone.
func killLoop(ctx context.Context, done <-chan struct{}, kill func()) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		kill()
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
