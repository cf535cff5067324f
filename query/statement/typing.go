package statement

import (
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"

	"github.com/svc-data/svc/query/pathtype"
)

// Typed paths (docs/typing.md): a path reference reads as the type the table's path
// schema gives it under the one rule of package pathtype. The schema travels with the
// sources: a table's source carries its catalog schema, a subquery or CTE returning a
// table's whole document carries that table's, so paths are typed the same way in
// CTEs, subqueries, JOINs, UNIONs, INSERT ... SELECT and row-policy filters. The
// operand of an explicit cast (bytes::Int64, CAST(bytes AS Int64)) stays the Dynamic
// path, so an explicit cast means exactly what it meant before typing.

// DynamicPath is a path the statement reads as Dynamic, with the types seen at it
// (none when no row has it); an engine type error is explained through them.
type DynamicPath struct {
	Path string
	Seen []string
}

// typePath sets how ref reads and records the paths left Dynamic.
func (a *analyzer) typePath(src *source, ref *pathRef) {
	if src.paths == nil {
		return // a table without a recorded schema (or typing off): Dynamic, as before
	}
	path := joinNames(ref.segs)
	seen := src.paths[path]
	ref.read = pathtype.Decide(seen)
	ref.path, ref.seen = path, seen
	if !ref.read.Typed() {
		a.noteDynamic(path, seen)
		return
	}
	for _, tp := range a.typed {
		if tp.Path == path {
			return
		}
	}
	a.typed = append(a.typed, TypedPath{Path: path, Type: ReadType(seen)})
}

// TypedPath is a path the statement reads typed, with the type it reads as; an engine
// error about a function that cannot take that type is explained through them.
type TypedPath struct {
	Path string
	Type string
}

func (a *analyzer) noteDynamic(path string, seen []string) {
	for _, d := range a.dynamic {
		if d.Path == path {
			return
		}
	}
	a.dynamic = append(a.dynamic, DynamicPath{Path: path, Seen: seen})
}

// untyped makes a path that is the direct operand of an explicit cast read as
// Dynamic again.
func (a *analyzer) untyped(e ch.Expr) {
	if p, ok := e.(*pathRef); ok && p.read.Typed() {
		p.read = pathtype.Read{}
	}
}

// tablePaths returns the path schema of a table for typing, nil when none is known.
func (a *analyzer) tablePaths(db, table string) map[string][]string {
	t, ok := a.env.Catalog.Table(db, table)
	if !ok {
		return nil
	}
	return t.Paths
}

// PathTypeError explains an engine type error of a statement that reads Dynamic paths:
// a 400 path_type naming each such path, the types seen at it and the cast to write.
// It returns nil when the error is not about a Dynamic path.
func (st *Statement) PathTypeError(message string) *Error {
	if st == nil {
		return nil
	}
	if !strings.Contains(message, "Dynamic") || len(st.DynamicPaths) == 0 {
		return st.typedPathError(message)
	}
	var msg, hints []string
	for _, d := range st.DynamicPaths {
		if len(d.Seen) == 0 {
			msg = append(msg, d.Path+" (no row has it)")
		} else {
			msg = append(msg, d.Path+" (types seen: "+strings.Join(d.Seen, ", ")+")")
		}
		hints = append(hints, pathtype.Hint(d.Path, d.Seen))
	}
	return &Error{Status: statusBadRequest, Code: CodePathType, Pos: -1,
		Message: "a path without one type was used where a typed value is needed: " + strings.Join(msg, "; "),
		Hint:    strings.Join(hints, "; ")}
}

// CodePathType is the error code of a path whose values have no single type where the
// statement needs one.
const CodePathType = "path_type"

// typedPathError explains a type error that names the type a typed path of the
// statement reads as: the function cannot take that type, so say the type and how to
// convert it.
func (st *Statement) typedPathError(message string) *Error {
	var named, hints []string
	for _, tp := range st.TypedPaths {
		if !strings.Contains(message, tp.Type) {
			continue
		}
		named = append(named, tp.Path+" (reads as "+tp.Type+")")
		hints = append(hints, "convert "+tp.Path+" to the type the function takes, e.g. toString("+tp.Path+"), toFloat64("+tp.Path+
			") or "+tp.Path+"::Dynamic")
	}
	if len(named) == 0 {
		return nil
	}
	return &Error{Status: statusBadRequest, Code: CodePathType, Pos: -1,
		Message: "a function cannot take the type of " + strings.Join(named, ", ") + ": " + message,
		Hint:    strings.Join(hints, "; ")}
}
