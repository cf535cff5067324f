package alerts

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// stateCache keeps each alert's folded state stream and the version it was folded to,
// so that an evaluation, a GET or /rules reads only the events appended since (the
// stream is append-only: folding its tail onto the fold of its head is the fold of the
// whole). Entries are as large as an alert's groups (apply drops delivery answers no
// group needs); an alert's entry goes with the alert.
type stateCache struct {
	mu     sync.Mutex
	alerts map[uuid.UUID]*cachedState
}

type cachedState struct {
	mu   sync.Mutex
	st   *state
	next uint64 // the first version not folded yet
}

// stateOf returns alert id's current state (a copy the caller may keep) and the
// stream's version, for appending transitions at it.
func (s *Service) stateOf(ctx context.Context, id uuid.UUID) (*state, es.Expected, error) {
	s.states.mu.Lock()
	if s.states.alerts == nil {
		s.states.alerts = map[uuid.UUID]*cachedState{}
	}
	c := s.states.alerts[id]
	if c == nil {
		c = &cachedState{st: newState()}
		s.states.alerts[id] = c
	}
	s.states.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	events, exp, err := s.cmds.AlertStateFrom(ctx, id, c.next)
	if err != nil {
		return nil, es.Expected{}, err
	}
	c.st.apply(events)
	if len(events) > 0 {
		c.next = events[len(events)-1].Version + 1
	}
	return c.st.clone(), exp, nil
}

// forget drops a deleted alert's entry.
func (s *Service) forget(id uuid.UUID) {
	s.states.mu.Lock()
	delete(s.states.alerts, id)
	s.states.mu.Unlock()
}
