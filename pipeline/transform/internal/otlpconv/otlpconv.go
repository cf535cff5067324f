// Package otlpconv holds what the three OTLP transforms share: reading an OTLP/HTTP body in
// either encoding, and writing attributes, any-values, ids, resources and scopes as row JSON.
package otlpconv

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
)

// Content types of OTLP/HTTP.
const (
	Protobuf = "application/x-protobuf"
	JSON     = "application/json"
)

// MaxDepth bounds how deeply array and map values may nest inside an attribute or a log body.
// Rows must stay well within what ClickHouse parses (1000 levels) after the row's own nesting.
const MaxDepth = 64

// Unmarshal decodes an OTLP/HTTP request body into m by its Content-Type: protobuf for
// application/x-protobuf (also application/protobuf), the OTLP JSON encoding for
// application/json. Parameters such as "; charset=utf-8" are ignored. An empty Content-Type is
// read as JSON when the body starts with '{' and as protobuf otherwise, so that a plain
// `curl --data-binary` works.
func Unmarshal(body []byte, contentType string, m proto.Message) error {
	mt := contentType
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.ToLower(strings.TrimSpace(mt))
	if mt == "" {
		if t := strings.TrimLeft(string(body[:min(len(body), 64)]), " \t\r\n"); strings.HasPrefix(t, "{") {
			mt = JSON
		} else {
			mt = Protobuf
		}
	}
	switch mt {
	case Protobuf, "application/protobuf":
		if err := proto.Unmarshal(body, m); err != nil {
			return fmt.Errorf("invalid OTLP protobuf: %w", err)
		}
		return nil
	case JSON:
		return unmarshalJSON(body, m)
	}
	return &rows.MediaTypeError{Header: "Content-Type", Value: contentType, Want: "application/x-protobuf or application/json"}
}

var jsonOptions = protojson.UnmarshalOptions{DiscardUnknown: true} // OTLP: ignore unknown fields

// unmarshalJSON reads the OTLP JSON encoding. It differs from protobuf's canonical JSON
// mapping, which protojson implements, in one way that matters: trace and span ids are hex, not
// base64. The ids are rewritten to base64 first, padded with spaces to their original length
// where possible so that protojson's line:column positions still point into the body as sent.
// Ids already in base64 (what protobuf's own mapping writes) are left as they are.
func unmarshalJSON(body []byte, m proto.Message) error {
	fixed, err := hexIDsToBase64(body)
	if err != nil {
		return err
	}
	if err := jsonOptions.Unmarshal(fixed, m); err != nil {
		return fmt.Errorf("invalid OTLP JSON: %w", err)
	}
	return nil
}

// isIDField reports whether an object key names a trace or span id in OTLP JSON (lowerCamelCase,
// or the proto field names protojson also accepts). No other OTLP message has fields so named,
// and attribute keys are values of "key", never object keys, so any object member so named is
// an id.
func isIDField(k []byte) bool {
	switch string(k) {
	case "traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id":
		return true
	}
	return false
}

func hexIDsToBase64(body []byte) ([]byte, error) {
	var (
		r    = jsontext.NewReader(body)
		out  []byte // nil until the first rewrite: most bodies in tests have none
		last int    // body[:last] is in out
		walk func() error
	)
	walk = func() error {
		switch r.Kind() {
		case jsontext.Object:
			return r.Object(func(key []byte) error {
				if !isIDField(key) || r.Kind() != jsontext.String {
					return walk()
				}
				start := r.Offset()
				s, err := r.String()
				if err != nil {
					return err
				}
				if len(s)%2 != 0 || !isHexString(s) {
					return nil // not hex: leave it to protojson (base64, or an error)
				}
				id := make([]byte, len(s)/2)
				_, _ = hex.Decode(id, s)
				out = append(out, body[last:start]...)
				n := len(out)
				out = append(out, '"')
				out = base64.StdEncoding.AppendEncode(out, id)
				out = append(out, '"')
				for len(out)-n < r.Offset()-start {
					out = append(out, ' ')
				}
				last = r.Offset()
				return nil
			})
		case jsontext.Array:
			return r.Array(func(int) error { return walk() })
		}
		return r.Skip()
	}
	if err := walk(); err != nil {
		return nil, fmt.Errorf("invalid OTLP JSON: %w", err)
	}
	if err := r.End(); err != nil {
		return nil, fmt.Errorf("invalid OTLP JSON: %w", err)
	}
	if out == nil {
		return body, nil
	}
	return append(out, body[last:]...), nil
}

func isHexString(s []byte) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// AppendID appends a trace or span id as a lowercase hex string, "" when absent.
func AppendID(dst, id []byte) []byte {
	dst = append(dst, '"')
	dst = hex.AppendEncode(dst, id)
	return append(dst, '"')
}

// ValidID reports whether id has the given length and is not all zeros, as OTLP requires of a
// span's own trace and span ids.
func ValidID(id []byte, size int) bool {
	if len(id) != size {
		return false
	}
	for _, b := range id {
		if b != 0 {
			return true
		}
	}
	return false
}

// errTooDeep is returned when an attribute value nests deeper than MaxDepth; the record is
// then rejected.
var errTooDeep = fmt.Errorf("a value nests arrays or maps deeper than %d levels", MaxDepth)

// AppendAttributes appends key-value pairs as a JSON object whose values keep their types.
// A key that appears again is dropped: the first value wins, as in the Collector's pdata, and
// the row never holds a duplicate key (which ClickHouse's JSON type refuses).
func AppendAttributes(dst []byte, kvs []*commonpb.KeyValue) ([]byte, error) {
	return appendKeyValues(dst, kvs, 0)
}

func appendKeyValues(dst []byte, kvs []*commonpb.KeyValue, depth int) ([]byte, error) {
	dst = append(dst, '{')
	var seen map[string]struct{} // only for long lists; short ones are scanned
	for i, kv := range kvs {
		if duplicate(kvs, i, &seen) {
			continue
		}
		dst = jsontext.AppendKey(dst, kv.GetKey())
		var err error
		if dst, err = appendAnyValue(dst, kv.GetValue(), depth); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// duplicate reports whether kvs[i]'s key appeared before i.
func duplicate(kvs []*commonpb.KeyValue, i int, seen *map[string]struct{}) bool {
	const scan = 16
	k := kvs[i].GetKey()
	if len(kvs) <= scan {
		for _, prev := range kvs[:i] {
			if prev.GetKey() == k {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{}, len(kvs))
	}
	if _, ok := (*seen)[k]; ok {
		return true
	}
	(*seen)[k] = struct{}{}
	return false
}

// AppendAnyValue appends an OTLP AnyValue keeping its type: string, boolean, integer, double
// (NaN and infinities as strings), bytes as base64 (as OTLP JSON writes them), arrays, maps as
// objects. An empty AnyValue is null. String-table references (used by profiles only) are
// not resolved and written as null.
func AppendAnyValue(dst []byte, v *commonpb.AnyValue) ([]byte, error) {
	return appendAnyValue(dst, v, 0)
}

func appendAnyValue(dst []byte, v *commonpb.AnyValue, depth int) ([]byte, error) {
	switch v := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return jsontext.AppendString(dst, v.StringValue), nil
	case *commonpb.AnyValue_BoolValue:
		return jsontext.AppendBool(dst, v.BoolValue), nil
	case *commonpb.AnyValue_IntValue:
		return jsontext.AppendInt(dst, v.IntValue), nil
	case *commonpb.AnyValue_DoubleValue:
		return jsontext.AppendFloat(dst, v.DoubleValue), nil
	case *commonpb.AnyValue_BytesValue:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.BytesValue)
		return append(dst, '"'), nil
	case *commonpb.AnyValue_ArrayValue:
		if depth >= MaxDepth {
			return dst, errTooDeep
		}
		dst = append(dst, '[')
		for _, e := range v.ArrayValue.GetValues() {
			var err error
			if dst, err = appendAnyValue(jsontext.Sep(dst), e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case *commonpb.AnyValue_KvlistValue:
		if depth >= MaxDepth {
			return dst, errTooDeep
		}
		return appendKeyValues(dst, v.KvlistValue.GetValues(), depth+1)
	}
	return append(dst, "null"...), nil
}

// Context is the JSON fragment every row of one resource and scope carries, written once and
// copied into each row: `"service_name":…,"resource_attributes":{…},"scope_name":…,
// "scope_version":…,"scope_attributes":{…}` plus the schema URLs when set.
type Context struct {
	resource []byte
	scope    []byte
}

// SetResource writes the resource part of the fragment.
func (c *Context) SetResource(res *resourcepb.Resource, schemaURL string) error {
	b := c.resource[:0]
	b = jsontext.AppendField(b, "service_name")
	b = jsontext.AppendString(b, serviceName(res.GetAttributes()))
	b = jsontext.AppendField(b, "resource_attributes")
	b, err := AppendAttributes(b, res.GetAttributes())
	c.resource = b
	if err != nil {
		return err
	}
	if schemaURL != "" {
		c.resource = jsontext.AppendString(jsontext.AppendField(c.resource, "resource_schema_url"), schemaURL)
	}
	return nil
}

// SetScope writes the instrumentation scope part of the fragment.
func (c *Context) SetScope(scope *commonpb.InstrumentationScope, schemaURL string) error {
	b := c.scope[:0]
	b = jsontext.AppendString(jsontext.AppendField(b, "scope_name"), scope.GetName())
	b = jsontext.AppendString(jsontext.AppendField(b, "scope_version"), scope.GetVersion())
	b = jsontext.AppendField(b, "scope_attributes")
	b, err := AppendAttributes(b, scope.GetAttributes())
	c.scope = b
	if err != nil {
		return err
	}
	if schemaURL != "" {
		c.scope = jsontext.AppendString(jsontext.AppendField(c.scope, "scope_schema_url"), schemaURL)
	}
	return nil
}

// Append appends the fragment to a row being written (after at least one member).
func (c *Context) Append(dst []byte) []byte {
	dst = append(dst, ',')
	dst = append(dst, c.resource...)
	dst = append(dst, ',')
	return append(dst, c.scope...)
}

// serviceName is the resource's service.name attribute when it is a string, else "".
func serviceName(attrs []*commonpb.KeyValue) string {
	for _, kv := range attrs {
		if kv.GetKey() == "service.name" {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// EnumName returns names[v], or v in decimal for a value the table does not know, so that a
// newer producer's value is kept rather than lost.
func EnumName(names []string, v int32) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return strconv.Itoa(int(v))
}
