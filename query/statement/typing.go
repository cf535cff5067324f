package statement

import (
	"slices"
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
	a.typeKey(ref, src.paths, path, path)
}

// typeKey types ref by the types seen at key in paths; name is the path as written.
func (a *analyzer) typeKey(ref *pathRef, paths map[string][]string, key, name string) {
	seen := paths[key]
	ref.read = pathtype.Decide(seen)
	ref.path, ref.seen, ref.key, ref.paths = name, seen, key, paths
	if !ref.read.Typed() {
		a.noteDynamic(name, seen)
		return
	}
	a.noteTyped(name, ReadType(seen))
}

func (a *analyzer) noteTyped(name, typ string) {
	for _, tp := range a.typed {
		if tp.Path == name {
			return
		}
	}
	a.typed = append(a.typed, TypedPath{Path: name, Type: typ})
}

// Arrays of objects (docs/typing.md): the schema records the paths inside the elements
// of an array of objects under the array's path, items[].sku. An array of objects reads
// as Dynamic, except where its elements are taken: ARRAY JOIN items AS it,
// arrayJoin(items) AS it and the array arguments of a lambda (arrayMap(x -> x.qty,
// items)). There it reads as its array type, and a path into an element (it.sku, x.qty)
// is typed by the one rule from the types seen at items[].sku.

// elemSchema is what types the paths of an element of an array of objects: the table's
// schema and the element prefix (items[] for the elements of items).
type elemSchema struct {
	paths  map[string][]string
	prefix string
}

// objectArray reads e, when it is a path whose values are arrays of objects, as that
// array type and returns the schema of its elements; nil otherwise (e is left as is).
func (a *analyzer) objectArray(e ch.Expr) *elemSchema {
	if ce, ok := e.(*ch.ColumnExpr); ok && ce.Alias == nil {
		e = ce.Expr
	}
	if f, ok := e.(*ch.FunctionExpr); ok && f.Name != nil && f.Params != nil && f.Params.Items != nil {
		// Functions that return some elements of their array argument, as that type:
		// arrayFilter(x -> x.qty > 1, items), arraySlice(items, 1, 2), ...
		args := f.Params.Items.Items
		switch strings.ToLower(f.Name.Name) {
		case "arrayfilter", "arrayreverse", "arrayslice", "arraypopback", "arraypopfront", "arrayshuffle":
			if lambdaArg(args) != nil {
				args = args[1:]
			}
			if len(args) > 0 {
				return a.objectArray(args[0])
			}
		}
		return nil
	}
	ref, ok := e.(*pathRef)
	if !ok || ref.paths == nil {
		return nil
	}
	if ref.arr != nil {
		return ref.arr
	}
	t := pathtype.ObjectArray(ref.seen)
	if t == "" {
		return nil
	}
	ref.read = pathtype.Read{Type: t, Subcolumn: true}
	ref.arr = &elemSchema{paths: ref.paths, prefix: ref.key + "[]"}
	a.dynamic = slices.DeleteFunc(a.dynamic, func(d DynamicPath) bool { return d.Path == ref.path })
	return ref.arr
}

// elemPath renders rest as a path in the element base (it, sub.it) of an array of
// objects and types it by the element schema.
func (a *analyzer) elemPath(es *elemSchema, base, rest []*ch.Ident) *pathRef {
	a.pathRewrites++
	ref := &pathRef{elem: base, segs: rest}
	a.typeKey(ref, es.paths, es.prefix+"."+joinNames(rest), joinNames(base)+"."+joinNames(rest))
	return ref
}

// elementOf returns the element schema of an expression that yields the elements of
// an array of objects one per row (arrayJoin(items)), or that is such an element (it).
func (a *analyzer) elementOf(e ch.Expr, sc *scope) *elemSchema {
	if ce, ok := e.(*ch.ColumnExpr); ok && ce.Alias == nil {
		e = ce.Expr
	}
	switch n := e.(type) {
	case *ch.FunctionExpr:
		if n.Name != nil && strings.EqualFold(n.Name.Name, "arrayJoin") && n.Params != nil && n.Params.Items != nil && len(n.Params.Items.Items) == 1 {
			return a.objectArray(n.Params.Items.Items[0])
		}
	case *keptRef:
		if len(n.segs) == 1 {
			return sc.elems[n.segs[0].Name]
		}
	}
	return nil
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
