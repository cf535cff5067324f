// Package pathtype is the one typing rule for JSON paths (docs/typing.md): from the
// engine types seen at a path, it decides the type a reference to the path reads as, and
// the text that reads it. The query rewriter, row-policy filters, column grants, the
// sorting-key compiler and log search all type paths through Decide.
package pathtype

import (
	"fmt"
	"slices"
	"strings"

	"github.com/svc-data/svc/query/sqlquote"
)

// Read is how a path is read.
type Read struct {
	// Type is the engine type the path reads as; "" means Dynamic (objects, mixed
	// scalars, or no type known).
	Type string
	// Subcolumn: read the typed subcolumn doc.p.:Type, which holds every value of the
	// path (one type seen). Otherwise, with Type set, the Dynamic value is cast.
	Subcolumn bool
}

// Typed reports whether the path reads as a concrete type.
func (r Read) Typed() bool { return r.Type != "" }

// Decide applies the rule to the types seen at a path:
//   - one type T: T, as the typed subcolumn (missing values are NULL);
//   - numbers of different types (Int64, UInt64, Float64): Float64;
//   - dates and date-times mixed: DateTime64(9);
//   - strings mixed with dates or date-times: String;
//   - arrays: arrays of their element types unified by these rules;
//   - anything else (objects, strings mixed with numbers, booleans mixed with
//     numbers): Dynamic.
func Decide(seen []string) Read {
	switch len(seen) {
	case 0:
		return Read{}
	case 1:
		if isObject(seen[0]) {
			return Read{}
		}
		return Read{Type: seen[0], Subcolumn: true}
	}
	if t := unify(seen); t != "" {
		return Read{Type: t}
	}
	return Read{}
}

// ObjectArray returns the type of a path whose values seen are arrays of objects
// (Array(JSON(...))), "" otherwise. Such a path reads as Dynamic, except where its
// elements are taken (ARRAY JOIN, arrayJoin, lambdas): there it reads as this type.
// Empty arrays are typed Array(Nullable(String)) by the engine, so that type may be seen
// beside it: rows whose array is not of objects have no elements there, as with the
// engine's own items[] subcolumn.
func ObjectArray(seen []string) string {
	t := ""
	for _, s := range seen {
		switch {
		case strings.HasPrefix(s, "Array(JSON") && t == "":
			t = s
		case s == emptyArray:
		default:
			return ""
		}
	}
	return t
}

// emptyArray is the type the engine stores an empty array as.
const emptyArray = "Array(Nullable(String))"

func unify(seen []string) string {
	var arrays, numbers, temporal, strs, other int
	for _, t := range seen {
		switch {
		case strings.HasPrefix(t, "Array("):
			arrays++
		case isNumber(t):
			numbers++
		case isTemporal(t):
			temporal++
		case t == "String":
			strs++
		default:
			other++
		}
	}
	n := len(seen)
	switch {
	case other > 0:
		return ""
	case arrays == n:
		elems := make([]string, 0, n)
		for _, t := range seen {
			e := unwrap(unwrap(t, "Array"), "Nullable")
			if !slices.Contains(elems, e) {
				elems = append(elems, e)
			}
		}
		if len(elems) == 1 {
			return "Array(" + nullable(elems[0]) + ")"
		}
		e := unify(elems)
		if e == "" {
			return ""
		}
		return "Array(" + nullable(e) + ")"
	case numbers == n:
		return "Float64"
	case temporal == n:
		return "DateTime64(9)"
	case strs+temporal == n:
		return "String"
	}
	return ""
}

func nullable(t string) string {
	if strings.HasPrefix(t, "Array(") || strings.HasPrefix(t, "JSON") || strings.HasPrefix(t, "Nullable(") {
		return t
	}
	return "Nullable(" + t + ")"
}

func unwrap(t, fn string) string {
	if strings.HasPrefix(t, fn+"(") && strings.HasSuffix(t, ")") {
		return t[len(fn)+1 : len(t)-1]
	}
	return t
}

func isObject(t string) bool {
	return strings.HasPrefix(t, "JSON") || strings.Contains(t, "JSON(") || t == "Dynamic"
}

func isNumber(t string) bool {
	switch t {
	case "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32", "Float64":
		return true
	}
	return false
}

func isTemporal(t string) bool {
	return t == "Date" || t == "Date32" || t == "DateTime" || strings.HasPrefix(t, "DateTime(") || strings.HasPrefix(t, "DateTime64")
}

// Expr returns the engine text that reads the path whose Dynamic reference is ref
// (e.g. doc.user.id) as r says.
func (r Read) Expr(ref string) string {
	switch {
	case r.Type == "":
		return ref
	case r.Subcolumn:
		// dynamicElement reads the typed variant as the subcolumn doc.p.:T does (as fast,
		// measured with the engine), in a form every SQL parser reads.
		return "dynamicElement(" + ref + ", " + sqlquote.String(r.Type) + ")"
	}
	return "CAST(" + ref + " AS " + nullable(r.Type) + ")"
}

// QuoteType renders a type name as a subcolumn segment: plain names bare, others in
// backticks (a type name never holds a backtick or backslash).
func QuoteType(t string) string {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "`" + t + "`"
		}
	}
	return t
}

// Hint says what to write for a path that reads as Dynamic: the cast of the most
// useful type seen, or how to read an object.
func Hint(path string, seen []string) string {
	if len(seen) == 0 {
		return fmt.Sprintf("no row has a value at %s yet; check the name (GET /v1/tables/{table} lists the paths) or cast it, e.g. %s::Nullable(String)", path, path)
	}
	target := ""
	for _, t := range seen {
		switch {
		case t == "String":
			target = "String"
		case isNumber(t) && target == "":
			target = "Float64"
		}
	}
	if target == "" {
		for _, t := range seen {
			if isObject(t) {
				return fmt.Sprintf("%s holds objects; read it whole with toJSONString(doc.^%s) or name a path inside it", path, path)
			}
		}
		target = "String"
	}
	return fmt.Sprintf("%s has values of types %s; cast it to the type you mean, e.g. %s::Nullable(%s) (or toFloat64OrNull(toString(%s)))",
		path, strings.Join(seen, ", "), path, target, path)
}
