package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"
)

// IngestTopic is the topic that carries a cluster's accepted rows.
func IngestTopic(cluster uuid.UUID) string { return "svc." + cluster.String() + ".ingest" }

// DeadTopic is the topic that keeps rows the engine rejected, with the reason.
func DeadTopic(cluster uuid.UUID) string { return "svc." + cluster.String() + ".dead" }

// ConsumerGroup is the consumer group that inserts a cluster's rows.
func ConsumerGroup(cluster uuid.UUID) string { return "svc.ingest." + cluster.String() }

// MaxRequestBytes caps the rows of one request. Rows up to MaxRecordBytes are one log
// record; larger ones are cut at row boundaries into parts of PartBytes, written in one
// log transaction (AtomicProducer), so a request is still accepted or refused as a
// whole: consumers read committed records only.
const MaxRequestBytes = 256 << 20

// MaxRecordBytes is the most rows one log record carries; PartBytes is the size of the
// parts of a larger request.
const (
	MaxRecordBytes = 48 << 20
	PartBytes      = 16 << 20
)

// AtomicProducer is a Producer that can also write several records all or nothing.
type AtomicProducer interface {
	Producer
	// ProduceAtomic writes records in one transaction: readers of committed records see
	// all of them or none. It returns nil only once the transaction committed.
	ProduceAtomic(ctx context.Context, records ...*Record) error
}

// Accepted is one request's rows on their way to a table.
type Accepted struct {
	Cluster  uuid.UUID
	Org      uuid.UUID
	TableID  uuid.UUID
	Database string // engine database
	Table    string // logical table name
	// IdempotencyKey makes a retried request land once; empty for none.
	IdempotencyKey string
	// Rows are newline-terminated compact JSON objects, unless Format says otherwise.
	Rows []byte
	// Format is the HeaderFormat of Rows when they are not NDJSON (FormatPrometheus:
	// EncodeSections), and Count their number of rows. Such rows are one record, never
	// cut.
	Format string
	Count  int
}

// Ingestor is the edge's side of the pipeline: it turns accepted rows into one log
// record and returns once the log acknowledged it.
type Ingestor struct {
	producer Producer
}

// NewIngestor returns an ingestor writing through producer.
func NewIngestor(p Producer) *Ingestor { return &Ingestor{producer: p} }

// Accept writes the rows durably. A nil error means the rows will reach the table.
func (in *Ingestor) Accept(ctx context.Context, a Accepted) error {
	if len(a.Rows) > MaxRequestBytes {
		return fmt.Errorf("%w: %d bytes of rows, at most %d per request; split the request", ErrTooLarge, len(a.Rows), MaxRequestBytes)
	}
	if a.Format != "" && len(a.Rows) > MaxRecordBytes {
		return fmt.Errorf("%w: %d bytes of rows, at most %d per request; split the request", ErrTooLarge, len(a.Rows), MaxRecordBytes)
	}
	if len(a.Rows) > MaxRecordBytes {
		ap, ok := in.producer.(AtomicProducer)
		if !ok {
			return fmt.Errorf("%w: %d bytes of rows, at most %d per request; split the request", ErrTooLarge, len(a.Rows), MaxRecordBytes)
		}
		parts := SplitRows(a.Rows, PartBytes)
		recs := make([]*Record, len(parts))
		for i, part := range parts {
			recs[i] = in.record(a, part, i, len(parts))
		}
		return ap.ProduceAtomic(ctx, recs...)
	}
	return in.producer.Produce(ctx, in.record(a, a.Rows, 0, 1))
}

// SplitRows cuts newline-terminated rows into parts of at most size bytes each (a single
// longer row is a part of its own), at row boundaries.
func SplitRows(rows []byte, size int) [][]byte {
	var parts [][]byte
	for len(rows) > 0 {
		n := min(size, len(rows))
		if n < len(rows) {
			if i := bytes.LastIndexByte(rows[:n], '\n'); i >= 0 {
				n = i + 1
			} else if i := bytes.IndexByte(rows[n:], '\n'); i >= 0 {
				n += i + 1
			} else {
				n = len(rows)
			}
		}
		parts = append(parts, rows[:n])
		rows = rows[n:]
	}
	return parts
}

// record is part i of n of a request's rows as a log record. The parts of a keyed
// request carry the key with the part number, so a retry (cut the same way) lands once.
func (in *Ingestor) record(a Accepted, rows []byte, i, n int) *Record {
	rec := &Record{
		Topic: IngestTopic(a.Cluster),
		Value: rows,
		Headers: map[string]string{
			HeaderTable:    a.TableID.String(),
			HeaderDatabase: a.Database,
			HeaderName:     a.Table,
			HeaderOrg:      a.Org.String(),
			HeaderFormat:   FormatNDJSON,
		},
	}
	if a.Format != "" {
		rec.Headers[HeaderFormat] = a.Format
		rec.Headers[HeaderRows] = strconv.Itoa(a.Count)
	}
	if a.IdempotencyKey != "" {
		// Keyed records hash to one partition, so a retry is consumed after the original
		// and the key store has seen it.
		rec.Key = []byte(a.TableID.String() + "/" + a.IdempotencyKey)
		rec.Headers[HeaderIdem] = a.IdempotencyKey
		if n > 1 {
			rec.Headers[HeaderIdem] = fmt.Sprintf("%s#%d/%d", a.IdempotencyKey, i+1, n)
		}
	}
	return rec
}
