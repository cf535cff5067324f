package spl

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// pivotResolver is a Resolver that runs one statement both ranking a split
// chart's series and aggregating its rows by series; the executor is one.
type pivotResolver interface {
	RankPivot(ctx context.Context, sql string) (*Result, error)
}

// RankPivot runs the statement.
func (x *executor) RankPivot(ctx context.Context, sql string) (*Result, error) {
	if x.separate {
		return nil, nil
	}
	return x.run(ctx, sql)
}

// goPivot is a split chart of counts ending the search: its ranking
// statement returned, per row and series, the counts the pivot statement
// would have counted, ordered by row, so the result is built here instead
// of reading the events a second time.
type goPivot struct {
	rel    string // the chart's relation (the final one)
	limit  int    // values ranked at most this are named series
	disp   bool   // a display column follows the row key
	naggs  int
	series []series
	fill   *fill
	tuples *Result // r, [display], kind, label, one count per aggregate, counts of counted
	// counted are the earlier stages' relations counted by the statement.
	counted []string
	// input, when set, is the chart's input relation (an earlier stage's),
	// whose rows are the sum of the column before the counts over the tuples,
	// or with inputTotal that column's value in every tuple.
	input      string
	inputTotal bool
}

// Tuple kinds: a named value, the NULL series, OTHER.
const (
	tupleValue = 0
	tupleNull  = 1
	tupleOther = 2
)

// rankPivot ranks a split chart's series in one statement that also counts
// every row's series, when the chart ends the search and only counts: the
// counts of OTHER are sums of its values' counts, exact in integers. It
// returns the ranked values (kind 0), whether the NULL series has rows and
// whether there were more values than the limit; ok is false when the old
// ranking statement must run (another chart, another resolver, or more
// rows than the statement returns).
func (c *compiler) rankPivot(p pivot, in, rowCol, dispCol, splitCol, dir string) (values []string, hasNull, more, ok bool) {
	pr, isPR := c.opts.Resolver.(pivotResolver)
	// A Dynamic row key shows any() of its values, which one statement
	// could pick differently from two: those charts keep two statements.
	if !isPR || !c.last || rowCol == "" || dispCol != "" {
		return nil, false, false, false
	}
	for _, a := range p.aggs {
		if a.spec.Name != "count" {
			return nil, false, false, false
		}
	}
	bound := p.opts.limit
	if bound == 0 {
		bound = MaxSeriesColumns + 1
	}
	score := "count()"
	if len(p.aggs) == 1 {
		score = p.aggs[0].sql("")
	}
	inner := []string{rowCol + " AS r"}
	if dispCol != "" {
		inner = append(inner, "any("+dispCol+") AS dd")
	}
	inner = append(inner, splitCol+" AS v")
	outer := []string{"r"}
	if dispCol != "" {
		s, _, _ := outputExpr("any(dd)", p.rowDisp.k)
		outer = append(outer, s+" AS d")
	}
	outer = append(outer, "multiIf(v IS NULL, "+itoa(tupleNull)+", rk <= "+itoa(bound)+", "+itoa(tupleValue)+", "+itoa(tupleOther)+") AS kind",
		"if(kind = "+itoa(tupleValue)+", v, NULL) AS label")
	for i, a := range p.aggs {
		inner = append(inner, a.sql("")+" AS x"+itoa(i))
		outer = append(outer, "sum(x"+itoa(i)+") AS y"+itoa(i))
	}
	inner = append(inner, score+" AS score", "count() AS n")
	// The earlier stages' counts, as the result statement carries them.
	var counted []string
	for i, rel := range c.stageRels {
		if i < MeasuredStages && !slices.Contains(counted, rel) {
			counted = append(counted, rel)
		}
	}
	// A chart that drops none of its input rows (time rows, NULL split values
	// kept) counts them in the tuples: that stage needs no count of its own.
	// One that drops some (a null row key): those rows are grouped too and
	// dropped after the total is taken.
	input, total, src, kept := "", false, in, ""
	switch {
	case !slices.Contains(counted, c.cur.rel):
	case p.rowNotNull && p.opts.useNull:
		input = c.cur.rel
		outer = append(outer, "sum(n) AS __in")
	case p.all != "":
		input, total, src, kept = c.cur.rel, true, p.all, p.keep
		outer = append(outer, "any(tot) AS __in")
	}
	if input != "" {
		counted = slices.DeleteFunc(counted, func(r string) bool { return r == input })
	}
	if len(counted) > 0 {
		outer = append(outer, countColumns(nil, counted, "__n"))
	}
	maxTuples := (MaxOutputRows + 1) * (bound + 2)
	// The series score as the ranking statement computes it: the sum of the
	// aggregate over the rows, or the NULL series' rows.
	tuples := "SELECT " + strings.Join(inner, ", ") + " FROM " + src + " GROUP BY " + rowCol + ", " + splitCol
	if total {
		// The condition over the grouped keys, as over the rows: a group's key
		// is its rows' key.
		tuples = "SELECT * FROM (SELECT *, sum(n) OVER () AS tot FROM (" + tuples + ")) WHERE " + kept
	}
	sql := c.with(in, false) + "SELECT " + strings.Join(outer, ", ") + " FROM (" +
		"SELECT *, dense_rank() OVER (PARTITION BY v IS NULL ORDER BY sc " + dir + ", v ASC) AS rk FROM (" +
		"SELECT *, if(v IS NULL, toFloat64(sn), toFloat64(coalesce(ss, 0))) AS sc FROM (" +
		"SELECT *, sum(n) OVER (PARTITION BY v) AS sn, sum(score) OVER (PARTITION BY v) AS ss FROM (" +
		tuples + ")))) " +
		"GROUP BY r, kind, label" + orderBy(naturalOrder(sqlExpr{"r", p.row.k}, false)) + " LIMIT " + itoa(maxTuples)
	c.resolved = append(c.resolved, sql)
	r, err := pr.RankPivot(c.ctx, sql)
	if err != nil {
		c.setFatal(fmt.Errorf("rank chart series: %w", err))
		return nil, false, false, true
	}
	if r == nil || len(r.Rows) >= maxTuples {
		return nil, false, false, false
	}
	k := 1
	if dispCol != "" {
		k = 2
	}
	for _, row := range r.Rows {
		kind, _ := toUint(row[k])
		switch kind {
		case tupleValue:
			if v, ok := normalize(row[k+1]).(string); ok && !slices.Contains(values, v) {
				values = append(values, v)
			}
		case tupleNull:
			hasNull = true
		case tupleOther:
			more = true
		}
	}
	if p.opts.limit == 0 {
		more = false
	}
	c.pendingPivot = &goPivot{counted: counted, input: input, inputTotal: total, limit: bound, disp: dispCol != "", naggs: len(p.aggs), fill: p.fill, tuples: r}
	return values, hasNull, more, true
}

// result builds the rows and columns the pivot statement returns: one row
// per row key in the tuples' order, the counts of each aggregate by
// series (0 when the row has none), the timechart's empty buckets filled,
// at most MaxOutputRows+1 rows. ok is false when the statement must run.
func (g *goPivot) result() (*Result, bool) {
	t := g.tuples
	k := 1
	if g.disp {
		k = 2
	}
	ns := len(g.series)
	index := map[string]int{}
	for i, s := range g.series {
		index[s.key] = i
	}
	out := &Result{Stats: t.Stats}
	first := t.Columns[0]
	if g.disp {
		first = t.Columns[1]
	}
	out.Columns = append(out.Columns, Column{Name: "o1", Type: first.Type})
	for i := 0; i < g.naggs*ns; i++ {
		typ := "UInt64"
		if k+2+i/ns < len(t.Columns) {
			typ = t.Columns[k+2+i/ns].Type
		}
		out.Columns = append(out.Columns, Column{Name: "o" + itoa(i+2), Type: typ})
	}
	newRow := func(shown any) []any {
		row := make([]any, 1+g.naggs*ns)
		row[0] = shown
		for i := 1; i < len(row); i++ {
			row[i] = uint64(0)
		}
		return row
	}
	var rows [][]any
	var lastKey any
	for i, tu := range t.Rows {
		key := normalize(tu[0])
		if i == 0 || !equalKey(key, lastKey) {
			rows = append(rows, newRow(tu[k-1]))
			lastKey = key
		}
		row := rows[len(rows)-1]
		kind, _ := toUint(tu[k])
		sk := "other"
		switch kind {
		case tupleValue:
			v, _ := normalize(tu[k+1]).(string)
			sk = "v:" + v
		case tupleNull:
			sk = "null"
		}
		si, ok := index[sk]
		if !ok {
			continue // a series not shown (usenull=false, useother=false)
		}
		for j := 0; j < g.naggs; j++ {
			n, _ := toUint(tu[k+2+j])
			row[1+j*ns+si] = n
		}
	}
	if g.fill != nil {
		// Filled as WITH FILL fills rows within [from, to); rows outside it
		// (an eval moved _time) or an empty range are left to the statement.
		if !g.fill.from.Before(g.fill.to) {
			return nil, false
		}
		have := map[int64]bool{}
		for _, r := range rows {
			tm, ok := toTime(r[0])
			if !ok || tm.Before(g.fill.from) || !tm.Before(g.fill.to) {
				return nil, false
			}
			have[tm.UnixMilli()] = true
		}
		for ms := g.fill.from.UnixMilli(); ms < g.fill.to.UnixMilli(); ms += g.fill.stepMs {
			if !have[ms] {
				rows = append(rows, newRow(time.UnixMilli(ms).UTC()))
			}
		}
		slices.SortStableFunc(rows, func(a, b []any) int {
			ta, oka := toTime(a[0])
			tb, okb := toTime(b[0])
			switch {
			case !oka || !okb:
				return boolCmp(!oka, !okb)
			}
			return ta.Compare(tb)
		})
	}
	if len(rows) > MaxOutputRows+1 {
		rows = rows[:MaxOutputRows+1]
	}
	out.Rows = rows
	return out, true
}

// counts records the earlier stages' counts the statement returned.
func (g *goPivot) counts(known map[string]uint64) {
	if len(g.tuples.Rows) == 0 || (len(g.counted) == 0 && g.input == "") {
		return
	}
	row := g.tuples.Rows[0]
	if len(row) < len(g.counted) {
		return
	}
	for i, rel := range g.counted {
		if v, ok := toUint(row[len(row)-len(g.counted)+i]); ok {
			known[rel] = v
		}
	}
	if g.input == "" {
		return
	}
	at := len(row) - len(g.counted) - 1
	if g.inputTotal {
		if n, ok := toUint(row[at]); ok {
			known[g.input] = n
		}
		return
	}
	var sum uint64
	for _, tu := range g.tuples.Rows {
		n, ok := toUint(tu[at])
		if !ok {
			return
		}
		sum += n
	}
	known[g.input] = sum
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// equalKey compares normalized row keys.
func equalKey(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}
