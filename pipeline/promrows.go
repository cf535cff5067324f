package pipeline

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"

	"github.com/svc-data/svc/query/promstore"
)

// The rows of a batch's Prometheus records as the consumer inserts them: float samples
// as the engine's Native columns (whatever their record's layout), series rows folded
// to one per series and batch. Both are functions of the batch's records alone, so a
// replay of a plan inserts the same rows under the same tokens.

var errPacked = errors.New("malformed packed samples")

// AppendPackedSeries appends one series' float samples in the SectionPackedSamples
// layout; id is the series id as RowBinary writes a UUID.
func AppendPackedSeries(b []byte, id *[16]byte, n int, sample func(i int) (int64, float64)) []byte {
	b = append(b, id[:]...)
	b = binary.AppendUvarint(b, uint64(n))
	var prev, delta uint64
	for i := range n {
		t, _ := sample(i)
		d := uint64(t) - prev // wrapping arithmetic, undone exactly by the reader
		b = binary.AppendVarint(b, int64(d-delta))
		prev, delta = uint64(t), d
	}
	for i := range n {
		_, v := sample(i)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// sampleColumns are a batch's float samples, to be inserted as the data table's Native
// columns: each series' samples (a run) point into the record they came in and are
// decoded once, straight into the insert's block (native), in the table's order.
type sampleColumns struct {
	runs []run
	rows int
	// rowBinary says some rows came as RowBinary rows instead, which are not put in order.
	rowBinary bool
	// order, when set (sorted), is the order of runs in the block.
	order []int32
}

// A run is one series' samples in a record: packed (id, times as zigzag varints of
// deltas of deltas, values' bits), or RowBinary rows (rowBinary, 32 bytes each).
type run struct {
	mh        uint64 // promstore.MetricHash of the series' metric name (metricHashes)
	hi, lo    uint64 // the id as the engine compares a UUID: its second half first
	t0        int64  // the first timestamp
	n         int
	id        []byte
	times     []byte
	values    []byte
	rowBinary []byte
}

// addRowBinary adds RowBinary rows of (id UUID, timestamp DateTime64, value Float64).
func (c *sampleColumns) addRowBinary(data []byte) error {
	if len(data)%32 != 0 {
		return errors.New("prometheus_data rows are not 32 bytes each")
	}
	if len(data) == 0 {
		return nil
	}
	c.rowBinary = true
	c.runs = append(c.runs, run{n: len(data) / 32, rowBinary: data})
	c.rows += len(data) / 32
	return nil
}

// addPacked adds a SectionPackedSamples section of rows samples. The section is read
// whole before anything is added: a malformed one adds none.
func (c *sampleColumns) addPacked(data []byte, rows int) error {
	got, first := 0, len(c.runs)
	fail := func() error {
		c.runs = c.runs[:first]
		return errPacked
	}
	for len(data) > 0 {
		if len(data) < 17 {
			return fail()
		}
		id := data[:16]
		n, k := binary.Uvarint(data[16:])
		if k <= 0 || n > uint64(len(data)) {
			return fail()
		}
		data = data[16+k:]
		r := run{n: int(n), id: id, hi: binary.LittleEndian.Uint64(id[8:]), lo: binary.LittleEndian.Uint64(id[:8])}
		times := data
		for i := range n {
			dd, k := binary.Varint(data)
			if k <= 0 {
				return fail()
			}
			if i == 0 {
				r.t0 = dd // the first delta of deltas is the first time
			}
			data = data[k:]
		}
		r.times = times[:len(times)-len(data)]
		if uint64(len(data)) < 8*n {
			return fail()
		}
		r.values, data = data[:8*n], data[8*n:]
		c.runs = append(c.runs, r)
		got += int(n)
	}
	if got != rows {
		return fail()
	}
	c.rows += got
	return nil
}

// add appends o's rows.
func (c *sampleColumns) add(o *sampleColumns) {
	c.runs = append(c.runs, o.runs...)
	c.rows += o.rows
	c.rowBinary = c.rowBinary || o.rowBinary
	c.order = nil
}

func (c *sampleColumns) reset() {
	c.runs, c.rows, c.rowBinary, c.order = c.runs[:0], 0, false, nil
}

// metricHashes sets every packed run's metric hash from the batch's series rows (a
// request's series rows come with its samples); a series without one gets 0, which
// readers always read.
func (c *sampleColumns) metricHashes(s *seriesRows) {
	for i := range c.runs {
		if r := &c.runs[i]; r.id != nil {
			r.mh = s.metricHash([16]byte(r.id))
		}
	}
}

// sorted puts the runs in the data table's order (the metric hash when byMetric, the
// id, then the first timestamp; runs that tie keep the order they came in, so a replay
// builds the same block), so that the engine, which sorts every inserted block by its
// sorting key, finds the block already sorted (a series' samples come in time order
// from Prometheus) instead of sorting it. Rows that came as RowBinary are left as they
// are.
func (c *sampleColumns) sorted(byMetric bool) *sampleColumns {
	if c.rowBinary {
		return c
	}
	c.order = make([]int32, len(c.runs))
	for i := range c.order {
		c.order[i] = int32(i)
	}
	slices.SortFunc(c.order, func(i, j int32) int {
		a, b := &c.runs[i], &c.runs[j]
		if byMetric {
			if c := cmp.Compare(a.mh, b.mh); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(a.hi, b.hi); c != 0 {
			return c
		}
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		if c := cmp.Compare(a.t0, b.t0); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	return c
}

// native is the samples as one block of the engine's Native format: id, timestamp and
// value, c.rows values each, the runs in their order, every sample decoded into its
// place; with the metric_hash column first when series (the batch's series rows, whose
// names give it) is set.
func (c *sampleColumns) native(series *seriesRows) []byte {
	head := func(b []byte, name, typ string) []byte {
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.AppendUvarint(b, uint64(len(typ)))
		return append(b, typ...)
	}
	cols := uint64(3)
	if series != nil {
		cols = 4
	}
	b := binary.AppendUvarint(nil, cols)
	b = binary.AppendUvarint(b, uint64(c.rows))
	b = slices.Grow(b, 40*c.rows+96)
	var hashes []byte
	if series != nil {
		b = head(b, promstore.MetricHashColumn, "UInt64")
		hashes = b[len(b) : len(b)+8*c.rows]
		b = b[:len(b)+8*c.rows]
	}
	b = head(b, "id", "UUID")
	ids := b[len(b) : len(b)+16*c.rows]
	b = head(b[:len(b)+16*c.rows], "timestamp", "DateTime64(3, 'UTC')")
	times := b[len(b) : len(b)+8*c.rows]
	b = head(b[:len(b)+8*c.rows], "value", "Float64")
	values := b[len(b) : len(b)+8*c.rows]
	b = b[:len(b)+8*c.rows]
	row := 0
	add := func(r *run) {
		if r.rowBinary != nil {
			for d := r.rowBinary; len(d) > 0; d = d[32:] {
				if hashes != nil {
					binary.LittleEndian.PutUint64(hashes[8*row:], series.metricHash([16]byte(d[:16])))
				}
				copy(ids[16*row:], d[:16])
				copy(times[8*row:], d[16:24])
				copy(values[8*row:], d[24:32])
				row++
			}
			return
		}
		var prev, delta uint64
		d := r.times
		for i := range r.n {
			if hashes != nil {
				binary.LittleEndian.PutUint64(hashes[8*(row+i):], r.mh)
			}
			copy(ids[16*(row+i):], r.id)
			dd, k := binary.Varint(d)
			d = d[k:]
			delta += uint64(dd)
			prev += delta
			binary.LittleEndian.PutUint64(times[8*(row+i):], prev)
		}
		copy(values[8*row:], r.values)
		row += r.n
	}
	if c.order != nil {
		for _, i := range c.order {
			add(&c.runs[i])
		}
	} else {
		for i := range c.runs {
			add(&c.runs[i])
		}
	}
	return b
}

// seriesRows folds the tags table's RowBinary rows (id UUID, metric_name String, tags
// Map(String, String), min_time, max_time DateTime64) to one row per series id, in the
// order series first appear, with the earliest min_time and the latest max_time: what
// the table's AggregatingMergeTree would fold them to, in fewer rows to insert and merge.
type seriesRows struct {
	index map[[16]byte]int
	rows  []seriesRow
}

type seriesRow struct {
	head     []byte // id, metric_name and tags, as RowBinary
	min, max int64
}

// metricHash is promstore.MetricHash of the metric name of series id, 0 for a series
// without a row.
func (s *seriesRows) metricHash(id [16]byte) uint64 {
	i, ok := s.index[id]
	if !ok {
		return 0
	}
	h := s.rows[i].head[16:] // parseSeriesRows checked the name's length
	n, k := binary.Uvarint(h)
	return promstore.MetricHash(h[k : k+int(n)])
}

var errTags = errors.New("malformed prometheus_tags rows")

// parseSeriesRows reads the tags table's RowBinary rows, appended to rows.
func parseSeriesRows(rows []seriesRow, data []byte) ([]seriesRow, error) {
	str := func(b []byte) int { // the length of a RowBinary String at b, or -1
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return -1
		}
		return k + int(n)
	}
	for len(data) > 0 {
		if len(data) < 16 {
			return nil, errTags
		}
		off := 16
		k := str(data[off:])
		if k < 0 {
			return nil, errTags
		}
		off += k
		pairs, k := binary.Uvarint(data[off:])
		if k <= 0 || pairs > uint64(len(data)) {
			return nil, errTags
		}
		off += k
		for range 2 * pairs {
			k := str(data[off:])
			if k < 0 {
				return nil, errTags
			}
			off += k
		}
		if len(data)-off < 16 {
			return nil, errTags
		}
		row := seriesRow{head: data[:off], min: int64(binary.LittleEndian.Uint64(data[off:])), max: int64(binary.LittleEndian.Uint64(data[off+8:]))}
		data = data[off+16:]
		rows = append(rows, row)
	}
	return rows, nil
}

// add folds rows in.
func (s *seriesRows) add(rows []seriesRow) {
	if s.index == nil {
		s.index = map[[16]byte]int{}
	}
	for _, row := range rows {
		id := [16]byte(row.head[:16])
		if i, ok := s.index[id]; ok {
			r := &s.rows[i]
			r.min, r.max = min(r.min, row.min), max(r.max, row.max)
			continue
		}
		s.index[id] = len(s.rows)
		s.rows = append(s.rows, row)
	}
}

// rowBinary is the folded rows, in RowBinary.
func (s *seriesRows) rowBinary() []byte {
	n := 0
	for _, r := range s.rows {
		n += len(r.head) + 16
	}
	b := make([]byte, 0, n)
	for _, r := range s.rows {
		b = append(b, r.head...)
		b = binary.LittleEndian.AppendUint64(b, uint64(r.min))
		b = binary.LittleEndian.AppendUint64(b, uint64(r.max))
	}
	return b
}
