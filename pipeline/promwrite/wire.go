package promwrite

import (
	"math"
	"unsafe"

	"github.com/prometheus/prometheus/prompb"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-data/svc/query/promstore"
)

// Remote write 1.0 without the generated unmarshaler. Prometheus's requests are
// series of labels and float samples; v1Wire reads those straight off the wire
// (google.golang.org/protobuf/encoding/protowire) into the encoder, with labels
// pointing into the request instead of copied, and no per-series or per-sample
// allocation. A series that carries anything else (exemplars, histograms, a field
// it does not know) is handed to prompb's own TimeSeries.Unmarshal, which is what
// WriteRequest.Unmarshal does with it; metadata likewise. Whenever the request
// holds something v1Wire is not sure to read as prompb does (an unknown field, an
// unexpected wire type, a varint prompb would read differently) or any invalid
// series, it reports false and DecodePlain decodes the request the upstream way,
// so that what is stored, and every error, stays that path's (FuzzWireV1 compares
// the two).

// v1Wire encodes a remote write 1.0 request; false: decode it with prompb instead
// (e is then left in an unspecified state).
func (e *encoder) v1Wire(plain []byte) bool {
	// About 18 wire bytes per sample become a 32-byte row; labels are repeated
	// per series as they are on the wire.
	e.data.b = make([]byte, 0, 2*len(plain))
	e.tags.b = make([]byte, 0, len(plain)/2)
	var (
		meta    [][]byte
		ls      []promstore.Label
		samples []prompb.Sample
	)
	for b := plain; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType || (num != 1 && num != 3) {
			return false
		}
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		if num == 3 {
			meta = append(meta, v)
			continue
		}
		var ok bool
		if ls, samples, ok = readSeries(v, ls[:0], samples[:0]); !ok {
			// Not only labels and samples: prompb reads this series.
			var ts prompb.TimeSeries
			if ts.Unmarshal(v) != nil || e.seriesV1(&ts) != nil {
				return false
			}
			continue
		}
		checked, err := checkLabels(ls, "series")
		if err != nil {
			return false
		}
		e.add(checked, samples, nil, nil, nil)
	}
	for _, v := range meta {
		var m prompb.MetricMetadata
		if m.Unmarshal(v) != nil {
			return false
		}
		e.metadataV1(&m)
	}
	return true
}

// readSeries appends a series' labels and samples to ls and samples; false when the
// series holds anything else or is not read exactly as prompb reads it.
func readSeries(b []byte, ls []promstore.Label, samples []prompb.Sample) ([]promstore.Label, []prompb.Sample, bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType || (num != 1 && num != 2) {
			return ls, samples, false
		}
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return ls, samples, false
		}
		b = b[n:]
		if num == 1 {
			l, ok := readLabel(v)
			if !ok {
				return ls, samples, false
			}
			ls = append(ls, l)
			continue
		}
		s, ok := readSample(v)
		if !ok {
			return ls, samples, false
		}
		samples = append(samples, s)
	}
	return ls, samples, true
}

// readLabel reads a Label; its strings point into b.
func readLabel(b []byte) (promstore.Label, bool) {
	var l promstore.Label
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType || (num != 1 && num != 2) {
			return l, false
		}
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return l, false
		}
		b = b[n:]
		// A repeated field: the last one counts, as in prompb.
		if num == 1 {
			l.Name = wireString(v)
		} else {
			l.Value = wireString(v)
		}
	}
	return l, true
}

// readSample reads a Sample.
func readSample(b []byte) (prompb.Sample, bool) {
	var s prompb.Sample
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return s, false
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.Fixed64Type:
			v, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return s, false
			}
			s.Value, b = math.Float64frombits(v), b[n:]
		case num == 2 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return s, false
			}
			s.Timestamp, b = int64(v), b[n:]
		default:
			return s, false
		}
	}
	return s, true
}

// wireString is b as a string without a copy: the request's plain bytes are not
// changed while it is encoded, and the encoder keeps no string past the request.
func wireString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
