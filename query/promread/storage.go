package promread

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"

	"github.com/svc-data/svc/query/promstore"
	"github.com/svc-data/svc/query/sqlquote"
)

// A Sample is one float sample (H nil) or native histogram of a series.
type Sample struct {
	T int64
	F float64
	H *histogram.FloatHistogram
}

// SeriesSamples are samples of one series.
type SeriesSamples struct {
	Labels  labels.Labels
	Samples []Sample
}

// A Loader stores series in the promstore tables. The conformance tests load through it:
// SQLLoader inserts directly; the remote-write path is another Loader.
type Loader interface {
	Load(ctx context.Context, batch []SeriesSamples) error
}

// Execer runs a statement without a result.
type Execer interface {
	Exec(ctx context.Context, sql string) error
}

// SQLLoader inserts series straight into the promstore tables of Database (which must
// exist), each value's bits kept, for tests and benchmarks: float samples with their
// metric's promstore.MetricHash, as the consumer writes them, unless WithoutMetricHash.
type SQLLoader struct {
	Engine   Execer
	Database string
	// WithoutMetricHash inserts float samples without metric_hash, as an SQL insert that
	// omits it does (the column's default, 0), and as a data table made before the
	// column takes them.
	WithoutMetricHash bool
}

// loadChunk bounds the text of one INSERT statement's rows, well under the engine's
// max_query_size (256 KiB).
const loadChunk = 96 << 10

// chunk is the rows of one INSERT statement being built.
type chunk struct {
	rows []string
	n    int // bytes of rows
}

func (c *chunk) add(r string) { c.rows = append(c.rows, r); c.n += len(r) + 1 }
func (c *chunk) full() bool   { return c.n >= loadChunk }

// Load implements Loader.
func (l SQLLoader) Load(ctx context.Context, batch []SeriesSamples) error {
	var tags, data, hists chunk
	flush := func(tbl string, c *chunk, cols, sel string) error {
		if len(c.rows) == 0 {
			return nil
		}
		sql := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM (SELECT arrayJoin([%s]) AS c)", table(l.Database, tbl), cols, sel, strings.Join(c.rows, ","))
		c.rows, c.n = c.rows[:0], 0
		if err := l.Engine.Exec(ctx, sql); err != nil {
			return fmt.Errorf("load into %s: %w", tbl, err)
		}
		return nil
	}
	dataCols, dataSel := "id, timestamp, value", "toUUID(c.1), fromUnixTimestamp64Milli(toInt64(c.2), 'UTC'), reinterpretAsFloat64(toUInt64(c.3))"
	if !l.WithoutMetricHash {
		dataCols, dataSel = dataCols+", "+promstore.MetricHashColumn, dataSel+", toUInt64(c.4)"
	}
	const (
		histCols = "id, timestamp, counter_reset_hint, schema, zero_threshold, zero_count, count, sum, positive_spans, positive_buckets, negative_spans, negative_buckets, custom_values"
		histSel  = "toUUID(c.1), fromUnixTimestamp64Milli(toInt64(c.2), 'UTC'), c.3, c.4, reinterpretAsFloat64(toUInt64(c.5)), c.6, c.7, reinterpretAsFloat64(toUInt64(c.8)), " +
			"CAST(c.9, 'Array(Tuple(offset Int32, length UInt32))'), CAST(c.10, 'Array(Float64)'), CAST(c.11, 'Array(Tuple(offset Int32, length UInt32))'), CAST(c.12, 'Array(Float64)'), CAST(c.13, 'Array(Float64)')"
		tagCols = "id, metric_name, tags, min_time, max_time"
		tagSel  = "toUUID(c.1), c.2, CAST(c.3, 'Map(LowCardinality(String), String)'), fromUnixTimestamp64Milli(toInt64(c.4), 'UTC'), fromUnixTimestamp64Milli(toInt64(c.5), 'UTC')"
	)
	for _, s := range batch {
		if len(s.Samples) == 0 {
			continue
		}
		id := SeriesID(s.Labels)
		q := sqlquote.String(id.String())
		hash := ""
		if !l.WithoutMetricHash {
			hash = fmt.Sprintf(",%d", promstore.MetricHash([]byte(s.Labels.Get(promstore.MetricNameLabel))))
		}
		mint, maxt := int64(math.MaxInt64), int64(math.MinInt64)
		for _, smp := range s.Samples {
			mint, maxt = min(mint, smp.T), max(maxt, smp.T)
			if smp.H == nil {
				data.add(fmt.Sprintf("(%s,%d,%d%s)", q, smp.T, math.Float64bits(smp.F), hash))
			} else {
				h := smp.H
				hists.add(fmt.Sprintf("(%s,%d,%d,%d,%d,%s,%s,%d,%s,%s,%s,%s,%s)", q, smp.T, uint8(h.CounterResetHint), h.Schema,
					math.Float64bits(h.ZeroThreshold), floatSQL(h.ZeroCount), floatSQL(h.Count), math.Float64bits(h.Sum),
					spansSQL(h.PositiveSpans), floatListSQL(h.PositiveBuckets), spansSQL(h.NegativeSpans), floatListSQL(h.NegativeBuckets), floatListSQL(h.CustomValues)))
			}
			if data.full() {
				if err := flush(promstore.DataTable, &data, dataCols, dataSel); err != nil {
					return err
				}
			}
			if hists.full() {
				if err := flush(promstore.HistogramsTable, &hists, histCols, histSel); err != nil {
					return err
				}
			}
		}
		var pairs []string
		name := ""
		s.Labels.Range(func(lb labels.Label) {
			if lb.Name == promstore.MetricNameLabel {
				name = lb.Value
				return
			}
			pairs = append(pairs, sqlquote.String(lb.Name), sqlquote.String(lb.Value))
		})
		tags.add(fmt.Sprintf("(%s,%s,map(%s),%d,%d)", q, sqlquote.String(name), strings.Join(pairs, ","), mint, maxt))
		if tags.full() {
			if err := flush(promstore.TagsTable, &tags, tagCols, tagSel); err != nil {
				return err
			}
		}
	}
	return errors.Join(flush(promstore.DataTable, &data, dataCols, dataSel),
		flush(promstore.HistogramsTable, &hists, histCols, histSel),
		flush(promstore.TagsTable, &tags, tagCols, tagSel))
}

// SeriesID is promstore.SeriesID of Prometheus labels.
func SeriesID(ls labels.Labels) uuid.UUID {
	var l []promstore.Label
	ls.Range(func(lb labels.Label) { l = append(l, promstore.Label{Name: lb.Name, Value: lb.Value}) })
	return promstore.SeriesID(l)
}

// floatSQL is a float literal the engine reads back exactly (bucket counts are never NaN).
func floatSQL(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return "toFloat64(" + strconv.FormatFloat(f, 'g', -1, 64) + ")"
}

func floatListSQL(fs []float64) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = floatSQL(f)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func spansSQL(ss []histogram.Span) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = fmt.Sprintf("(toInt32(%d),toUInt32(%d))", s.Offset, s.Length)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// Storage is a storage.Storage whose appends go through a Loader and whose queries are a
// Queryable: the promqltest suite runs the upstream engine on it. Appended samples are
// loaded at Commit. Selections are memoized until the next Commit: the suite evaluates
// each expression several times (instant, range, shifted by @), and an identical
// selection of unchanged data reads the same rows, so each distinct one reaches the
// engine once.
type Storage struct {
	*Queryable
	Loader Loader
	// OnClose runs at Close (dropping the test database, say).
	OnClose func() error

	mu   sync.Mutex
	memo map[string][]*series
}

// Querier implements storage.Queryable, memoizing selections.
func (s *Storage) Querier(mint, maxt int64) (storage.Querier, error) {
	q, err := s.Queryable.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	return &memoQuerier{querier: q.(*querier), s: s}, nil
}

type memoQuerier struct {
	*querier
	s *Storage
}

func (m *memoQuerier) Select(ctx context.Context, sortSeries bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	key := fmt.Sprintf("%d %d %v", m.mint, m.maxt, ms)
	if hints != nil {
		key += fmt.Sprintf(" %d %d %s %d", hints.Start, hints.End, hints.Func, hints.Limit)
	}
	m.s.mu.Lock()
	ss, ok := m.s.memo[key]
	m.s.mu.Unlock()
	if ok {
		return &seriesSet{series: ss}
	}
	set := m.querier.Select(ctx, sortSeries, hints, ms...)
	if r, ok := set.(*seriesSet); ok {
		m.s.mu.Lock()
		if m.s.memo == nil {
			m.s.memo = map[string][]*series{}
		}
		m.s.memo[key] = r.series
		m.s.mu.Unlock()
	}
	return set
}

var _ storage.Storage = (*Storage)(nil)

// AppenderV2 implements storage.AppendableV2.
func (s *Storage) AppenderV2(ctx context.Context) storage.AppenderV2 {
	return &appender{s: s, ctx: ctx, series: map[uint64]*SeriesSamples{}}
}

// Appender implements storage.Appendable; only AppenderV2 is supported (its methods
// panic on the nil interface).
func (*Storage) Appender(context.Context) storage.Appender { return v1Appender{} }

type v1Appender struct{ storage.Appender }

// ChunkQuerier implements storage.ChunkQueryable: not supported.
func (*Storage) ChunkQuerier(int64, int64) (storage.ChunkQuerier, error) {
	return nil, errors.New("promread: chunk queries are not supported")
}

// StartTime implements storage.Storage.
func (*Storage) StartTime() (int64, error) { return math.MinInt64, nil }

// Close implements storage.Storage.
func (s *Storage) Close() error {
	if s.OnClose != nil {
		f := s.OnClose
		s.OnClose = nil
		return f()
	}
	return nil
}

type appender struct {
	s      *Storage
	ctx    context.Context
	series map[uint64]*SeriesSamples
	order  []uint64
}

func (a *appender) Append(_ storage.SeriesRef, ls labels.Labels, _, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, _ storage.AppendV2Options) (storage.SeriesRef, error) {
	key := ls.Hash()
	ss := a.series[key]
	if ss == nil {
		ss = &SeriesSamples{Labels: ls.Copy()}
		a.series[key] = ss
		a.order = append(a.order, key)
	}
	smp := Sample{T: t, F: v}
	switch {
	case fh != nil:
		smp.H = fh.Copy()
	case h != nil:
		smp.H = h.ToFloat(nil)
	}
	ss.Samples = append(ss.Samples, smp)
	return storage.SeriesRef(key), nil
}

func (a *appender) Commit() error {
	batch := make([]SeriesSamples, 0, len(a.order))
	for _, k := range a.order {
		ss := a.series[k]
		sort.SliceStable(ss.Samples, func(i, j int) bool { return ss.Samples[i].T < ss.Samples[j].T })
		setCounterResetHints(ss.Samples)
		batch = append(batch, *ss)
	}
	a.series, a.order = map[uint64]*SeriesSamples{}, nil
	a.s.mu.Lock()
	a.s.memo = nil
	a.s.mu.Unlock()
	return a.s.Loader.Load(a.ctx, batch)
}

// setCounterResetHints gives histograms of unknown counter-reset state the hint
// Prometheus's TSDB reads back for them, which a Prometheus remote-write sender then
// transmits: NotCounterReset after a counter histogram whose counts did not go down;
// unknown after a reset or a gauge histogram (the TSDB starts a new chunk there, whose
// first histogram reads back unknown: prometheus/prometheus#15346).
func setCounterResetHints(ss []Sample) {
	for i := 1; i < len(ss); i++ {
		h, prev := ss[i].H, ss[i-1].H
		if h == nil || prev == nil || h.CounterResetHint != histogram.UnknownCounterReset || prev.CounterResetHint == histogram.GaugeType {
			continue
		}
		if !h.DetectReset(prev) {
			h.CounterResetHint = histogram.NotCounterReset
		}
	}
}

func (a *appender) Rollback() error {
	a.series, a.order = map[uint64]*SeriesSamples{}, nil
	return nil
}
