package spl

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/svc-data/svc/query/sqlquote"
)

// chartOpts are the parsed options of chart and timechart.
type chartOpts struct {
	limit    int
	bottom   bool
	useOther bool
	useNull  bool
	span     int64 // seconds, 0: automatic
	week     bool  // span in weeks: buckets start on Monday
	bins     int
	cont     bool
}

func parseChartOpts(opts []*Option) chartOpts {
	o := chartOpts{limit: DefaultChartLimit, useOther: true, useNull: true, bins: DefaultBins, cont: true}
	for _, opt := range opts {
		switch opt.Name {
		case "limit":
			o.limit, o.bottom, _ = parseLimit(opt.Value)
		case "useother":
			o.useOther, _ = parseBool(opt.Value)
		case "usenull":
			o.useNull, _ = parseBool(opt.Value)
		case "cont":
			o.cont, _ = parseBool(opt.Value)
		case "bins":
			fmt.Sscan(opt.Value, &o.bins)
		case "span":
			o.span, _ = parseSpan(opt.Value)
			m := spanRe.FindStringSubmatch(opt.Value)
			if m != nil {
				if u, ok := lookupSpanUnit(m[2]); ok && u.Unit == "w" {
					o.week = true
				}
			}
		}
	}
	return o
}

// pivot describes a chart or timechart for compilation.
type pivot struct {
	pos     Pos
	rowName string  // output name of the row field; "" when there is none
	row     sqlExpr // row key; s == "" when there is none
	rowDisp sqlExpr // shown for the row when it differs from the key
	// rowNotNull: the row key is never null (time buckets).
	rowNotNull bool
	split      *FieldName
	aggs       []*aggPlan
	opts       chartOpts
	fill       *fill
	// all and keep, set when the input relation drops rows (a null row key, or
	// NULL split values with usenull=f): all is the input relation's select
	// without that condition, keep the condition over the grouped row key r
	// and split value v.
	all, keep string
}

// fill is the continuous time axis of a timechart.
type fill struct {
	from, to time.Time
	stepMs   int64
}

func (c *compiler) chart(cmd *ChartCommand) {
	p := pivot{pos: cmd.Rng.Start, split: cmd.By, opts: parseChartOpts(cmd.Options)}
	p.aggs = c.planAggs(cmd.Aggs)
	if cmd.Over != nil {
		x := c.scalarField(cmd.Over)
		if x.k == kNull {
			x = sqlExpr{"CAST(NULL AS Nullable(String))", kStr}
		}
		key, disp, needsAny := groupKey(x)
		p.rowName, p.row = cmd.Over.Name, key
		if needsAny {
			p.rowDisp = disp
		}
	}
	c.pivot(p)
}

// spanLadder lists the automatic spans in seconds, smallest first.
var spanLadder = []int64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 14400, 21600, 43200,
	86400, 2 * 86400, 7 * 86400, 14 * 86400, MaxSpanSeconds}

// autoSpan picks the smallest ladder span giving at most bins buckets.
func autoSpan(window time.Duration, bins int) int64 {
	for _, s := range spanLadder {
		if ceilDiv(window.Milliseconds(), s*1000) <= int64(bins) {
			return s
		}
	}
	return MaxSpanSeconds
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// floorDiv divides rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// weekOrigin is Monday 1970-01-05 00:00 UTC in milliseconds: week buckets
// start on Mondays; all other spans are aligned to the Unix epoch.
const weekOrigin = 4 * 86400 * 1000

// BucketStart is the start of the bucket holding t (exported for tests
// that compute expected results).
func BucketStart(t time.Time, spanMs, originMs int64) time.Time {
	return time.UnixMilli(floorDiv(t.UnixMilli()-originMs, spanMs)*spanMs + originMs).UTC()
}

// bucketSQL is BucketStart in SQL.
func bucketSQL(t string, spanMs, originMs int64) string {
	x := "toUnixTimestamp64Milli(" + t + ")"
	if originMs != 0 {
		x = "(" + x + " - " + fmt.Sprint(originMs) + ")"
	}
	s := fmt.Sprint(spanMs)
	o := ""
	if originMs != 0 {
		o = " + " + fmt.Sprint(originMs)
	}
	return "fromUnixTimestamp64Milli(toInt64((intDiv(" + x + ", " + s + ") - (" + x + " % " + s + " < 0)) * " + s + o + "), 'UTC')"
}

func (c *compiler) timechart(cmd *TimechartCommand) {
	p := pivot{pos: cmd.Rng.Start, split: cmd.By, opts: parseChartOpts(cmd.Options), rowName: "_time"}
	t := c.cur.sch.resolve("_time")
	p.aggs = c.planAggs(cmd.Aggs)
	w := c.opts.Window
	from, to := w.Earliest, w.Latest
	if !w.HasEarliest {
		if !c.resolver(cmd.Rng.Start, "timechart over all time") {
			return
		}
		sql := c.with(c.cur.rel, false) + "SELECT min(" + t.s + ") FROM " + c.cur.rel
		c.resolved = append(c.resolved, sql)
		first, ok, err := c.opts.Resolver.EarliestTime(c.ctx, sql)
		if err != nil {
			c.setFatal(fmt.Errorf("find the first event: %w", err))
			return
		}
		from = to
		if ok && first.Before(to) {
			from = first
		}
	}
	span := p.opts.span
	if span == 0 {
		span = autoSpan(to.Sub(from), p.opts.bins)
	}
	var origin int64
	if p.opts.week {
		origin = weekOrigin
	}
	spanMs := span * 1000
	start := BucketStart(from, spanMs, origin)
	if !from.Before(to) {
		start = to
	}
	if p.opts.cont {
		if n := ceilDiv(to.Sub(start).Milliseconds(), spanMs); n > MaxBuckets {
			c.errs.add(CodeLimit, cmd.Rng.Start, "use a larger span or a smaller time window",
				"timechart would fill %d buckets of %s; the limit is %d", n, time.Duration(span)*time.Second, MaxBuckets)
			return
		}
		p.fill = &fill{from: start, to: to, stepMs: spanMs}
	}
	p.rowNotNull = t.s == c.cur.sch.base("_time").s
	p.row = sqlExpr{bucketSQL(t.s, spanMs, origin), kTime}
	if p.rowNotNull && origin == 0 && from.UnixMilli() >= 0 {
		// Every row's _time is at or after from (the window, or the first event), so
		// none is before 1970 and the engine's own floor to the span is BucketStart
		// (about a fifth cheaper than the signed arithmetic over 200,000 rows).
		p.row = sqlExpr{"toStartOfInterval(" + t.s + ", toIntervalMillisecond(" + fmt.Sprint(spanMs) + "))", kTime}
	}
	c.pivot(p)
}

// series is one split series of a pivot.
type series struct {
	label string // the value, or NULL / OTHER
	cond  string // rows of the series
	key   string // "v:" and the value, "null" or "other"
}

func (c *compiler) pivot(p pivot) {
	// The input relation holds the row key, the split key and every input
	// of every aggregate, so that ranking and pivot read the same rows.
	var sel, where, keep []string // keep: where over the grouped row key r and split value v
	rowCol, dispCol, splitCol := "", "", ""
	if p.row.s != "" {
		rowCol = c.newCol()
		sel = append(sel, p.row.s+" AS "+rowCol)
		if !p.rowNotNull {
			where = append(where, isNotNull(p.row))
			keep = append(keep, "(r IS NOT NULL)")
		}
		if p.rowDisp.s != "" {
			dispCol = c.newCol()
			sel = append(sel, p.rowDisp.s+" AS "+dispCol)
		}
	}
	if p.split != nil {
		x := c.scalarField(p.split)
		splitCol = c.newCol()
		sel = append(sel, toStr(x).s+" AS "+splitCol)
		if !p.opts.useNull {
			where = append(where, isNotNull(x))
			keep = append(keep, "(v IS NOT NULL)")
		}
	}
	for _, a := range p.aggs {
		for _, in := range a.inputs() {
			col := c.newCol()
			sel = append(sel, in.s+" AS "+col)
			in.s = col
		}
	}
	if len(sel) == 0 {
		sel = append(sel, "1 AS "+c.newCol())
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + c.cur.rel
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
		p.all = "(SELECT " + strings.Join(sel, ", ") + " FROM " + c.cur.rel + ")"
		p.keep = strings.Join(keep, " AND ")
	}
	in := c.addCTE(q)

	var cols []namedCol
	var out []string
	var group string
	var chosen []series
	var order []orderTerm
	names := map[string]bool{}
	if rowCol != "" {
		col := c.newCol()
		out = append(out, rowCol+" AS "+col)
		group = col
		order = naturalOrder(sqlExpr{col, p.row.k}, false)
		shown := namedCol{name: p.rowName, col: col, k: p.row.k}
		if dispCol != "" {
			dc := c.newCol()
			out = append(out, "any("+dispCol+") AS "+dc)
			shown = namedCol{name: p.rowName, col: dc, k: p.rowDisp.k}
		}
		cols = append(cols, shown)
		names[p.rowName] = true
	}
	addAgg := func(name, sql string, k kind) {
		if names[name] {
			c.errs.add(CodeInvalid, p.pos, "rename with AS or limit the series", "colliding output name %q", name)
		}
		names[name] = true
		col := c.newCol()
		out = append(out, sql+" AS "+col)
		cols = append(cols, namedCol{name: name, col: col, k: k})
	}
	if p.split == nil {
		for _, a := range p.aggs {
			addAgg(a.name, a.sql(""), a.outKind())
		}
	} else {
		ss, ok := c.rankSeries(p, in, rowCol, dispCol, splitCol)
		if !ok {
			return
		}
		chosen = ss
		if n := len(ss) * len(p.aggs); n > MaxSeriesColumns {
			c.errs.add(CodeLimit, p.pos, "lower limit=, use fewer aggregates, or filter the split field",
				"chart would have %d series columns; the limit is %d", n, MaxSeriesColumns)
			return
		}
		for _, a := range p.aggs {
			for _, s := range ss {
				name := s.label
				if len(p.aggs) > 1 {
					name = seriesComponent(a.name) + ":" + seriesComponent(s.label)
				}
				addAgg(name, a.sql(s.cond), a.outKind())
			}
		}
	}
	// An aggregation that drops none of its input rows counts them on the way
	// (count() per row key; the filled rows count 0), so the stage before it needs
	// no count of its own when this one ends the search.
	var counted *inputCount
	if p.split == nil && len(where) == 0 {
		counted = &inputCount{rel: c.cur.rel, col: c.newCol()}
		out = append(out, "count() AS "+counted.col)
	}
	q = "SELECT " + strings.Join(out, ", ") + " FROM " + in
	if group != "" {
		q += " GROUP BY " + group
	}
	if p.fill != nil {
		q += " ORDER BY " + group + " WITH FILL FROM " + timeLiteral(p.fill.from) + " TO " + timeLiteral(p.fill.to) +
			" STEP toIntervalMillisecond(" + fmt.Sprint(p.fill.stepMs) + ")"
	}
	c.cur = state{rel: c.addCTE(q), sch: &schema{cols: cols}, order: order, transformed: true}
	if counted != nil {
		counted.of = c.cur.rel
		c.inputCount = counted
	}
	if g := c.pendingPivot; g != nil {
		c.pendingPivot = nil
		g.rel, g.series = c.cur.rel, chosen
		c.goPivot = g
	}
}

// seriesComponent quotes a part of an <aggregate>:<value> series name when
// it is empty or holds punctuation that would make the name ambiguous.
func seriesComponent(s string) string {
	if s != "" && !strings.ContainsAny(s, ":\"\\,") && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return s
	}
	return quoteString(s, '"')
}

// rankSeries runs the ranking query and chooses the series columns: the
// top (or bottom) limit values by score, in value order, then NULL and
// OTHER.
func (c *compiler) rankSeries(p pivot, in, rowCol, dispCol, splitCol string) ([]series, bool) {
	if !c.resolver(p.pos, "a split chart") {
		return nil, false
	}
	n := p.opts.limit + 1
	if p.opts.limit == 0 {
		n = MaxSeriesColumns + 1
	}
	dir := "DESC"
	if p.opts.bottom {
		dir = "ASC"
	}
	if values, hasNull, more, ok := c.rankPivot(p, in, rowCol, dispCol, splitCol, dir); ok {
		return c.chooseSeries(p, splitCol, values, hasNull, more)
	}
	// One statement, one read of the input: the NULL series (counted in rows) is a group
	// of its own, kept beside the first n others by LIMIT n BY.
	isNull := "toUInt8(" + splitCol + " IS NULL) AS is_null, CAST(" + splitCol + " AS Nullable(String)) AS value, "
	var ranked string
	if len(p.aggs) == 1 {
		// One aggregate: the sum of its value over the rows.
		a := p.aggs[0]
		score := toNum(sqlExpr{a.sql(""), a.outKind()}).s
		ranked = "SELECT " + isNull + "if(" + splitCol + " IS NULL, toFloat64(sum(n)), toFloat64(coalesce(sum(score), 0))) AS score FROM (SELECT " +
			rowCol + ", " + splitCol + ", " + score + " AS score, count() AS n FROM " + in + " GROUP BY " + rowCol + ", " + splitCol +
			") GROUP BY " + splitCol
	} else {
		// Several aggregates: event frequency.
		ranked = "SELECT " + isNull + "toFloat64(count()) AS score FROM " + in + " GROUP BY " + splitCol
	}
	sql := c.with(in, false) + ranked + " ORDER BY is_null ASC, score " + dir + ", value ASC LIMIT " + itoa(n) + " BY is_null"
	c.resolved = append(c.resolved, sql)
	rows, err := c.opts.Resolver.RankSeries(c.ctx, sql)
	if err != nil {
		c.setFatal(fmt.Errorf("rank chart series: %w", err))
		return nil, false
	}
	var values []string
	hasNull := false
	for _, r := range rows {
		if r.Null {
			hasNull = r.Score > 0
			continue
		}
		values = append(values, r.Value)
	}
	return c.chooseSeries(p, splitCol, values, hasNull, false)
}

// chooseSeries turns the ranked values (in rank order, up to limit+1 of
// them, or all when more is set) into the series columns.
func (c *compiler) chooseSeries(p pivot, splitCol string, values []string, hasNull, more bool) ([]series, bool) {
	if p.opts.limit == 0 {
		if len(values) > MaxSeriesColumns {
			c.errs.add(CodeLimit, p.pos, "set limit=N or filter the split field",
				"the split field has more than %d values", MaxSeriesColumns)
			return nil, false
		}
	} else if len(values) > p.opts.limit {
		more = true
		values = values[:p.opts.limit]
	}
	slices.Sort(values)
	var out []series
	var lits []string
	for _, v := range values {
		out = append(out, series{label: v, cond: splitCol + " = " + sqlquote.String(v), key: "v:" + v})
		lits = append(lits, sqlquote.String(v))
	}
	if hasNull && p.opts.useNull {
		out = append(out, series{label: "NULL", cond: splitCol + " IS NULL", key: "null"})
	}
	if more && p.opts.useOther {
		out = append(out, series{label: "OTHER", cond: splitCol + " IS NOT NULL AND " + splitCol + " NOT IN (" + strings.Join(lits, ", ") + ")", key: "other"})
	}
	if len(out) == 0 {
		// No rows at all: keep the layout valid with no series.
		return nil, true
	}
	return out, true
}
