package spl

import "strings"

// aggPlan is an aggregate compiled against its input rows.
type aggPlan struct {
	node *Aggregate
	spec *aggSpec
	name string  // output name: alias or func(arg)
	x    sqlExpr // the argument (field value, or condition of count(eval()))
	t    sqlExpr // _time, for earliest and latest
}

// aggName is the output name of an aggregate without alias, as Splunk
// names it: count, avg(bytes), count(eval(status >= 500)).
func aggName(a *Aggregate) string {
	switch {
	case a.Alias != nil:
		return a.Alias.Name
	case a.Eval != nil:
		return a.Func + "(eval(" + a.Eval.String() + "))"
	case a.Field != nil:
		return a.Func + "(" + a.Field.Name + ")"
	}
	return a.Func
}

// planAggs compiles aggregates against the current schema.
func (c *compiler) planAggs(aggs []*Aggregate) []*aggPlan {
	out := make([]*aggPlan, 0, len(aggs))
	for _, a := range aggs {
		spec, _ := lookupAgg(a.Func)
		p := &aggPlan{node: a, spec: spec, name: aggName(a)}
		switch {
		case a.Eval != nil:
			p.x = sqlExpr{c.cond(a.Eval), kBool}
		case a.Field != nil:
			p.x = c.cur.sch.resolve(a.Field.Name)
		}
		if isMV(p.x.k) && (spec.Name == "earliest" || spec.Name == "latest") {
			c.errs.add(CodeUnsupported, a.Rng.Start, "use min or max, or values", "%s() of the multivalue field %s is not supported", a.Func, a.Field.Name)
		}
		if spec.Name == "earliest" || spec.Name == "latest" {
			p.t = c.cur.sch.resolve("_time")
			if p.t.k != kTime {
				c.errs.add(CodeInvalid, a.Rng.Start, "", "%s() needs _time, which these rows do not have", a.Func)
			}
		}
		out = append(out, p)
	}
	return out
}

// inputs lists the expressions the aggregate reads, so that chart can
// materialise them as columns of its input relation.
func (p *aggPlan) inputs() []*sqlExpr {
	var in []*sqlExpr
	if p.x.k != kNull && p.x.s != "" {
		in = append(in, &p.x)
	}
	if p.t.s != "" {
		in = append(in, &p.t)
	}
	return in
}

// outKind is the kind of the aggregate's result.
func (p *aggPlan) outKind() kind {
	switch p.spec.Name {
	case "count", "dc", "sum", "avg":
		return kNum
	case "values":
		return kArr
	case "min", "max":
		switch p.x.k {
		case kNum, kTime:
			return p.x.k
		case kMVNum:
			return kNum
		case kNull:
			return kNull
		}
		return kDyn
	case "earliest", "latest":
		if p.x.k == kBool {
			return kStr
		}
		return p.x.k
	}
	return kNull
}

// countsZero reports whether the aggregate is 0, not null, over no rows:
// counts are filled with zero, other aggregates stay null.
func (p *aggPlan) countsZero() bool { return p.spec.Name == "count" || p.spec.Name == "dc" }

// sql renders the aggregate over the rows satisfying cond ("" for all).
func (p *aggPlan) sql(cond string) string {
	and := func(parts ...string) string {
		var keep []string
		for _, s := range parts {
			if s != "" {
				keep = append(keep, s)
			}
		}
		return strings.Join(keep, " AND ")
	}
	ifc := func(fn, args, c string) string {
		if c == "" {
			return fn + "(" + args + ")"
		}
		return fn + "If(" + args + ", " + c + ")"
	}
	x := p.x
	if isMV(x.k) {
		return p.mvSQL(cond)
	}
	switch p.spec.Name {
	case "count":
		switch {
		case p.node.Eval != nil:
			return "countIf(" + and(x.s, cond) + ")"
		case p.node.Field != nil:
			if x.k == kNull {
				return "toUInt64(0)"
			}
			return "countIf(" + and(isNotNull(x), cond) + ")"
		}
		if cond == "" {
			return "count()"
		}
		return "countIf(" + cond + ")"
	case "dc":
		if x.k == kNull {
			return "toUInt64(0)"
		}
		return ifc("uniqExact", toStr(x).s, cond)
	case "sum", "avg":
		if x.k == kNull {
			return "CAST(NULL AS Nullable(Float64))"
		}
		// toNullable: no rows give null, not 0 or nan.
		return ifc(p.spec.Name, "toNullable(toFloat64("+toNum(x).s+"))", cond)
	case "values":
		if x.k == kNull {
			return "CAST([] AS Array(String))"
		}
		s := toStr(x).s
		return "arraySlice(arraySort(" + ifc("groupUniqArray", s, and("("+s+" IS NOT NULL)", cond)) + "), 1, " + itoa(MaxValues) + ")"
	case "min", "max":
		switch x.k {
		case kNull:
			return "CAST(NULL AS Nullable(String))"
		case kNum, kTime:
			return ifc(p.spec.Name, "toNullable("+x.s+")", cond)
		}
		// Numeric when any value is numeric, otherwise text.
		n, s := toNum(x).s, toStr(x).s
		return "if(" + "countIf(" + and("("+n+" IS NOT NULL)", cond) + ") > 0, CAST(" + ifc(p.spec.Name, n, cond) +
			" AS Dynamic), CAST(" + ifc(p.spec.Name, s, cond) + " AS Dynamic))"
	case "earliest", "latest":
		fn := "argMin"
		if p.spec.Name == "latest" {
			fn = "argMax"
		}
		if x.k == kNull || p.t.k != kTime {
			return "CAST(NULL AS Nullable(String))"
		}
		v := x.s
		switch x.k {
		case kBool:
			v = toStr(x).s
		case kNum, kStr, kTime:
			v = "toNullable(" + v + ")"
		}
		return fn + "If(" + v + ", " + p.t.s + ", " + and(isNotNull(x), cond) + ")"
	}
	panic("spl: aggregate " + p.spec.Name)
}

// mvSQL renders the aggregate of a multivalue field over the rows satisfying cond: it
// takes every value of every row (the -Array combinators), as Splunk's stats does.
func (p *aggPlan) mvSQL(cond string) string {
	x := p.x
	e := mvElem(x)
	ifc := func(fn, args string) string {
		if cond == "" {
			return fn + "(" + args + ")"
		}
		return fn + "If(" + args + ", " + cond + ")"
	}
	switch p.spec.Name {
	case "count":
		return ifc("sum", "length("+mvValues(x)+")")
	case "dc":
		return ifc("uniqExactArray", mvMap(x, toStr(e).s))
	case "sum", "avg":
		return ifc(p.spec.Name+"Array", mvMap(x, "toNullable(toFloat64("+toNum(e).s+"))"))
	case "values":
		return "arraySlice(arraySort(" + ifc("groupUniqArrayArray", "arrayFilter("+mvVar+" -> "+mvVar+" IS NOT NULL, "+mvMap(x, toStr(e).s)+")") + "), 1, " + itoa(MaxValues) + ")"
	case "min", "max":
		if x.k == kMVNum {
			return ifc(p.spec.Name+"Array", mvMap(x, "toNullable("+e.s+")"))
		}
		// Numeric when any value is numeric, otherwise text.
		n, s := mvMap(x, toNum(e).s), mvMap(x, toStr(e).s)
		return "if(" + ifc("sum", "arrayCount("+mvVar+" -> "+mvVar+" IS NOT NULL, "+n+")") + " > 0, CAST(" + ifc(p.spec.Name+"Array", n) +
			" AS Dynamic), CAST(" + ifc(p.spec.Name+"Array", s) + " AS Dynamic))"
	}
	return "CAST(NULL AS Nullable(String))" // earliest, latest: refused by planAggs
}
