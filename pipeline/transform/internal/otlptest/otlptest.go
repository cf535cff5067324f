// Package otlptest produces OTLP/HTTP request bodies with the real OpenTelemetry Go SDK
// exporters, for the tests of the OTLP transforms: each helper points an exporter at an
// httptest.Server, lets the caller emit telemetry, flushes, and returns what the server received.
package otlptest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
)

// Request is one export request as the server received it.
type Request struct {
	Path            string
	ContentType     string
	ContentEncoding string
	Body            []byte // as sent: gzip when ContentEncoding says so
}

// server records requests and answers as an OTLP/HTTP receiver does on success.
func server(t testing.TB) (url string, requests func() []Request) {
	t.Helper()
	var (
		mu   sync.Mutex
		reqs []Request
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		reqs = append(reqs, Request{
			Path:            r.URL.Path,
			ContentType:     r.Header.Get("Content-Type"),
			ContentEncoding: r.Header.Get("Content-Encoding"),
			Body:            body,
		})
		mu.Unlock()
		// An empty Export*ServiceResponse, in the request's encoding.
		if r.Header.Get("Content-Type") == "application/json" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("{}"))
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []Request {
		mu.Lock()
		defer mu.Unlock()
		return append([]Request(nil), reqs...)
	}
}

// Traces exports the spans that emit creates through the SDK's otlptracehttp exporter (gzip;
// protobuf, or the exporter's own JSON encoding when json is true).
func Traces(t testing.TB, res *resource.Resource, ids sdktrace.IDGenerator, json bool, emit func(ctx context.Context, tp *sdktrace.TracerProvider)) []Request {
	t.Helper()
	ctx := context.Background()
	url, requests := server(t)
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(url + "/v1/traces"),
		otlptracehttp.WithCompression(otlptracehttp.GzipCompression),
	}
	if json {
		opts = append(opts, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithIDGenerator(ids))
	emit(ctx, tp)
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return requests()
}

// Logs exports the records that emit creates through the SDK's otlploghttp exporter (gzip,
// protobuf).
func Logs(t testing.TB, res *resource.Resource, emit func(ctx context.Context, lp *sdklog.LoggerProvider)) []Request {
	t.Helper()
	ctx := context.Background()
	url, requests := server(t)
	exp, err := otlploghttp.New(ctx,
		otlploghttp.WithEndpointURL(url+"/v1/logs"),
		otlploghttp.WithCompression(otlploghttp.GzipCompression))
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	emit(ctx, lp)
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return requests()
}

// Metrics records measurements with emit and exports them through the SDK's otlpmetrichttp
// exporter (gzip, protobuf) with a periodic reader, flushed once: the first request holds the
// measurements (shutting down sends a second collection).
func Metrics(t testing.TB, res *resource.Resource, opts []otlpmetrichttp.Option, views []sdkmetric.View, emit func(ctx context.Context, mp *sdkmetric.MeterProvider)) []Request {
	t.Helper()
	ctx := context.Background()
	url, requests := server(t)
	opts = append([]otlpmetrichttp.Option{
		otlpmetrichttp.WithEndpointURL(url + "/v1/metrics"),
		otlpmetrichttp.WithCompression(otlpmetrichttp.GzipCompression),
	}, opts...)
	exp, err := otlpmetrichttp.New(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(time.Hour))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader), sdkmetric.WithView(views...))
	emit(ctx, mp)
	if err := mp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return requests()
}

// JSON writes m in the OTLP JSON encoding: protobuf's JSON mapping with lowerCamelCase names,
// enums as numbers, int64 as strings, and trace and span ids in hex instead of base64.
func JSON(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return base64IDsToHex(t, b)
}

// base64IDsToHex rewrites the values of id members from base64 to hex.
func base64IDsToHex(t testing.TB, b []byte) []byte {
	var out bytes.Buffer
	r := jsontext.NewReader(b)
	var walk func() error
	walk = func() error {
		switch r.Kind() {
		case jsontext.Object:
			out.WriteByte('{')
			n := 0
			err := r.Object(func(key []byte) error {
				if n++; n > 1 {
					out.WriteByte(',')
				}
				out.Write(jsontext.AppendKey(nil, string(key)))
				switch string(key) {
				case "traceId", "spanId", "parentSpanId":
					s, err := r.String()
					if err != nil {
						return err
					}
					id, err := base64.StdEncoding.DecodeString(string(s))
					if err != nil {
						return err
					}
					out.WriteString(`"` + hex.EncodeToString(id) + `"`)
					return nil
				}
				return walk()
			})
			out.WriteByte('}')
			return err
		case jsontext.Array:
			out.WriteByte('[')
			err := r.Array(func(i int) error {
				if i > 0 {
					out.WriteByte(',')
				}
				return walk()
			})
			out.WriteByte(']')
			return err
		}
		raw, err := r.Raw()
		out.Write(raw)
		return err
	}
	if err := walk(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
