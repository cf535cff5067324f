package spl

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Pos is a byte offset into the search text.
type Pos int

// PosRange is the half-open byte range [Start, End) that a node covers.
type PosRange struct {
	Start, End Pos
}

// Position is a human-readable location: 1-based line and column, the
// column counted in Unicode code points.
type Position struct {
	Offset int `json:"offset"`
	Line   int `json:"line"`
	Column int `json:"column"`
}

// position converts a byte offset of src into a line and column.
func position(src string, p Pos) Position {
	off := min(max(int(p), 0), len(src))
	line, col := 1, 1
	for i, r := range src[:off] {
		_ = i
		if r == '\n' {
			line++
			col = 1
			continue
		}
		col++
	}
	return Position{Offset: off, Line: line, Column: col}
}

// Error codes carried by Error; the HTTP layer puts them in the error
// envelope's code field.
const (
	CodeSyntax      = "spl_syntax_error"       // the text does not parse
	CodeUnsupported = "spl_unsupported"        // valid SPL outside the supported subset
	CodeInvalid     = "spl_invalid"            // well-formed but meaningless or ambiguous
	CodeLimit       = "spl_limit_exceeded"     // a compiler or result limit was reached
	CodeTimeWindow  = "spl_invalid_time_range" // earliest/latest do not parse or are inverted
)

// Error is one user error in a search, with its position. Every Error is a
// client error: the HTTP status is 400.
type Error struct {
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Hint     string   `json:"hint,omitempty"`
	Position Position `json:"position"`
	// Caret is the offending line with a caret under the position, empty
	// when the error has no position in the search text (e.g. a time bound).
	Caret string `json:"caret,omitempty"`
	// Bound is the request field a time-window error is about: "earliest" (an inverted
	// window too) or "latest".
	Bound string `json:"-"`
	pos   Pos
	noPos bool
}

func (e *Error) Error() string {
	if e.noPos {
		return e.Message
	}
	return fmt.Sprintf("%d:%d: %s", e.Position.Line, e.Position.Column, e.Message)
}

// StatusCode is the HTTP status for the error: always 400.
func (e *Error) StatusCode() int { return http.StatusBadRequest }

// Errors is the list of errors found in one search, in source order. It is
// what Parse, Compile and Search return for user errors.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// StatusCode is the HTTP status for the errors: always 400.
func (es Errors) StatusCode() int { return http.StatusBadRequest }

// Code is the error envelope's code: the first error's.
func (es Errors) Code() string {
	if len(es) == 0 {
		return CodeInvalid
	}
	return es[0].Code
}

// Hint is the error envelope's hint: the first hint given, if any.
func (es Errors) Hint() string {
	for _, e := range es {
		if e.Hint != "" {
			return e.Hint
		}
	}
	return ""
}

// Render returns every error with its line and a caret, for logs and tests.
func (es Errors) Render() string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.Error())
		b.WriteByte('\n')
		if e.Caret != "" {
			b.WriteString(e.Caret)
			b.WriteByte('\n')
		}
		if e.Hint != "" {
			b.WriteString("  hint: " + e.Hint + "\n")
		}
	}
	return b.String()
}

// AsErrors extracts the user errors from err, if it carries any.
func AsErrors(err error) (Errors, bool) {
	var es Errors
	if errors.As(err, &es) {
		return es, true
	}
	var e *Error
	if errors.As(err, &e) {
		return Errors{e}, true
	}
	return nil, false
}

// ErrInternal marks a failure of the compiler itself (a recovered panic);
// it is a server error, not a problem with the search.
var ErrInternal = errors.New("spl: internal compiler error")

// errorList collects positioned errors for one source text.
type errorList struct {
	src  string
	errs Errors
}

const maxErrors = 10

func (l *errorList) add(code string, p Pos, hint string, format string, args ...any) {
	if len(l.errs) >= maxErrors {
		return
	}
	e := &Error{Code: code, Message: fmt.Sprintf(format, args...), Hint: hint, pos: p}
	e.Position = position(l.src, p)
	e.Caret = caret(l.src, e.Position)
	l.errs = append(l.errs, e)
}

func (l *errorList) full() bool { return len(l.errs) >= maxErrors }

func (l *errorList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	return l.errs
}

// newError builds a single error without a source position.
func newError(code, hint, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Hint: hint, noPos: true}
}

// caret renders the line holding pos with a caret under the column. Tabs
// are kept so that the caret lines up in a terminal.
func caret(src string, p Position) string {
	start := strings.LastIndexByte(src[:p.Offset], '\n') + 1
	end := strings.IndexByte(src[p.Offset:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += p.Offset
	}
	line := src[start:end]
	if !utf8.ValidString(line) {
		line = strings.ToValidUTF8(line, "\uFFFD")
	}
	var pad strings.Builder
	for _, r := range src[start:p.Offset] {
		if r == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
	}
	return "  " + line + "\n  " + pad.String() + "^"
}
