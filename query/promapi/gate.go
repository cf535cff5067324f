package promapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/query/promread"
)

// gate bounds the requests served at once: per organization, so one tenant's keys
// cannot take every slot, and on the node. A request waits up to wait for its slots,
// then is refused with the limit that was full. It also keeps each active
// organization's byte budget, the parent of its queries' budgets.
type gate struct {
	perOrg   int
	orgBytes int64
	wait     time.Duration
	node     chan struct{}

	mu   sync.Mutex
	orgs map[uuid.UUID]*orgSlots
}

// orgSlots is one organization's slots; users counts the requests holding or waiting
// for one, so that an idle organization's entry is dropped.
type orgSlots struct {
	ch     chan struct{}
	budget *promread.Budget
	users  int
}

func newGate(perOrg, node int, orgBytes int64, wait time.Duration) *gate {
	return &gate{perOrg: perOrg, orgBytes: orgBytes, wait: wait, node: make(chan struct{}, node), orgs: map[uuid.UUID]*orgSlots{}}
}

// errBusy is a request refused for want of a slot; its message names the limit and the remedy.
type errBusy struct{ msg string }

func (e errBusy) Error() string { return e.msg }

// enter takes an organization slot, then a node slot, waiting up to g.wait for both; it
// returns a func giving them back and the organization's byte budget.
func (g *gate) enter(ctx context.Context, org uuid.UUID) (func(), *promread.Budget, error) {
	ctx, cancel := context.WithTimeout(ctx, g.wait)
	defer cancel()
	g.mu.Lock()
	o := g.orgs[org]
	if o == nil {
		o = &orgSlots{ch: make(chan struct{}, g.perOrg), budget: promread.NewBudget("organization", g.orgBytes, nil)}
		g.orgs[org] = o
	}
	o.users++
	g.mu.Unlock()
	leaveOrg := func() {
		<-o.ch
		g.drop(org, o)
	}
	select {
	case o.ch <- struct{}{}:
	case <-ctx.Done():
		g.drop(org, o)
		return nil, nil, errBusy{fmt.Sprintf("this organization already runs %d Prometheus queries at once, the most it may (waited %s for one to end): "+
			"retry later, or run fewer queries at the same time", g.perOrg, g.wait)}
	}
	select {
	case g.node <- struct{}{}:
	case <-ctx.Done():
		leaveOrg()
		return nil, nil, errBusy{fmt.Sprintf("this node already runs %d Prometheus queries at once, the most it may (waited %s for one to end): retry later",
			cap(g.node), g.wait)}
	}
	return func() { <-g.node; leaveOrg() }, o.budget, nil
}

func (g *gate) drop(org uuid.UUID, o *orgSlots) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if o.users--; o.users == 0 {
		delete(g.orgs, org)
	}
}
