package workflows

import (
	"context"
	"sync"
	"time"
)

// pinger is the optional ability of an engine to say whether it answers.
type pinger interface {
	Ping(ctx context.Context) error
}

// Health is the cached answer to "does the engine answer?": asked at most every 2 s,
// every 200 ms while it fails. Its own lock, apart from a service's: a ping may take
// seconds when the engine does not answer. The zero value is ready.
type Health struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// Check answers ErrDisabled for no engine, nil for an engine that cannot be pinged,
// else the last ping's answer, pinging again when it is stale.
func (h *Health) Check(ctx context.Context, engine Engine) error {
	if engine == nil {
		return ErrDisabled
	}
	p, ok := engine.(pinger)
	if !ok {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if time.Since(h.at) > 2*time.Second || (h.err != nil && time.Since(h.at) > 200*time.Millisecond) {
		h.err = p.Ping(ctx)
		h.at = time.Now()
	}
	return h.err
}
