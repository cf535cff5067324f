package spl

import (
	"context"
	"time"
)

// Shape is what a search returns, for a caller that reads each row of a statistics
// result as one group (an alert): the result's kind and the columns that identify a row.
type Shape struct {
	Kind ResultKind
	// Keys are the columns that name a row of a statistics result: the BY fields of the
	// last stats, the OVER (row) field of the last chart, _time for the last timechart,
	// as renames after it call them. Empty (not nil) for an aggregation without BY (one
	// row); nil for events and for a table (rows named by every column: the caller
	// decides).
	Keys []string
}

// Analyze validates a search and its time window (parsed and compiled, as a search
// would be) and says what it returns. The decision is made on the syntax tree, not the text.
func Analyze(spl string, earliest, latest string) (Shape, error) {
	now := time.Now()
	w, err := ParseWindow(TimeBound(earliest), TimeBound(latest), now)
	if err != nil {
		return Shape{}, err
	}
	p, err := Parse(spl)
	if err != nil {
		return Shape{}, err
	}
	plan, err := Compile(context.Background(), p, CompileOptions{Table: "`validate`.`logsearch_events`", Window: w, Now: now, Resolver: nullResolver{}})
	if err != nil {
		return Shape{}, err
	}
	sh := Shape{Kind: plan.Kind}
	if sh.Kind != ResultStatistics {
		return sh, nil
	}
	for _, cmd := range p.Commands {
		switch c := cmd.(type) {
		case *StatsCommand:
			sh.Keys = []string{}
			for _, f := range c.By {
				sh.Keys = append(sh.Keys, f.Name)
			}
		case *ChartCommand:
			sh.Keys = []string{}
			if c.Over != nil {
				sh.Keys = []string{c.Over.Name}
			}
		case *TimechartCommand:
			sh.Keys = []string{"_time"}
		case *TableCommand:
			sh.Keys = nil
		case *RenameCommand:
			for _, pair := range c.Pairs {
				for i, k := range sh.Keys {
					if k == pair.From.Name {
						sh.Keys[i] = pair.To.Name
					}
				}
			}
		}
	}
	return sh, nil
}

// WithCount returns the search followed by `| stats count AS alias`, printed from its
// syntax tree: the number of events (or rows) it returns, exactly, as one row.
func WithCount(spl, alias string) (string, error) {
	p, err := Parse(spl)
	if err != nil {
		return "", err
	}
	p.Commands = append(p.Commands, &StatsCommand{Aggs: []*Aggregate{{Func: "count", Alias: &FieldName{Name: alias}}}})
	return p.String(), nil
}
