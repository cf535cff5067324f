package promwrite

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/google/uuid"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"

	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/query/promstore"
)

// The columns each table's rows are written in (query/promstore's DDL).
const (
	DataColumns       = "id, timestamp, value"
	TagsColumns       = "id, metric_name, tags, min_time, max_time"
	MetricsColumns    = "metric_family_name, type, unit, help"
	HistogramsColumns = "id, timestamp, counter_reset_hint, schema, zero_threshold, zero_count, count, sum, " +
		"positive_spans, positive_buckets, negative_spans, negative_buckets, custom_values"
	ExemplarsColumns = "id, timestamp, value, labels"
)

// rowBinary appends values in ClickHouse's RowBinary encoding.
type rowBinary struct {
	b    []byte
	rows int
}

func (w *rowBinary) u8(v uint8)    { w.b = append(w.b, v) }
func (w *rowBinary) i32(v int32)   { w.b = binary.LittleEndian.AppendUint32(w.b, uint32(v)) }
func (w *rowBinary) u32(v uint32)  { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *rowBinary) i64(v int64)   { w.b = binary.LittleEndian.AppendUint64(w.b, uint64(v)) }
func (w *rowBinary) f64(v float64) { w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v)) }
func (w *rowBinary) n(v int)       { w.b = binary.AppendUvarint(w.b, uint64(v)) }
func (w *rowBinary) str(s string) {
	w.n(len(s))
	w.b = append(w.b, s...)
}

// id writes a UUID as the engine stores it: two little-endian 64-bit halves, so that
// the engine reads the id's bytes in order (promstore.SeriesID's convention).
func (w *rowBinary) id(id uuid.UUID) {
	w.b = binary.LittleEndian.AppendUint64(w.b, binary.BigEndian.Uint64(id[:8]))
	w.b = binary.LittleEndian.AppendUint64(w.b, binary.BigEndian.Uint64(id[8:]))
}

func (w *rowBinary) floats(fs []float64) {
	w.n(len(fs))
	for _, f := range fs {
		w.f64(f)
	}
}

func (w *rowBinary) spans(ss []span) {
	w.n(len(ss))
	for _, s := range ss {
		w.i32(s.offset)
		w.u32(s.length)
	}
}

// labelMap writes labels as a Map(String, String), without the metric name.
func (w *rowBinary) labelMap(ls []promstore.Label) {
	n := 0
	for _, l := range ls {
		if l.Name != promstore.MetricNameLabel {
			n++
		}
	}
	w.n(n)
	for _, l := range ls {
		if l.Name != promstore.MetricNameLabel {
			w.str(l.Name)
			w.str(l.Value)
		}
	}
}

type span struct {
	offset int32
	length uint32
}

// hist is a native histogram sample of either message type, buckets absolute.
type hist struct {
	ts                 int64
	hint               uint8
	schema             int32
	zt, zc, count, sum float64
	pSpans, nSpans     []span
	pBuckets, nBuckets []float64
	custom             []float64
}

type exemplar struct {
	ls    []promstore.Label
	value float64
	ts    int64
}

type encoder struct {
	data, tags, metrics, hists, exemplars rowBinary
	series                                int
	meta                                  map[string]bool
}

func newEncoder() *encoder { return &encoder{meta: map[string]bool{}} }

func (e *encoder) batch() *Batch {
	b := &Batch{Samples: e.data.rows, Histograms: e.hists.rows, Exemplars: e.exemplars.rows, Series: e.series}
	for _, s := range []struct {
		table, columns string
		w              *rowBinary
	}{
		{promstore.DataTable, DataColumns, &e.data},
		{promstore.HistogramsTable, HistogramsColumns, &e.hists},
		{promstore.ExemplarsTable, ExemplarsColumns, &e.exemplars},
		{promstore.TagsTable, TagsColumns, &e.tags},
		{promstore.MetricsTable, MetricsColumns, &e.metrics},
	} {
		if s.w.rows > 0 {
			sec := pipeline.Section{Table: s.table, Columns: s.columns, Rows: s.w.rows, Data: s.w.b}
			if s.w == &e.data {
				sec.Format = pipeline.SectionPackedSamples
			}
			b.Sections = append(b.Sections, sec)
		}
	}
	return b
}

// add writes one series' rows; ls must have been checked.
func (e *encoder) add(ls []promstore.Label, samples []prompb.Sample, samples2 []writev2.Sample, hists []hist, exs []exemplar) {
	if len(samples)+len(samples2)+len(hists)+len(exs) == 0 {
		return
	}
	id := promstore.SeriesID(ls)
	minT, maxT := int64(math.MaxInt64), int64(math.MinInt64)
	at := func(t int64) {
		minT, maxT = min(minT, t), max(maxT, t)
	}
	if n := len(samples) + len(samples2); n > 0 {
		// One of the two is empty.
		sample := func(i int) (int64, float64) {
			if samples != nil {
				return samples[i].Timestamp, samples[i].Value
			}
			return samples2[i].Timestamp, samples2[i].Value
		}
		var rid [16]byte // the id as RowBinary writes a UUID
		binary.LittleEndian.PutUint64(rid[:8], binary.BigEndian.Uint64(id[:8]))
		binary.LittleEndian.PutUint64(rid[8:], binary.BigEndian.Uint64(id[8:]))
		e.data.b = pipeline.AppendPackedSeries(e.data.b, &rid, n, sample)
		e.data.rows += n
		for i := range n {
			t, _ := sample(i)
			at(t)
		}
	}
	for _, h := range hists {
		w := &e.hists
		w.id(id)
		w.i64(h.ts)
		w.u8(h.hint)
		w.i32(h.schema)
		w.f64(h.zt)
		w.f64(h.zc)
		w.f64(h.count)
		w.f64(h.sum)
		w.spans(h.pSpans)
		w.floats(h.pBuckets)
		w.spans(h.nSpans)
		w.floats(h.nBuckets)
		w.floats(h.custom)
		w.rows++
		at(h.ts)
	}
	for _, x := range exs {
		w := &e.exemplars
		w.id(id)
		w.i64(x.ts)
		w.f64(x.value)
		w.n(len(x.ls))
		for _, l := range x.ls {
			w.str(l.Name)
			w.str(l.Value)
		}
		w.rows++
		if len(samples)+len(samples2)+len(hists) == 0 {
			at(x.ts)
		}
	}
	name := ""
	for _, l := range ls {
		if l.Name == promstore.MetricNameLabel {
			name = l.Value
		}
	}
	w := &e.tags
	w.id(id)
	w.str(name)
	w.labelMap(ls)
	w.i64(minT)
	w.i64(maxT)
	w.rows++
	e.series++
}

// metadata writes a metric family's metadata once per request.
func (e *encoder) metadata(family, typ, unit, help string) {
	if family == "" || e.meta[family] {
		return
	}
	e.meta[family] = true
	e.metrics.str(family)
	e.metrics.str(typ)
	e.metrics.str(unit)
	e.metrics.str(help)
	e.metrics.rows++
}

// grow sizes the data table's rows for n float samples and the series rows for m
// series of about labelBytes each, so that encoding does not keep copying them.
func (e *encoder) grow(n, m, labelBytes int) {
	e.data.b = make([]byte, 0, 10*n+20*m)
	e.tags.b = make([]byte, 0, m*(48+labelBytes))
}

func (e *encoder) v1(req *prompb.WriteRequest) error {
	n, lb := 0, 0
	for i := range req.Timeseries {
		n += len(req.Timeseries[i].Samples)
		for _, l := range req.Timeseries[i].Labels {
			lb += len(l.Name) + len(l.Value) + 2
		}
	}
	e.grow(n, len(req.Timeseries), lb/max(1, len(req.Timeseries)))
	for i := range req.Timeseries {
		if err := e.seriesV1(&req.Timeseries[i]); err != nil {
			return err
		}
	}
	for i := range req.Metadata {
		e.metadataV1(&req.Metadata[i])
	}
	return nil
}

// seriesV1 writes the rows of one remote write 1.0 series.
func (e *encoder) seriesV1(ts *prompb.TimeSeries) error {
	ls := make([]promstore.Label, len(ts.Labels))
	for j, l := range ts.Labels {
		ls[j] = promstore.Label{Name: l.Name, Value: l.Value}
	}
	ls, err := checkLabels(ls, "series")
	if err != nil {
		return err
	}
	hists := make([]hist, 0, len(ts.Histograms))
	for _, h := range ts.Histograms {
		x, err := histV1(&h)
		if err != nil {
			return err
		}
		hists = append(hists, x)
	}
	exs, err := exemplarsV1(ts.Exemplars)
	if err != nil {
		return err
	}
	e.add(ls, ts.Samples, nil, hists, exs)
	return nil
}

func (e *encoder) metadataV1(m *prompb.MetricMetadata) {
	typ := strings.ToLower(m.Type.String())
	e.metadata(m.MetricFamilyName, typ, m.Unit, m.Help)
}

func exemplarsV1(in []prompb.Exemplar) ([]exemplar, error) {
	out := make([]exemplar, 0, len(in))
	for _, x := range in {
		ls := make([]promstore.Label, len(x.Labels))
		for j, l := range x.Labels {
			ls[j] = promstore.Label{Name: l.Name, Value: l.Value}
		}
		ls, err := checkLabels(ls, "exemplar")
		if err != nil {
			return nil, err
		}
		out = append(out, exemplar{ls: ls, value: x.Value, ts: x.Timestamp})
	}
	return out, nil
}

// histogramFields is what both message types' histograms have.
type histogramFields interface {
	IsFloatHistogram() bool
	GetCountInt() uint64
	GetCountFloat() float64
	GetZeroCountInt() uint64
	GetZeroCountFloat() float64
	GetSum() float64
	GetSchema() int32
	GetZeroThreshold() float64
	GetNegativeDeltas() []int64
	GetNegativeCounts() []float64
	GetPositiveDeltas() []int64
	GetPositiveCounts() []float64
	GetTimestamp() int64
	GetCustomValues() []float64
}

func histogram(h histogramFields, hint int32, pos, neg []span) (hist, error) {
	x := hist{ts: h.GetTimestamp(), hint: uint8(hint), schema: h.GetSchema(), zt: h.GetZeroThreshold(), sum: h.GetSum(),
		pSpans: pos, nSpans: neg, custom: h.GetCustomValues()}
	if x.custom == nil {
		x.custom = []float64{}
	}
	if h.IsFloatHistogram() {
		x.count, x.zc = h.GetCountFloat(), h.GetZeroCountFloat()
		x.pBuckets, x.nBuckets = h.GetPositiveCounts(), h.GetNegativeCounts()
		if len(h.GetPositiveDeltas())+len(h.GetNegativeDeltas()) > 0 {
			return x, invalid("a float histogram has integer bucket deltas")
		}
	} else {
		x.count, x.zc = float64(h.GetCountInt()), float64(h.GetZeroCountInt())
		x.pBuckets, x.nBuckets = absolute(h.GetPositiveDeltas()), absolute(h.GetNegativeDeltas())
		if len(h.GetPositiveCounts())+len(h.GetNegativeCounts()) > 0 {
			return x, invalid("an integer histogram has float bucket counts")
		}
	}
	if err := checkSpans(pos, len(x.pBuckets), "positive"); err != nil {
		return x, err
	}
	if err := checkSpans(neg, len(x.nBuckets), "negative"); err != nil {
		return x, err
	}
	return x, nil
}

func checkSpans(ss []span, n int, what string) error {
	total := 0
	for _, s := range ss {
		total += int(s.length)
	}
	if total != n {
		return invalid("histogram: %s spans cover %d buckets but %d are given", what, total, n)
	}
	return nil
}

func spansV1(in []prompb.BucketSpan) []span {
	out := make([]span, len(in))
	for i, s := range in {
		out[i] = span{s.Offset, s.Length}
	}
	return out
}

func histV1(h *prompb.Histogram) (hist, error) {
	return histogram(h, int32(h.ResetHint), spansV1(h.PositiveSpans), spansV1(h.NegativeSpans))
}

func spansV2(in []writev2.BucketSpan) []span {
	out := make([]span, len(in))
	for i, s := range in {
		out[i] = span{s.Offset, s.Length}
	}
	return out
}

// labelsV2 resolves label references into the symbols table.
func labelsV2(refs []uint32, symbols []string, what string) ([]promstore.Label, error) {
	if len(refs)%2 != 0 {
		return nil, invalid("%s has an odd number of label references", what)
	}
	ls := make([]promstore.Label, len(refs)/2)
	for i := range ls {
		n, v := refs[2*i], refs[2*i+1]
		if int(n) >= len(symbols) || int(v) >= len(symbols) {
			return nil, invalid("%s refers to symbol %d of %d", what, max(n, v), len(symbols))
		}
		ls[i] = promstore.Label{Name: symbols[n], Value: symbols[v]}
	}
	return ls, nil
}

func (e *encoder) v2(req *writev2.Request) error {
	sym := req.Symbols
	if len(sym) > 0 && sym[0] != "" {
		return invalid("the symbols table must start with the empty string")
	}
	symbol := func(ref uint32) (string, error) {
		if int(ref) >= len(sym) {
			return "", invalid("metadata refers to symbol %d of %d", ref, len(sym))
		}
		return sym[ref], nil
	}
	n := 0
	for i := range req.Timeseries {
		n += len(req.Timeseries[i].Samples)
	}
	e.grow(n, len(req.Timeseries), 64)
	for i := range req.Timeseries {
		ts := &req.Timeseries[i]
		ls, err := labelsV2(ts.LabelsRefs, sym, "series")
		if err != nil {
			return err
		}
		if ls, err = checkLabels(ls, "series"); err != nil {
			return err
		}
		hists := make([]hist, 0, len(ts.Histograms))
		for _, h := range ts.Histograms {
			x, err := histogram(&h, int32(h.ResetHint), spansV2(h.PositiveSpans), spansV2(h.NegativeSpans))
			if err != nil {
				return err
			}
			hists = append(hists, x)
		}
		exs := make([]exemplar, 0, len(ts.Exemplars))
		for _, x := range ts.Exemplars {
			els, err := labelsV2(x.LabelsRefs, sym, "exemplar")
			if err != nil {
				return err
			}
			if els, err = checkLabels(els, "exemplar"); err != nil {
				return err
			}
			exs = append(exs, exemplar{ls: els, value: x.Value, ts: x.Timestamp})
		}
		m := ts.Metadata
		if m.Type != writev2.Metadata_METRIC_TYPE_UNSPECIFIED || m.HelpRef != 0 || m.UnitRef != 0 {
			help, err := symbol(m.HelpRef)
			if err != nil {
				return err
			}
			unit, err := symbol(m.UnitRef)
			if err != nil {
				return err
			}
			typ := strings.ToLower(strings.TrimPrefix(m.Type.String(), "METRIC_TYPE_"))
			if m.Type == writev2.Metadata_METRIC_TYPE_UNSPECIFIED {
				typ = "unknown"
			}
			for _, l := range ls {
				if l.Name == promstore.MetricNameLabel {
					e.metadata(familyName(l.Value, typ), typ, unit, help)
				}
			}
		}
		e.add(ls, nil, ts.Samples, hists, exs)
	}
	return nil
}
