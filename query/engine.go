package query

import (
	"context"

	"github.com/svc-data/svc/query/format"
)

// Engine is what the query API needs of a SQL engine.
type Engine interface {
	// Stream runs a statement and streams its result.
	Stream(ctx context.Context, sql string, opt Options) (Rows, error)
}

// Options are per-statement execution options.
type Options struct {
	QueryID  string
	Settings map[string]string
}

// Rows is a streamed result. Values is valid until the next call to Next.
type Rows interface {
	Columns() []format.Column
	Next() bool
	Values() []any
	Err() error
	Close() error
	// Summary is what the engine reported about the statement; complete once Next
	// returned false.
	Summary() Summary
}

// Summary is the engine's account of a statement.
type Summary struct {
	RowsRead     uint64
	BytesRead    uint64
	WrittenRows  uint64
	WrittenBytes uint64
	// Known is false when the engine reported nothing.
	Known bool
}
