package format

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Value rendering follows ClickHouse's own output of each format, with one deliberate
// difference: 64-bit integers are JSON numbers, not strings (integers of 128 and 256 bits
// stay strings, as no JSON reader holds them exactly).

// timeLayout returns the layout of a Date/DateTime type name, "" for other types.
func timeLayout(typ string) string {
	typ = strings.TrimPrefix(strings.TrimPrefix(typ, "Nullable("), "LowCardinality(")
	switch {
	case strings.HasPrefix(typ, "DateTime64("):
		p := 3
		if i := strings.IndexAny(typ[len("DateTime64("):], ",)"); i > 0 {
			p, _ = strconv.Atoi(strings.TrimSpace(typ[len("DateTime64(") : len("DateTime64(")+i]))
		}
		if p <= 0 {
			return "2006-01-02 15:04:05"
		}
		return "2006-01-02 15:04:05." + strings.Repeat("0", p)
	case strings.HasPrefix(typ, "DateTime"):
		return "2006-01-02 15:04:05"
	case strings.HasPrefix(typ, "Date"):
		return "2006-01-02"
	}
	return ""
}

// elemType returns the element type of an Array(T) type name.
func elemType(typ string) string {
	typ = strings.TrimPrefix(typ, "Nullable(")
	if strings.HasPrefix(typ, "Array(") && strings.HasSuffix(typ, ")") {
		return typ[len("Array(") : len(typ)-1]
	}
	return ""
}

func formatTime(t time.Time, typ string) string {
	layout := timeLayout(typ)
	if layout == "" {
		if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
			layout = "2006-01-02 15:04:05"
		} else if t.Nanosecond() != 0 {
			layout = "2006-01-02 15:04:05.000000000"
		} else {
			layout = "2006-01-02 15:04:05"
		}
	}
	return t.Format(layout)
}

// variant is a Variant or Dynamic value as the engine adapter hands it over (the driver's
// chcol.Variant, or a pointer to one): the value it holds and that value's engine type.
// The format names the methods it reads instead of importing a driver.
type variant interface {
	Nil() bool
	Any() any
	Type() string
}

// jsonObject is a JSON column's value as the engine adapter hands it over (the driver's
// *chcol.JSON): the object as nested maps.
type jsonObject interface {
	NestedMap() map[string]any
}

var jsonObjectType = reflect.TypeFor[jsonObject]()

// jsonByValue caches, by struct type, whether a pointer to it is a jsonObject (the driver's
// JSON by value), so that rendering a time or a decimal asks reflection once per type.
var jsonByValue sync.Map // reflect.Type → bool

func isJSONByValue(t reflect.Type) bool {
	if ok, found := jsonByValue.Load(t); found {
		return ok.(bool)
	}
	ok := reflect.PointerTo(t).Implements(jsonObjectType)
	jsonByValue.Store(t, ok)
	return ok
}

// unwrap resolves pointers, Variant/Dynamic wrappers and JSON objects to plain values,
// returning the value and the engine type it carries when known.
func unwrap(v any, typ string) (any, string) {
	for {
		switch x := v.(type) {
		case nil:
			return nil, typ
		case variant:
			if rv := reflect.ValueOf(x); rv.Kind() == reflect.Pointer && rv.IsNil() {
				return nil, typ
			}
			if x.Nil() {
				return nil, typ
			}
			v, typ = x.Any(), x.Type()
			continue
		case jsonObject:
			if rv := reflect.ValueOf(x); rv.Kind() == reflect.Pointer && rv.IsNil() {
				return nil, typ
			}
			return x.NestedMap(), "JSON"
		}
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Pointer {
			if rv.IsNil() {
				return nil, typ
			}
			v = rv.Elem().Interface()
			continue
		}
		if rv.Kind() == reflect.Struct && isJSONByValue(rv.Type()) {
			// A JSON object by value: its NestedMap reads through a pointer.
			p := reflect.New(rv.Type())
			p.Elem().Set(rv)
			return p.Interface().(jsonObject).NestedMap(), "JSON"
		}
		return v, typ
	}
}

// appendJSON appends v as a JSON value.
func appendJSON(b []byte, v any, typ string) []byte {
	v, typ = unwrap(v, typ)
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int8:
		return strconv.AppendInt(b, int64(x), 10)
	case int16:
		return strconv.AppendInt(b, int64(x), 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case float32:
		return appendJSONFloat(b, float64(x), 32)
	case float64:
		return appendJSONFloat(b, x, 64)
	case big.Int:
		return appendJSONString(b, x.String())
	case decimal.Decimal:
		return append(b, x.String()...)
	case string:
		return appendJSONString(b, x)
	case []byte:
		return appendJSONString(b, string(x))
	case time.Time:
		return appendJSONString(b, formatTime(x, typ))
	case uuid.UUID:
		return appendJSONString(b, x.String())
	case net.IP:
		return appendJSONString(b, x.String())
	case json.RawMessage:
		return append(b, x...)
	case map[string]any:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSON(b, x[k], "")
		}
		return append(b, '}')
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		et := elemType(typ)
		b = append(b, '[')
		for i := range rv.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, rv.Index(i).Interface(), et)
		}
		return append(b, ']')
	case reflect.Map:
		b = append(b, '{')
		for i, k := range sortedKeys(rv) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, textOf(k.Interface()))
			b = append(b, ':')
			b = appendJSON(b, rv.MapIndex(k).Interface(), "")
		}
		return append(b, '}')
	case reflect.Struct:
		// Named tuples and geo types: let encoding/json decide.
		if raw, err := json.Marshal(v); err == nil {
			return append(b, raw...)
		}
	}
	return appendJSONString(b, fmt.Sprint(v))
}

func appendJSONFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return appendFloat(b, f, bits)
}

// appendFloat appends f's shortest decimal form, in positional notation unless it is
// below 1e-6 or from 1e21 in magnitude (encoding/json's rule; the engine's own output
// writes 1000218.16 the same way, where 'g' wrote 1.00021816e+06).
func appendFloat(b []byte, f float64, bits int) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// 1e-07 is written 1e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD, as JSON
// readers require.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// textOf renders a scalar as plain text (map keys, CSV and TSV cells).
func textOf(v any) string {
	v, _ = unwrap(v, "")
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return formatTime(x, "")
	case float32:
		return formatFloatText(float64(x), 32)
	case float64:
		return formatFloatText(x, 64)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

func formatFloatText(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return string(appendFloat(nil, f, bits))
}

// isScalarString reports whether a value renders as a quoted string in nested text
// values (arrays, maps, tuples) and in CSV.
func isScalarString(v any) bool {
	switch v.(type) {
	case string, []byte, time.Time, uuid.UUID, net.IP:
		return true
	}
	return false
}

// appendText appends v in ClickHouse's text notation: top-level strings raw, nested
// values in SQL-literal style ([1,2], ['a','b'], {'k':1}).
func appendText(b []byte, v any, typ string, nested bool) []byte {
	v, typ = unwrap(v, typ)
	switch x := v.(type) {
	case nil:
		if nested {
			return append(b, "NULL"...)
		}
		return append(b, `\N`...)
	case bool:
		return strconv.AppendBool(b, x)
	case time.Time:
		if nested {
			return appendQuoted(b, formatTime(x, typ))
		}
		return append(b, formatTime(x, typ)...)
	case map[string]any:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendQuoted(b, k)
			b = append(b, ':')
			b = appendText(b, x[k], "", true)
		}
		return append(b, '}')
	}
	if isScalarString(v) {
		if nested {
			return appendQuoted(b, textOf(v))
		}
		return append(b, textOf(v)...)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		et := elemType(typ)
		b = append(b, '[')
		for i := range rv.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendText(b, rv.Index(i).Interface(), et, true)
		}
		return append(b, ']')
	case reflect.Map:
		b = append(b, '{')
		for i, k := range sortedKeys(rv) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendText(b, k.Interface(), "", true)
			b = append(b, ':')
			b = appendText(b, rv.MapIndex(k).Interface(), "", true)
		}
		return append(b, '}')
	}
	return append(b, textOf(v)...)
}

// appendQuoted appends s as a single-quoted literal.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '\\':
			b = append(b, '\\', c)
		default:
			b = append(b, c)
		}
	}
	return append(b, '\'')
}

// sortedKeys returns the keys of a map value ordered by their fmt.Sprint text, which is
// computed once per key rather than once per comparison.
func sortedKeys(rv reflect.Value) []reflect.Value {
	type keyed struct {
		text string
		k    reflect.Value
	}
	ks := make([]keyed, 0, rv.Len())
	for _, k := range rv.MapKeys() {
		ks = append(ks, keyed{fmt.Sprint(k), k})
	}
	slices.SortFunc(ks, func(a, b keyed) int { return strings.Compare(a.text, b.text) })
	out := make([]reflect.Value, len(ks))
	for i, k := range ks {
		out[i] = k.k
	}
	return out
}

// AppendJSONString appends s as a JSON string, exactly as the JSON formats render a
// String value.
func AppendJSONString(b []byte, s string) []byte { return appendJSONString(b, s) }
