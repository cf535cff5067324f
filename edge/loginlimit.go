package edge

import (
	"errors"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// Login limiting: a user name locks for lockBase after lockAfter failures in a row, each
// further lock twice as long up to lockMax; an address may fail addrFailures times a
// window. A locked or limited sign-in answers 429 with Retry-After, whether or not the
// password is right, so guessing gains nothing while locked.
const (
	lockAfter    = 5
	lockBase     = 30 * time.Second
	lockMax      = 15 * time.Minute
	addrFailures = 30
	addrWindow   = time.Minute
	// limiterCap bounds the entries kept; beyond it, idle ones are dropped.
	limiterCap = 100_000
)

type nameState struct {
	failures int       // in a row since the last success or lock
	locks    int       // locks so far, doubling the next one
	until    time.Time // locked until
	last     time.Time
}

type addrState struct {
	start    time.Time
	failures int
}

// loginLimiter counts failed password sign-ins per user name and per address.
type loginLimiter struct {
	mu    sync.Mutex
	names map[string]*nameState
	addrs map[string]*addrState
	now   func() time.Time
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{names: map[string]*nameState{}, addrs: map[string]*addrState{}, now: time.Now}
}

// wait returns how long a sign-in of name from addr must wait, 0 when it may try.
func (l *loginLimiter) wait(name, addr string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var d time.Duration
	if st := l.names[strings.ToLower(name)]; st != nil && now.Before(st.until) {
		d = st.until.Sub(now)
	}
	if a := l.addrs[addr]; a != nil && now.Sub(a.start) < addrWindow && a.failures >= addrFailures {
		d = max(d, a.start.Add(addrWindow).Sub(now))
	}
	return d
}

// result records the outcome of a sign-in that was allowed to try.
func (l *loginLimiter) result(name, addr string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	key := strings.ToLower(name)
	if ok {
		delete(l.names, key)
		return
	}
	l.prune(now)
	st := l.names[key]
	if st == nil {
		st = &nameState{}
		l.names[key] = st
	}
	st.last = now
	if st.failures++; st.failures >= lockAfter {
		lock := time.Duration(float64(lockBase) * math.Pow(2, float64(st.locks)))
		st.until, st.failures, st.locks = now.Add(min(lock, lockMax)), 0, st.locks+1
	}
	a := l.addrs[addr]
	if a == nil || now.Sub(a.start) >= addrWindow {
		a = &addrState{start: now}
		l.addrs[addr] = a
	}
	a.failures++
}

// prune drops idle entries once the maps are full, so that a flood of names cannot
// grow them without bound.
func (l *loginLimiter) prune(now time.Time) {
	if len(l.names) >= limiterCap {
		for k, st := range l.names {
			if now.After(st.until) && now.Sub(st.last) > lockMax {
				delete(l.names, k)
			}
		}
	}
	if len(l.addrs) >= limiterCap {
		for k, a := range l.addrs {
			if now.Sub(a.start) >= addrWindow {
				delete(l.addrs, k)
			}
		}
	}
}

// checkPassword is every password sign-in's one door (the API login and the device
// page): it applies the limiter, then checks the password.
func (s *Server) checkPassword(ctx *fasthttp.RequestCtx, username, password string) (*catalog.User, error) {
	addr := ctx.RemoteIP().String()
	if d := s.logins.wait(username, addr); d > 0 {
		secs := int(math.Ceil(d.Seconds()))
		return nil, &APIError{Status: 429, Code: "too_many_attempts", RetryAfter: secs,
			Message: "too many failed sign-ins; try again later", Hint: "wait for the time in Retry-After"}
	}
	u, err := s.deps.Commands.Authenticate(username, password)
	if err != nil {
		if errors.Is(err, catalog.ErrBadCredentials) {
			s.logins.result(username, addr, false)
			return nil, apiErr(401, "invalid_credentials", "wrong user name or password", "")
		}
		return nil, err
	}
	s.logins.result(username, addr, true)
	return u, nil
}
