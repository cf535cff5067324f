// Package format renders query results in the formats the query API offers, streaming
// row by row: JSON, JSONEachRow, JSONEachRowWithProgress, JSONCompact, CSV,
// CSVWithNames, TSV, TSVWithNames and TabSeparated.
package format

import (
	"bufio"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Column names a result column and its engine type.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Stats are the statistics of a finished query.
type Stats struct {
	Elapsed     time.Duration
	RowsRead    uint64
	BytesRead   uint64
	WrittenRows *uint64 // INSERT ... SELECT only
}

// Writer renders one result. Begin, then Row for each row, then End (or Fail when the
// query breaks after the first row went out).
type Writer interface {
	Begin(cols []Column) error
	Row(values []any) error
	// Progress reports rows and bytes read so far; formats without progress ignore it.
	Progress(rowsRead, bytesRead uint64, elapsed time.Duration) error
	End(s Stats) error
	// Fail ends the output with an in-band error record that readers of the format can
	// detect, since the status code was sent before the failure.
	Fail(err error) error
	ContentType() string
}

// Names are the formats offered, in the spec's order.
var Names = []string{"JSON", "JSONEachRow", "JSONEachRowWithProgress", "JSONCompact", "CSV", "CSVWithNames",
	"TSV", "TSVWithNames", "TabSeparated"}

// Default is the format used when a request names none.
const Default = "JSON"

// UnknownError names a format that is not offered.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return fmt.Sprintf("format %q is not supported; use one of %s", e.Name, strings.Join(Names, ", "))
}

// New returns a writer of the named format over w. hints are the JSON format's hints.
func New(name string, w *bufio.Writer, hints []string) (Writer, error) {
	if name == "" {
		name = Default
	}
	if !slices.Contains(Names, name) {
		return nil, &UnknownError{Name: name}
	}
	switch name {
	case "JSON":
		return &jsonWriter{w: w, hints: hints}, nil
	case "JSONCompact":
		return &jsonWriter{w: w, hints: hints, compact: true}, nil
	case "JSONEachRow":
		return &eachRowWriter{w: w}, nil
	case "JSONEachRowWithProgress":
		return &eachRowWriter{w: w, progress: true}, nil
	case "CSV":
		return &textWriter{w: w, csv: true}, nil
	case "CSVWithNames":
		return &textWriter{w: w, csv: true, names: true}, nil
	case "TSV", "TabSeparated":
		return &textWriter{w: w}, nil
	case "TSVWithNames":
		return &textWriter{w: w, names: true}, nil
	}
	panic("unreachable")
}

// ObjectWriter is a Writer whose rows are JSON objects keyed by column name (JSON,
// JSONEachRow): RowObject writes one row given as that object, already encoded as Row
// would encode it.
type ObjectWriter interface {
	Writer
	RowObject(obj []byte) error
}

// AsObjectWriter returns w as an ObjectWriter when its rows are plain JSON objects.
func AsObjectWriter(w Writer) (ObjectWriter, bool) {
	switch x := w.(type) {
	case *jsonWriter:
		return x, !x.compact
	case *eachRowWriter:
		return x, !x.progress
	}
	return nil, false
}
