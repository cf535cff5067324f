package promwrite

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/prometheus/prometheus/prompb"
	"google.golang.org/protobuf/encoding/protowire"
)

// wireCorpus is remote write 1.0 requests of every shape the wire reader meets: plain
// series, series with exemplars and histograms (handed to prompb), metadata,
// StaleNaN, empty and unsorted labels, and invalid ones.
func wireCorpus(t testing.TB) [][]byte {
	name := func(v string) prompb.Label { return prompb.Label{Name: "__name__", Value: v} }
	stale := math.Float64frombits(0x7ff0000000000002)
	reqs := []*prompb.WriteRequest{
		{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{name("m")}, Samples: []prompb.Sample{{Value: 1, Timestamp: 1}}}}},
		{Timeseries: []prompb.TimeSeries{
			{Labels: []prompb.Label{{Name: "job", Value: "a"}, name("up"), {Name: "gone", Value: ""}},
				Samples: []prompb.Sample{{Value: stale, Timestamp: -5}, {Value: math.Inf(-1), Timestamp: math.MaxInt64}, {Value: 0}}},
			{Labels: []prompb.Label{name("h"), {Name: "le", Value: "+Inf"}},
				Histograms: []prompb.Histogram{{Count: &prompb.Histogram_CountInt{CountInt: 4}, PositiveSpans: []prompb.BucketSpan{{Offset: 0, Length: 3}},
					PositiveDeltas: []int64{1, 2, -2}, Timestamp: 5}},
				Exemplars: []prompb.Exemplar{{Labels: []prompb.Label{{Name: "trace_id", Value: "abc"}}, Value: 2, Timestamp: 5}},
				Samples:   []prompb.Sample{{Value: 3, Timestamp: 5}}},
			{Labels: []prompb.Label{name("only_labels")}},
			{Labels: []prompb.Label{name("m"), {Name: "ünï", Value: "ç\x00"}}, Samples: []prompb.Sample{{Value: -0.0, Timestamp: 7}}},
		}, Metadata: []prompb.MetricMetadata{{Type: prompb.MetricMetadata_COUNTER, MetricFamilyName: "up", Help: "h", Unit: "s"},
			{Type: prompb.MetricMetadata_HISTOGRAM, MetricFamilyName: "h"}}},
		{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{{Name: "a", Value: "b"}}, Samples: []prompb.Sample{{Value: 1, Timestamp: 1}}}}},
		{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{name("m"), {Name: "a", Value: "1"}, {Name: "a", Value: "2"}}, Samples: []prompb.Sample{{Value: 1}}}}},
		{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{name("m"), {Name: "", Value: "1"}}, Samples: []prompb.Sample{{Value: 1}}}}},
		{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{name("m"), {Name: "x", Value: "\xff"}}, Samples: []prompb.Sample{{Value: 1}}}}},
		{},
	}
	var out [][]byte
	for _, r := range reqs {
		raw, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, raw)
	}
	// Wire forms prompb reads but never writes: fields repeated (the last counts),
	// fields out of order, unknown fields, a non-minimal varint.
	label := func(n, v string) []byte {
		b := protowire.AppendTag(nil, 1, protowire.BytesType)
		b = protowire.AppendString(b, n)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		return protowire.AppendString(b, v)
	}
	sample := func(v float64, ts int64) []byte {
		b := protowire.AppendTag(nil, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(ts))
		b = protowire.AppendTag(b, 1, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v))
	}
	series := func(fields ...[]byte) []byte {
		var b []byte
		for i := 0; i < len(fields); i += 2 {
			b = protowire.AppendTag(b, protowire.Number(fields[i][0]), protowire.BytesType)
			b = protowire.AppendBytes(b, fields[i+1])
		}
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), b)
	}
	one, two := []byte{1}, []byte{2}
	out = append(out,
		series(two, sample(1, 2), one, label("__name__", "z"), two, sample(3, 4), one, label("b", "c")),
		series(one, label("__name__", "n"), one, append(label("a", "x"), label("b", "y")...), two, sample(1, 1)),
		series(one, label("__name__", "u"), two, append(sample(1, 1), protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 1)...)),
		series(one, label("__name__", "u"), two, []byte{0x10, 0x81, 0x80, 0x80, 0x00}),
		append(series(one, label("__name__", "v"), two, sample(1, 1)), protowire.AppendVarint(protowire.AppendTag(nil, 5, protowire.VarintType), 1)...),
	)
	return out
}

// TestWireV1MatchesUpstream: the wire reader stores what prompb's unmarshaler stores,
// and answers the same errors, and does read plain series itself.
func TestWireV1MatchesUpstream(t *testing.T) {
	for i, plain := range wireCorpus(t) {
		compareWire(t, plain)
		if (i < 2 || i == 7 || i == 8) && !newEncoder().v1Wire(plain) {
			t.Errorf("request %d: the wire reader handed a plain request to prompb", i)
		}
	}
	var r prompb.WriteRequest
	for s := range 50 {
		r.Timeseries = append(r.Timeseries, prompb.TimeSeries{Labels: []prompb.Label{{Name: "__name__", Value: "x"}, {Name: "s", Value: string(rune('a' + s))}},
			Samples: []prompb.Sample{{Value: float64(s), Timestamp: int64(s)}}})
	}
	raw, _ := r.Marshal()
	if !newEncoder().v1Wire(raw) {
		t.Error("the wire reader handed a plain request to prompb")
	}
	compareWire(t, raw)
}

func compareWire(t *testing.T, plain []byte) {
	t.Helper()
	want, wantErr := decodePlain(V1, plain, false)
	got, gotErr := decodePlain(V1, plain, true)
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		t.Fatalf("%x: error %v, upstream %v", plain, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	if !reflect.DeepEqual(normal(got), normal(want)) {
		t.Fatalf("%x:\n got %+v\nwant %+v", plain, got, want)
	}
}

// normal drops capacities, which differ and do not matter.
func normal(b *Batch) Batch {
	n := *b
	n.Sections = nil
	for _, s := range b.Sections {
		s.Data = bytes.Clone(s.Data)
		n.Sections = append(n.Sections, s)
	}
	return n
}

// FuzzWireV1: on any body, the wire reader stores what prompb's unmarshaler stores and
// answers the same error.
func FuzzWireV1(f *testing.F) {
	for _, plain := range wireCorpus(f) {
		f.Add(plain)
	}
	f.Fuzz(func(t *testing.T, plain []byte) {
		compareWire(t, plain)
	})
}
