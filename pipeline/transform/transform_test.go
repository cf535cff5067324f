package transform

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
)

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func file(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// samples holds one body per transform with the number of rows it makes.
func samples(t *testing.T) map[string]struct {
	req  Request
	rows int
} {
	span := &tracepb.Span{TraceId: bytes.Repeat([]byte{1}, 16), SpanId: bytes.Repeat([]byte{2}, 8), Name: "s"}
	traces, _ := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{span, span}}}}}})
	return map[string]struct {
		req  Request
		rows int
	}{
		"otlp-traces": {Request{Body: traces, ContentType: "application/x-protobuf"}, 2},
		"otlp-logs": {Request{Body: []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"hi"}}]}]}]}`),
			ContentType: "application/json"}, 1},
		"otlp-metrics": {Request{Body: []byte(`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"m","gauge":{"dataPoints":[{"asInt":"1"},{"asDouble":2}]}}]}]}]}`),
			ContentType: "application/json"}, 2},
		"cloudwatch-logs": {Request{Body: file(t, "cloudwatchlogs/testdata/data_message.json")}, 3},
		"cloudtrail":      {Request{Body: file(t, "cloudtrail/testdata/log_file.json")}, 2},
		"firehose":        {Request{Body: file(t, "firehose/testdata/delivery.json"), ContentType: "application/json"}, 2},
	}
}

func TestNames(t *testing.T) {
	want := "otlp-traces otlp-logs otlp-metrics cloudwatch-logs cloudtrail firehose"
	if got := strings.Join(Names(), " "); got != want {
		t.Fatalf("names %q", got)
	}
	for _, n := range Names() {
		if tr, ok := Lookup(n); !ok || tr.Name() != n {
			t.Fatalf("Lookup(%q)", n)
		}
	}
}

func TestUnknown(t *testing.T) {
	if _, ok := Lookup("otlp"); ok {
		t.Fatal("found otlp")
	}
	_, err := Get("OTLP-Traces")
	var unknown *UnknownError
	if !errors.As(err, &unknown) || err.Error() != `unknown transform "OTLP-Traces"; use one of: otlp-traces, otlp-logs, otlp-metrics, cloudwatch-logs, cloudtrail, firehose` {
		t.Fatalf("got %v", err)
	}
	if err := (Transform{}).Decode(Request{}, &rows.Buffer{}); err == nil {
		t.Fatal("zero Transform decoded")
	}
}

// TestEncodings runs every transform on its sample as it is, with Content-Encoding: gzip, and
// as a gzip file sent without the header.
func TestEncodings(t *testing.T) {
	for name, s := range samples(t) {
		tr, _ := Lookup(name)
		for _, enc := range []string{"plain", "gzip", "gzip file"} {
			req := s.req
			switch enc {
			case "gzip":
				req.Body, req.ContentEncoding = gz(req.Body), "gzip"
			case "gzip file":
				req.Body = gz(req.Body)
			}
			var b rows.Buffer
			if err := tr.Decode(req, &b); err != nil {
				t.Fatalf("%s, %s: %v", name, enc, err)
			}
			if b.Rows != s.rows {
				t.Fatalf("%s, %s: %d rows, want %d", name, enc, b.Rows, s.rows)
			}
			rowstest.Lines(t, &b)
		}
	}
}

func TestLimits(t *testing.T) {
	for name, s := range samples(t) {
		tr, _ := Lookup(name)

		req := s.req
		req.MaxBodySize = len(req.Body) - 1
		var b rows.Buffer
		if err := tr.Decode(req, &b); !errors.Is(err, rows.ErrTooLarge) {
			t.Fatalf("%s: %v, want too large", name, err)
		}

		req = s.req
		req.Body, req.ContentEncoding, req.MaxBodySize = gz(req.Body), "gzip", len(s.req.Body)-1
		if err := tr.Decode(req, &b); !errors.Is(err, rows.ErrTooLarge) || !strings.Contains(err.Error(), "the decompressed body would be larger") {
			t.Fatalf("%s gzip: %v, want too large", name, err)
		}

		req = s.req
		req.ContentEncoding = "zstd"
		if err := tr.Decode(req, &b); !errors.Is(err, rows.ErrUnsupportedMediaType) {
			t.Fatalf("%s zstd: %v", name, err)
		}

		b = rows.Buffer{MaxBytes: 10}
		if err := tr.Decode(s.req, &b); !errors.Is(err, rows.ErrTooLarge) || b.Rows != 0 || len(b.B) != 0 {
			t.Fatalf("%s MaxBytes: %v, %d rows", name, err, b.Rows)
		}
	}
}

// TestAllOrNothing checks that a failing decode leaves earlier rows of the buffer alone.
func TestAllOrNothing(t *testing.T) {
	for _, name := range Names() {
		tr, _ := Lookup(name)
		b := rows.Buffer{B: []byte("{\"kept\":1}\n"), Rows: 1}
		if err := tr.Decode(Request{Body: []byte(`{"broken":`), ContentType: "application/json"}, &b); err == nil {
			t.Fatalf("%s: no error", name)
		}
		if string(b.B) != "{\"kept\":1}\n" || b.Rows != 1 {
			t.Fatalf("%s: buffer changed: %q", name, b.B)
		}
	}
}
