package otlpconv

import (
	"encoding/base64"
	"math"
	"strings"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
)

// Reading OTLP protobuf straight off the wire, without unmarshaling into the generated
// messages (which allocates every span, attribute and value). The readers handle the
// shapes exporters send and report false on anything else: an unknown field, a field of
// an unexpected wire type, a singular message field that appears twice (proto.Unmarshal
// merges those), a oneof set twice, a string that is not UTF-8 (proto.Unmarshal refuses
// those), a value nested too deeply. The caller then decodes the body with
// proto.Unmarshal, so what is stored, and every rejection and error, stays that path's.
// Byte and varint reading is protowire's, the same code proto.Unmarshal uses.

// IsProtobuf reports whether Unmarshal reads body as protobuf.
func IsProtobuf(body []byte, contentType string) bool {
	mt := contentType
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.ToLower(strings.TrimSpace(mt))
	if mt == "" {
		t := strings.TrimLeft(string(body[:min(len(body), 64)]), " \t\r\n")
		return !strings.HasPrefix(t, "{")
	}
	return mt == Protobuf || mt == "application/protobuf"
}

// Fields calls f with each field of message b: v is a length-delimited field's bytes, u
// a varint's or fixed-size field's value. It reports false when b is malformed, holds a
// group, or f returns false.
func Fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, u uint64) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		var v []byte
		var u uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			u, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			u, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			u = uint64(x)
		default:
			return false
		}
		if n < 0 {
			return false
		}
		b = b[n:]
		if !f(num, typ, v, u) {
			return false
		}
	}
	return true
}

// WireString is a string field's bytes as a string without a copy, false when they are
// not UTF-8. The string must not outlive the body.
func WireString(v []byte) (string, bool) {
	if !utf8.Valid(v) {
		return "", false
	}
	if len(v) == 0 {
		return "", true
	}
	return unsafe.String(&v[0], len(v)), true
}

// ReadExport calls resource with each resource message (field 1) of an
// Export{Trace,Logs,Metrics}ServiceRequest on the wire. When the body is malformed or
// resource reports false, dst is returned to where it was and ReadExport reports false:
// the caller then decodes the body with proto.Unmarshal.
func ReadExport(body []byte, dst *rows.Buffer, resource func(b []byte) bool) bool {
	mark := dst.Mark()
	if !Fields(body, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
		return num == 1 && typ == protowire.BytesType && resource(v)
	}) {
		dst.Restore(mark)
		return false
	}
	return true
}

// ReadItems is ReadExport down to the items (spans, log records, metrics): it sets ctx to
// each resource and scope in turn and calls item with each of their items, reporting false
// (dst as it was) on what Parent, SetWireResource or SetWireScope refuse or when item
// reports false.
func ReadItems(body []byte, dst *rows.Buffer, ctx *Context, item func(b []byte) bool) bool {
	return ReadExport(body, dst, func(b []byte) bool {
		res, has, scopes, url, ok := Parent(b)
		if !ok || !ctx.SetWireResource(res, has, url) {
			return false
		}
		for _, s := range scopes {
			scope, has, items, url, ok := Parent(s)
			if !ok || !ctx.SetWireScope(scope, has, url) {
				return false
			}
			dst.Grow(rowsEstimate(items, ctx))
			for _, it := range items {
				if !item(it) {
					return false
				}
			}
		}
		return true
	})
}

// rowsEstimate is about the bytes of the rows of items under ctx: an item's own columns
// take about three times its encoded size plus a fixed part (names, ids in hex, defaults
// of absent fields), and every row repeats ctx's fragment. A span of the benchmark (124
// bytes encoded) is a row of 575 bytes, estimated at 778. An estimate off either way costs
// only the growth it was meant to save, or memory freed with the request.
func rowsEstimate(items [][]byte, ctx *Context) int {
	n := len(items) * (256 + len(ctx.resource) + len(ctx.scope) + 2)
	for _, it := range items {
		n += 3 * len(it)
	}
	return n
}

// Parent reads a Resource{Spans,Logs,Metrics} or Scope{Spans,Logs,Metrics} message: its
// resource or scope (field 1, at most once; has: it is set), its children (field 2) and
// its schema URL (field 3); false on anything else.
func Parent(b []byte) (first []byte, has bool, children [][]byte, schemaURL string, ok bool) {
	var schema []byte
	if !Fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
		if typ != protowire.BytesType {
			return false
		}
		switch num {
		case 1:
			if has {
				return false
			}
			first, has = v, true
		case 2:
			children = append(children, v)
		case 3:
			schema = v
		default:
			return false
		}
		return true
	}) {
		return nil, false, nil, "", false
	}
	schemaURL, ok = WireString(schema)
	return first, has, children, schemaURL, ok
}

// keyValue reads a KeyValue: its key, and its value's bytes (has: the value is set).
func keyValue(b []byte) (key string, value []byte, has, ok bool) {
	ok = Fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
		if typ != protowire.BytesType {
			return false
		}
		switch num {
		case 1:
			var ok bool
			key, ok = WireString(v)
			return ok
		case 2:
			if has {
				return false
			}
			value, has = v, true
			return true
		}
		return false
	})
	return key, value, has, ok
}

// AppendWireAttributes is AppendAttributes over KeyValue messages as they are on the
// wire; false: read the body with proto.Unmarshal instead.
func AppendWireAttributes(dst []byte, kvs [][]byte) ([]byte, bool) {
	return appendWireKeyValues(dst, kvs, 0)
}

func appendWireKeyValues(dst []byte, kvs [][]byte, depth int) ([]byte, bool) {
	dst = append(dst, '{')
	var short [16]string
	keys := short[:0]
	var seen map[string]struct{}
	if len(kvs) > len(short) {
		seen = make(map[string]struct{}, len(kvs))
	}
	for _, kv := range kvs {
		key, value, has, ok := keyValue(kv)
		if !ok {
			return dst, false
		}
		// The first value of a key wins (AppendAttributes).
		dup := false
		if seen != nil {
			_, dup = seen[key]
			seen[key] = struct{}{}
		} else {
			for _, k := range keys {
				if k == key {
					dup = true
					break
				}
			}
			if !dup {
				keys = append(keys, key)
			}
		}
		if dup {
			// Not written, but proto.Unmarshal reads it (a string in it must be UTF-8):
			// checked the same way, then dropped.
			n := len(dst)
			if dst, ok = appendWireAnyValue(dst, value, has, depth); !ok {
				return dst, false
			}
			dst = dst[:n]
			continue
		}
		dst = jsontext.AppendKey(dst, key)
		if dst, ok = appendWireAnyValue(dst, value, has, depth); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// AppendWireAnyValue is AppendAnyValue over an AnyValue as it is on the wire (has: the
// field holding it is set); false: read the body with proto.Unmarshal instead.
func AppendWireAnyValue(dst []byte, b []byte, has bool) ([]byte, bool) {
	return appendWireAnyValue(dst, b, has, 0)
}

func appendWireAnyValue(dst []byte, b []byte, has bool, depth int) ([]byte, bool) {
	if !has {
		return append(dst, "null"...), true
	}
	set := false
	var (
		num protowire.Number
		typ protowire.Type
		val []byte
		u   uint64
	)
	if !Fields(b, func(n protowire.Number, t protowire.Type, v []byte, x uint64) bool {
		if set {
			return false
		}
		set, num, typ, val, u = true, n, t, v, x
		return true
	}) {
		return dst, false
	}
	if !set {
		return append(dst, "null"...), true
	}
	switch {
	case num == 1 && typ == protowire.BytesType:
		s, ok := WireString(val)
		return jsontext.AppendString(dst, s), ok
	case num == 2 && typ == protowire.VarintType:
		return jsontext.AppendBool(dst, u != 0), true
	case num == 3 && typ == protowire.VarintType:
		return jsontext.AppendInt(dst, int64(u)), true
	case num == 4 && typ == protowire.Fixed64Type:
		return jsontext.AppendFloat(dst, math.Float64frombits(u)), true
	case num == 7 && typ == protowire.BytesType:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, val)
		return append(dst, '"'), true
	case num == 5 && typ == protowire.BytesType && depth < MaxDepth:
		dst = append(dst, '[')
		ok := Fields(val, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) bool {
			if n != 1 || t != protowire.BytesType {
				return false
			}
			var ok bool
			dst, ok = appendWireAnyValue(jsontext.Sep(dst), v, true, depth+1)
			return ok
		})
		return append(dst, ']'), ok
	case num == 6 && typ == protowire.BytesType && depth < MaxDepth:
		var kvs [][]byte
		if !Fields(val, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) bool {
			kvs = append(kvs, v)
			return n == 1 && t == protowire.BytesType
		}) {
			return dst, false
		}
		return appendWireKeyValues(dst, kvs, depth+1)
	}
	return dst, false
}

// wireServiceName is serviceName over KeyValue messages on the wire.
func wireServiceName(kvs [][]byte) (string, bool) {
	for _, kv := range kvs {
		key, value, has, ok := keyValue(kv)
		if !ok {
			return "", false
		}
		if key != "service.name" {
			continue
		}
		name := ""
		if !has {
			return name, true
		}
		ok = Fields(value, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) bool {
			name = ""
			if n == 1 && t == protowire.BytesType {
				var ok bool
				name, ok = WireString(v)
				return ok
			}
			return true
		})
		return name, ok
	}
	return "", true
}

// SetWireResource is SetResource over a Resource message on the wire (has: it is set).
func (c *Context) SetWireResource(res []byte, has bool, schemaURL string) bool {
	var attrs [][]byte
	if has && !Fields(res, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
		switch {
		case num == 1 && typ == protowire.BytesType:
			attrs = append(attrs, v)
			return true
		case num == 2 && typ == protowire.VarintType:
			return true
		}
		return false
	}) {
		return false
	}
	name, ok := wireServiceName(attrs)
	if !ok {
		return false
	}
	b := c.resource[:0]
	b = jsontext.AppendField(b, "service_name")
	b = jsontext.AppendString(b, name)
	b = jsontext.AppendField(b, "resource_attributes")
	if b, ok = AppendWireAttributes(b, attrs); !ok {
		return false
	}
	if schemaURL != "" {
		b = jsontext.AppendString(jsontext.AppendField(b, "resource_schema_url"), schemaURL)
	}
	c.resource = b
	return true
}

// SetWireScope is SetScope over an InstrumentationScope message on the wire (has: it is
// set).
func (c *Context) SetWireScope(scope []byte, has bool, schemaURL string) bool {
	var (
		attrs         [][]byte
		name, version string
	)
	if has && !Fields(scope, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
		var ok bool
		switch {
		case num == 1 && typ == protowire.BytesType:
			name, ok = WireString(v)
			return ok
		case num == 2 && typ == protowire.BytesType:
			version, ok = WireString(v)
			return ok
		case num == 3 && typ == protowire.BytesType:
			attrs = append(attrs, v)
			return true
		case num == 4 && typ == protowire.VarintType:
			return true
		}
		return false
	}) {
		return false
	}
	b := c.scope[:0]
	b = jsontext.AppendString(jsontext.AppendField(b, "scope_name"), name)
	b = jsontext.AppendString(jsontext.AppendField(b, "scope_version"), version)
	b = jsontext.AppendField(b, "scope_attributes")
	b, ok := AppendWireAttributes(b, attrs)
	if !ok {
		return false
	}
	if schemaURL != "" {
		b = jsontext.AppendString(jsontext.AppendField(b, "scope_schema_url"), schemaURL)
	}
	c.scope = b
	return true
}
