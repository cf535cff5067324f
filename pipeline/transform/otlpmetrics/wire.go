package otlpmetrics

import (
	"bytes"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform/internal/otlpconv"
)

// appendWire is Append over an ExportMetricsServiceRequest on the wire, without
// unmarshaling it (otlpconv's wire readers). It reports false, with dst left as it was,
// whenever the body holds anything those readers leave to proto.Unmarshal (here also a
// metric's data set twice or a bucket list that is not whole), a data point Append would
// reject, or rows over dst's limit: Decode then takes the upstream path, which stores,
// rejects and fails exactly as before (TestWireMatchesUpstream, FuzzWire). Repeated
// numbers (bucket counts, explicit bounds) are read packed or not, as proto.Unmarshal
// reads them.
func appendWire(body []byte, dst *rows.Buffer) bool {
	w := wireDecoder{dst: dst}
	return otlpconv.ReadItems(body, dst, &w.ctx, w.metric)
}

// Field numbers of a Metric's data (the oneof), in metrics.proto.
const (
	gaugeField       = 5
	sumField         = 7
	histogramField   = 9
	exponentialField = 10
	summaryField     = 11
)

type wireDecoder struct {
	dst       *rows.Buffer
	ctx       otlpconv.Context
	head      []byte   // the metric's own members, shared by its data points
	metadata  [][]byte // the metric's metadata KeyValues
	points    [][]byte // the metric's data points
	point     wirePoint
	exemplars [][]byte // an exemplar's filtered attributes
	buckets   []uint64 // an exponential histogram's bucket counts
	// The explicit bounds last written, as sent (one packed field) and as JSON: the
	// points of a histogram nearly always share them, and writing floats is most of a
	// histogram point's cost.
	lastBounds, boundsJSON []byte
}

// metric writes one row per data point of a Metric on the wire (metric in decode.go).
func (w *wireDecoder) metric(b []byte) bool {
	var (
		name, description, unit string
		kind                    protowire.Number
		data                    []byte
	)
	metadata := w.metadata[:0]
	defer func() { w.metadata = metadata }()
	if !otlpconv.Fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
		if typ != protowire.BytesType {
			return false
		}
		var ok bool
		switch num {
		case 1:
			name, ok = otlpconv.WireString(v)
			return ok
		case 2:
			description, ok = otlpconv.WireString(v)
			return ok
		case 3:
			unit, ok = otlpconv.WireString(v)
			return ok
		case gaugeField, sumField, histogramField, exponentialField, summaryField:
			if kind != 0 {
				return false // proto.Unmarshal merges the same member, keeps the last of two
			}
			kind, data = num, v
		case 12:
			metadata = append(metadata, v)
		default:
			return false
		}
		return true
	}) {
		return false
	}

	var (
		temporality int32
		monotonic   bool
	)
	points := w.points[:0]
	defer func() { w.points = points }()
	if !otlpconv.Fields(data, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) bool {
		switch {
		case num == 1 && typ == protowire.BytesType:
			points = append(points, v)
		case num == 2 && typ == protowire.VarintType && kind != gaugeField && kind != summaryField:
			temporality = int32(u)
		case num == 3 && typ == protowire.VarintType && kind == sumField:
			monotonic = u != 0
		default:
			return false
		}
		return true
	}) {
		return false
	}

	var typ string
	switch kind {
	case gaugeField:
		typ = "Gauge"
	case sumField:
		typ = "Sum"
	case histogramField:
		typ = "Histogram"
	case exponentialField:
		typ = "ExponentialHistogram"
	case summaryField:
		typ = "Summary"
	}
	h := w.head[:0]
	h = jsontext.AppendString(append(h, `"name":`...), name)
	h = jsontext.AppendString(append(h, `,"description":`...), description)
	h = jsontext.AppendString(append(h, `,"unit":`...), unit)
	h = jsontext.AppendString(append(h, `,"type":`...), typ)
	if kind == sumField {
		h = jsontext.AppendBool(append(h, `,"is_monotonic":`...), monotonic)
	}
	if kind != gaugeField && kind != summaryField {
		h = jsontext.AppendString(append(h, `,"aggregation_temporality":`...), otlpconv.EnumName(temporalityNames, temporality))
	}
	// Written only when set; read always, since proto.Unmarshal reads it (a metric
	// without data or points included).
	n := len(h)
	h, ok := otlpconv.AppendWireAttributes(append(h, `,"metadata":`...), metadata)
	if len(metadata) == 0 {
		h = h[:n]
	}
	w.head = h
	if !ok || kind == 0 || len(points) == 0 {
		return ok
	}
	if name == "" {
		return false // every point rejected: Append names them
	}
	for _, p := range points {
		if !w.point.read(p, kind) || !w.row() {
			return false
		}
	}
	return true
}

// wirePoint is a data point of any type on the wire; its slices are reused from point to
// point.
type wirePoint struct {
	kind                   protowire.Number
	start, ts, count       uint64
	flags                  uint32
	attrs, exemplars       [][]byte
	value                  uint64 // a number's, as_int or as_double
	hasValue, isInt        bool
	sum, min, max          float64
	hasSum, hasMin, hasMax bool
	counts                 []uint64  // a histogram's bucket counts
	bounds                 []float64 // a histogram's explicit bounds
	boundsField            []byte    // the bounds as sent when in one packed field, else nil
	boundsFields           int
	scale                  int32
	zeroCount              uint64
	zeroThreshold          float64
	positive, negative     []byte
	hasPos, hasNeg         bool
	quantiles              [][]byte // a summary's ValueAtQuantile messages
}

// The field numbers that differ between the data point types.
func pointFields(kind protowire.Number) (attrs, exemplars, flags protowire.Number) {
	switch kind {
	case histogramField:
		return 9, 8, 10
	case exponentialField:
		return 1, 11, 10
	case summaryField:
		return 7, 0, 8
	}
	return 7, 5, 8 // number data points
}

func (p *wirePoint) read(b []byte, kind protowire.Number) bool {
	*p = wirePoint{kind: kind, attrs: p.attrs[:0], exemplars: p.exemplars[:0], counts: p.counts[:0],
		bounds: p.bounds[:0], quantiles: p.quantiles[:0]}
	attrsField, exemplarsField, flagsField := pointFields(kind)
	return otlpconv.Fields(b, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) bool {
		switch {
		case num == attrsField && typ == protowire.BytesType:
			p.attrs = append(p.attrs, v)
		case num == 2 && typ == protowire.Fixed64Type:
			p.start = u
		case num == 3 && typ == protowire.Fixed64Type:
			p.ts = u
		case num == exemplarsField && typ == protowire.BytesType && exemplarsField != 0:
			p.exemplars = append(p.exemplars, v)
		case num == flagsField && typ == protowire.VarintType:
			p.flags = uint32(u)
		default:
			return p.readOwn(num, typ, v, u)
		}
		return true
	})
}

// readOwn reads a field of the point's own type.
func (p *wirePoint) readOwn(num protowire.Number, typ protowire.Type, v []byte, u uint64) bool {
	f := math.Float64frombits(u)
	switch p.kind {
	case gaugeField, sumField:
		switch {
		case num == 4 && typ == protowire.Fixed64Type: // as_double
			p.value, p.hasValue, p.isInt = u, true, false
		case num == 6 && typ == protowire.Fixed64Type: // as_int
			p.value, p.hasValue, p.isInt = u, true, true
		default:
			return false
		}
		return true
	case summaryField:
		switch {
		case num == 4 && typ == protowire.Fixed64Type:
			p.count = u
		case num == 5 && typ == protowire.Fixed64Type:
			p.sum = f
		case num == 6 && typ == protowire.BytesType:
			p.quantiles = append(p.quantiles, v)
		default:
			return false
		}
		return true
	}
	// Histograms: count, and sum, min and max when set.
	minField, maxField := protowire.Number(11), protowire.Number(12)
	if p.kind == exponentialField {
		minField, maxField = 12, 13
	}
	switch {
	case num == 4 && typ == protowire.Fixed64Type:
		p.count = u
		return true
	case num == 5 && typ == protowire.Fixed64Type:
		p.sum, p.hasSum = f, true
		return true
	case num == minField && typ == protowire.Fixed64Type:
		p.min, p.hasMin = f, true
		return true
	case num == maxField && typ == protowire.Fixed64Type:
		p.max, p.hasMax = f, true
		return true
	}
	if p.kind == histogramField {
		var ok bool
		switch num {
		case 6:
			p.counts, ok = appendFixed64s(p.counts, typ, v, u, func(x uint64) uint64 { return x })
			return ok
		case 7:
			if p.boundsFields++; typ == protowire.BytesType {
				p.boundsField = v
			}
			p.bounds, ok = appendFixed64s(p.bounds, typ, v, u, math.Float64frombits)
			return ok
		}
		return false
	}
	switch {
	case num == 6 && typ == protowire.VarintType:
		p.scale = int32(protowire.DecodeZigZag(u & math.MaxUint32))
	case num == 7 && typ == protowire.Fixed64Type:
		p.zeroCount = u
	case num == 8 && typ == protowire.BytesType:
		if p.hasPos {
			return false // proto.Unmarshal merges the two
		}
		p.positive, p.hasPos = v, true
	case num == 9 && typ == protowire.BytesType:
		if p.hasNeg {
			return false
		}
		p.negative, p.hasNeg = v, true
	case num == 14 && typ == protowire.Fixed64Type:
		p.zeroThreshold = f
	default:
		return false
	}
	return true
}

// appendFixed64s appends a repeated fixed64 or double field's values, one unpacked (u) or
// packed (v), each as conv returns it.
func appendFixed64s[T any](dst []T, typ protowire.Type, v []byte, u uint64, conv func(uint64) T) ([]T, bool) {
	switch typ {
	case protowire.Fixed64Type:
		return append(dst, conv(u)), true
	case protowire.BytesType:
		if len(v)%8 != 0 {
			return dst, false
		}
		for ; len(v) > 0; v = v[8:] {
			x, _ := protowire.ConsumeFixed64(v)
			dst = append(dst, conv(x))
		}
		return dst, true
	}
	return dst, false
}

// row writes the row of the point just read (point in decode.go); false where point
// rejects it or the wire holds what the readers leave to proto.Unmarshal.
func (w *wireDecoder) row() bool {
	p := &w.point
	b := w.dst.B
	b = jsontext.AppendUnixNano(append(b, `{"timestamp":`...), p.ts)
	if p.start != 0 {
		b = jsontext.AppendUnixNano(append(b, `,"start_timestamp":`...), p.start)
	}
	b = append(append(b, ','), w.head...)
	b, ok := otlpconv.AppendWireAttributes(append(b, `,"attributes":`...), p.attrs)
	if !ok {
		return false
	}
	b = jsontext.AppendUint(append(b, `,"flags":`...), uint64(p.flags))
	b = append(b, ',')
	switch p.kind {
	case gaugeField, sumField:
		if !p.hasValue {
			return false
		}
		b = append(b, `"value":`...)
		if p.isInt {
			b = jsontext.AppendInt(b, int64(p.value))
		} else {
			b = jsontext.AppendFloat(b, math.Float64frombits(p.value))
		}
	case histogramField:
		if len(p.counts) != 0 && len(p.counts) != len(p.bounds)+1 {
			return false
		}
		b = p.appendCountSum(b)
		b = appendUints(append(b, `,"bucket_counts":`...), p.counts)
		b = append(b, `,"explicit_bounds":`...)
		if p.boundsFields != 1 || p.boundsField == nil {
			b = appendFloats(b, p.bounds)
		} else if bytes.Equal(p.boundsField, w.lastBounds) {
			b = append(b, w.boundsJSON...)
		} else {
			n := len(b)
			b = appendFloats(b, p.bounds)
			w.lastBounds, w.boundsJSON = p.boundsField, append(w.boundsJSON[:0], b[n:]...)
		}
	case exponentialField:
		b = p.appendCountSum(b)
		b = jsontext.AppendInt(append(b, `,"scale":`...), int64(p.scale))
		b = jsontext.AppendUint(append(b, `,"zero_count":`...), p.zeroCount)
		b = jsontext.AppendFloat(append(b, `,"zero_threshold":`...), p.zeroThreshold)
		if b, ok = w.appendBuckets(b, `,"positive_offset":`, `,"positive_bucket_counts":`, p.positive); !ok {
			return false
		}
		if b, ok = w.appendBuckets(b, `,"negative_offset":`, `,"negative_bucket_counts":`, p.negative); !ok {
			return false
		}
	case summaryField:
		if b, ok = p.appendSummary(b); !ok {
			return false
		}
	}
	if len(p.exemplars) > 0 {
		if b, ok = w.appendExemplars(append(b, `,"exemplars":`...)); !ok {
			return false
		}
	}
	w.dst.B = append(w.ctx.Append(b), '}')
	return w.dst.EndRow() == nil
}

// appendCountSum is a histogram's count, and its sum, min and max when set.
func (p *wirePoint) appendCountSum(b []byte) []byte {
	b = jsontext.AppendUint(append(b, `"count":`...), p.count)
	if p.hasSum {
		b = jsontext.AppendFloat(append(b, `,"sum":`...), p.sum)
	}
	if p.hasMin {
		b = jsontext.AppendFloat(append(b, `,"min":`...), p.min)
	}
	if p.hasMax {
		b = jsontext.AppendFloat(append(b, `,"max":`...), p.max)
	}
	return b
}

// appendBuckets writes an exponential histogram's Buckets message on the wire (offset
// and counts; counts packed or not).
func (w *wireDecoder) appendBuckets(b []byte, offsetMember, countsMember string, buckets []byte) ([]byte, bool) {
	var offset int32
	counts := w.buckets[:0]
	defer func() { w.buckets = counts }()
	if !otlpconv.Fields(buckets, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) bool {
		switch {
		case num == 1 && typ == protowire.VarintType:
			offset = int32(protowire.DecodeZigZag(u & math.MaxUint32))
		case num == 2 && typ == protowire.VarintType:
			counts = append(counts, u)
		case num == 2 && typ == protowire.BytesType:
			for len(v) > 0 {
				x, n := protowire.ConsumeVarint(v)
				if n < 0 {
					return false
				}
				counts, v = append(counts, x), v[n:]
			}
		default:
			return false
		}
		return true
	}) {
		return b, false
	}
	b = jsontext.AppendInt(append(b, offsetMember...), int64(offset))
	return appendUints(append(b, countsMember...), counts), true
}

// appendSummary is appendSummary over a summary point on the wire.
func (p *wirePoint) appendSummary(b []byte) ([]byte, bool) {
	b = jsontext.AppendUint(append(b, `"count":`...), p.count)
	b = jsontext.AppendFloat(append(b, `,"sum":`...), p.sum)
	for i, member := range []string{`,"quantiles":[`, `],"quantile_values":[`} {
		b = append(b, member...)
		for _, q := range p.quantiles {
			var quantile, value float64
			if !otlpconv.Fields(q, func(num protowire.Number, typ protowire.Type, _ []byte, u uint64) bool {
				switch {
				case num == 1 && typ == protowire.Fixed64Type:
					quantile = math.Float64frombits(u)
				case num == 2 && typ == protowire.Fixed64Type:
					value = math.Float64frombits(u)
				default:
					return false
				}
				return true
			}) {
				return b, false
			}
			if i == 1 {
				quantile = value
			}
			b = jsontext.AppendFloat(jsontext.Sep(b), quantile)
		}
	}
	return append(b, ']'), true
}

// appendExemplars is appendExemplars over the point's exemplars on the wire.
func (w *wireDecoder) appendExemplars(b []byte) ([]byte, bool) {
	b = append(b, '[')
	for _, e := range w.point.exemplars {
		var (
			ts, value       uint64
			hasValue, isInt bool
			traceID, spanID []byte
		)
		attrs := w.exemplars[:0]
		if !otlpconv.Fields(e, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) bool {
			switch {
			case num == 7 && typ == protowire.BytesType:
				attrs = append(attrs, v)
			case num == 2 && typ == protowire.Fixed64Type:
				ts = u
			case num == 3 && typ == protowire.Fixed64Type:
				value, hasValue, isInt = u, true, false
			case num == 6 && typ == protowire.Fixed64Type:
				value, hasValue, isInt = u, true, true
			case num == 4 && typ == protowire.BytesType:
				spanID = v
			case num == 5 && typ == protowire.BytesType:
				traceID = v
			default:
				return false
			}
			return true
		}) {
			return b, false
		}
		w.exemplars = attrs
		b = jsontext.AppendUnixNano(append(jsontext.Sep(b), `{"timestamp":`...), ts)
		switch {
		case !hasValue:
			b = append(b, `,"value":null`...)
		case isInt:
			b = jsontext.AppendInt(append(b, `,"value":`...), int64(value))
		default:
			b = jsontext.AppendFloat(append(b, `,"value":`...), math.Float64frombits(value))
		}
		b = otlpconv.AppendID(append(b, `,"trace_id":`...), traceID)
		b = otlpconv.AppendID(append(b, `,"span_id":`...), spanID)
		var ok bool
		if b, ok = otlpconv.AppendWireAttributes(append(b, `,"filtered_attributes":`...), attrs); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}
