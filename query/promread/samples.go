package promread

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"

	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/promstore"
)

// Float samples leave the engine in its Native format, one row per sample in the data
// table's own order (series id, then time), and are decoded here: blocks of three
// fixed-width columns, the id as the engine lays out a UUID (two little-endian 64-bit
// halves, as RowBinary writes it), the time in ms (Int64) and the value's IEEE 754 bits
// (UInt64, so the stale marker's NaN survives), 32 bytes a sample. The order makes each
// series' samples arrive together and in time order, so a series is complete when the
// next begins and nothing is sorted or held for the whole selection.
//
// (The engine writes Native about twice as fast as RowBinary, which it serializes value
// by value. Grouping the samples into arrays per series halves the bytes but costs the
// engine what the transfer saves; reading them through clickhouse-go's row API, which
// converts every array element by reflection, took seconds per million samples.)

// rowBinaryID is a series id as RowBinary writes a UUID.
type rowBinaryID [16]byte

func rowBinaryIDOf(id uuid.UUID) rowBinaryID {
	var r rowBinaryID
	binary.LittleEndian.PutUint64(r[:8], binary.BigEndian.Uint64(id[:8]))
	binary.LittleEndian.PutUint64(r[8:], binary.BigEndian.Uint64(id[8:]))
	return r
}

func (r rowBinaryID) uuid() uuid.UUID {
	var id uuid.UUID
	binary.BigEndian.PutUint64(id[:8], binary.LittleEndian.Uint64(r[:8]))
	binary.BigEndian.PutUint64(id[8:], binary.LittleEndian.Uint64(r[8:]))
	return id
}

// floatsSQL selects the float samples between mint and maxt (inclusive) of the series
// whose tags rows satisfy where (whereSQL of the matchers ms), in the data table's order, as readFloats
// reads them; without stale markers when dropStale (a range selection drops them).
// byMetric is for a data table that leads with promstore.MetricHashColumn: the statement
// then selects by the metric hashes of the series (metricHashSQL), which the table's
// sorting key finds, and rows without one (0: inserted by SQL), and says which rows have
// none, so that readFloats can join them to their series.
func floatsSQL(db, where string, ms []*labels.Matcher, mint, maxt int64, dropStale, byMetric bool) string {
	inIDs := fmt.Sprintf("id IN (%s)", idsSQL(db, where))
	inRange := fmt.Sprintf("timestamp >= %s AND timestamp <= %s", timeLiteral(mint), timeLiteral(maxt))
	if dropStale {
		inRange += " AND reinterpretAsUInt64(value) != " + strconv.FormatUint(value.StaleNaN, 10)
	}
	if !byMetric {
		return fmt.Sprintf("SELECT id, toUnixTimestamp64Milli(timestamp), reinterpretAsUInt64(value) FROM %s WHERE %s AND %s ORDER BY id, timestamp",
			table(db, promstore.DataTable), inIDs, inRange)
	}
	mh := promstore.MetricHashColumn
	return fmt.Sprintf("SELECT id, toUnixTimestamp64Milli(timestamp), reinterpretAsUInt64(value), %[1]s = 0 FROM %[2]s WHERE %[3]s AND %[4]s ORDER BY %[1]s, id, timestamp",
		mh, table(db, promstore.DataTable), metricHashSQL(db, where, inIDs, ms), inRange)
}

// metricHashSQL is the condition on the data table's metric_hash, beside inIDs (the
// condition on the selected series' ids), for the series the matchers ms select (where:
// their whereSQL). When
// ms are one metric's name alone, every series of that metric is selected: its hash
// selects its rows and inIDs only the rows without a hash (the series outside the time
// range have no rows in it; a row of a series the tags table does not hold is dropped
// in Go, as any the matchers refuse). When ms name the metric by equality and more, its
// hash and inIDs. Else the hashes of the names of the series the matchers select in the
// tags table, computed by the engine, and inIDs. Rows without a hash (0) are read in
// every case.
func metricHashSQL(db, where, inIDs string, ms []*labels.Matcher) string {
	mh := promstore.MetricHashColumn
	for _, m := range ms {
		if m.Name != labels.MetricName || m.Type != labels.MatchEqual {
			continue
		}
		h := promstore.MetricHash([]byte(m.Value))
		if len(ms) == 1 {
			return fmt.Sprintf("(%[1]s = %[2]d OR %[1]s = 0 AND %[3]s)", mh, h, inIDs)
		}
		return fmt.Sprintf("%s IN (0, %d) AND %s", mh, h, inIDs)
	}
	return fmt.Sprintf("(%[1]s = 0 OR %[1]s IN (SELECT cityHash64(metric_name) FROM %[2]s WHERE %[3]s)) AND %[4]s",
		mh, table(db, promstore.TagsTable), where, inIDs)
}

// unhashedFor is how long a Queryable remembers that a database's data table has no
// metric_hash column (made before it) before it tries the column again.
const unhashedFor = time.Minute

// readFloats reads the float samples between mint and maxt of the series the matchers ms
// select (floatsSQL) and calls each with every series' samples, times
// (ms, ascending) and values' bits, once per series. The slices are reused once each returns. A data table
// made before metric_hash answers the statement by metric hash with an unknown column;
// it is then read by id alone, and the database remembered as such (unhashedFor).
func (qr *querier) readFloats(ctx context.Context, t Target, ms []*labels.Matcher, mint, maxt int64, dropStale bool, each func(id rowBinaryID, ts []int64, vs []uint64) error) error {
	be, ok := t.Engine.(query.ByteEngine)
	if !ok {
		return errors.New("promread: the engine cannot stream binary results")
	}
	where, err := whereSQL(ms)
	if err != nil {
		return err
	}
	byMetric := true
	if at, ok := qr.q.unhashed.Load(t.Database); ok && time.Since(at.(time.Time)) < unhashedFor {
		byMetric = false
	}
	body, err := be.StreamBytes(ctx, floatsSQL(t.Database, where, ms, mint, maxt, dropStale, byMetric), "Native", qr.options(t))
	if err != nil && byMetric && engineerr.IsUnknownIdentifier(err) {
		qr.q.unhashed.Store(t.Database, time.Now())
		byMetric = false
		body, err = be.StreamBytes(ctx, floatsSQL(t.Database, where, ms, mint, maxt, dropStale, false), "Native", qr.options(t))
	}
	if err != nil {
		if missing(err) {
			return nil
		}
		return err
	}
	defer body.Close()
	cols := floatColumns
	if byMetric {
		cols = hashedFloatColumns
	}
	var (
		r   = newNativeReader(body)
		cur rowBinaryID
		ts  []int64
		vs  []uint64
		// held are the samples without a metric hash, which come first (ordered by
		// series and time), until their series' hashed samples come, or the end.
		held      map[rowBinaryID]*heldSamples
		heldOrder []rowBinaryID
		curHeld   bool // the current run is held
	)
	flush := func() error {
		if len(ts) == 0 {
			return nil
		}
		if curHeld {
			h := &heldSamples{ts: slices.Clone(ts), vs: slices.Clone(vs)}
			if held == nil {
				held = map[rowBinaryID]*heldSamples{}
			}
			held[cur] = h
			heldOrder = append(heldOrder, cur)
			ts, vs = ts[:0], vs[:0]
			return nil
		}
		if h := held[cur]; h != nil {
			ts, vs = h.merge(ts, vs)
			delete(held, cur)
		}
		err := each(cur, ts, vs)
		ts, vs = ts[:0], vs[:0]
		return err
	}
	for {
		rows, err := r.block(cols)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		ids, times, vals := r.cols[0], r.cols[1], r.cols[2]
		for i := range rows {
			unhashed := byMetric && r.cols[3][i] != 0
			if id := rowBinaryID(ids[i*16 : i*16+16]); id != cur || unhashed != curHeld || len(ts) == 0 {
				if err := flush(); err != nil {
					return err
				}
				cur, curHeld = id, unhashed
			}
			ts = append(ts, int64(binary.LittleEndian.Uint64(times[i*8:])))
			vs = append(vs, binary.LittleEndian.Uint64(vals[i*8:]))
		}
	}
	if err := flush(); err != nil {
		return err
	}
	for _, id := range heldOrder {
		if h := held[id]; h != nil {
			if err := each(id, h.ts, h.vs); err != nil {
				return err
			}
		}
	}
	return nil
}

// heldSamples are one series' samples without a metric hash, in time order.
type heldSamples struct {
	ts []int64
	vs []uint64
}

// merge returns h's samples and ts/vs (in time order too) merged in time order, h's
// first at equal times.
func (h *heldSamples) merge(ts []int64, vs []uint64) ([]int64, []uint64) {
	mt := make([]int64, 0, len(h.ts)+len(ts))
	mv := make([]uint64, 0, len(h.vs)+len(vs))
	i, j := 0, 0
	for i < len(h.ts) || j < len(ts) {
		if j == len(ts) || i < len(h.ts) && h.ts[i] <= ts[j] {
			mt, mv = append(mt, h.ts[i]), append(mv, h.vs[i])
			i++
		} else {
			mt, mv = append(mt, ts[j]), append(mv, vs[j])
			j++
		}
	}
	return mt, mv
}

// floatColumns are the types of floatsSQL's columns and their widths in bytes.
var floatColumns = []nativeColumn{{"UUID", 16}, {"Int64", 8}, {"UInt64", 8}}

// hashedFloatColumns are floatsSQL's columns by metric hash: also whether the row has
// no metric hash (UInt8, 0 or 1).
var hashedFloatColumns = []nativeColumn{{"UUID", 16}, {"Int64", 8}, {"UInt64", 8}, {"UInt8", 1}}

// A nativeColumn is a fixed-width column type of the engine's Native format.
type nativeColumn struct {
	typ   string
	width int
}

// nativeReader reads blocks of fixed-width columns in the engine's Native format, at
// protocol revision 0 (what its HTTP interface writes without a client_protocol_version):
// a block is its column count and row count (unsigned LEB128), then each column's name
// and type (length-prefixed) and its values, row after row, each width bytes.
type nativeReader struct {
	r    *bufio.Reader
	cols [][]byte // the last block's columns' data, reused
}

func newNativeReader(r io.Reader) *nativeReader {
	return &nativeReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// block reads the next block, whose columns must be want, and returns its row count;
// io.EOF after the last.
func (n *nativeReader) block(want []nativeColumn) (int, error) {
	ncols, err := binary.ReadUvarint(n.r)
	if err != nil {
		return 0, err // io.EOF between blocks ends the answer
	}
	rows, err := binary.ReadUvarint(n.r)
	if err != nil {
		return 0, unexpected(err)
	}
	if ncols != uint64(len(want)) {
		return 0, fmt.Errorf("promread: the engine's block has %d columns, want %d", ncols, len(want))
	}
	if rows > 1<<24 {
		return 0, fmt.Errorf("promread: the engine's block has %d rows", rows)
	}
	if len(n.cols) < len(want) {
		n.cols = make([][]byte, len(want))
	}
	for i, c := range want {
		if _, err := n.str(); err != nil { // the name
			return 0, err
		}
		typ, err := n.str()
		if err != nil {
			return 0, err
		}
		if typ != c.typ {
			return 0, fmt.Errorf("promread: the engine's column %d is %s, want %s", i, typ, c.typ)
		}
		size := int(rows) * c.width
		if cap(n.cols[i]) < size {
			n.cols[i] = make([]byte, size)
		}
		n.cols[i] = n.cols[i][:size]
		if _, err := io.ReadFull(n.r, n.cols[i]); err != nil {
			return 0, unexpected(err)
		}
	}
	return int(rows), nil
}

func (n *nativeReader) str() (string, error) {
	l, err := binary.ReadUvarint(n.r)
	if err != nil {
		return "", unexpected(err)
	}
	if l > 1<<10 {
		return "", fmt.Errorf("promread: a column name or type of %d bytes in the engine's block", l)
	}
	b := make([]byte, l)
	if _, err := io.ReadFull(n.r, b); err != nil {
		return "", unexpected(err)
	}
	return string(b), nil
}

// unexpected is an end of the answer within a block.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("promread: the engine's samples ended within a block")
	}
	return err
}
