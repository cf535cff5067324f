package spl

import (
	"strconv"
	"strings"

	"github.com/svc-data/svc/query/sqlquote"
)

// kind is the static type of a compiled expression. SPL is loosely typed;
// document fields are ClickHouse Dynamic values, so most expressions carry
// kDyn and are converted where an operator needs a number or a text.
type kind uint8

const (
	kNull  kind = iota // the null literal
	kNum               // numbers: Float64, or UInt64 counts
	kStr               // text
	kBool              // conditions
	kTime              // DateTime64(3, 'UTC')
	kDyn               // a Dynamic document value
	kArr               // Array(String), from values()
	kMVNum             // a multivalue field of numbers (multivalue.go)
	kMVDyn             // a multivalue field of other values
)

var kindNames = [...]string{kNull: "null", kNum: "a number", kStr: "a string", kBool: "a condition", kTime: "a time", kDyn: "a field value", kArr: "an array", kMVNum: "a multivalue field", kMVDyn: "a multivalue field"}

func (k kind) String() string { return kindNames[k] }

// sqlExpr is a compiled SQL expression and its kind.
type sqlExpr struct {
	s string
	k kind
}

var nullExpr = sqlExpr{"NULL", kNull}

// docPath is the JSON path of a field in the doc column. The whole name is
// one quoted identifier: ClickHouse splits it on dots into the nested path,
// exactly as JSON input {"user":{"id":1}} is stored as path user.id.
func docPath(name string) string { return "doc." + sqlquote.Ident(name) }

// sqlFloat renders a float64 literal.
func sqlFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") { // keep it Float64, not an integer type
		s += ".0"
	}
	return s
}

// Conversions between kinds. Every conversion keeps NULL as NULL.

// toNum converts to Nullable(Float64): numbers and numeric strings give a
// number, anything else null.
func toNum(e sqlExpr) sqlExpr {
	switch e.k {
	case kNum:
		return e
	case kStr:
		return sqlExpr{"toFloat64OrNull(" + e.s + ")", kNum}
	case kBool:
		return sqlExpr{"CAST(" + e.s + " AS Nullable(Float64))", kNum}
	case kTime:
		return sqlExpr{"(toUnixTimestamp64Milli(" + e.s + ") / 1000)", kNum}
	case kDyn:
		return sqlExpr{"toFloat64OrNull(CAST(" + e.s + " AS Nullable(String)))", kNum}
	}
	return sqlExpr{"CAST(NULL AS Nullable(Float64))", kNum}
}

// toStr converts to Nullable(String): the text form Splunk users see.
func toStr(e sqlExpr) sqlExpr {
	switch e.k {
	case kStr:
		return e
	case kNum:
		return sqlExpr{"toString(" + e.s + ")", kStr}
	case kBool:
		return sqlExpr{"if(" + e.s + ", 'true', 'false')", kStr}
	case kTime:
		return sqlExpr{"toString(toUnixTimestamp64Milli(" + e.s + ") / 1000)", kStr}
	case kDyn:
		return sqlExpr{"CAST(" + e.s + " AS Nullable(String))", kStr}
	case kArr, kMVNum, kMVDyn:
		return sqlExpr{"toString(" + e.s + ")", kStr}
	}
	return sqlExpr{"CAST(NULL AS Nullable(String))", kStr}
}

// toDyn converts to Dynamic, for expressions whose branches differ in kind.
func toDyn(e sqlExpr) sqlExpr {
	switch e.k {
	case kDyn:
		return e
	case kNull:
		return sqlExpr{"CAST(NULL AS Dynamic)", kDyn}
	case kBool:
		e = toStr(e)
	}
	return sqlExpr{"CAST(" + e.s + " AS Dynamic)", kDyn}
}

// isNotNull is the SQL test that e has a value.
func isNotNull(e sqlExpr) string {
	if e.k == kNull {
		return "0"
	}
	if isMV(e.k) {
		return mvAny(e, mvVar+" IS NOT NULL")
	}
	return "(" + e.s + " IS NOT NULL)"
}

// unify converts exprs to one kind: their common kind, or Dynamic.
func unify(es []sqlExpr) ([]sqlExpr, kind) {
	k := kNull
	for _, e := range es {
		switch {
		case e.k == kNull:
		case k == kNull:
			k = e.k
		case k != e.k:
			k = kDyn
		}
	}
	out := make([]sqlExpr, len(es))
	for i, e := range es {
		switch {
		case e.k == k:
			out[i] = e
		case k == kDyn:
			out[i] = toDyn(e)
		case e.k == kNull:
			out[i] = typedNull(k)
		default:
			out[i] = e
		}
	}
	return out, k
}

// typedNull is a NULL of the SQL type used for kind k.
func typedNull(k kind) sqlExpr {
	switch k {
	case kNum:
		return sqlExpr{"CAST(NULL AS Nullable(Float64))", k}
	case kStr:
		return sqlExpr{"CAST(NULL AS Nullable(String))", k}
	case kBool:
		return sqlExpr{"CAST(NULL AS Nullable(UInt8))", k}
	case kTime:
		return sqlExpr{"CAST(NULL AS Nullable(DateTime64(3, 'UTC')))", k}
	case kDyn:
		return sqlExpr{"CAST(NULL AS Dynamic)", k}
	case kArr:
		return sqlExpr{"CAST([] AS Array(String))", k}
	}
	return nullExpr
}

// naturalOrder returns ORDER BY terms sorting e as Splunk's sort does by
// default: missing values last, numbers (and numeric strings) first in
// numeric order, then text in byte order. desc reverses all but the
// placement of missing values.
func naturalOrder(e sqlExpr, desc bool) []orderTerm {
	null := orderTerm{"(" + e.s + " IS NULL)", false}
	switch e.k {
	case kNum, kTime, kBool:
		return []orderTerm{null, {e.s, desc}}
	case kNull:
		return nil
	case kArr, kMVNum, kMVDyn:
		return []orderTerm{{"toString(" + e.s + ")", desc}}
	}
	n := toNum(e)
	return []orderTerm{null, {"(" + n.s + " IS NULL)", desc}, {n.s, desc}, {toStr(e).s, desc}}
}

// orderTerm is one ORDER BY term.
type orderTerm struct {
	s    string
	desc bool
}

func orderBy(terms []orderTerm) string {
	if len(terms) == 0 {
		return ""
	}
	parts := make([]string, len(terms))
	for i, t := range terms {
		if t.desc {
			parts[i] = t.s + " DESC"
		} else {
			parts[i] = t.s + " ASC"
		}
	}
	return " ORDER BY " + strings.Join(parts, ", ")
}
