// Package rows turns ingest request bodies into rows: the buffer that becomes one Kafka record
// value, the plain JSON body decoder, content decoding with its size limit, and the errors the
// edge maps to status codes.
//
// A row is a compact JSON object; the record value is the rows, each followed by "\n"
// (DESIGN.md, Ingest record format). Every decoder in pipeline/... appends to a Buffer and leaves
// it as it found it when it fails, so a request is all-or-nothing.
package rows

import (
	"errors"
	"fmt"
	"slices"
)

var (
	// ErrTooLarge is matched (errors.Is) by every error about a size limit: a body larger than
	// the limit after decompression, or rows that would pass Buffer.MaxBytes. The edge answers
	// 413.
	ErrTooLarge = errors.New("too large")

	// ErrUnsupportedMediaType is matched by errors about a Content-Type or Content-Encoding a
	// decoder does not read. The edge answers 415.
	ErrUnsupportedMediaType = errors.New("unsupported media type")
)

// Every other error a decoder returns is about malformed or unexpected input: the edge answers
// 400 with the error's message, which names what was wrong and where.

// LimitError is a size limit that was passed. It matches ErrTooLarge.
type LimitError struct {
	What  string // "the decompressed body", "the rows"
	Limit int    // bytes
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s would be larger than the limit of %s", e.What, FormatBytes(e.Limit))
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// MediaTypeError is a content type or content coding that is not read. It matches
// ErrUnsupportedMediaType.
type MediaTypeError struct {
	Header string // "Content-Type" or "Content-Encoding"
	Value  string
	Want   string // what is accepted, for the message
}

func (e *MediaTypeError) Error() string {
	return fmt.Sprintf("%s %q is not supported; send %s", e.Header, e.Value, e.Want)
}

// Is makes errors.Is(err, ErrUnsupportedMediaType) true.
func (e *MediaTypeError) Is(target error) bool { return target == ErrUnsupportedMediaType }

// FormatBytes writes n as a whole number of MiB or KiB when it is one, in bytes otherwise.
func FormatBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Buffer collects the rows decoded from one request. Reuse it across requests (Reset) so its
// byte slices keep their capacity; drop rather than pool a Buffer that grew very large.
// A Buffer is not safe for concurrent use.
type Buffer struct {
	// B holds the rows, each a compact JSON object followed by "\n": the Kafka record value.
	B []byte
	// Rows counts the rows in B.
	Rows int
	// MaxBytes bounds len(B) when positive: a decoder that would pass it fails with a
	// LimitError. Set it to what one Kafka record may hold.
	MaxBytes int

	// Rejected counts records a transform dropped as invalid while keeping the rest (OTLP
	// partial success: rejectedSpans, rejectedLogRecords, rejectedDataPoints), and
	// RejectedReason says why the first was dropped (errorMessage).
	Rejected       int
	RejectedReason string

	inflated [2][]byte // scratch for content decoding, see Inflate
}

// Reset empties b for the next request, keeping its capacity and MaxBytes.
func (b *Buffer) Reset() {
	b.B = b.B[:0]
	b.Rows = 0
	b.Rejected = 0
	b.RejectedReason = ""
}

// Recycle empties b for another request, as Reset, and clears MaxBytes; a buffer (rows or
// content-decoding scratch) of more than max bytes of capacity is dropped rather than kept.
func (b *Buffer) Recycle(max int) {
	if cap(b.B) > max {
		b.B = nil
	}
	for i := range b.inflated {
		if cap(b.inflated[i]) > max {
			b.inflated[i] = nil
		}
	}
	b.Reset()
	b.MaxBytes = 0
}

// Mark is a state of a Buffer to return to when a decode fails half-way.
type Mark struct{ n, rows, rejected int }

// Mark returns the current state.
func (b *Buffer) Mark() Mark { return Mark{len(b.B), b.Rows, b.Rejected} }

// Restore returns b to m, dropping what was appended since.
func (b *Buffer) Restore(m Mark) {
	b.B = b.B[:m.n]
	b.Rows = m.rows
	b.Rejected = m.rejected
	if b.Rejected == 0 {
		b.RejectedReason = ""
	}
}

// Grow makes room for n more bytes of rows at once, instead of growing B by doubling as rows
// are appended (which copies what was written so far, about once over in all). Room past
// MaxBytes is never made: such rows fail the limit anyway.
func (b *Buffer) Grow(n int) {
	if b.MaxBytes > 0 {
		n = min(n, b.MaxBytes+1-len(b.B))
	}
	if n > 0 {
		b.B = slices.Grow(b.B, n)
	}
}

// EndRow finishes the row the caller appended to B (one compact JSON object): it appends the
// newline, counts the row and checks MaxBytes.
func (b *Buffer) EndRow() error {
	b.B = append(b.B, '\n')
	b.Rows++
	if b.MaxBytes > 0 && len(b.B) > b.MaxBytes {
		return &LimitError{What: "the rows", Limit: b.MaxBytes}
	}
	return nil
}

// Reject counts one invalid record that is dropped; the reason of the first one is kept.
func (b *Buffer) Reject(format string, args ...any) {
	if b.Rejected == 0 {
		b.RejectedReason = fmt.Sprintf(format, args...)
	}
	b.Rejected++
}
