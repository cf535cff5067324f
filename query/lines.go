package query

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/format"
	"github.com/svc-data/svc/query/statement"
)

// A read in JSON or JSONEachRow is served from the engine's own encoding when every column of its
// result is an integer, a String or a Bool (possibly Nullable or LowCardinality): the
// engine writes the rows as JSONCompactEachRowWithNamesAndTypes, and each line is rewritten
// into the API's object with a byte scan, instead of decoding every value into Go and
// encoding it again. The output is the same bytes the row-by-row path writes: integers
// are numbers whatever the quoting settings, strings are decoded and re-encoded unless
// they hold nothing the two encoders could write differently. A result of any other type
// runs the usual way (the statement is sent again, in Native).

// linesFormat is the engine format the rewrite reads.
const linesFormat = "JSONCompactEachRowWithNamesAndTypes"

type lineKind uint8

const (
	lineInt lineKind = iota + 1
	lineString
	lineBool
)

// lineKindOf returns how a column of engine type typ is rewritten, and whether it may be
// null; 0 when values of the type are not served from the engine's encoding.
func lineKindOf(typ string) (lineKind, bool) {
	nullable := false
	for {
		switch {
		case strings.HasPrefix(typ, "LowCardinality(") && strings.HasSuffix(typ, ")"):
			typ = typ[len("LowCardinality(") : len(typ)-1]
			continue
		case strings.HasPrefix(typ, "Nullable(") && strings.HasSuffix(typ, ")"):
			typ, nullable = typ[len("Nullable("):len(typ)-1], true
			continue
		}
		break
	}
	switch typ {
	case "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64":
		return lineInt, nullable
	case "String":
		return lineString, nullable
	case "Bool":
		return lineBool, nullable
	}
	return 0, false
}

// splicer rewrites the engine's JSONCompactEachRow lines into JSONEachRow objects.
type splicer struct {
	cols     []format.Column
	keys     [][]byte // `{"name":` then `,"name":` ...
	kinds    []lineKind
	nullable []bool
	scratch  []byte
}

// newSplicer reads the header lines; ok is false when a column's type is not served.
func newSplicer(namesLine, typesLine []byte) (*splicer, bool) {
	var names, types []string
	if json.Unmarshal(namesLine, &names) != nil || json.Unmarshal(typesLine, &types) != nil || len(names) != len(types) || len(names) == 0 {
		return nil, false
	}
	s := &splicer{}
	for i, n := range names {
		k, null := lineKindOf(types[i])
		if k == 0 {
			return nil, false
		}
		key := []byte{','}
		if i == 0 {
			key[0] = '{'
		}
		key = append(format.AppendJSONString(key, n), ':')
		s.cols = append(s.cols, format.Column{Name: n, Type: types[i]})
		s.keys, s.kinds, s.nullable = append(s.keys, key), append(s.kinds, k), append(s.nullable, null)
	}
	return s, true
}

var errLineShape = errors.New("engine row does not have the shape of its types")

// appendRow appends the JSON object of one engine line.
func (s *splicer) appendRow(b, line []byte) ([]byte, error) {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '[' {
		return b, errLineShape
	}
	i++
	for c := range s.keys {
		if c > 0 {
			if i = skipSpace(line, i); i >= len(line) || line[i] != ',' {
				return b, errLineShape
			}
			i++
		}
		i = skipSpace(line, i)
		b = append(b, s.keys[c]...)
		var err error
		if b, i, err = s.appendValue(b, line, i, c); err != nil {
			return b, err
		}
	}
	if i = skipSpace(line, i); i >= len(line) || line[i] != ']' || skipSpace(line, i+1) != len(line) {
		return b, errLineShape
	}
	return append(b, '}'), nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// appendValue appends the value of column c that starts at line[i], and returns where it
// ends.
func (s *splicer) appendValue(b, line []byte, i, c int) ([]byte, int, error) {
	if hasWord(line, i, "null") {
		if !s.nullable[c] {
			return b, i, errLineShape
		}
		return append(b, "null"...), i + 4, nil
	}
	switch s.kinds[c] {
	case lineBool:
		for _, w := range []string{"true", "false"} {
			if hasWord(line, i, w) {
				return append(b, w...), i + len(w), nil
			}
		}
	case lineInt:
		// A number, or a quoted one (output_format_json_quote_64bit_integers): the API
		// writes integers as numbers.
		quoted := i < len(line) && line[i] == '"'
		j := i
		if quoted {
			j++
		}
		start := j
		if j < len(line) && line[j] == '-' {
			j++
		}
		digits := j
		for j < len(line) && line[j] >= '0' && line[j] <= '9' {
			j++
		}
		if j == digits {
			break
		}
		b = append(b, line[start:j]...)
		if quoted {
			if j >= len(line) || line[j] != '"' {
				break
			}
			j++
		}
		return b, j, nil
	case lineString:
		if i >= len(line) || line[i] != '"' {
			break
		}
		j, plain := i+1, true
		for ; j < len(line) && line[j] != '"'; j++ {
			switch ch := line[j]; {
			case ch == '\\':
				plain = false
				j++
			case ch < 0x20 || ch == 0x7f:
				plain = false
			case ch >= utf8.RuneSelf:
				plain = false
			}
		}
		if j >= len(line) {
			break
		}
		if plain || utf8.Valid(line[i+1:j]) && !needsEscape(line[i+1:j]) {
			return append(b, line[i:j+1]...), j + 1, nil
		}
		raw, ok := unescapeJSON(s.scratch[:0], line[i+1:j])
		if !ok {
			break
		}
		s.scratch = raw
		return format.AppendJSONString(b, string(raw)), j + 1, nil
	}
	return b, i, errLineShape
}

// needsEscape reports whether s holds a byte the API's encoder writes differently from the
// engine's: a backslash escape, a control character or DEL.
func needsEscape(s []byte) bool {
	for _, ch := range s {
		if ch == '\\' || ch < 0x20 || ch == 0x7f {
			return true
		}
	}
	return false
}

func hasWord(b []byte, i int, w string) bool {
	return len(b)-i >= len(w) && string(b[i:i+len(w)]) == w
}

// unescapeJSON decodes the body of a JSON string as the engine writes it; raw bytes (the
// engine does not validate UTF-8) stay as they are.
func unescapeJSON(out, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		i++
		if i >= len(s) {
			return out, false
		}
		switch s[i] {
		case '"', '\\', '/':
			out = append(out, s[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n, ok := hexRune(s[i+1:])
			if !ok {
				return out, false
			}
			i += n
			if r >= 0xd800 && r < 0xdc00 && i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if lo, m, ok := hexRune(s[i+3:]); ok && lo >= 0xdc00 && lo < 0xe000 {
					r = (r-0xd800)<<10 + (lo - 0xdc00) + 0x10000
					i += 2 + m
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return out, false
		}
	}
	return out, true
}

func hexRune(s []byte) (rune, int, bool) {
	if len(s) < 4 {
		return 0, 0, false
	}
	var r rune
	for _, c := range s[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, 0, false
		}
	}
	return r, 4, true
}

// linesServed reports whether a request's result may be served from the engine's lines:
// a read in a format whose rows are plain JSON objects.
func linesServed(req Request, st *statement.Statement) bool {
	return (req.Format == "JSON" || req.Format == "JSONEachRow") && len(st.Writes) == 0 && !st.EmptyResult
}

// runLines starts a read through LineEngine. It returns no Lines and no error when the
// result is not served from the engine's encoding (a type the rewrite does not serve, or
// an empty JSON result, whose meta only the row-by-row path knows); the statement must then
// run the usual way.
func runLines(ctx context.Context, eng LineEngine, req Request, st *statement.Statement, opt Options) (Lines, *splicer, []byte, error) {
	ls, err := eng.StreamLines(ctx, st.SQL, linesFormat, opt)
	// The embedded engine has no stream for a result without rows in a format with a
	// header (while Native yields its header block): the statement then runs row by row,
	// which knows the columns of an empty result.
	if engineerr.IsNoActiveStream(err) || errors.Is(err, ErrNotLines) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	names, err := ls.Next()
	if errors.Is(err, io.EOF) && req.Format == "JSONEachRow" {
		return ls, nil, nil, nil // no rows: nothing to write
	}
	if err != nil {
		ls.Close()
		if errors.Is(err, io.EOF) {
			err = nil
		}
		return nil, nil, nil, err
	}
	names = append([]byte(nil), names...)
	types, err := ls.Next()
	if err != nil {
		ls.Close()
		if errors.Is(err, io.EOF) {
			err = errors.New("engine result ended after its names")
		}
		return nil, nil, nil, err
	}
	sp, ok := newSplicer(names, types)
	if !ok {
		ls.Close()
		return nil, nil, nil, nil
	}
	// The first row, so that an error the engine raises at once gets a proper status.
	first, err := ls.Next()
	switch {
	case errors.Is(err, io.EOF):
		first = nil
	case err != nil:
		ls.Close()
		return nil, nil, nil, err
	default:
		first = append([]byte(nil), first...)
	}
	return ls, sp, first, nil
}

// lineResult is a response rewritten from the engine's lines.
type lineResult struct {
	queryID    string
	format     string
	start      time.Time
	lines      Lines
	sp         *splicer // nil: no rows and no header
	first      []byte   // nil: no rows
	env        statement.Env
	finish     func()
	canceled   func() error
	hideCounts bool     // as result.hideCounts
	hints      []string // Statement.Hints
}

func (r *lineResult) QueryID() string { return r.queryID }

// Whole reports whether the engine's answer had a length (the engine sends one only when
// the statement had ended) of at most wholeLimit.
func (r *lineResult) Whole() bool {
	s, ok := r.lines.(interface{ Size() int64 })
	if !ok {
		return false
	}
	n := s.Size()
	return n >= 0 && n <= wholeLimit
}

func (r *lineResult) ContentType() string {
	w, _ := format.New(r.format, nil, nil)
	return w.ContentType()
}

func (r *lineResult) WriteTo(out *bufio.Writer) error {
	defer out.Flush()
	defer r.finish()
	defer r.lines.Close()
	// Rows go out in large writes (the edge's writer is small, and each of its flushes is
	// an HTTP chunk and a system call).
	bw := bufio.NewWriterSize(out, 64<<10)
	defer bw.Flush()
	w, err := format.New(r.format, bw, r.hints)
	if err != nil {
		return err
	}
	ow, ok := format.AsObjectWriter(w)
	if !ok {
		return fmt.Errorf("format %s has no object rows", r.format)
	}
	cols := []format.Column{}
	if r.sp != nil {
		cols = r.sp.cols
	}
	if err := w.Begin(cols); err != nil {
		return err
	}
	var buf []byte
	var returned uint64
	flush := newTick(time.Second)
	defer flush.Stop()
	for line := r.first; line != nil; {
		if buf, err = r.sp.appendRow(buf[:0], line); err != nil {
			e := fmt.Errorf("rewrite engine row: %w", err)
			_ = w.Fail(e)
			return e
		}
		if err := ow.RowObject(buf); err != nil {
			return err // the client went away
		}
		returned++
		if flush.Due() {
			// As the row-by-row path: a slow result reaches the client as it comes.
			flush.Reset()
			if err := bw.Flush(); err != nil {
				return err
			}
			if err := out.Flush(); err != nil {
				return err
			}
		}
		line, err = r.lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			e := engineError(err, r.env)
			if r.canceled() != nil {
				e = &Error{Status: 499, Code: "canceled", Message: "the query was canceled"}
			}
			_ = w.Fail(e)
			return e
		}
	}
	stats := format.Stats{Elapsed: time.Since(r.start)}
	if r.hideCounts {
		stats.RowsRead = returned
	} else {
		sum := r.lines.Summary()
		stats.RowsRead, stats.BytesRead = sum.RowsRead, sum.BytesRead
	}
	return w.End(stats)
}
