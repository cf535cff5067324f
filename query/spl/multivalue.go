package spl

import (
	"slices"
	"strconv"
	"strings"

	"github.com/svc-data/svc/query/pathtype"
	"github.com/svc-data/svc/query/sqlquote"
)

// Arrays of objects (docs/spl.md "Arrays of objects"): a field named through an array of
// objects, items{}.sku (Splunk's spath naming; 'items[].sku' as a quoted name), is a
// multivalue field: the values of sku in every element of the event's items. The table's
// path schema records the element paths (items[].sku, docs/typing.md); the array reads as
// its Array(JSON) type, and each element's path is typed by the one rule of package
// pathtype as SQL reads it.sku after ARRAY JOIN items AS it, numbers typed and other
// values Dynamic as for top-level fields (typing.go). A multivalue field is compiled as
// an array (kind kMVNum or kMVDyn, by its elements): comparisons match when any element
// does, aggregates take every element, stats BY counts an event once in the group of
// each of its distinct values, mvexpand makes a row per element.

// mvField is how a multivalue field reads from the doc column.
type mvField struct {
	sql string // the array of element values
	k   kind   // kMVNum when the elements' path reads as a number, otherwise kMVDyn
}

// mvVar is the lambda parameter comparisons and aggregates bind to one element.
const mvVar = "__mv"

// mvKey returns the schema path of a multivalue field name: items{}.sku and items[].sku
// are items[].sku. ok is false for a name that does not go through an array.
func mvKey(name string) (string, bool) {
	key := strings.ReplaceAll(name, "{}.", "[].")
	return key, strings.Contains(key, "[].")
}

// mvReads returns the multivalue fields of a path schema, keyed by their schema path:
// every element path under an array of objects.
func mvReads(paths map[string][]string) map[string]mvField {
	out := map[string]mvField{}
	for p := range paths {
		if !strings.Contains(p, "[].") {
			continue
		}
		if f, ok := mvRead(paths, p); ok {
			out[p] = f
		}
	}
	return out
}

// mvRead renders the array of the values at an element path a[].b[].c: the array at a
// read as its Array(JSON) type, each element's b likewise (flattened), and c in each
// element read by the typing rule from the types seen at a[].b[].c.
func mvRead(paths map[string][]string, key string) (mvField, bool) {
	parts := strings.Split(key, "[].")
	types := make([]string, len(parts)-1)
	for i := range types {
		types[i] = pathtype.ObjectArray(paths[strings.Join(parts[:i+1], "[].")])
		if types[i] == "" {
			return mvField{}, false
		}
	}
	leaf := pathtype.Decide(paths[key])
	// As for top-level fields (typing.go), numbers read typed; other values stay Dynamic,
	// so that "200" and 200 compare alike.
	k := kMVDyn
	switch leaf.Type {
	case "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32", "Float64":
		k = kMVNum
	default:
		leaf = pathtype.Read{}
	}
	var level func(i int, arr string) string
	level = func(i int, arr string) string {
		v := mvVar + strconv.Itoa(i)
		if i == len(types)-1 {
			return "arrayMap(" + v + " -> " + leaf.Expr(v+"."+sqlquote.Ident(parts[i+1])) + ", " + arr + ")"
		}
		inner := "dynamicElement(" + v + "." + sqlquote.Ident(parts[i+1]) + ", " + sqlquote.String(types[i+1]) + ")"
		return "arrayFlatten(arrayMap(" + v + " -> " + level(i+1, inner) + ", " + arr + "))"
	}
	top := "dynamicElement(" + docPath(parts[0]) + ", " + sqlquote.String(types[0]) + ")"
	return mvField{sql: level(0, top), k: k}, true
}

// isMV reports whether k is a multivalue kind.
func isMV(k kind) bool { return k == kMVNum || k == kMVDyn }

// mvElem is one element of a multivalue expression, bound to mvVar.
func mvElem(e sqlExpr) sqlExpr {
	if e.k == kMVNum {
		return sqlExpr{mvVar, kNum}
	}
	return sqlExpr{mvVar, kDyn}
}

// mvAny is the condition that cond (over mvElem(e)) holds for some element of e; a null
// cond counts as false.
func mvAny(e sqlExpr, cond string) string {
	return "arrayExists(" + mvVar + " -> ifNull(" + cond + ", 0), " + e.s + ")"
}

// mvMap maps the elements of e by f (over mvElem(e)).
func mvMap(e sqlExpr, f string) string {
	return "arrayMap(" + mvVar + " -> " + f + ", " + e.s + ")"
}

// mvValues are the elements of e that have a value.
func mvValues(e sqlExpr) string {
	return "arrayFilter(" + mvVar + " -> " + mvVar + " IS NOT NULL, " + e.s + ")"
}

// scalarField resolves a field where a multivalue field is not supported (chart and
// timechart rows and series), reporting one.
func (c *compiler) scalarField(f *FieldName) sqlExpr {
	x := c.cur.sch.resolve(f.Name)
	if isMV(x.k) {
		c.errs.add(CodeUnsupported, f.Rng.Start, "group by it with stats ... BY "+f.Name,
			"%s is a multivalue field; chart and timechart cannot split by it", f.Name)
		return nullExpr
	}
	return x
}

// mvexpand makes a row per value of a multivalue field, in the order of the values, with
// the field holding that value; a row without values is kept once with the field absent.
func (c *compiler) mvexpand(cmd *MvexpandCommand) {
	x := c.cur.sch.resolve(cmd.Field.Name)
	if !isMV(x.k) {
		c.errs.add(CodeInvalid, cmd.Field.Rng.Start, "name a path through an array of objects, e.g. items{}.sku",
			"%s is not a multivalue field", cmd.Field.Name)
		return
	}
	vals := "arrayResize(" + x.s + ", greatest(length(" + x.s + "), 1))"
	v, i := c.newCol(), c.newCol()
	c.cur.rel = c.addCTE("SELECT *, " + v + ", " + i + " FROM " + c.cur.rel + " ARRAY JOIN " + vals + " AS " + v + ", arrayEnumerate(" + vals + ") AS " + i)
	c.cur.order = append(slices.Clone(c.cur.order), orderTerm{i, false})
	c.setField(cmd.Field.Name, namedCol{name: cmd.Field.Name, col: v, k: mvElem(x).k})
}
