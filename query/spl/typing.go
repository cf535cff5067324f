package spl

import (
	"github.com/svc-data/svc/query/pathtype"
)

// Typed paths (docs/typing.md): with the table's path schema, a field whose values are
// numbers reads through the one typing rule of package pathtype as a number, so stats
// and comparisons over it skip the text round trip of a Dynamic value. String,
// boolean and time fields stay Dynamic on purpose: SPL compares "200" and 200 alike.

// numericReads returns, for each numeric path of a schema, the SQL that reads it
// typed from the doc column. The schema holds no declared path (_time, host, ...).
func numericReads(paths map[string][]string) map[string]string {
	out := map[string]string{}
	for p, seen := range paths {
		r := pathtype.Decide(seen)
		switch r.Type {
		case "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32", "Float64":
			out[p] = r.Expr(docPath(p))
		}
	}
	return out
}

// numericPath reports whether a path reads as a number.
func (p *pathSet) numericPath(name string) (string, bool) {
	if p == nil {
		return "", false
	}
	s, ok := p.numeric[name]
	return s, ok
}
