package promwrite

import (
	"errors"
	"math"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"

	"github.com/svc-data/svc/pipeline"
)

func TestNegotiate(t *testing.T) {
	f := func(contentType, encoding, want string, wantErr error) {
		t.Helper()
		got, err := Negotiate(contentType, encoding)
		if got != want || !errors.Is(err, wantErr) {
			t.Errorf("Negotiate(%q, %q) = %q, %v; want %q, %v", contentType, encoding, got, err, want, wantErr)
		}
	}
	f("application/x-protobuf", "snappy", V1, nil)
	f("", "", V1, nil)
	f("application/x-protobuf;proto=prometheus.WriteRequest", "snappy", V1, nil)
	f("application/x-protobuf; proto=io.prometheus.write.v2.Request", "SNAPPY", V2, nil)
	f("application/x-protobuf;proto=io.prometheus.write.v3.Request", "snappy", "", ErrUnsupportedMediaType)
	f("application/json", "snappy", "", ErrUnsupportedMediaType)
	f("application/x-protobuf", "gzip", "", ErrUnsupportedMediaType)
	f("application/x-protobuf;;", "snappy", "", ErrUnsupportedMediaType)
}

func encodeV1(t *testing.T, r *prompb.WriteRequest) []byte {
	t.Helper()
	raw, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return snappy.Encode(nil, raw)
}

// TestDecodeRefusesWhatCanNeverBeStored: every refusal is ErrInvalid (400, not retried).
func TestDecodeRefusesWhatCanNeverBeStored(t *testing.T) {
	name := prompb.Label{Name: "__name__", Value: "m"}
	sample := []prompb.Sample{{Value: 1, Timestamp: 1}}
	f := func(what string, msg string, body []byte) {
		t.Helper()
		if _, err := Decode(msg, body, 1<<20); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", what, err)
		}
	}
	f("not snappy", V1, []byte("\xff\xff\xff\xff"))
	f("not protobuf", V1, snappy.Encode(nil, []byte("\xff\xff\xff")))
	f("no metric name", V1, encodeV1(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{{Name: "a", Value: "b"}}, Samples: sample}}}))
	f("label twice", V1, encodeV1(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{name, {Name: "a", Value: "1"}, {Name: "a", Value: "2"}}, Samples: sample}}}))
	f("empty label name", V1, encodeV1(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{name, {Name: "", Value: "1"}}, Samples: sample}}}))
	f("spans and buckets disagree", V1, encodeV1(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{name},
		Histograms: []prompb.Histogram{{Count: &prompb.Histogram_CountInt{CountInt: 1}, PositiveSpans: []prompb.BucketSpan{{Offset: 0, Length: 3}}, PositiveDeltas: []int64{1}}}}}}))
	v2 := func(r *writev2.Request) []byte {
		raw, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return snappy.Encode(nil, raw)
	}
	s2 := []writev2.Sample{{Value: 1, Timestamp: 1}}
	f("symbol out of range", V2, v2(&writev2.Request{Symbols: []string{"", "__name__"}, Timeseries: []writev2.TimeSeries{{LabelsRefs: []uint32{1, 2}, Samples: s2}}}))
	f("odd references", V2, v2(&writev2.Request{Symbols: []string{"", "__name__", "m"}, Timeseries: []writev2.TimeSeries{{LabelsRefs: []uint32{1, 2, 1}, Samples: s2}}}))
	f("symbols not starting empty", V2, v2(&writev2.Request{Symbols: []string{"__name__", "m"}, Timeseries: []writev2.TimeSeries{{LabelsRefs: []uint32{0, 1}, Samples: s2}}}))
	f("help out of range", V2, v2(&writev2.Request{Symbols: []string{"", "__name__", "m"}, Timeseries: []writev2.TimeSeries{{LabelsRefs: []uint32{1, 2}, Samples: s2,
		Metadata: writev2.Metadata{Type: writev2.Metadata_METRIC_TYPE_GAUGE, HelpRef: 9}}}}))
	if _, err := Decode(V1, snappy.Encode(nil, make([]byte, 2<<20)), 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the size limit: %v", err)
	}
}

// TestDecodeRows checks counts, absolute bucket counts and the record round trip.
func TestDecodeRows(t *testing.T) {
	stale := math.Float64frombits(0x7ff0000000000002)
	b, err := Decode(V1, encodeV1(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		{Labels: []prompb.Label{{Name: "__name__", Value: "m"}, {Name: "gone", Value: ""}}, Samples: []prompb.Sample{{Value: stale, Timestamp: 5}},
			Histograms: []prompb.Histogram{{Count: &prompb.Histogram_CountInt{CountInt: 4}, PositiveSpans: []prompb.BucketSpan{{Offset: 0, Length: 3}}, PositiveDeltas: []int64{1, 2, -2}, Timestamp: 5}}},
	}}), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if b.Samples != 1 || b.Histograms != 1 || b.Exemplars != 0 || b.Series != 1 {
		t.Fatalf("counts %+v", b)
	}
	secs, err := pipeline.DecodeSections(pipeline.EncodeSections(b.Sections))
	if err != nil || len(secs) != 3 {
		t.Fatalf("sections %v %v", secs, err)
	}
	data := secs[0].Data // packed: id (16), 1 sample, timestamp 5 (zigzag varint), value (8)
	if secs[0].Format != pipeline.SectionPackedSamples || len(data) != 26 || data[16] != 1 || data[17] != 10 || le64(data[18:]) != 0x7ff0000000000002 {
		t.Fatalf("data row %x", data)
	}
	h := secs[1].Data
	// id 16, ts 8, hint 1, schema 4, zt 8, zc 8, count 8, sum 8, spans 1+8, buckets 1+24.
	off := 16 + 8 + 1 + 4 + 8 + 8 + 8 + 8 + 1 + 8 + 1
	for i, want := range []float64{1, 3, 1} {
		if got := math.Float64frombits(le64(h[off+8*i:])); got != want {
			t.Errorf("bucket %d = %v, want %v", i, got, want)
		}
	}
}

func le64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// FuzzDecode: no body makes the decoder panic, and what it accepts encodes into
// sections that read back.
func FuzzDecode(f *testing.F) {
	r := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{{Name: "__name__", Value: "m"}}, Samples: []prompb.Sample{{Value: 1, Timestamp: 1}}}}}
	raw, _ := r.Marshal()
	f.Add(raw, false)
	f.Add([]byte{0x22, 0, 0x2a, 2, 8, 1}, true)
	f.Fuzz(func(t *testing.T, plain []byte, v2 bool) {
		msg := V1
		if v2 {
			msg = V2
		}
		b, err := DecodePlain(msg, plain)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		if _, err := pipeline.DecodeSections(pipeline.EncodeSections(b.Sections)); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkDecode: one request of 2,000 samples (200 series × 10), as Prometheus sends.
func BenchmarkDecode(b *testing.B) {
	var r prompb.WriteRequest
	for s := range 200 {
		ts := prompb.TimeSeries{Labels: []prompb.Label{{Name: "__name__", Value: "http_requests_total"}, {Name: "instance", Value: "10.0.0.1:9090"},
			{Name: "job", Value: "api"}, {Name: "path", Value: "/v1/items/" + string(rune('a'+s%26))}, {Name: "series", Value: string(rune(s))}}}
		for k := range 10 {
			ts.Samples = append(ts.Samples, prompb.Sample{Value: float64(k), Timestamp: int64(k) * 15000})
		}
		r.Timeseries = append(r.Timeseries, ts)
	}
	raw, _ := r.Marshal()
	body := snappy.Encode(nil, raw)
	// upstream is prompb's generated unmarshaler, wire the protowire reader (Decode's).
	for _, wire := range []bool{false, true} {
		b.Run(map[bool]string{false: "upstream", true: "wire"}[wire], func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				plain, err := snappy.Decode(nil, body)
				if err != nil {
					b.Fatal(err)
				}
				bt, err := decodePlain(V1, plain, wire)
				if err != nil {
					b.Fatal(err)
				}
				pipeline.EncodeSections(bt.Sections)
			}
			b.ReportMetric(float64(2000*b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
