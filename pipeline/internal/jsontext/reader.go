// Package jsontext reads and writes JSON text for the ingest decoders: a strict, validating pull
// reader that copies values out compacted without building a tree, and append-style writers.
//
// Why not a general JSON library: the rows we hand to Kafka must be valid, compact JSON whatever
// the producer sent, and the hot path must not allocate per value. fastjson's parser accepts
// numbers such as "1-2" and re-escapes strings with Go escapes (\x00, \a) that are not JSON;
// encoding/json allocates a tree. This reader validates everything it steps over (grammar,
// UTF-8, nesting depth) and copies the validated bytes, so a value it returns is always valid
// JSON that ClickHouse parses.
package jsontext

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays accepted, the default of ClickHouse's
// input_format_json_max_depth: deeper documents would be refused at insert anyway.
const MaxDepth = 1000

// SyntaxError is malformed JSON at a byte offset of the input.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// Kind is the type of a JSON value, known from its first byte.
type Kind uint8

// Kinds of JSON values.
const (
	Invalid Kind = iota
	Object
	Array
	String
	Number
	Bool
	Null
)

// KindOf returns the kind of the value that starts with c.
func KindOf(c byte) Kind {
	switch c {
	case '{':
		return Object
	case '[':
		return Array
	case '"':
		return String
	case 't', 'f':
		return Bool
	case 'n':
		return Null
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return Number
	}
	return Invalid
}

// String names the kind with an article, for messages such as "element 3 is a string".
func (k Kind) String() string {
	switch k {
	case Object:
		return "an object"
	case Array:
		return "an array"
	case String:
		return "a string"
	case Number:
		return "a number"
	case Bool:
		return "a boolean"
	case Null:
		return "null"
	}
	return "not a JSON value"
}

// Reader steps through one JSON text. Every value it consumes is validated. The zero Reader is
// empty; Reset points it at a text. Byte slices it returns alias the text or the reader's scratch
// space and are valid until the next call.
type Reader struct {
	src   []byte
	pos   int
	depth int
	// space records whether the last skipped value had whitespace outside strings, so that a
	// value already compact is copied in one piece.
	space   bool
	scratch []byte
}

// NewReader returns a reader of src.
func NewReader(src []byte) *Reader { return &Reader{src: src} }

// Reset points r at src, keeping its scratch space.
func (r *Reader) Reset(src []byte) {
	r.src, r.pos, r.depth, r.space = src, 0, 0, false
}

// Offset is the position of the next unread byte.
func (r *Reader) Offset() int { return r.pos }

func (r *Reader) errorf(pos int, format string, args ...any) error {
	return &SyntaxError{Offset: pos, Msg: fmt.Sprintf(format, args...)}
}

func (r *Reader) skipSpace() {
	for r.pos < len(r.src) {
		switch r.src[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
			r.space = true
		default:
			return
		}
	}
}

// Kind skips whitespace and reports the kind of the next value, Invalid at the end of input.
func (r *Reader) Kind() Kind {
	r.skipSpace()
	if r.pos >= len(r.src) {
		return Invalid
	}
	return KindOf(r.src[r.pos])
}

// AtEnd skips whitespace and reports whether the input is exhausted.
func (r *Reader) AtEnd() bool {
	r.skipSpace()
	return r.pos >= len(r.src)
}

// End reports an error unless only whitespace is left.
func (r *Reader) End() error {
	if !r.AtEnd() {
		return r.errorf(r.pos, "unexpected %s after the end of the top-level value", describe(r.src[r.pos:]))
	}
	return nil
}

// Skip validates and steps over the next value.
func (r *Reader) Skip() error {
	r.skipSpace()
	return r.skipValue()
}

// Raw validates and steps over the next value and returns its bytes as they are in the input.
func (r *Reader) Raw() ([]byte, error) {
	r.skipSpace()
	start := r.pos
	if err := r.skipValue(); err != nil {
		return nil, err
	}
	return r.src[start:r.pos], nil
}

// AppendCompact validates the next value and appends it to dst without insignificant whitespace.
// Strings are copied as they are: their escapes are valid JSON already.
func (r *Reader) AppendCompact(dst []byte) ([]byte, error) {
	r.skipSpace()
	start := r.pos
	r.space = false
	if err := r.skipValue(); err != nil {
		return dst, err
	}
	if !r.space {
		return append(dst, r.src[start:r.pos]...), nil
	}
	return appendWithoutSpace(dst, r.src[start:r.pos]), nil
}

// appendWithoutSpace copies valid JSON text without the whitespace outside strings.
func appendWithoutSpace(dst, v []byte) []byte {
	run := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case ' ', '\t', '\n', '\r':
			dst = append(dst, v[run:i]...)
			run = i + 1
		case '"':
			for i++; v[i] != '"'; i++ {
				if v[i] == '\\' {
					i++
				}
			}
		}
	}
	return append(dst, v[run:]...)
}

// Object steps through the members of the next value, which must be an object, calling fn with
// each key (escapes decoded). fn may consume the member's value with any Reader method; a value
// it leaves is skipped. An error from fn stops the walk and is returned as it is.
func (r *Reader) Object(fn func(key []byte) error) error {
	r.skipSpace()
	if r.pos >= len(r.src) || r.src[r.pos] != '{' {
		return r.errorf(r.pos, "expected an object, found %s", describe(r.src[r.pos:]))
	}
	if r.depth++; r.depth > MaxDepth {
		return r.errorf(r.pos, "nested deeper than %d levels", MaxDepth)
	}
	r.pos++
	r.skipSpace()
	if r.pos < len(r.src) && r.src[r.pos] == '}' {
		r.pos++
		r.depth--
		return nil
	}
	for {
		r.skipSpace()
		if r.pos >= len(r.src) || r.src[r.pos] != '"' {
			return r.errorf(r.pos, "expected a string as object key, found %s", describe(r.src[r.pos:]))
		}
		key, err := r.string()
		if err != nil {
			return err
		}
		r.skipSpace()
		if r.pos >= len(r.src) || r.src[r.pos] != ':' {
			return r.errorf(r.pos, "expected ':' after object key, found %s", describe(r.src[r.pos:]))
		}
		r.pos++
		r.skipSpace()
		at := r.pos
		if err := fn(key); err != nil {
			return err
		}
		if r.pos == at {
			if err := r.skipValue(); err != nil {
				return err
			}
		}
		r.skipSpace()
		if r.pos < len(r.src) {
			switch r.src[r.pos] {
			case ',':
				r.pos++
				continue
			case '}':
				r.pos++
				r.depth--
				return nil
			}
		}
		return r.errorf(r.pos, "expected ',' or '}' after object member, found %s", describe(r.src[r.pos:]))
	}
}

// Array steps through the elements of the next value, which must be an array, calling fn with
// each element's index. fn may consume the element; an element it leaves is skipped.
//
// Object and Array repeat their opening and separator handling rather than share helpers:
// they are the plain JSON decoder's innermost loop, and the shared version measured about 5%
// slower.
func (r *Reader) Array(fn func(i int) error) error {
	r.skipSpace()
	if r.pos >= len(r.src) || r.src[r.pos] != '[' {
		return r.errorf(r.pos, "expected an array, found %s", describe(r.src[r.pos:]))
	}
	if r.depth++; r.depth > MaxDepth {
		return r.errorf(r.pos, "nested deeper than %d levels", MaxDepth)
	}
	r.pos++
	r.skipSpace()
	if r.pos < len(r.src) && r.src[r.pos] == ']' {
		r.pos++
		r.depth--
		return nil
	}
	for i := 0; ; i++ {
		r.skipSpace()
		at := r.pos
		if err := fn(i); err != nil {
			return err
		}
		if r.pos == at {
			if err := r.skipValue(); err != nil {
				return err
			}
		}
		r.skipSpace()
		if r.pos < len(r.src) {
			switch r.src[r.pos] {
			case ',':
				r.pos++
				continue
			case ']':
				r.pos++
				r.depth--
				return nil
			}
		}
		return r.errorf(r.pos, "expected ',' or ']' after array element, found %s", describe(r.src[r.pos:]))
	}
}

// String reads the next value, which must be a string, and returns its contents with escapes
// decoded.
func (r *Reader) String() ([]byte, error) {
	r.skipSpace()
	if r.pos >= len(r.src) || r.src[r.pos] != '"' {
		return nil, r.errorf(r.pos, "expected a string, found %s", describe(r.src[r.pos:]))
	}
	return r.string()
}

// RawString reads the next value, which must be a string, and returns it quoted as in the
// input: valid JSON to copy into an output row.
func (r *Reader) RawString() ([]byte, error) {
	r.skipSpace()
	if r.pos >= len(r.src) || r.src[r.pos] != '"' {
		return nil, r.errorf(r.pos, "expected a string, found %s", describe(r.src[r.pos:]))
	}
	start := r.pos
	if _, err := r.scanString(); err != nil {
		return nil, err
	}
	return r.src[start:r.pos], nil
}

// Number reads the next value, which must be a number, and returns its text.
func (r *Reader) Number() ([]byte, error) {
	r.skipSpace()
	start := r.pos
	if r.pos >= len(r.src) || KindOf(r.src[r.pos]) != Number {
		return nil, r.errorf(r.pos, "expected a number, found %s", describe(r.src[r.pos:]))
	}
	if err := r.number(); err != nil {
		return nil, err
	}
	return r.src[start:r.pos], nil
}

// string reads a string at r.pos and returns its decoded contents.
func (r *Reader) string() ([]byte, error) {
	start := r.pos + 1
	escaped, err := r.scanString()
	if err != nil {
		return nil, err
	}
	raw := r.src[start : r.pos-1]
	if !escaped {
		return raw, nil
	}
	r.scratch = AppendUnescaped(r.scratch[:0], raw)
	return r.scratch, nil
}

// skipValue validates the value at r.pos (whitespace already skipped).
func (r *Reader) skipValue() error {
	if r.pos >= len(r.src) {
		return r.errorf(r.pos, "unexpected end of input, expected a value")
	}
	switch c := r.src[r.pos]; c {
	case '{':
		return r.Object(func([]byte) error { return nil })
	case '[':
		return r.Array(func(int) error { return nil })
	case '"':
		_, err := r.scanString()
		return err
	case 't':
		return r.literal("true")
	case 'f':
		return r.literal("false")
	case 'n':
		return r.literal("null")
	default:
		if KindOf(c) == Number {
			return r.number()
		}
		return r.errorf(r.pos, "expected a value, found %s", describe(r.src[r.pos:]))
	}
}

func (r *Reader) literal(lit string) error {
	if len(r.src)-r.pos < len(lit) || string(r.src[r.pos:r.pos+len(lit)]) != lit {
		return r.errorf(r.pos, "expected %s, found %s", lit, describe(r.src[r.pos:]))
	}
	r.pos += len(lit)
	return nil
}

// number validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at r.pos.
func (r *Reader) number() error {
	s, i := r.src, r.pos
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
	default:
		return r.errorf(i, "expected a digit in number, found %s", describe(s[i:]))
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return r.errorf(i, "expected a digit after the decimal point, found %s", describe(s[i:]))
		}
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return r.errorf(i, "expected a digit in the exponent, found %s", describe(s[i:]))
		}
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
	}
	r.pos = i
	return nil
}

// plain marks the bytes a string may hold as they are: printable ASCII except '"' and '\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString validates the string at r.pos (its opening quote) and steps past it; escaped
// reports whether it holds escape sequences.
func (r *Reader) scanString() (escaped bool, err error) {
	s := r.src
	i := r.pos + 1
	for {
		i = skipPlain(s, i)
		if i >= len(s) {
			return false, r.errorf(r.pos, "string is not terminated")
		}
		switch c := s[i]; {
		case c == '"':
			r.pos = i + 1
			return escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(s) {
				return false, r.errorf(i, "string is not terminated")
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(s)-i < 6 || !isHex(s[i+2]) || !isHex(s[i+3]) || !isHex(s[i+4]) || !isHex(s[i+5]) {
					return false, r.errorf(i, `\u must be followed by four hex digits`)
				}
				i += 6
			default:
				return false, r.errorf(i, "invalid escape sequence %s in string", describe(s[i:min(i+2, len(s))]))
			}
		case c < 0x20:
			return false, r.errorf(i, "control character 0x%02x in string must be escaped", c)
		default:
			ru, n := utf8.DecodeRune(s[i:])
			if ru == utf8.RuneError && n <= 1 {
				return false, r.errorf(i, "invalid UTF-8 byte 0x%02x in string", c)
			}
			i += n
		}
	}
}

// skipPlain returns the index of the first byte at or after i that is not plain (printable
// ASCII other than '"' and '\\'), or len(s). It tests eight bytes at a time with the classic
// SWAR expressions: (v - 0x01…) &^ v has the high bit set in the lowest byte of v that is
// below the bound (or zero), exactly in that byte, so the lowest flagged byte is the answer.
func skipPlain(s []byte, i int) int {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		q := x ^ (ones * '"')
		b := x ^ (ones * '\\')
		m := ((x - ones*0x20) &^ x) | ((q - ones) &^ q) | ((b - ones) &^ b) | x
		if m &= high; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(s) && plain[s[i]] {
		i++
	}
	return i
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// describe names what starts at b for an error message, quoting at most a few bytes.
func describe(b []byte) string {
	if len(b) == 0 {
		return "end of input"
	}
	if b[0] < 0x20 || b[0] >= 0x7f {
		return fmt.Sprintf("byte 0x%02x", b[0])
	}
	const max = 16
	n := 0
	for n < len(b) && n < max && b[n] >= 0x20 && b[n] < 0x7f {
		n++
	}
	if n == max && n < len(b) {
		return fmt.Sprintf("%q...", b[:n])
	}
	return fmt.Sprintf("%q", b[:n])
}
