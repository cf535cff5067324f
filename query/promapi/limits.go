package promapi

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
)

// EvalSteps is what evaluating expr costs in steps, computed on its parsed AST before
// anything is evaluated: the query's own steps (1 for an instant query) plus, for every
// subquery, its range over its step (defaultStep(range) when it names none) times the
// steps of what encloses it, so that nested subqueries multiply. It is an upper bound on
// the engine's work: a subquery's child evaluator walks (and keeps per-step statistics
// for) every one of its steps before MaxSamples counts a single sample, which is how
// count_over_time(x[10000d:1s]) took gigabytes. The sum saturates at math.MaxInt64.
// expr's duration expressions must be resolved (promql.PreprocessExpr).
func EvalSteps(expr parser.Expr, querySteps int64, defaultStep func(rangeMillis int64) int64) int64 {
	total := querySteps
	var walk func(n parser.Node, outer int64)
	walk = func(n parser.Node, outer int64) {
		if sq, ok := n.(*parser.SubqueryExpr); ok {
			step := sq.Step.Milliseconds()
			if step <= 0 {
				step = defaultStep(sq.Range.Milliseconds())
			}
			per := int64(1)
			if step > 0 {
				per = max(1, (sq.Range.Milliseconds()+step-1)/step)
			}
			outer = mulSat(outer, per)
			total = addSat(total, outer)
		}
		for _, c := range parser.Children(n) {
			walk(c, outer)
		}
	}
	walk(expr, querySteps)
	return total
}

// querySteps is the steps of a query from start to end every interval (0: instant).
func querySteps(start, end time.Time, interval time.Duration) int64 {
	if interval <= 0 || !end.After(start) {
		return 1
	}
	return int64(end.Sub(start)/interval) + 1
}

func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// StepLimited returns engine behind a limit of maxSteps on EvalSteps, parsing queries
// with p and taking defaultStep as the engine's NoStepSubqueryIntervalFn: a query over
// the limit is refused before evaluation, and the HTTP API answers it as Prometheus
// answers a bad query parameter (400, bad_data). The API serves through it; the upstream
// PromQL suite runs through it to show the default refuses none of its queries.
func StepLimited(engine promql.QueryEngine, p parser.Parser, maxSteps int64, defaultStep func(rangeMillis int64) int64) promql.QueryEngine {
	return &stepLimited{QueryEngine: engine, parser: p, maxSteps: maxSteps, defaultStep: defaultStep}
}

type stepLimited struct {
	promql.QueryEngine
	parser      parser.Parser
	maxSteps    int64
	defaultStep func(int64) int64
}

func (e *stepLimited) NewInstantQuery(ctx context.Context, q storage.Queryable, opts promql.QueryOpts, qs string, ts time.Time) (promql.Query, error) {
	if err := e.check(qs, ts, ts, 0); err != nil {
		return nil, err
	}
	return e.QueryEngine.NewInstantQuery(ctx, q, opts, qs, ts)
}

func (e *stepLimited) NewRangeQuery(ctx context.Context, q storage.Queryable, opts promql.QueryOpts, qs string, start, end time.Time, interval time.Duration) (promql.Query, error) {
	if err := e.check(qs, start, end, interval); err != nil {
		return nil, err
	}
	return e.QueryEngine.NewRangeQuery(ctx, q, opts, qs, start, end, interval)
}

// check parses qs as the engine will and refuses it when it costs more than maxSteps;
// a query that does not parse is left to the engine, whose error names the position.
func (e *stepLimited) check(qs string, start, end time.Time, interval time.Duration) error {
	expr, err := e.parser.ParseExpr(qs)
	if err != nil {
		return nil
	}
	if expr, err = promql.PreprocessExpr(expr, start, end, interval); err != nil {
		return nil
	}
	if n := EvalSteps(expr, querySteps(start, end, interval), e.defaultStep); n > e.maxSteps {
		return fmt.Errorf("%w: the query would evaluate %s steps (subquery steps included, nested subqueries multiplying), more than the limit of %d: "+
			"use a larger subquery step (the part after ':' in [range:step]), a shorter subquery range, or a larger query step or shorter time range",
			ErrTooManySteps, stepCount(n), e.maxSteps)
	}
	return nil
}

// ErrTooManySteps is the error of a query refused for its evaluation steps (EvalSteps).
var ErrTooManySteps = fmt.Errorf("too many evaluation steps")

func stepCount(n int64) string {
	if n == math.MaxInt64 {
		return "more than 9.2e18"
	}
	return fmt.Sprint(n)
}
