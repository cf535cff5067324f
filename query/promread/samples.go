package promread

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/google/uuid"
	"github.com/prometheus/prometheus/model/value"

	"github.com/svc-data/svc/query"
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
// sel (seriesSQL) selects, in the data table's order, as readFloats reads them; without
// stale markers when dropStale (a range selection drops them).
func floatsSQL(db, sel string, mint, maxt int64, dropStale bool) string {
	where := fmt.Sprintf("id IN (SELECT id FROM (%s)) AND timestamp >= %s AND timestamp <= %s", sel, timeLiteral(mint), timeLiteral(maxt))
	if dropStale {
		where += " AND reinterpretAsUInt64(value) != " + strconv.FormatUint(value.StaleNaN, 10)
	}
	return fmt.Sprintf("SELECT id, toUnixTimestamp64Milli(timestamp), reinterpretAsUInt64(value) FROM %s WHERE %s ORDER BY id, timestamp",
		table(db, promstore.DataTable), where)
}

// readFloats runs a floatsSQL statement and calls each with every series' samples, times
// (ms, ascending) and values' bits, in the order of the engine's ids. The slices are
// reused once each returns.
func (qr *querier) readFloats(ctx context.Context, t Target, sql string, each func(id rowBinaryID, ts []int64, vs []uint64) error) error {
	be, ok := t.Engine.(query.ByteEngine)
	if !ok {
		return errors.New("promread: the engine cannot stream binary results")
	}
	body, err := be.StreamBytes(ctx, sql, "Native", qr.options(t))
	if err != nil {
		if missing(err) {
			return nil
		}
		return err
	}
	defer body.Close()
	var (
		r   = newNativeReader(body)
		cur rowBinaryID
		ts  []int64
		vs  []uint64
	)
	flush := func() error {
		if len(ts) == 0 {
			return nil
		}
		err := each(cur, ts, vs)
		ts, vs = ts[:0], vs[:0]
		return err
	}
	for {
		rows, err := r.block(floatColumns)
		if errors.Is(err, io.EOF) {
			return flush()
		}
		if err != nil {
			return err
		}
		ids, times, vals := r.cols[0], r.cols[1], r.cols[2]
		for i := range rows {
			if id := rowBinaryID(ids[i*16 : i*16+16]); id != cur || len(ts) == 0 {
				if err := flush(); err != nil {
					return err
				}
				cur = id
			}
			ts = append(ts, int64(binary.LittleEndian.Uint64(times[i*8:])))
			vs = append(vs, binary.LittleEndian.Uint64(vals[i*8:]))
		}
	}
}

// floatColumns are the types of floatsSQL's columns and their widths in bytes.
var floatColumns = []nativeColumn{{"UUID", 16}, {"Int64", 8}, {"UInt64", 8}}

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
