package otlpconv

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/svc-data/svc/pipeline/rows"
)

func kv(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

func s(v string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}
}

func TestAppendAnyValue(t *testing.T) {
	f := func(v *commonpb.AnyValue, want string) {
		t.Helper()
		got, err := AppendAnyValue(nil, v)
		if err != nil || string(got) != want {
			t.Fatalf("got %s (%v), want %s", got, err, want)
		}
	}
	f(nil, "null")
	f(&commonpb.AnyValue{}, "null")
	f(s("a\"b"), `"a\"b"`)
	f(&commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}, "true")
	f(&commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: math.MinInt64}}, "-9223372036854775808")
	f(&commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: math.Inf(-1)}}, `"-Infinity"`)
	f(&commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0xff, 0}}}, `"/wA="`)
	f(&commonpb.AnyValue{Value: &commonpb.AnyValue_StringValueStrindex{StringValueStrindex: 3}}, "null")
	f(&commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{
		Values: []*commonpb.AnyValue{s("x"), {}, {Value: &commonpb.AnyValue_ArrayValue{}}}}}}, `["x",null,[]]`)
	f(&commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{
		Values: []*commonpb.KeyValue{kv("a", s("1")), kv("a", s("2")), kv("", nil)}}}}, `{"a":"1","":null}`)
}

func TestAppendAttributesDuplicates(t *testing.T) {
	// Past 16 keys duplicates are found with a map rather than by scanning.
	for _, n := range []int{3, 16, 17, 40} {
		var kvs []*commonpb.KeyValue
		var want strings.Builder
		want.WriteByte('{')
		for i := range n {
			kvs = append(kvs, kv(fmt.Sprintf("k%d", i), s("first")))
			if i > 0 {
				want.WriteByte(',')
			}
			fmt.Fprintf(&want, `"k%d":"first"`, i)
		}
		want.WriteByte('}')
		kvs = append(kvs, kv("k0", s("again")), kv(fmt.Sprintf("k%d", n-1), s("again")))
		got, err := AppendAttributes(nil, kvs)
		if err != nil || string(got) != want.String() {
			t.Fatalf("%d keys: got %s", n, got)
		}
	}
}

func TestDepth(t *testing.T) {
	deep := func(levels int) *commonpb.AnyValue {
		v := s("leaf")
		for range levels {
			v = &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{kv("k", v)}}}}
		}
		return v
	}
	if _, err := AppendAnyValue(nil, deep(MaxDepth)); err != nil {
		t.Fatalf("%d levels: %v", MaxDepth, err)
	}
	if _, err := AppendAnyValue(nil, deep(MaxDepth+1)); !errors.Is(err, errTooDeep) {
		t.Fatalf("%d levels: %v", MaxDepth+1, err)
	}
}

func TestUnmarshalContentTypes(t *testing.T) {
	json := []byte(` {"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"000102030405060708090a0b0c0d0e0f","name":"x"}]}]}]}`)
	f := func(contentType string, body []byte, wantErr string) {
		t.Helper()
		var m coltracepb.ExportTraceServiceRequest
		err := Unmarshal(body, contentType, &m)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("%q: got %v, want %q", contentType, err, wantErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", contentType, err)
		}
		if id := m.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0].GetTraceId(); len(id) != 16 || id[15] != 15 {
			t.Fatalf("%q: trace id %x", contentType, id)
		}
	}
	f("application/json", json, "")
	f("Application/JSON; charset=utf-8", json, "")
	f("", json, "")
	f("application/x-protobuf", json, "invalid OTLP protobuf")
}

func TestUnmarshalRejects(t *testing.T) {
	var m coltracepb.ExportTraceServiceRequest
	if err := Unmarshal(nil, "application/protobuf", &m); err != nil {
		t.Fatalf("empty protobuf: %v", err)
	}
	err := Unmarshal([]byte("{}"), "text/json", &m)
	if !errors.Is(err, rows.ErrUnsupportedMediaType) {
		t.Fatalf("text/json: %v", err)
	}
}

// TestHexIDs checks the id rewrite: hex becomes base64 padded to the same length, so that
// positions in protojson's errors still point into the body as sent; other values stay.
func TestHexIDs(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got, err := hexIDsToBase64([]byte(in))
		if err != nil || string(got) != want {
			t.Fatalf("%s:\n got %s (%v)\nwant %s", in, got, err, want)
		}
	}
	f(`{"traceId":"000102030405060708090a0b0c0d0e0f"}`, `{"traceId":"AAECAwQFBgcICQoLDA0ODw=="        }`)
	f(`{"spans":[{"spanId":"0001020304050607","parentSpanId":""}]}`, `{"spans":[{"spanId":"AAECAwQFBgc="    ,"parentSpanId":""}]}`)
	f(`{"span_id":"AAECAwQFBgc="}`, `{"span_id":"AAECAwQFBgc="}`)                                             // base64: left alone
	f(`{"key":"traceId","value":{"stringValue":"abcd"}}`, `{"key":"traceId","value":{"stringValue":"abcd"}}`) // an attribute named traceId
	f(`{"traceId":"ab"}`, `{"traceId":"qw=="}`)                                                               // longer in base64: positions shift
	if _, err := hexIDsToBase64([]byte(`{"traceId":"ab",}`)); err == nil || !strings.Contains(err.Error(), "invalid JSON at offset 16") {
		t.Fatalf("got %v", err)
	}
	// protojson's position of a later fault is where it is in the body as sent.
	var m coltracepb.ExportTraceServiceRequest
	err := unmarshalJSON([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"000102030405060708090a0b0c0d0e0f","name":5}]}]}]}`), &m)
	if err == nil || !strings.Contains(err.Error(), "(line 1:97)") {
		t.Fatalf("got %v", err)
	}
}

func TestEnumName(t *testing.T) {
	names := []string{"Zero", "One"}
	for v, want := range map[int32]string{0: "Zero", 1: "One", 2: "2", -1: "-1"} {
		if got := EnumName(names, v); got != want {
			t.Fatalf("%d: %q", v, got)
		}
	}
}
