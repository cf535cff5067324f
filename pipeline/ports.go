package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/query/target"
)

// Errors callers branch on. Engine errors are classed in the engine data model's one
// vocabulary (query/engineerr): the consumer branches on engineerr.Permanent (the data is
// refused: the rows go to dead letters) and engineerr.Fatal (no retry of the statement can
// succeed: the partition pauses and replays its batch from the committed plan, which
// resolves tables again) with errors.Is.
var (
	// ErrOverloaded means the log could not take the record in time (broker unreachable
	// or the producer buffer full). Nothing was acknowledged; the client should retry
	// after a pause.
	ErrOverloaded = errors.New("ingest is overloaded or the log is unreachable; retry after a pause")

	// ErrTooLarge means a request's rows exceed what one log record can hold.
	ErrTooLarge = errors.New("request too large")
)

// Record header names. They are part of the stored format: never rename.
const (
	HeaderTable    = "table" // table id
	HeaderDatabase = "db"    // engine database
	HeaderName     = "tbl"   // logical table name
	HeaderOrg      = "org"   // organization id
	HeaderIdem     = "idem"  // idempotency key, optional
	HeaderFormat   = "fmt"   // value format
	HeaderReason   = "reason"
	FormatNDJSON   = "ndjson"
)

// Record is one log record as the pipeline sees it.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Headers   map[string]string
	Timestamp time.Time
}

// Producer writes records durably: Produce returns nil only after the log acknowledged
// every record (from all in-sync replicas). It returns an error wrapping ErrOverloaded
// when the log is unreachable or its buffer stays full past ctx's deadline.
type Producer interface {
	Produce(ctx context.Context, records ...*Record) error
}

// Assignment is one partition this node consumes, handed over by the log adapter.
type Assignment interface {
	Topic() string
	Partition() int32
	// Committed is the offset to resume from (-1 when nothing was committed) and the
	// metadata stored with it.
	Committed() (offset int64, metadata string)
	// Commit stores offset with metadata. It fails once the partition is no longer ours,
	// which fences a node that lost the partition from acting on it.
	Commit(ctx context.Context, offset int64, metadata string) error
}

// Engine is what the pipeline needs of the SQL engine.
type Engine interface {
	// InsertRows inserts newline-separated JSON objects into database.table as documents
	// of its single JSON column, whose engine type is columnType ("" is "JSON"),
	// deduplicated by token. The rows are the concatenation of
	// the parts, each of whole lines (a batch's record values, passed without joining
	// them). Errors caused by the data are engineerr.Permanent, errors no retry of the
	// statement can fix engineerr.Fatal; any other error is retried.
	InsertRows(ctx context.Context, database, table, columnType, token string, rows ...[]byte) error
	// ExecArgs runs a statement without a result. args fill its ? placeholders in
	// order: the adapter renders them as literals, so values never need quoting here.
	ExecArgs(ctx context.Context, sql string, args ...any) error
	// QueryStringsArgs runs a query whose result is one String column; args as ExecArgs.
	QueryStringsArgs(ctx context.Context, sql string, args ...any) ([]string, error)
}

// EncodedRows are a table's rows encoded for their insert ahead of it (RowsEncoder).
type EncodedRows struct {
	ColumnType string
	// Rows are the rows as given, sent as text where Block is nil.
	Rows [][]byte
	// Block is the engine's encoding of the rows, nil where they travel as text.
	Block []byte
	// Paths, with Block, are every leaf path of the rows with the engine types its values
	// are stored as (what distinctJSONPathsAndTypes would report of them).
	Paths map[string][]string
}

// RowsEncoder is implemented by engines that encode rows before inserting them: the
// consumer records a batch's path schema from the encoding instead of walking its rows.
type RowsEncoder interface {
	// EncodeRows encodes rows as InsertRows takes them, for a column of columnType.
	EncodeRows(ctx context.Context, columnType string, rows ...[]byte) EncodedRows
	// InsertEncoded inserts encoded rows as InsertRows inserts rows.
	InsertEncoded(ctx context.Context, database, table, token string, rows EncodedRows) error
}

// Tables resolves where rows of a table are inserted.
type Tables interface {
	// Target returns the current generation of a table, creating the next one from
	// sample rows when the table has none or its sorting key changed. ok is false when
	// the table no longer exists (its rows are dropped, counted and logged). An error
	// of class engineerr.Permanent means these rows make a generation impossible: they go to
	// dead letters.
	Target(ctx context.Context, tableID uuid.UUID, sample [][]byte) (t target.Table, ok bool, err error)
	// Generation returns a planned generation of a table again (replays).
	Generation(ctx context.Context, tableID uuid.UUID, gen int) (t target.Table, ok bool, err error)
}

// StorageProber is an optional ability of Tables: ProbeStorage fails when the object
// storage a table keeps its data on does not answer at all. The consumer asks before it
// tries an insert into a parked table again (park.go).
type StorageProber interface {
	ProbeStorage(ctx context.Context, tableID uuid.UUID) error
}
