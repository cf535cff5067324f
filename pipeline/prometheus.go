package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/promstore"
	"github.com/svc-data/svc/query/target"
)

// Prometheus remote-write records. The edge decodes a write request, checks it, and
// encodes the rows of each Prometheus table in the engine's RowBinary format; one log
// record carries them all as sections. The consumer inserts the sections of a batch's
// records, table by table, with deduplication tokens derived from the batch plan's,
// into plain typed tables (query/promstore) created on first use: there is no catalog
// table and no generation.

// FormatPrometheus is the HeaderFormat of a remote-write record.
const FormatPrometheus = "prometheus"

// HeaderRows is how many rows a record holds when its value is not newline-separated
// (Prometheus records): samples, histograms and exemplars.
const HeaderRows = "rows"

// PrometheusTableID is the id a database's Prometheus records carry as their table:
// records of one database group into one batch, and idempotency keys are scoped to it.
func PrometheusTableID(database string) uuid.UUID {
	return uuid.NewSHA1(prometheusSpace, []byte(database))
}

var prometheusSpace = uuid.MustParse("6f9d1c52-3a5e-4d0b-9a51-7d1e0f3c2b8a")

// A Section is the rows of one table in a Prometheus record.
type Section struct {
	Table   string // table name in the record's engine database
	Columns string // the column list the rows are in, e.g. "id, timestamp, value"
	// Format is how Data is encoded: "" for RowBinary, SectionPackedSamples for the
	// data table's float samples packed per series.
	Format string
	Rows   int
	Data   []byte
}

// SectionPackedSamples is the Format of a data-table section whose float samples are
// packed per series (AppendPackedSeries): 16 bytes of series id (as RowBinary writes a
// UUID), the sample count, the timestamps (the first zigzag-varint, then zigzag-varint
// deltas of deltas, so a regular scrape interval costs a byte a sample) and the values'
// bits, 8 bytes little-endian each. About 9 bytes a sample instead of RowBinary's 32:
// the bytes through Kafka and its broker. The consumer turns it into the engine's
// Native columns.
const SectionPackedSamples = "PackedSamples"

// sectionsV2 opens a record value written with each section's Format. A value of the
// first layout (before formats) starts with its first table name's length, never 0.
var sectionsV2 = []byte{0, 2}

// EncodeSections writes sections as a record value: a version marker, then for each
// section the table, the columns, the format, the row count and the data, each
// length-prefixed.
func EncodeSections(sections []Section) []byte {
	n := len(sectionsV2)
	for _, s := range sections {
		n += len(s.Table) + len(s.Columns) + len(s.Format) + len(s.Data) + 5*binary.MaxVarintLen64
	}
	b := make([]byte, 0, n)
	b = append(b, sectionsV2...)
	for _, s := range sections {
		b = binary.AppendUvarint(b, uint64(len(s.Table)))
		b = append(b, s.Table...)
		b = binary.AppendUvarint(b, uint64(len(s.Columns)))
		b = append(b, s.Columns...)
		b = binary.AppendUvarint(b, uint64(len(s.Format)))
		b = append(b, s.Format...)
		b = binary.AppendUvarint(b, uint64(s.Rows))
		b = binary.AppendUvarint(b, uint64(len(s.Data)))
		b = append(b, s.Data...)
	}
	return b
}

// DecodeSections reads a record value EncodeSections wrote, in either layout: records
// written before sections had formats (all RowBinary) stay readable.
func DecodeSections(b []byte) ([]Section, error) {
	v2 := bytes.HasPrefix(b, sectionsV2)
	if v2 {
		b = b[len(sectionsV2):]
	} else if len(b) > 0 && b[0] == 0 {
		return nil, fmt.Errorf("prometheus record of an unknown version %d", b[min(1, len(b)-1)])
	}
	var out []Section
	next := func() ([]byte, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, errors.New("truncated prometheus record")
		}
		v := b[k : k+int(n)]
		b = b[k+int(n):]
		return v, nil
	}
	for len(b) > 0 {
		var s Section
		t, err := next()
		if err != nil {
			return nil, err
		}
		c, err := next()
		if err != nil {
			return nil, err
		}
		var f []byte
		if v2 {
			if f, err = next(); err != nil {
				return nil, err
			}
		}
		rows, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, errors.New("truncated prometheus record")
		}
		b = b[k:]
		if s.Data, err = next(); err != nil {
			return nil, err
		}
		s.Table, s.Columns, s.Format, s.Rows = string(t), string(c), string(f), int(rows)
		out = append(out, s)
	}
	return out, nil
}

// RawInserter is an Engine that can insert data in one of the engine's input formats
// into a typed table.
type RawInserter interface {
	// InsertFormat inserts data, in format, into the columns of database.table,
	// deduplicated by token. Errors are classified as InsertRows's.
	InsertFormat(ctx context.Context, database, table, columns, format, token string, data []byte) error
}

// recordRows is how many rows a record holds.
func recordRows(r *Record) int {
	if r.Headers[HeaderFormat] == FormatPrometheus {
		n, _ := strconv.Atoi(r.Headers[HeaderRows])
		return n
	}
	return countLines(r.Value)
}

func isPrometheus(g *group) bool {
	return len(g.recs) > 0 && g.recs[0].Headers[HeaderFormat] == FormatPrometheus
}

// insertPrometheus inserts a group of Prometheus records: their sections, concatenated
// per table, one insert per table with the plan's token for that table. A replay of the
// plan concatenates the same records in the same order, so every token repeats.
func (w *worker) insertPrometheus(ctx context.Context, p *plan, start, end int64, g *group) error {
	db := g.recs[0].Headers[HeaderDatabase]
	ri, ok := w.c.engine.(RawInserter)
	if !ok || w.c.cfg.PrometheusDDL == nil {
		return fmt.Errorf("%w: this node cannot insert Prometheus records", engineerr.Fatal)
	}
	recs, err := w.withoutSeenKeys(ctx, g)
	if err != nil {
		return err
	}
	type tableData struct {
		columns, format string
		rows            int
		data            []byte
	}
	var order []string
	tables := map[string]*tableData{}
	var kept []Record
	// Float samples go in as Native columns and series rows folded per batch; a
	// record's rows are read whole before any is added, so a malformed record adds none.
	var samples, recSamples sampleColumns
	var series seriesRows
	var recSeries []seriesRow
	for _, r := range recs {
		sections, err := DecodeSections(r.Value)
		if err == nil {
			recSamples.reset()
			recSeries = recSeries[:0]
			for _, s := range sections {
				switch {
				case s.Table == promstore.DataTable && s.Format == SectionPackedSamples:
					err = recSamples.addPacked(s.Data, s.Rows)
				case s.Format != "":
					err = fmt.Errorf("section of %s in unknown format %q", s.Table, s.Format)
				case s.Table == promstore.DataTable:
					err = recSamples.addRowBinary(s.Data)
				case s.Table == promstore.TagsTable:
					recSeries, err = parseSeriesRows(recSeries, s.Data)
				}
				if err != nil {
					break
				}
			}
		}
		if err != nil {
			// Not written by this service's edge: nothing to insert.
			w.c.cfg.Logger.Warn("unreadable prometheus record skipped", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
			continue
		}
		kept = append(kept, r)
		samples.add(&recSamples)
		series.add(recSeries)
		for _, s := range sections {
			t := tables[s.Table]
			if t == nil {
				t = &tableData{columns: s.Columns, format: "RowBinary"}
				tables[s.Table] = t
				order = append(order, s.Table)
			}
			t.rows += s.Rows
			if s.Table != promstore.DataTable && s.Table != promstore.TagsTable {
				t.data = append(t.data, s.Data...)
			}
		}
	}
	if len(order) == 0 {
		return nil
	}
	layout, err := w.ensurePrometheus(ctx, db)
	if err != nil {
		return err
	}
	if !layout.exists {
		w.c.stats.droppedForMissingTable(g.rows)
		w.c.cfg.Logger.Warn("prometheus rows for a deleted database dropped", "database", db, "rows", g.rows)
		return nil
	}
	if t := tables[promstore.DataTable]; t != nil {
		t.columns, t.format = "id, timestamp, value", "Native"
		if layout.metricHash {
			samples.metricHashes(&series)
			t.columns = promstore.MetricHashColumn + ", " + t.columns
			t.data = samples.sorted(true).native(&series)
		} else {
			t.data = samples.sorted(false).native(nil)
		}
	}
	if t := tables[promstore.TagsTable]; t != nil {
		t.data = series.rowBinary()
	}
	token := w.token(p, start, end, g.table.String())
	for _, name := range order {
		t := tables[name]
		err := w.retry(ctx, func() error {
			return ri.InsertFormat(ctx, db, name, t.columns, t.format, token+"/"+name, t.data)
		})
		if errors.Is(err, engineerr.Fatal) {
			// A table or the database went away after it was ensured: the replay of
			// the plan ensures again, and drops the rows if the database is gone.
			w.c.promReady.Delete(db)
		}
		if errors.Is(err, engineerr.Permanent) && w.c.cfg.Dead != nil {
			for _, r := range kept {
				t := target.Table{TableID: g.table, Database: db}
				if err := w.deadLetter(ctx, t, fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset), r.Value, r, err); err != nil {
					return err
				}
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("insert prometheus rows into %s.%s: %w", db, name, err)
		}
	}
	return nil
}

// promLayout is what the consumer knows of an engine database's Prometheus tables.
type promLayout struct {
	exists bool // the database exists (and so do the tables)
	// metricHash says the data table leads with promstore.MetricHashColumn (made by this
	// version's DDL); a table made before has no such column.
	metricHash bool
}

// ensurePrometheus creates the Prometheus tables of an engine database once per
// consumer and reads the data table's layout; exists is false when the database no
// longer exists.
func (w *worker) ensurePrometheus(ctx context.Context, db string) (promLayout, error) {
	if l, ok := w.c.promReady.Load(db); ok {
		return l.(promLayout), nil
	}
	var found []string
	err := w.retry(ctx, func() (err error) {
		found, err = w.c.engine.QueryStringsArgs(ctx, "SELECT name FROM system.databases WHERE name = ?", db)
		return err
	})
	if err != nil {
		return promLayout{}, fmt.Errorf("look up engine database %s: %w", db, err)
	}
	if len(found) == 0 {
		return promLayout{}, nil
	}
	for _, stmt := range w.c.cfg.PrometheusDDL(db) {
		if err := w.retry(ctx, func() error { return w.c.engine.ExecArgs(ctx, stmt) }); err != nil {
			return promLayout{}, fmt.Errorf("create prometheus tables in %s: %w", db, err)
		}
	}
	var key []string
	err = w.retry(ctx, func() (err error) {
		key, err = w.c.engine.QueryStringsArgs(ctx, "SELECT sorting_key FROM system.tables WHERE database = ? AND name = ?", db, promstore.DataTable)
		return err
	})
	if err != nil {
		return promLayout{}, fmt.Errorf("read the layout of %s.%s: %w", db, promstore.DataTable, err)
	}
	l := promLayout{exists: true, metricHash: len(key) == 1 && key[0] == promstore.DataSortingKey}
	w.c.promReady.Store(db, l)
	return l, nil
}
