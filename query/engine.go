package query

import (
	"context"
	"errors"
	"io"

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

// LineEngine is an Engine that can also hand out a result as the engine encodes it, one
// line per row, so that formats close to the engine's own are served without decoding
// every value (see lines.go).
type LineEngine interface {
	// StreamLines runs a statement with its result encoded in the engine format named.
	StreamLines(ctx context.Context, sql, format string, opt Options) (Lines, error)
}

// ErrNotLines is returned by StreamLines when the engine answered in another format than the
// one asked for: the statement then runs the usual way.
var ErrNotLines = errors.New("the engine answered in another format")

// Lines is a result streamed as lines of the engine's encoding.
type Lines interface {
	// Next returns the next line without its newline, valid until the next call; io.EOF
	// after the last. An engine error after the first line comes back here.
	Next() ([]byte, error)
	Close() error
	// Summary is what the engine reported about the statement; complete once Next
	// returned io.EOF.
	Summary() Summary
}

// ByteEngine is an Engine that can also hand out a result in one of the engine's binary
// formats (RowBinary, Native) as the engine encodes it, for readers that decode it
// themselves (the PromQL storage's samples).
type ByteEngine interface {
	// StreamBytes runs a statement with its result encoded in the engine format named. An
	// engine error after the answer began is the error of the reader's last Read.
	StreamBytes(ctx context.Context, sql, format string, opt Options) (io.ReadCloser, error)
}
