package spl

import (
	"math"
	"strconv"

	"github.com/svc-data/svc/query/pathtype"
)

// Typed paths (docs/typing.md): with the table's path schema, a field whose values are
// numbers reads through the one typing rule of package pathtype as a number, so stats
// and comparisons over it skip the text round trip of a Dynamic value. String,
// boolean and time fields stay Dynamic on purpose: SPL compares "200" and 200 alike.

// numericReads returns, for each numeric path of a schema, the SQL that reads it
// typed from the doc column, and the SQL of every integer read among them: the typed
// read and the path's column in the base relation, over which a comparison with a whole
// number is written with an integer literal (integerLiteral). The schema holds no
// declared path (_time, host, ...).
func numericReads(paths map[string][]string) (reads map[string]string, ints map[string]bool) {
	reads, ints = map[string]string{}, map[string]bool{}
	for p, seen := range paths {
		r := pathtype.Decide(seen)
		switch r.Type {
		case "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64":
			ints[r.Expr(docPath(p))] = true
			ints[pathCol(p)] = true
			fallthrough
		case "Float32", "Float64":
			reads[p] = r.Expr(docPath(p))
		}
	}
	return reads, ints
}

// integerLiteral renders f as an integer literal when x is an integer read and f a whole
// number that float64 holds exactly: the engine then compares integers, where a float
// literal makes it convert every value for an exact int-to-float comparison (status >=
// 500 over a day of 1M events: 31 → 24 ms). The answer is the same: that comparison is
// exact too, past 2^53 as well.
func (c *compiler) integerLiteral(x sqlExpr, f float64) (string, bool) {
	if x.k != kNum || !c.ints[x.s] || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
		return "", false
	}
	return strconv.FormatInt(int64(f), 10), true
}

// numericPath reports whether a path reads as a number.
func (p *pathSet) numericPath(name string) (string, bool) {
	if p == nil {
		return "", false
	}
	s, ok := p.numeric[name]
	return s, ok
}
