// Package otlpmetrics flattens OTLP metric exports into rows, one per data point of every
// metric type (transform "otlp-metrics" and POST /otlp/v1/metrics). docs/transforms.md
// describes the rows.
package otlpmetrics

import (
	"fmt"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform/internal/otlpconv"
)

// Decode appends one row per data point of an OTLP/HTTP metrics body to dst. contentType
// selects the encoding (see otlpconv.Unmarshal); the body must already be decompressed.
// Invalid data points are dropped and counted in dst.Rejected. On error dst is left as it was.
func Decode(body []byte, contentType string, dst *rows.Buffer) error {
	if otlpconv.IsProtobuf(body, contentType) && appendWire(body, dst) {
		return nil
	}
	return decodeUpstream(body, contentType, dst)
}

// decodeUpstream is Decode through proto.Unmarshal and the generated messages.
func decodeUpstream(body []byte, contentType string, dst *rows.Buffer) error {
	var req colmetricspb.ExportMetricsServiceRequest
	if err := otlpconv.Unmarshal(body, contentType, &req); err != nil {
		return err
	}
	return Append(&req, dst)
}

// Append appends one row per data point of an export request already unmarshaled, as the OTLP
// gRPC service receives it. On error (only a row limit) dst is left as it was.
func Append(req *colmetricspb.ExportMetricsServiceRequest, dst *rows.Buffer) error {
	mark := dst.Mark()
	w := writer{dst: dst}
	for ri, rm := range req.GetResourceMetrics() {
		resErr := w.ctx.SetResource(rm.GetResource(), rm.GetSchemaUrl())
		for si, sm := range rm.GetScopeMetrics() {
			err := resErr
			if err == nil {
				err = w.ctx.SetScope(sm.GetScope(), sm.GetSchemaUrl())
			}
			for mi, m := range sm.GetMetrics() {
				w.where = func() string { return fmt.Sprintf("resource %d, scope %d, metric %d (%q)", ri, si, mi, m.GetName()) }
				if err := w.metric(m, err); err != nil {
					dst.Restore(mark)
					return err
				}
			}
		}
	}
	return nil
}

// writer writes the rows of one metric at a time.
type writer struct {
	dst   *rows.Buffer
	ctx   otlpconv.Context
	head  []byte        // the metric's own members, shared by its data points
	where func() string // names the metric in reject reasons; called only when rejecting
}

var (
	temporalityNames = []string{"Unspecified", "Delta", "Cumulative"}
)

// metric writes one row per data point of m, rejecting them all when ctxErr (an invalid
// resource or scope) or the metric itself is invalid.
func (w *writer) metric(m *metricspb.Metric, ctxErr error) error {
	var typ string
	var points int
	switch d := m.GetData().(type) {
	case *metricspb.Metric_Gauge:
		typ, points = "Gauge", len(d.Gauge.GetDataPoints())
	case *metricspb.Metric_Sum:
		typ, points = "Sum", len(d.Sum.GetDataPoints())
	case *metricspb.Metric_Histogram:
		typ, points = "Histogram", len(d.Histogram.GetDataPoints())
	case *metricspb.Metric_ExponentialHistogram:
		typ, points = "ExponentialHistogram", len(d.ExponentialHistogram.GetDataPoints())
	case *metricspb.Metric_Summary:
		typ, points = "Summary", len(d.Summary.GetDataPoints())
	default:
		return nil // no data: nothing to store and no data point to count
	}
	reason := ""
	if ctxErr != nil {
		reason = ctxErr.Error()
	} else if m.GetName() == "" {
		reason = "the metric has no name"
	}
	h := w.head[:0]
	h = jsontext.AppendString(append(h, `"name":`...), m.GetName())
	h = jsontext.AppendString(append(h, `,"description":`...), m.GetDescription())
	h = jsontext.AppendString(append(h, `,"unit":`...), m.GetUnit())
	h = jsontext.AppendString(append(h, `,"type":`...), typ)
	var temporality metricspb.AggregationTemporality
	switch d := m.GetData().(type) {
	case *metricspb.Metric_Sum:
		temporality = d.Sum.GetAggregationTemporality()
		h = jsontext.AppendBool(append(h, `,"is_monotonic":`...), d.Sum.GetIsMonotonic())
	case *metricspb.Metric_Histogram:
		temporality = d.Histogram.GetAggregationTemporality()
	case *metricspb.Metric_ExponentialHistogram:
		temporality = d.ExponentialHistogram.GetAggregationTemporality()
	}
	if typ != "Gauge" && typ != "Summary" {
		h = jsontext.AppendString(append(h, `,"aggregation_temporality":`...), otlpconv.EnumName(temporalityNames, int32(temporality)))
	}
	if md := m.GetMetadata(); len(md) > 0 && reason == "" {
		var err error
		if h, err = otlpconv.AppendAttributes(append(h, `,"metadata":`...), md); err != nil {
			reason = "metadata: " + err.Error()
		}
	}
	w.head = h
	if reason != "" {
		for i := 0; i < points; i++ {
			w.dst.Reject("%s, data point %d: %s", w.where(), i, reason)
		}
		return nil
	}

	switch d := m.GetData().(type) {
	case *metricspb.Metric_Gauge:
		for i, p := range d.Gauge.GetDataPoints() {
			if err := w.point(i, p.GetStartTimeUnixNano(), p.GetTimeUnixNano(), p.GetAttributes(), p.GetFlags(), p.GetExemplars(), func(b []byte) ([]byte, string) { return appendNumber(b, p) }); err != nil {
				return err
			}
		}
	case *metricspb.Metric_Sum:
		for i, p := range d.Sum.GetDataPoints() {
			if err := w.point(i, p.GetStartTimeUnixNano(), p.GetTimeUnixNano(), p.GetAttributes(), p.GetFlags(), p.GetExemplars(), func(b []byte) ([]byte, string) { return appendNumber(b, p) }); err != nil {
				return err
			}
		}
	case *metricspb.Metric_Histogram:
		for i, p := range d.Histogram.GetDataPoints() {
			if err := w.point(i, p.GetStartTimeUnixNano(), p.GetTimeUnixNano(), p.GetAttributes(), p.GetFlags(), p.GetExemplars(), func(b []byte) ([]byte, string) { return appendHistogram(b, p) }); err != nil {
				return err
			}
		}
	case *metricspb.Metric_ExponentialHistogram:
		for i, p := range d.ExponentialHistogram.GetDataPoints() {
			if err := w.point(i, p.GetStartTimeUnixNano(), p.GetTimeUnixNano(), p.GetAttributes(), p.GetFlags(), p.GetExemplars(), func(b []byte) ([]byte, string) { return appendExponential(b, p), "" }); err != nil {
				return err
			}
		}
	case *metricspb.Metric_Summary:
		for i, p := range d.Summary.GetDataPoints() {
			if err := w.point(i, p.GetStartTimeUnixNano(), p.GetTimeUnixNano(), p.GetAttributes(), p.GetFlags(), nil, func(b []byte) ([]byte, string) { return appendSummary(b, p), "" }); err != nil {
				return err
			}
		}
	}
	return nil
}

// point writes the row of data point i: the members every data point has, the metric's head,
// the type's own members written by values (or a reason to reject the point), exemplars and
// the resource and scope.
func (w *writer) point(i int, start, ts uint64, attrs []*commonpb.KeyValue, flags uint32, exemplars []*metricspb.Exemplar, values func([]byte) ([]byte, string)) error {
	b := w.dst.B
	n := len(b)
	b = jsontext.AppendUnixNano(append(b, `{"timestamp":`...), ts)
	if start != 0 {
		b = jsontext.AppendUnixNano(append(b, `,"start_timestamp":`...), start)
	}
	b = append(append(b, ','), w.head...)
	var (
		reason string
		err    error
	)
	if b, err = otlpconv.AppendAttributes(append(b, `,"attributes":`...), attrs); err != nil {
		reason = "attributes: " + err.Error()
	}
	b = jsontext.AppendUint(append(b, `,"flags":`...), uint64(flags))
	if reason == "" {
		b, reason = values(append(b, ','))
	}
	if reason == "" && len(exemplars) > 0 {
		b, reason = appendExemplars(append(b, `,"exemplars":`...), exemplars)
	}
	if reason != "" {
		w.dst.B = b[:n]
		w.dst.Reject("%s, data point %d: %s", w.where(), i, reason)
		return nil
	}
	w.dst.B = append(w.ctx.Append(b), '}')
	return w.dst.EndRow()
}

func appendNumber(b []byte, p *metricspb.NumberDataPoint) ([]byte, string) {
	switch v := p.GetValue().(type) {
	case *metricspb.NumberDataPoint_AsInt:
		return jsontext.AppendInt(append(b, `"value":`...), v.AsInt), ""
	case *metricspb.NumberDataPoint_AsDouble:
		return jsontext.AppendFloat(append(b, `"value":`...), v.AsDouble), ""
	}
	return b, "the data point has no value"
}

func appendHistogram(b []byte, p *metricspb.HistogramDataPoint) ([]byte, string) {
	counts, bounds := p.GetBucketCounts(), p.GetExplicitBounds()
	if len(counts) != 0 && len(counts) != len(bounds)+1 {
		return b, fmt.Sprintf("%d bucket counts for %d explicit bounds, want one more count than bounds", len(counts), len(bounds))
	}
	b = jsontext.AppendUint(append(b, `"count":`...), p.GetCount())
	b = appendOptional(b, `,"sum":`, p.Sum)
	b = appendOptional(b, `,"min":`, p.Min)
	b = appendOptional(b, `,"max":`, p.Max)
	b = appendUints(append(b, `,"bucket_counts":`...), counts)
	b = appendFloats(append(b, `,"explicit_bounds":`...), bounds)
	return b, ""
}

func appendExponential(b []byte, p *metricspb.ExponentialHistogramDataPoint) []byte {
	b = jsontext.AppendUint(append(b, `"count":`...), p.GetCount())
	b = appendOptional(b, `,"sum":`, p.Sum)
	b = appendOptional(b, `,"min":`, p.Min)
	b = appendOptional(b, `,"max":`, p.Max)
	b = jsontext.AppendInt(append(b, `,"scale":`...), int64(p.GetScale()))
	b = jsontext.AppendUint(append(b, `,"zero_count":`...), p.GetZeroCount())
	b = jsontext.AppendFloat(append(b, `,"zero_threshold":`...), p.GetZeroThreshold())
	b = jsontext.AppendInt(append(b, `,"positive_offset":`...), int64(p.GetPositive().GetOffset()))
	b = appendUints(append(b, `,"positive_bucket_counts":`...), p.GetPositive().GetBucketCounts())
	b = jsontext.AppendInt(append(b, `,"negative_offset":`...), int64(p.GetNegative().GetOffset()))
	b = appendUints(append(b, `,"negative_bucket_counts":`...), p.GetNegative().GetBucketCounts())
	return b
}

func appendSummary(b []byte, p *metricspb.SummaryDataPoint) []byte {
	b = jsontext.AppendUint(append(b, `"count":`...), p.GetCount())
	b = jsontext.AppendFloat(append(b, `,"sum":`...), p.GetSum())
	b = append(b, `,"quantiles":[`...)
	for _, q := range p.GetQuantileValues() {
		b = jsontext.AppendFloat(jsontext.Sep(b), q.GetQuantile())
	}
	b = append(b, `],"quantile_values":[`...)
	for _, q := range p.GetQuantileValues() {
		b = jsontext.AppendFloat(jsontext.Sep(b), q.GetValue())
	}
	return append(b, ']')
}

func appendExemplars(b []byte, exemplars []*metricspb.Exemplar) ([]byte, string) {
	b = append(b, '[')
	for _, e := range exemplars {
		b = jsontext.AppendUnixNano(append(jsontext.Sep(b), `{"timestamp":`...), e.GetTimeUnixNano())
		switch v := e.GetValue().(type) {
		case *metricspb.Exemplar_AsInt:
			b = jsontext.AppendInt(append(b, `,"value":`...), v.AsInt)
		case *metricspb.Exemplar_AsDouble:
			b = jsontext.AppendFloat(append(b, `,"value":`...), v.AsDouble)
		default:
			b = append(b, `,"value":null`...)
		}
		b = otlpconv.AppendID(append(b, `,"trace_id":`...), e.GetTraceId())
		b = otlpconv.AppendID(append(b, `,"span_id":`...), e.GetSpanId())
		var err error
		if b, err = otlpconv.AppendAttributes(append(b, `,"filtered_attributes":`...), e.GetFilteredAttributes()); err != nil {
			return b, "exemplar attributes: " + err.Error()
		}
		b = append(b, '}')
	}
	return append(b, ']'), ""
}

// appendOptional appends member (with its leading comma) and v when v is set.
func appendOptional(b []byte, member string, v *float64) []byte {
	if v == nil {
		return b
	}
	return jsontext.AppendFloat(append(b, member...), *v)
}

func appendUints(b []byte, vs []uint64) []byte {
	b = append(b, '[')
	for _, v := range vs {
		b = jsontext.AppendUint(jsontext.Sep(b), v)
	}
	return append(b, ']')
}

func appendFloats(b []byte, vs []float64) []byte {
	b = append(b, '[')
	for _, v := range vs {
		b = jsontext.AppendFloat(jsontext.Sep(b), v)
	}
	return append(b, ']')
}
