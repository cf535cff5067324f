package edge

import (
	"errors"
	"math"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// Login limiting throttles guessing without locking the real owner out: failures count
// per source address and user name, and per source address, never per user name alone,
// so wrong passwords typed from elsewhere never stop the owner signing in from an
// address that has not been failing. A (address, name) pair locks for pairBase after
// pairAfter failures in a row; an address locks for addrBase after addrAfter failures,
// whichever names they tried. Each further lock of the same pair or address is twice as
// long, up to lockMax; a quiet lockMax forgets the history. A success clears its pair,
// never its address (an attacker's own account cannot wash the address clean). A locked
// sign-in answers 429 with Retry-After, whether or not the password is right, so
// guessing gains nothing while locked. The address is the client's (clientAddr, which
// believes X-Forwarded-For only from trusted proxies); IPv6 addresses count per /64,
// the block one subscriber gets.
const (
	pairAfter = 5
	pairBase  = 30 * time.Second
	addrAfter = 30
	addrBase  = time.Minute
	lockMax   = 15 * time.Minute
	// limiterCap bounds the entries kept; beyond it, idle ones are dropped.
	limiterCap = 100_000
)

// backoff is the failure history of one pair or address.
type backoff struct {
	failures int       // since the last lock
	locks    int       // locks so far, doubling the next one
	until    time.Time // locked until
	last     time.Time // last failure
}

// fail records a failure at now; after limit failures it locks for base, doubled per
// earlier lock, up to lockMax.
func (b *backoff) fail(now time.Time, limit int, base time.Duration) {
	if now.Sub(b.last) > lockMax && !now.Before(b.until) {
		*b = backoff{} // quiet long enough: start over
	}
	b.last = now
	if b.failures++; b.failures >= limit {
		lock := time.Duration(float64(base) * math.Pow(2, float64(min(b.locks, 16))))
		b.until, b.failures, b.locks = now.Add(min(lock, lockMax)), 0, b.locks+1
	}
}

// idle reports whether b neither locks nor remembers anything worth keeping at now.
func (b *backoff) idle(now time.Time) bool {
	return !now.Before(b.until) && now.Sub(b.last) > lockMax
}

// loginLimiter counts failed password sign-ins per (address, user name) and per address.
type loginLimiter struct {
	mu    sync.Mutex
	pairs map[pairKey]*backoff
	addrs map[netip.Prefix]*backoff
	now   func() time.Time
}

type pairKey struct {
	addr netip.Prefix
	name string // lowercased
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{pairs: map[pairKey]*backoff{}, addrs: map[netip.Prefix]*backoff{}, now: time.Now}
}

// sourceKey is the unit an address counts in: the IPv4 address, or its IPv6 /64.
func sourceKey(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	bits := a.BitLen()
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// wait returns how long a sign-in of name from addr must wait, 0 when it may try.
func (l *loginLimiter) wait(name string, addr netip.Addr) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	src := sourceKey(addr)
	var d time.Duration
	for _, b := range []*backoff{l.pairs[pairKey{src, strings.ToLower(name)}], l.addrs[src]} {
		if b != nil && now.Before(b.until) {
			d = max(d, b.until.Sub(now))
		}
	}
	return d
}

// result records the outcome of a sign-in that was allowed to try.
func (l *loginLimiter) result(name string, addr netip.Addr, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	src := sourceKey(addr)
	key := pairKey{src, strings.ToLower(name)}
	if ok {
		delete(l.pairs, key)
		return
	}
	l.prune(now)
	p := l.pairs[key]
	if p == nil {
		p = &backoff{}
		l.pairs[key] = p
	}
	p.fail(now, pairAfter, pairBase)
	a := l.addrs[src]
	if a == nil {
		a = &backoff{}
		l.addrs[src] = a
	}
	a.fail(now, addrAfter, addrBase)
}

// prune drops idle entries once the maps are full, so that a flood of names or
// addresses cannot grow them without bound.
func (l *loginLimiter) prune(now time.Time) {
	if len(l.pairs) >= limiterCap {
		for k, b := range l.pairs {
			if b.idle(now) {
				delete(l.pairs, k)
			}
		}
	}
	if len(l.addrs) >= limiterCap {
		for k, b := range l.addrs {
			if b.idle(now) {
				delete(l.addrs, k)
			}
		}
	}
}

// checkPassword is every password sign-in's one door (the API login and the device
// page): it applies the limiter, then checks the password.
func (s *Server) checkPassword(ctx *fasthttp.RequestCtx, username, password string) (*catalog.User, error) {
	addr := s.clientAddr(ctx)
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
