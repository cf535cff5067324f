package catalog

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/svc-data/svc/projections/es"
)

// Projector keeps a Model up to date with an event store.
type Projector struct {
	store es.Store
	model *Model
	poll  time.Duration
	log   *slog.Logger
	mu    sync.Mutex // one catch-up at a time, so events apply in order
}

// NewProjector returns a projector feeding model from store. poll is how often Run looks
// for events written by other nodes.
func NewProjector(store es.Store, model *Model, poll time.Duration, log *slog.Logger) *Projector {
	if poll <= 0 {
		poll = time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Projector{store: store, model: model, poll: poll, log: log}
}

// CatchUp applies every event after the model's position and returns the new position.
func (p *Projector) CatchUp(ctx context.Context) (uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	it := p.store.ReadAll(ctx, p.model.Position())
	defer it.Close()
	for it.Next(ctx) {
		if err := p.model.Apply(it.Event()); err != nil {
			return p.model.Position(), err
		}
	}
	if err := it.Err(); err != nil {
		return p.model.Position(), fmt.Errorf("read events: %w", err)
	}
	return p.model.Position(), nil
}

// WaitFor catches up until the model has applied position pos: read-your-writes for
// the node that served a command.
func (p *Projector) WaitFor(ctx context.Context, pos uint64) error {
	for p.model.Position() < pos {
		if _, err := p.CatchUp(ctx); err != nil {
			return err
		}
		if p.model.Position() >= pos {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// Run follows the store until ctx ends, picking up other nodes' writes: on every poll,
// and at once when the store signals new events (es.Watcher).
func (p *Projector) Run(ctx context.Context) error {
	t := time.NewTicker(p.poll)
	defer t.Stop()
	var wake <-chan struct{}
	if w, ok := p.store.(es.Watcher); ok {
		wake = w.Watch(ctx)
	}
	for {
		if err := p.pollOnce(ctx); err != nil && ctx.Err() == nil {
			p.log.Error("catalog catch-up failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case _, ok := <-wake:
			if !ok {
				wake = nil
			}
		}
	}
}

// pollTimeout bounds one poll of Run (pollOnce). A store call waiting on a connection
// that a network partition stalled would otherwise hold the read model back until TCP
// sends its next retransmission once the network is back, which backs off to minutes.
// Given up on, the poll's connection is dropped and the next poll reads on a new one;
// what a poll applied stays applied.
const pollTimeout = 5 * time.Second

func (p *Projector) pollOnce(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	_, err := p.CatchUp(ctx)
	return err
}
