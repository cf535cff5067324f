package promapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/timestamp"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"

	"github.com/svc-data/svc/query/promread"
)

// Push-down (SVC_PROMQL_PUSHDOWN): the functions promread computes in the engine on the
// step grid (promread.CanPushDown) are taken out of the query before the upstream engine
// evaluates it. Each `f(sel[range])` at the query's own evaluation times (not under a
// subquery, no offset or @ on the selector, a metric name selected by equality, no
// native histograms in reach) becomes a vector selector {__svc_pushdown__="<key>"} whose
// series the Queryable computes in the engine, with a sample at every evaluation time
// (the stale marker where the function has no value): the upstream engine reads each
// step's point back and evaluates the rest of the query (aggregations, binary
// operators) as it would. The rewrite is only made where what encloses the call does
// not read the metric name the function drops (see pushdownParent).

// GridQueryable is a Queryable the push-down can serve: promread's.
type GridQueryable interface {
	storage.Queryable
	WithPushdown(promread.Pushdown) storage.Queryable
}

// pushdownParser is the engine's parser: a query the push-down rewrote is handed to the
// engine under a one-time key (pending), which this parser answers with the rewritten
// expression; any other input is parsed.
type pushdownParser struct {
	parser.Parser
	pending sync.Map // key -> parser.Expr
}

// pendingPrefix starts the one-time keys; a query text cannot start with a NUL byte.
const pendingPrefix = "\x00pushdown:"

func (p *pushdownParser) ParseExpr(input string) (parser.Expr, error) {
	if strings.HasPrefix(input, pendingPrefix) {
		if e, ok := p.pending.LoadAndDelete(input); ok {
			return e.(parser.Expr), nil
		}
	}
	return p.Parser.ParseExpr(input)
}

// NewPushdownEngine returns an engine built with opts whose queries over a GridQueryable
// push the functions promread computes down to the engine, and the engine itself (to
// close). Over any other Queryable it evaluates as the upstream engine does.
func NewPushdownEngine(opts promql.EngineOpts) (promql.QueryEngine, *promql.Engine) {
	pp := &pushdownParser{Parser: opts.Parser}
	if pp.Parser == nil {
		pp.Parser = parser.NewParser(parser.Options{})
	}
	opts.Parser = pp
	ng := promql.NewEngine(opts)
	return &pushdownEngine{Engine: ng, parser: pp}, ng
}

type pushdownEngine struct {
	*promql.Engine
	parser *pushdownParser
}

func (e *pushdownEngine) NewInstantQuery(ctx context.Context, q storage.Queryable, opts promql.QueryOpts, qs string, ts time.Time) (promql.Query, error) {
	pq, pqs, done := e.plan(q, qs, ts, ts, 0)
	defer done()
	query, err := e.Engine.NewInstantQuery(ctx, pq, opts, pqs, ts)
	if err != nil || pqs == qs {
		return query, err
	}
	return &unpushedOnHistograms{Query: query, again: func() (promql.Query, error) {
		return e.Engine.NewInstantQuery(ctx, q, opts, qs, ts)
	}}, nil
}

func (e *pushdownEngine) NewRangeQuery(ctx context.Context, q storage.Queryable, opts promql.QueryOpts, qs string, start, end time.Time, interval time.Duration) (promql.Query, error) {
	pq, pqs, done := e.plan(q, qs, start, end, interval)
	defer done()
	query, err := e.Engine.NewRangeQuery(ctx, pq, opts, pqs, start, end, interval)
	if err != nil || pqs == qs {
		return query, err
	}
	return &unpushedOnHistograms{Query: query, again: func() (promql.Query, error) {
		return e.Engine.NewRangeQuery(ctx, q, opts, qs, start, end, interval)
	}}, nil
}

// unpushedOnHistograms is a pushed-down query that, when a pushed selection finds native
// histograms in reach (the grid functions read floats only), is evaluated again as the
// upstream engine evaluates it, without the push-down. Finding out costs a statement run
// beside the selection's own, instead of one before the query is planned.
type unpushedOnHistograms struct {
	promql.Query
	again func() (promql.Query, error)
}

func (u *unpushedOnHistograms) Exec(ctx context.Context) *promql.Result {
	res := u.Query.Exec(ctx)
	if !errors.Is(res.Err, promread.ErrHistogramsInReach) {
		return res
	}
	q, err := u.again()
	if err != nil {
		return &promql.Result{Err: err}
	}
	u.Query.Close()
	u.Query = q
	return q.Exec(ctx)
}

// plan rewrites qs for the push-down when q can serve it: it returns the Queryable and
// query text to hand the engine (a one-time key of the rewritten expression) and a
// function dropping the key if the engine did not take it. Whatever cannot be pushed
// down, or a query that does not parse, goes to the engine unchanged.
func (e *pushdownEngine) plan(q storage.Queryable, qs string, start, end time.Time, interval time.Duration) (storage.Queryable, string, func()) {
	unchanged := func() {}
	gq, ok := q.(GridQueryable)
	if !ok {
		return q, qs, unchanged
	}
	expr, err := e.parser.Parser.ParseExpr(qs)
	if err != nil || reservedLabel(expr) {
		return q, qs, unchanged
	}
	p := promread.Pushdown{Start: timestamp.FromTime(start), End: timestamp.FromTime(end), Step: interval.Milliseconds(),
		Specs: map[string]promread.Spec{}}
	pl := planner{p: &p}
	expr = pl.visit(expr, false)
	if len(p.Specs) == 0 {
		return q, qs, unchanged
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	key := pendingPrefix + hex.EncodeToString(b[:])
	e.parser.pending.Store(key, expr)
	return gq.WithPushdown(p), key, func() { e.parser.pending.Delete(key) }
}

// reservedLabel reports whether the query itself names the push-down's label.
func reservedLabel(expr parser.Expr) bool {
	found := false
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			for _, m := range vs.LabelMatchers {
				found = found || m.Name == promread.PushdownLabel
			}
		}
		return nil
	})
	return found
}

type planner struct {
	p *promread.Pushdown
}

// valueFuncs are the functions whose answer depends only on their vector argument's
// values and labels, not on the metric name the pushed-down function drops (nor on a
// selector's own samples, as timestamp() does), so that a call under them may be
// pushed down.
var valueFuncs = map[string]bool{
	"abs": true, "ceil": true, "floor": true, "round": true, "exp": true, "ln": true, "log2": true, "log10": true,
	"sqrt": true, "sgn": true, "clamp": true, "clamp_min": true, "clamp_max": true, "sort": true, "sort_desc": true,
	"scalar": true,
}

// visit rewrites the pushable calls under n (n itself included) and returns n or its
// replacement. keepName is set under histogram_quantile, which groups classic buckets
// by their labels, the name among them, and names the metric in its annotations (it
// drops the name from its own answer).
func (pl *planner) visit(n parser.Expr, keepName bool) parser.Expr {
	switch x := n.(type) {
	case *parser.ParenExpr:
		x.Expr = pl.visit(x.Expr, keepName)
	case *parser.UnaryExpr:
		x.Expr = pl.visit(x.Expr, false)
	case *parser.AggregateExpr:
		if !slices.Contains(x.Grouping, labels.MetricName) {
			x.Expr = pl.visit(x.Expr, false)
		}
	case *parser.BinaryExpr:
		if x.Op.IsSetOperator() {
			break
		}
		if vm := x.VectorMatching; vm != nil && (slices.Contains(vm.MatchingLabels, labels.MetricName) || slices.Contains(vm.Include, labels.MetricName)) {
			break
		}
		x.LHS = pl.visit(x.LHS, false)
		x.RHS = pl.visit(x.RHS, false)
	case *parser.Call:
		if r := pl.pushable(x, keepName); r != nil {
			return r
		}
		switch {
		case valueFuncs[x.Func.Name]:
			for i, a := range x.Args {
				if a.Type() == parser.ValueTypeVector {
					x.Args[i] = pl.visit(a, false)
				}
			}
		case x.Func.Name == "histogram_quantile" && len(x.Args) == 2:
			x.Args[1] = pl.visit(x.Args[1], true)
		}
	}
	return n
}

// pushable returns the synthetic selector replacing call, or nil when it is not pushed
// down.
func (pl *planner) pushable(call *parser.Call, keepName bool) parser.Expr {
	if !promread.CanPushDown(call.Func.Name) || len(call.Args) != 1 {
		return nil
	}
	ms, ok := call.Args[0].(*parser.MatrixSelector)
	if !ok || ms.RangeExpr != nil || ms.Range <= 0 {
		return nil
	}
	vs, ok := ms.VectorSelector.(*parser.VectorSelector)
	if !ok || vs.OriginalOffset != 0 || vs.OriginalOffsetExpr != nil || vs.Offset != 0 || vs.Timestamp != nil ||
		vs.StartOrEnd != 0 || vs.Anchored || vs.Smoothed {
		return nil
	}
	named := false
	for _, m := range vs.LabelMatchers {
		named = named || (m.Name == labels.MetricName && m.Type == labels.MatchEqual)
	}
	if !named {
		return nil
	}
	rng := ms.Range.Milliseconds()
	if ms.Range%time.Millisecond != 0 {
		return nil
	}
	key := strconv.Itoa(len(pl.p.Specs))
	pl.p.Specs[key] = promread.Spec{Func: call.Func.Name, Range: rng, Matchers: vs.LabelMatchers, Pos: ms.PositionRange(),
		KeepName: keepName || call.Func.Name == "last_over_time"}
	return &parser.VectorSelector{
		LabelMatchers: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, promread.PushdownLabel, key)},
		PosRange:      call.PosRange,
	}
}
