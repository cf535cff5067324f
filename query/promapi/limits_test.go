package promapi

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/teststorage"
)

func TestEvalSteps(t *testing.T) {
	p := parser.NewParser(parser.Options{EnableExperimentalFunctions: true})
	minute := func(int64) int64 { return time.Minute.Milliseconds() }
	t0 := time.Unix(1_700_000_000, 0)
	f := func(q string, start, end time.Time, step time.Duration, want int64) {
		t.Helper()
		expr, err := p.ParseExpr(q)
		if err != nil {
			t.Fatal(err)
		}
		if expr, err = promql.PreprocessExpr(expr, start, end, step); err != nil {
			t.Fatal(err)
		}
		if got := EvalSteps(expr, querySteps(start, end, step), minute); got != want {
			t.Errorf("%s: %d steps, want %d", q, got, want)
		}
	}
	// Instant queries: one step, plus each subquery's range over its step.
	f("up", t0, t0, 0, 1)
	f("rate(up[5m])", t0, t0, 0, 1)
	f("count(count_over_time(a_metric[10000d:1s]))", t0, t0, 0, 1+864_000_000)
	f("max_over_time(up[1h:])", t0, t0, 0, 1+60) // the default step, a minute
	f("max_over_time(up[90s:1m])", t0, t0, 0, 1+2)
	f("max_over_time(up[1s:1m])", t0, t0, 0, 1+1)
	// Nested subqueries multiply; siblings add.
	f("max_over_time(rate(up[5m:1s])[1h:1m])", t0, t0, 0, 1+60+60*300)
	f("max_over_time(up[1h:1m]) + min_over_time(up[1h:10m])", t0, t0, 0, 1+60+6)
	// Range queries: every step, and every step's subqueries.
	f("up", t0, t0.Add(time.Hour), time.Minute, 61)
	f("max_over_time(up[10m:1m])", t0, t0.Add(time.Hour), time.Minute, 61+61*10)
	// Duration expressions are resolved first.
	f("max_over_time(up[(1h*2):(1m*2)])", t0, t0, 0, 1+60)
	// Saturates rather than overflows.
	f("max_over_time(max_over_time(max_over_time(up[10000d:1ms])[10000d:1ms])[10000d:1ms])", t0, t0, 0, math.MaxInt64)
}

// TestStepLimitAnswersBadData: the API refuses a query over the step limit before it
// evaluates, in Prometheus's envelope, and answers those within it.
func TestStepLimitAnswersBadData(t *testing.T) {
	st := teststorage.New(t)
	a := NewOver(Config{MaxSteps: 1000}, st, st)
	t.Cleanup(func() { _ = a.Close() })
	get := func(path string, v url.Values) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		a.Serve(rec, httptest.NewRequest(http.MethodGet, Prefix+path+"?"+v.Encode(), nil), Request{})
		return rec
	}
	for _, c := range []struct {
		path string
		v    url.Values
	}{
		{"/query", url.Values{"query": {"count_over_time(up[1h:1s])"}, "time": {"1700000000"}}},
		{"/query_range", url.Values{"query": {"max_over_time(up[1h:1m])"}, "start": {"1700000000"}, "end": {"1700003600"}, "step": {"60"}}},
	} {
		rec := get(c.path, c.v)
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"errorType":"bad_data"`) ||
			!strings.Contains(rec.Body.String(), "more than the limit of 1000") {
			t.Errorf("%s %v: %d %s", c.path, c.v, rec.Code, rec.Body)
		}
	}
	if rec := get("/query", url.Values{"query": {"count_over_time(up[10m:1s])"}, "time": {"1700000000"}}); rec.Code != 200 {
		t.Errorf("within the limit: %d %s", rec.Code, rec.Body)
	}
}

func TestGateBoundsOrganizationsAndNode(t *testing.T) {
	g := newGate(2, 3, 1<<20, time.Millisecond)
	ctx := context.Background()
	a, b := uuid.New(), uuid.New()
	var leave []func()
	enter := func(org uuid.UUID) error {
		t.Helper()
		l, budget, err := g.enter(ctx, org)
		if err == nil {
			if budget == nil {
				t.Fatal("no organization budget")
			}
			leave = append(leave, l)
		}
		return err
	}
	for range 2 {
		if err := enter(a); err != nil {
			t.Fatal(err)
		}
	}
	var busy errBusy
	if err := enter(a); !errors.As(err, &busy) || !strings.Contains(err.Error(), "this organization already runs 2") {
		t.Fatalf("third of one organization: %v", err)
	}
	// Another organization is not held back by the first's full slots, only by the node's.
	if err := enter(b); err != nil {
		t.Fatal(err)
	}
	if err := enter(b); !errors.As(err, &busy) || !strings.Contains(err.Error(), "this node already runs 3") {
		t.Fatalf("fourth on the node: %v", err)
	}
	for _, l := range leave {
		l()
	}
	if len(g.orgs) != 0 {
		t.Errorf("idle organizations kept: %d", len(g.orgs))
	}
	if err := enter(a); err != nil {
		t.Fatalf("after the others left: %v", err)
	}
}

// heldQueryable is a storage whose selections wait, after saying so on entered, until
// release is closed: a query that holds its slot for as long as the test needs.
type heldQueryable struct {
	storage.SampleAndChunkQueryable
	entered chan struct{}
	release chan struct{}
}

func (h heldQueryable) Querier(mint, maxt int64) (storage.Querier, error) {
	q, err := h.SampleAndChunkQueryable.Querier(mint, maxt)
	return heldQuerier{q, h}, err
}

type heldQuerier struct {
	storage.Querier
	h heldQueryable
}

func (q heldQuerier) Select(ctx context.Context, sorted bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	q.h.entered <- struct{}{}
	<-q.h.release
	return q.Querier.Select(ctx, sorted, hints, ms...)
}

// TestConcurrentQueriesPerOrganization: while an organization's one slot is held by a
// running query, its next request is refused with Prometheus's 503 unavailable naming the
// limit; another organization's query runs.
func TestConcurrentQueriesPerOrganization(t *testing.T) {
	st := teststorage.New(t)
	h := heldQueryable{SampleAndChunkQueryable: st, entered: make(chan struct{}), release: make(chan struct{})}
	a := NewOver(Config{MaxConcurrentPerOrg: 1, ConcurrencyWait: time.Millisecond}, h, st)
	t.Cleanup(func() { _ = a.Close() })
	orgA, orgB := uuid.New(), uuid.New()
	serve := func(org uuid.UUID) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		a.Serve(rec, httptest.NewRequest(http.MethodGet, Prefix+"/query?query=up&time=1700000000", nil), Request{Org: org})
		return rec
	}
	held := make(chan *httptest.ResponseRecorder)
	go func() { held <- serve(orgA) }()
	<-h.entered // A's first query holds its slot
	rec := serve(orgA)
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), `"errorType":"unavailable"`) ||
		!strings.Contains(rec.Body.String(), "already runs 1 Prometheus queries at once") || rec.Header().Get("Retry-After") == "" {
		t.Errorf("A's second query: %d %s", rec.Code, rec.Body)
	}
	go func() { held <- serve(orgB) }()
	<-h.entered // B's query runs beside A's
	close(h.release)
	for range 2 {
		if rec := <-held; rec.Code != 200 {
			t.Errorf("held query: %d %s", rec.Code, rec.Body)
		}
	}
}
