package spl

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// timelineSpan picks the timeline bucket width in seconds: the smallest
// automatic span giving at most TimelineBuckets buckets, or whole days
// beyond the largest one.
func timelineSpan(window time.Duration) int64 {
	ms := window.Milliseconds()
	for _, s := range spanLadder {
		if ceilDiv(ms, s*1000) <= TimelineBuckets {
			return s
		}
	}
	return ceilDiv(ms, TimelineBuckets*86400*1000) * 86400
}

// timelineSQL counts events per bucket across [from, to), zero-filled.
func (plan *Plan) timelineSQL(from, to time.Time) (sql string, spanSeconds int64, ok bool) {
	t := plan.final.sch.resolve("_time")
	if t.k != kTime || !from.Before(to) {
		return "", 0, false
	}
	span := timelineSpan(to.Sub(from))
	start := BucketStart(from, span*1000, 0)
	rel := plan.final.rel
	sql = withClause(plan.ctes, rel, false) + "SELECT " + bucketSQL(t.s, span*1000, 0) + " AS bucket, count() AS n FROM " + rel +
		" WHERE " + t.s + " >= " + timeLiteral(from) + " AND " + t.s + " < " + timeLiteral(to) +
		" GROUP BY bucket ORDER BY bucket WITH FILL FROM " + timeLiteral(start) + " TO " + timeLiteral(to) +
		" STEP toIntervalMillisecond(" + fmt.Sprint(span*1000) + ")"
	return sql, span, true
}

// timelineStart is the earliest time of the timeline: the window's, or the
// first returned event's when the window is unbounded.
func (x *executor) timelineStart(ctx context.Context, plan *Plan) (time.Time, bool, error) {
	if plan.window.HasEarliest {
		return plan.window.Earliest, true, nil
	}
	t := plan.final.sch.resolve("_time")
	if t.k != kTime {
		return time.Time{}, false, nil
	}
	rel := plan.final.rel
	return x.EarliestTime(ctx, withClause(plan.ctes, rel, false)+"SELECT min("+t.s+") FROM "+rel)
}

func (x *executor) timeline(ctx context.Context, plan *Plan) ([]TimelineBucket, error) {
	out := []TimelineBucket{}
	from, ok, err := x.timelineStart(ctx, plan)
	if err != nil {
		return nil, fmt.Errorf("timeline start: %w", err)
	}
	if !ok {
		return out, nil
	}
	sql, span, ok := plan.timelineSQL(from, plan.window.Latest)
	if !ok {
		return out, nil
	}
	r, err := x.run(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	for _, row := range r.Rows {
		t, ok := toTime(row[0])
		if !ok {
			continue
		}
		n, _ := toUint(row[1])
		out = append(out, TimelineBucket{Time: t.Format("2006-01-02T15:04:05.000Z07:00"), SpanSeconds: span, Count: n})
	}
	return out, nil
}

// fieldClass is the SQL classifying a value for the inferred type.
func fieldClass(e sqlExpr) string {
	switch e.k {
	case kTime:
		return "'time'"
	case kNum:
		return "'number'"
	case kStr:
		return "if(toFloat64OrNull(" + e.s + ") IS NOT NULL, 'number', 'string')"
	case kArr, kMVNum, kMVDyn:
		return "'array'"
	}
	d := "dynamicType(" + e.s + ")"
	return "multiIf(" + d + " IN ('Int64', 'UInt64', 'Float64'), 'number', " + d + " = 'Bool', 'boolean', startsWith(" + d +
		", 'Array'), 'array', toFloat64OrNull(CAST(" + e.s + " AS Nullable(String))) IS NOT NULL, 'number', 'string')"
}

// fieldText is the text form counted for distinct and common values.
func fieldText(e sqlExpr) string {
	if e.k == kTime {
		return "CAST(toString(" + e.s + ") AS Nullable(String))"
	}
	return "CAST(" + toStr(e).s + " AS Nullable(String))"
}

// fieldStatisticsSQL returns the statement describing fields (one row:
// total, then per field non-null count, distinct count, classes, sources)
// and the statement listing their most common values.
func (plan *Plan) fieldStatisticsSQL(fields []namedCol) (stats, top string) {
	rel := plan.final.rel
	src := "coalesce(" + plan.final.sch.base("index").s + ", 'logsearch_events')"
	with := withClause(plan.ctes, rel, false)
	sel := []string{"count()"}
	var pairs []string
	for i, f := range fields {
		e := sqlExpr{f.col, f.k}
		nn := isNotNull(e)
		sel = append(sel, "countIf("+nn+")", "uniqExact("+fieldText(e)+")",
			"groupUniqArrayIf("+fieldClass(e)+", "+nn+")", "arraySort(groupUniqArrayIf(100)("+src+", "+nn+"))")
		pairs = append(pairs, "tuple(toUInt16("+itoa(i)+"), "+fieldText(e)+")")
	}
	stats = with + "SELECT " + strings.Join(sel, ", ") + " FROM " + rel
	top = with + "SELECT f, v, c FROM (SELECT kv.1 AS f, kv.2 AS v, count() AS c FROM " + rel + " ARRAY JOIN [" +
		strings.Join(pairs, ", ") + "] AS kv WHERE v IS NOT NULL GROUP BY f, v) ORDER BY f ASC, c DESC, v ASC LIMIT " +
		itoa(FieldTopValues) + " BY f"
	return stats, top
}

func (x *executor) fieldStatistics(ctx context.Context, plan *Plan) ([]FieldStatistic, error) {
	sch := plan.final.sch
	paths, err := x.Paths(ctx, pathsSQL(plan.ctes, plan.final.rel))
	if err != nil {
		return nil, fmt.Errorf("field statistics: discover fields: %w", err)
	}
	var fields []namedCol
	for _, f := range append(sch.knownOpenFields(), sch.docFields(paths)...) {
		if f.k != kNull {
			fields = append(fields, f)
		}
	}
	if len(fields) > MaxStatisticsFields {
		fields = fields[:MaxStatisticsFields]
	}
	out := []FieldStatistic{}
	if len(fields) == 0 {
		return out, nil
	}
	statsSQL, topSQL := plan.fieldStatisticsSQL(fields)
	r, err := x.run(ctx, statsSQL)
	if err != nil {
		return nil, fmt.Errorf("field statistics: %w", err)
	}
	if len(r.Rows) != 1 || len(r.Rows[0]) != 1+4*len(fields) {
		return nil, fmt.Errorf("field statistics: unexpected result shape")
	}
	row := r.Rows[0]
	total, _ := toUint(row[0])
	for i, f := range fields {
		nn, _ := toUint(row[1+4*i])
		dc, _ := toUint(row[2+4*i])
		fs := FieldStatistic{Field: f.name, TotalRows: total, NonNullRows: nn, DistinctCount: dc, TopValues: []ValueCount{}, Sources: []string{}}
		if total > 0 {
			fs.Coverage = float64(nn) / float64(total) * 100
		}
		classes := strings_(row[3+4*i])
		switch len(classes) {
		case 0:
		case 1:
			fs.Type = classes[0]
		default:
			fs.Type = "mixed"
		}
		fs.Sources = strings_(row[4+4*i])
		out = append(out, fs)
	}
	if total == 0 {
		// No rows: nothing to describe.
		return []FieldStatistic{}, nil
	}
	r, err = x.run(ctx, topSQL)
	if err != nil {
		return nil, fmt.Errorf("field statistics: common values: %w", err)
	}
	for _, row := range r.Rows {
		i, _ := toUint(row[0])
		v, _ := normalize(row[1]).(string)
		n, _ := toUint(row[2])
		if int(i) < len(out) {
			out[i].TopValues = append(out[i].TopValues, ValueCount{Value: v, Count: n})
		}
	}
	// Fields without a value in these rows are not described.
	kept := out[:0]
	for _, f := range out {
		if f.NonNullRows > 0 {
			kept = append(kept, f)
		}
	}
	return kept, nil
}

// strings_ converts an engine array of strings.
func strings_(v any) []string {
	out := []string{}
	if a, ok := normalize(v).([]any); ok {
		for _, e := range a {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// timelineFromRows computes the timeline from the result rows when they
// are all of the final relation's rows (the result is not truncated) and
// hold its _time: the same buckets the timeline statement counts. It
// declines (ok false) when no row falls in the timeline's window, leaving
// the zero-filled empty case to the statement.
func (plan *Plan) timelineFromRows(rows [][]any) (out []TimelineBucket, ok bool) {
	if plan.timeCol < 0 || len(rows) == 0 || len(rows) > MaxOutputRows || len(rows[0]) != len(plan.columns) {
		return nil, false
	}
	times := make([]time.Time, 0, len(rows))
	for _, r := range rows {
		if t, ok := toTime(r[plan.timeCol]); ok {
			times = append(times, t)
		}
	}
	from := plan.window.Earliest
	if !plan.window.HasEarliest {
		// min() over the rows, as timelineStart: none, or the zero time, is
		// no timeline.
		if len(times) == 0 {
			return []TimelineBucket{}, true
		}
		from = times[0]
		for _, t := range times[1:] {
			if t.Before(from) {
				from = t
			}
		}
		if from.UnixMilli() == 0 {
			return []TimelineBucket{}, true
		}
	}
	to := plan.window.Latest
	if !from.Before(to) {
		return []TimelineBucket{}, true
	}
	span := timelineSpan(to.Sub(from))
	spanMs := span * 1000
	start := BucketStart(from, spanMs, 0)
	n := ceilDiv(to.Sub(start).Milliseconds(), spanMs)
	counts := make([]uint64, n)
	in := false
	for _, t := range times {
		if t.Before(from) || !t.Before(to) {
			continue
		}
		i := (t.UnixMilli() - start.UnixMilli()) / spanMs
		counts[i]++
		in = true
	}
	if !in {
		return nil, false
	}
	out = make([]TimelineBucket, n)
	for i := range out {
		out[i] = TimelineBucket{Time: start.Add(time.Duration(int64(i)*spanMs) * time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00"),
			SpanSeconds: span, Count: counts[i]}
	}
	return out, true
}
