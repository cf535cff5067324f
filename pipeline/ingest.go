package pipeline

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// IngestTopic is the topic that carries a cluster's accepted rows.
func IngestTopic(cluster uuid.UUID) string { return "svc." + cluster.String() + ".ingest" }

// DeadTopic is the topic that keeps rows the engine rejected, with the reason.
func DeadTopic(cluster uuid.UUID) string { return "svc." + cluster.String() + ".dead" }

// ConsumerGroup is the consumer group that inserts a cluster's rows.
func ConsumerGroup(cluster uuid.UUID) string { return "svc.ingest." + cluster.String() }

// MaxRequestBytes caps the rows of one request so that it fits one log record: a request
// is then accepted or refused as a whole.
const MaxRequestBytes = 48 << 20

// Accepted is one request's rows on their way to a table.
type Accepted struct {
	Cluster  uuid.UUID
	Org      uuid.UUID
	TableID  uuid.UUID
	Database string // engine database
	Table    string // logical table name
	// IdempotencyKey makes a retried request land once; empty for none.
	IdempotencyKey string
	// Rows are newline-terminated compact JSON objects.
	Rows []byte
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
	rec := &Record{
		Topic: IngestTopic(a.Cluster),
		Value: a.Rows,
		Headers: map[string]string{
			HeaderTable:    a.TableID.String(),
			HeaderDatabase: a.Database,
			HeaderName:     a.Table,
			HeaderOrg:      a.Org.String(),
			HeaderFormat:   FormatNDJSON,
		},
	}
	if a.IdempotencyKey != "" {
		// Keyed records hash to one partition, so a retry is consumed after the original
		// and the key store has seen it.
		rec.Key = []byte(a.TableID.String() + "/" + a.IdempotencyKey)
		rec.Headers[HeaderIdem] = a.IdempotencyKey
	}
	return in.producer.Produce(ctx, rec)
}
