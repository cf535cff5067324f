package pipeline

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"
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

// sampleColumns are float samples as the data table's Native columns.
type sampleColumns struct {
	ids, times, values []byte
	rows               int
	// runs are the packed series, in the order they came; rowBinary says some rows came
	// as RowBinary rows instead, which are not put in order.
	runs      []run
	rowBinary bool
}

// A run is one packed series' samples: rows [start, start+n).
type run struct {
	start, n int
	hi, lo   uint64 // the id as the engine compares a UUID: its second half first
	t0       int64
}

// addRowBinary adds RowBinary rows of (id UUID, timestamp DateTime64, value Float64).
func (c *sampleColumns) addRowBinary(data []byte) error {
	if len(data)%32 != 0 {
		return errors.New("prometheus_data rows are not 32 bytes each")
	}
	for ; len(data) > 0; data = data[32:] {
		c.rowBinary = true
		c.ids = append(c.ids, data[:16]...)
		c.times = append(c.times, data[16:24]...)
		c.values = append(c.values, data[24:32]...)
		c.rows++
	}
	return nil
}

// addPacked adds a SectionPackedSamples section of rows samples.
func (c *sampleColumns) addPacked(data []byte, rows int) error {
	got := 0
	for len(data) > 0 {
		if len(data) < 17 {
			return errPacked
		}
		id := data[:16]
		n, k := binary.Uvarint(data[16:])
		if k <= 0 || n > uint64(len(data)) {
			return errPacked
		}
		data = data[16+k:]
		r := run{start: c.rows, n: int(n), hi: binary.LittleEndian.Uint64(id[8:]), lo: binary.LittleEndian.Uint64(id[:8])}
		var prev, delta uint64
		for range n {
			dd, k := binary.Varint(data)
			if k <= 0 {
				return errPacked
			}
			data = data[k:]
			delta += uint64(dd)
			prev += delta
			if len(c.times) == 8*r.start {
				r.t0 = int64(prev)
			}
			c.ids = append(c.ids, id...)
			c.times = binary.LittleEndian.AppendUint64(c.times, prev)
		}
		if uint64(len(data)) < 8*n {
			return errPacked
		}
		c.values = append(c.values, data[:8*n]...)
		data = data[8*n:]
		c.runs = append(c.runs, r)
		c.rows += int(n)
		got += int(n)
	}
	if got != rows {
		return errPacked
	}
	return nil
}

// add appends o's rows.
func (c *sampleColumns) add(o *sampleColumns) {
	c.ids = append(c.ids, o.ids...)
	c.times = append(c.times, o.times...)
	c.values = append(c.values, o.values...)
	for _, r := range o.runs {
		r.start += c.rows
		c.runs = append(c.runs, r)
	}
	c.rows += o.rows
	c.rowBinary = c.rowBinary || o.rowBinary
}

func (c *sampleColumns) reset() {
	c.ids, c.times, c.values, c.rows = c.ids[:0], c.times[:0], c.values[:0], 0
	c.runs, c.rowBinary = c.runs[:0], false
}

// sorted is the columns with their series in the data table's order (id, then the
// first timestamp), so that the engine, which sorts every inserted block by its sorting
// key, finds the block already sorted (a series' samples come in time order from
// Prometheus) instead of sorting it. Rows that came as RowBinary are left as they are.
func (c *sampleColumns) sorted() *sampleColumns {
	if c.rowBinary || slices.IsSortedFunc(c.runs, compareRuns) {
		return c
	}
	runs := slices.Clone(c.runs)
	slices.SortStableFunc(runs, compareRuns)
	o := &sampleColumns{ids: make([]byte, 0, len(c.ids)), times: make([]byte, 0, len(c.times)), values: make([]byte, 0, len(c.values)), rows: c.rows}
	for _, r := range runs {
		a, b := r.start, r.start+r.n
		o.ids = append(o.ids, c.ids[16*a:16*b]...)
		o.times = append(o.times, c.times[8*a:8*b]...)
		o.values = append(o.values, c.values[8*a:8*b]...)
	}
	return o
}

func compareRuns(a, b run) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	if c := cmp.Compare(a.lo, b.lo); c != 0 {
		return c
	}
	return cmp.Compare(a.t0, b.t0)
}

// native is the columns as one block of the engine's Native format.
func (c *sampleColumns) native() []byte {
	b := make([]byte, 0, len(c.ids)+len(c.times)+len(c.values)+64)
	b = binary.AppendUvarint(b, 3)
	b = binary.AppendUvarint(b, uint64(c.rows))
	col := func(name, typ string, data []byte) {
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.AppendUvarint(b, uint64(len(typ)))
		b = append(b, typ...)
		b = append(b, data...)
	}
	col("id", "UUID", c.ids)
	col("timestamp", "DateTime64(3, 'UTC')", c.times)
	col("value", "Float64", c.values)
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
