package otlpmetrics

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
	"github.com/svc-data/svc/pipeline/transform/internal/otlptest"
)

var res = resource.NewSchemaless(attribute.String("service.name", "api"))

// emit records on a counter, an up-down counter, a gauge, a histogram with explicit buckets
// and a histogram turned into an exponential histogram by a view.
func emit(ctx context.Context, mp *sdkmetric.MeterProvider) {
	meter := mp.Meter("github.com/acme/api", metric.WithInstrumentationVersion("3.1.0"))
	requests, _ := meter.Int64Counter("http.server.requests", metric.WithUnit("{request}"), metric.WithDescription("Requests served."))
	requests.Add(ctx, 3, metric.WithAttributes(attribute.String("http.route", "/a")))
	requests.Add(ctx, 2, metric.WithAttributes(attribute.String("http.route", "/b")))

	depth, _ := meter.Float64UpDownCounter("queue.depth")
	depth.Add(ctx, 7.5)
	depth.Add(ctx, -2)

	temp, _ := meter.Int64Gauge("cpu.temperature", metric.WithUnit("Cel"))
	temp.Record(ctx, 64, metric.WithAttributes(attribute.Int("cpu", 0)))

	duration, _ := meter.Float64Histogram("http.server.request.duration", metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.1, 0.5, 1))
	for _, v := range []float64{0.05, 0.3, 2} {
		duration.Record(ctx, v)
	}

	size, _ := meter.Float64Histogram("payload.size", metric.WithUnit("By"))
	for _, v := range []float64{1, 2, 4} {
		size.Record(ctx, v)
	}
}

var exponential = sdkmetric.NewView(sdkmetric.Instrument{Name: "payload.size"},
	sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}})

const scope = `"service_name":"api","resource_attributes":{"service.name":"api"},
	"scope_name":"github.com/acme/api","scope_version":"3.1.0","scope_attributes":{}`

// Rows by metric name and attributes; timestamps are checked apart since the SDK takes them
// from the clock. Counters and histograms are delta (the exporter's temporality selector),
// the up-down counter stays cumulative.
var wantRows = map[string]string{
	`http.server.requests {"http.route":"/a"}`: `{"name":"http.server.requests","description":"Requests served.","unit":"{request}",
	"type":"Sum","is_monotonic":true,"aggregation_temporality":"Delta","attributes":{"http.route":"/a"},"flags":0,"value":3,` + scope + `}`,
	`http.server.requests {"http.route":"/b"}`: `{"name":"http.server.requests","description":"Requests served.","unit":"{request}",
	"type":"Sum","is_monotonic":true,"aggregation_temporality":"Delta","attributes":{"http.route":"/b"},"flags":0,"value":2,` + scope + `}`,
	`queue.depth {}`: `{"name":"queue.depth","description":"","unit":"","type":"Sum","is_monotonic":false,
	"aggregation_temporality":"Cumulative","attributes":{},"flags":0,"value":5.5,` + scope + `}`,
	`cpu.temperature {"cpu":0}`: `{"name":"cpu.temperature","description":"","unit":"Cel","type":"Gauge",
	"attributes":{"cpu":0},"flags":0,"value":64,` + scope + `}`,
	`http.server.request.duration {}`: `{"name":"http.server.request.duration","description":"","unit":"s",
	"type":"Histogram","aggregation_temporality":"Delta","attributes":{},"flags":0,
	"count":3,"sum":2.35,"min":0.05,"max":2,"bucket_counts":[1,1,0,1],"explicit_bounds":[0.1,0.5,1],` + scope + `}`,
	// Values 1, 2 and 4 fit 160 buckets at scale 6: exact powers of two fall in the bucket
	// below their index, 2^(k) -> k*64-1, so 1, 2, 4 land in buckets -1, 63 and 127.
	`payload.size {}`: `{"name":"payload.size","description":"","unit":"By","type":"ExponentialHistogram",
	"aggregation_temporality":"Delta","attributes":{},"flags":0,"count":3,"sum":7,"min":1,"max":4,
	"scale":6,"zero_count":0,"zero_threshold":0,"positive_offset":-1,
	"positive_bucket_counts":[1` + strings.Repeat(",0", 63) + `,1` + strings.Repeat(",0", 63) + `,1],
	"negative_offset":0,"negative_bucket_counts":[],` + scope + `}`,
}

func TestSDKExport(t *testing.T) {
	before := time.Now()
	reqs := otlptest.Metrics(t, res,
		[]otlpmetrichttp.Option{otlpmetrichttp.WithTemporalitySelector(sdkmetric.DeltaTemporalitySelector)},
		[]sdkmetric.View{exponential}, emit)
	if len(reqs) == 0 || reqs[0].ContentEncoding != "gzip" {
		t.Fatalf("requests: %+v", reqs)
	}
	var b rows.Buffer
	body, err := b.Inflate(reqs[0].Body, reqs[0].ContentEncoding, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := Decode(body, reqs[0].ContentType, &b); err != nil {
		t.Fatal(err)
	}
	checkRows(t, &b, before)

	var msg colmetricspb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	var jb rows.Buffer
	if err := Decode(otlptest.JSON(t, &msg), "application/json", &jb); err != nil {
		t.Fatal(err)
	}
	checkRows(t, &jb, before)
}

// checkRows compares the rows with wantRows after checking and removing their timestamps.
func checkRows(t *testing.T, b *rows.Buffer, before time.Time) {
	t.Helper()
	lines := rowstest.Lines(t, b)
	if len(lines) != len(wantRows) || b.Rejected != 0 {
		t.Fatalf("%d rows (%d rejected), want %d:\n%s", len(lines), b.Rejected, len(wantRows), b.B)
	}
	for _, l := range lines {
		var row map[string]any
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"timestamp", "start_timestamp"} {
			ts, err := time.Parse(jsontext.TimeLayout, row[k].(string))
			if err != nil || ts.Before(before.Add(-time.Second)) || ts.After(time.Now()) {
				t.Fatalf("%s %v (%v) in %s", k, row[k], err, l)
			}
			delete(row, k)
		}
		attrs, _ := json.Marshal(row["attributes"])
		key := row["name"].(string) + " " + string(attrs)
		want, ok := wantRows[key]
		if !ok {
			t.Fatalf("unexpected row %s", l)
		}
		got, _ := json.Marshal(row)
		rowstest.Equal(t, string(got), want)
	}
}

// handWritten has the metric types the Go SDK does not produce (summary) and exemplars, in
// OTLP JSON.
const handWritten = `{"resourceMetrics":[{
  "resource":{"attributes":[{"key":"service.name","value":{"stringValue":"legacy"}}]},
  "scopeMetrics":[{
    "scope":{"name":"prometheus"},
    "metrics":[
      {"name":"rpc.latency","unit":"ms","summary":{"dataPoints":[{
        "startTimeUnixNano":"1544712600000000000","timeUnixNano":"1544712660000000000",
        "count":"10","sum":123.5,
        "quantileValues":[{"quantile":0.5,"value":10},{"quantile":0.99,"value":"Infinity"}]}]}},
      {"name":"jobs","sum":{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":[{
        "timeUnixNano":"1544712660000000000","asDouble":1.5,
        "exemplars":[{"timeUnixNano":"1544712659000000000","asInt":"7",
          "traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",
          "filteredAttributes":[{"key":"user","value":{"stringValue":"u1"}}]}]}]},
       "metadata":[{"key":"prometheus.type","value":{"stringValue":"counter"}}]}
    ]}]}]}`

func TestHandWrittenJSON(t *testing.T) {
	var b rows.Buffer
	if err := Decode([]byte(handWritten), "application/json", &b); err != nil {
		t.Fatal(err)
	}
	lines := rowstest.Lines(t, &b)
	if len(lines) != 2 || b.Rejected != 0 {
		t.Fatalf("rows:\n%s", b.B)
	}
	const scope = `"service_name":"legacy","resource_attributes":{"service.name":"legacy"},"scope_name":"prometheus","scope_version":"","scope_attributes":{}`
	rowstest.Equal(t, lines[0], `{"timestamp":"2018-12-13T14:51:00.000000000Z","start_timestamp":"2018-12-13T14:50:00.000000000Z",
	"name":"rpc.latency","description":"","unit":"ms","type":"Summary","attributes":{},"flags":0,
	"count":10,"sum":123.5,"quantiles":[0.5,0.99],"quantile_values":[10,"Infinity"],`+scope+`}`)
	rowstest.Equal(t, lines[1], `{"timestamp":"2018-12-13T14:51:00.000000000Z",
	"name":"jobs","description":"","unit":"","type":"Sum","is_monotonic":true,"aggregation_temporality":"Cumulative",
	"metadata":{"prometheus.type":"counter"},"attributes":{},"flags":0,"value":1.5,
	"exemplars":[{"timestamp":"2018-12-13T14:50:59.000000000Z","value":7,"trace_id":"5b8efff798038103d269b633813fc60c",
	              "span_id":"eee19b7ec3c1b174","filtered_attributes":{"user":"u1"}}],`+scope+`}`)
}

func TestRejects(t *testing.T) {
	gauge := func(name string, points ...*metricspb.NumberDataPoint) *metricspb.Metric {
		return &metricspb.Metric{Name: name, Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: points}}}
	}
	value := &metricspb.NumberDataPoint{Value: &metricspb.NumberDataPoint_AsInt{AsInt: 1}}
	req := &colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{
		ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: []*metricspb.Metric{
			gauge("", value, value),                          // no name: both points rejected
			gauge("ok", value, &metricspb.NumberDataPoint{}), // second point has no value
			{Name: "nodata"},                                 // nothing to store, nothing counted
			{Name: "h", Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{DataPoints: []*metricspb.HistogramDataPoint{
				{Count: 1, BucketCounts: []uint64{1, 0}, ExplicitBounds: []float64{1, 2}}, // wrong bucket count
				{Count: 0}, // no buckets at all is valid
			}}}},
		}}},
	}}}
	var b rows.Buffer
	if err := Append(req, &b); err != nil {
		t.Fatal(err)
	}
	if b.Rows != 2 || b.Rejected != 4 {
		t.Fatalf("%d rows, %d rejected (%s):\n%s", b.Rows, b.Rejected, b.RejectedReason, b.B)
	}
	if want := `resource 0, scope 0, metric 0 (""), data point 0: the metric has no name`; b.RejectedReason != want {
		t.Fatalf("reason %q", b.RejectedReason)
	}
	rowstest.Lines(t, &b)
}

func TestErrors(t *testing.T) {
	f := func(body, contentType string, is error, want string) {
		t.Helper()
		var b rows.Buffer
		err := Decode([]byte(body), contentType, &b)
		if err == nil || !strings.Contains(err.Error(), want) || (is != nil && !errors.Is(err, is)) {
			t.Fatalf("%q: got %v, want %q", body, err, want)
		}
	}
	f(`{}`, "application/yaml", rows.ErrUnsupportedMediaType, "not supported")
	f(`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{"asInt":"x"}]}}]}]}]}`, "application/json", nil, "invalid OTLP JSON: proto:")
	f("\x0a\x02\x0a", "application/x-protobuf", nil, "invalid OTLP protobuf")
}
