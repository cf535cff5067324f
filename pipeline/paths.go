package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/google/uuid"
)

// PathRecorder is implemented by Tables that keep a path schema per table (leaf path ->
// types seen, docs/typing.md). Before a batch is inserted, the consumer hands it the
// rows whose shape this node has not seen for the table yet; a batch of known shapes
// costs one walk of its rows and no engine or catalog call.
type PathRecorder interface {
	RecordPaths(ctx context.Context, tableID uuid.UUID, rows [][]byte) error
}

// PathTypesRecorder is implemented by Tables that can add paths and engine types, as an
// encoding of the rows told them (EncodedRows.Paths), to a table's path schema.
type PathTypesRecorder interface {
	RecordPathTypes(ctx context.Context, tableID uuid.UUID, seen map[string][]string) error
}

// maxShapes bounds the shapes remembered per table; past it the memory starts over
// (recording again is harmless: only new path types are appended).
const maxShapes = 4096

// shapeCache remembers the row shapes whose paths were recorded, per table.
type shapeCache struct {
	mu     sync.Mutex
	seed   maphash.Seed
	tables map[uuid.UUID]map[uint64]struct{}
}

func newShapeCache() *shapeCache {
	return &shapeCache{seed: maphash.MakeSeed(), tables: map[uuid.UUID]map[uint64]struct{}{}}
}

// recordPaths records the paths of every group's rows of new shapes. Errors reaching
// the engine or the catalog are retried; the schema is written before the insert, so
// rows visible to queries are always typed. Where the engine encodes rows ahead of their insert (encodesRows), each group's paths are
// recorded by insertRows instead, from the encoding or else from its rows' shapes.
func (w *worker) recordPaths(ctx context.Context, groups []*group) error {
	if w.encodesRows() {
		return nil
	}
	for _, g := range groups {
		if isPrometheus(g) {
			continue // typed tables: no paths
		}
		var values [][]byte
		for _, r := range g.recs {
			values = append(values, r.Value)
		}
		if err := w.recordShapes(ctx, g.table, values); err != nil {
			return err
		}
	}
	return nil
}

// encodesRows reports whether the engine encodes rows ahead of their insert and the
// tables take the paths of an encoding.
func (w *worker) encodesRows() bool {
	_, enc := w.c.engine.(RowsEncoder)
	_, rec := w.c.tables.(PathTypesRecorder)
	return enc && rec
}

// recordEncodedPaths records the paths of rows inserted as e; rows sent as text have theirs
// recorded from their shapes.
func (w *worker) recordEncodedPaths(ctx context.Context, table uuid.UUID, e EncodedRows) error {
	if e.Block == nil {
		return w.recordShapes(ctx, table, e.Rows)
	}
	pr := w.c.tables.(PathTypesRecorder)
	if err := w.retry(ctx, func() error { return pr.RecordPathTypes(ctx, table, e.Paths) }); err != nil {
		return fmt.Errorf("record paths of table %s: %w", table, err)
	}
	return nil
}

// recordShapes records the paths of the rows (record values) of a table whose shapes
// were not recorded yet.
func (w *worker) recordShapes(ctx context.Context, table uuid.UUID, values [][]byte) error {
	pr, ok := w.c.tables.(PathRecorder)
	if !ok {
		return nil
	}
	sc := w.c.shapes
	var rows [][]byte
	var fresh []uint64
	sc.mu.Lock()
	known := sc.tables[table]
	sc.mu.Unlock()
	batch := map[uint64]bool{}
	for _, v := range values {
		for line := range linesOf(v) {
			h := shapeHash(sc.seed, line)
			if _, ok := known[h]; ok || batch[h] {
				continue
			}
			batch[h] = true
			fresh = append(fresh, h)
			rows = append(rows, line)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if err := w.retry(ctx, func() error { return pr.RecordPaths(ctx, table, rows) }); err != nil {
		return fmt.Errorf("record paths of table %s: %w", table, err)
	}
	sc.mu.Lock()
	m := sc.tables[table]
	if m == nil || len(m)+len(fresh) > maxShapes {
		m = map[uint64]struct{}{}
	} else {
		m = cloneSet(m)
	}
	for _, h := range fresh {
		m[h] = struct{}{}
	}
	sc.tables[table] = m
	sc.mu.Unlock()
	return nil
}

func cloneSet(m map[uint64]struct{}) map[uint64]struct{} {
	out := make(map[uint64]struct{}, len(m)+8)
	for k := range m {
		out[k] = struct{}{}
	}
	return out
}

// linesOf yields the non-empty lines of a record value, without their newline.
func linesOf(v []byte) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(v) > 0 {
			i := 0
			for i < len(v) && v[i] != '\n' {
				i++
			}
			line := v[:i]
			if i < len(v) {
				i++
			}
			v = v[i:]
			if len(line) > 0 && !yield(line) {
				return
			}
		}
	}
}

// shapeHash hashes the shape of a JSON document: every leaf path with the kind of its
// value (integer, float, string, date-like string, bool, null, and arrays by the kinds
// of their elements). Two rows of one shape have the same paths and engine types. A row
// that is not valid JSON hashes to its own text, so it is sent once and the engine
// judges it.
func shapeHash(seed maphash.Seed, row []byte) uint64 {
	s := scanners.Get().(*shapeScanner)
	defer scanners.Put(s)
	s.b, s.i, s.h, s.path, s.base = row, 0, s.h[:0], s.path[:0], 0
	s.ws()
	if !s.value(0) {
		return maphash.Bytes(seed, row)
	}
	// The shape is written out and hashed once: byte-wise hashing cost more than the scan.
	return maphash.Bytes(seed, s.h)
}

var scanners = sync.Pool{New: func() any { return &shapeScanner{} }}

type shapeScanner struct {
	b []byte
	i int
	h []byte // the shape, hashed at the end
	// path is the current value's path, from base: an array element's contents hash
	// under "@", after the array's own path.
	path []byte
	base int
}

func (s *shapeScanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

// value scans one value at the current path and writes its shape; false on malformed
// input.
func (s *shapeScanner) value(depth int) bool {
	if depth > 64 || s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			s.leaf('o')
			return true
		}
		for {
			s.ws()
			start, end, ok := s.str()
			if !ok {
				return false
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return false
			}
			s.i++
			s.ws()
			n := len(s.path)
			s.path = append(append(s.path, '.'), s.b[start:end]...)
			ok = s.value(depth + 1)
			s.path = s.path[:n]
			if !ok {
				return false
			}
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.i < len(s.b) && s.b[s.i] == '}' {
				s.i++
				return true
			}
			return false
		}
	case c == '[':
		s.i++
		s.h = append(s.h, s.path[s.base:]...)
		s.h = append(s.h, '[')
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			s.h = append(s.h, ']')
			return true
		}
		var last byte
		for {
			s.ws()
			k, ok := s.elem(depth + 1)
			if !ok {
				return false
			}
			if k != last {
				s.h = append(s.h, k)
				last = k
			}
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.i < len(s.b) && s.b[s.i] == ']' {
				s.i++
				s.h = append(s.h, ']')
				return true
			}
			return false
		}
	default:
		k, ok := s.scalar()
		if ok {
			s.leaf(k)
		}
		return ok
	}
}

// under scans a value whose path is "@" (an array element's), then restores the path.
func (s *shapeScanner) under(depth int) bool {
	n, base := len(s.path), s.base
	s.path = append(s.path, '@')
	s.base = n
	ok := s.value(depth)
	s.path, s.base = s.path[:n], base
	return ok
}

// elem scans an array element and returns its kind; nested arrays and objects hash
// their whole text's structure by kind only ('A', 'O') plus a walk of their contents.
func (s *shapeScanner) elem(depth int) (byte, bool) {
	if s.i >= len(s.b) {
		return 0, false
	}
	switch s.b[s.i] {
	case '{':
		s.h = append(s.h, '{')
		ok := s.under(depth)
		s.h = append(s.h, '}')
		return 'O', ok
	case '[':
		ok := s.under(depth)
		return 'A', ok
	}
	return s.scalar()
}

func (s *shapeScanner) leaf(kind byte) {
	s.h = append(s.h, s.path[s.base:]...)
	s.h = append(s.h, 0, kind)
}

// scalar scans a string, number, boolean or null and returns its kind.
func (s *shapeScanner) scalar() (byte, bool) {
	switch c := s.b[s.i]; {
	case c == '"':
		start, end, ok := s.str()
		if !ok {
			return 0, false
		}
		return stringKind(s.b[start:end]), true
	case c == 't' || c == 'f' || c == 'n':
		j := s.i
		for j < len(s.b) && s.b[j] >= 'a' && s.b[j] <= 'z' {
			j++
		}
		word := string(s.b[s.i:j])
		s.i = j
		switch word {
		case "true", "false":
			return 'b', true
		case "null":
			return 'n', true
		}
		return 0, false
	case c == '-' || c >= '0' && c <= '9':
		j := s.i
		kind := byte('i')
		for j < len(s.b) {
			d := s.b[j]
			if d == '.' || d == 'e' || d == 'E' {
				kind = 'f'
			} else if !(d == '-' || d == '+' || d >= '0' && d <= '9') {
				break
			}
			j++
		}
		if kind == 'i' && j-s.i >= 19 {
			kind = 'I' // may not fit Int64
		}
		s.i = j
		return kind, true
	}
	return 0, false
}

// str scans a string and returns the span of its raw contents.
func (s *shapeScanner) str() (int, int, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return 0, 0, false
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			end := s.i
			s.i++
			return start, end, true
		}
		s.i++
	}
	return 0, 0, false
}

// stringKind tells strings the engine may infer as dates or date-times from the others.
// The engine's best-effort parser reads digits with punctuation ("2026-11-25",
// "2026/11/25"), month names ("25 Nov 2026", even "25dec2026") and forms led by a month or
// weekday name ("Nov 25 2026", "Wed, 25 Nov 2026 10:00:00 GMT"). Such a string gets a kind
// by its length and punctuation, so a new date-like form is a new shape; every other
// string is 's', one kind with all strings. Hexadecimal ids ("4bf92f3577b34da6...") are
// strings to the engine unless they spell dec or feb: before they were told apart by
// their letters, and with random trace and span ids nearly every row was a new shape,
// whose rows the consumer sent to the engine to be typed again (about a third more
// engine work for OTLP spans).
func stringKind(v []byte) byte {
	// No date or date-time the engine reads is longer than 64 bytes (ledByName's bound):
	// a longer string (a log line, a URL) is 's' without a look at its bytes, which was
	// about a twentieth of svcd's CPU on HEC events, whose _raw lines open with digits.
	if len(v) == 0 || len(v) > 64 {
		return 's'
	}
	if v[0] < '0' || v[0] > '9' {
		if !ledByName(v) {
			return 's'
		}
	} else if hexID(v) {
		return 's'
	}
	var sig byte = 'd'
	for _, c := range v {
		if c < '0' || c > '9' {
			sig = sig*31 + c
		}
	}
	return sig ^ byte(len(v))
}

// dateNames are the month and weekday names a date string may open with (lower3).
var dateNames = func() []uint32 {
	var out []uint32
	for _, n := range []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
		"mon", "tue", "wed", "thu", "fri", "sat", "sun"} {
		out = append(out, lower3([]byte(n)))
	}
	return out
}()

// ledByName reports whether v opens with a month or weekday name, holds a digit and is
// no longer than a date can be written (longer text, a syslog line say, is no date).
func ledByName(v []byte) bool {
	if len(v) < 4 || len(v) > 64 {
		return false
	}
	if !slices.Contains(dateNames, lower3(v)) {
		return false
	}
	return bytes.ContainsAny(v, "0123456789")
}

// hexID reports whether v is digits and hexadecimal letters only, with a letter, and spells
// no date name (dec and feb can be spelled in hexadecimal).
func hexID(v []byte) bool {
	letter := false
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			letter = true
		default:
			return false
		}
	}
	if !letter {
		return false
	}
	for i := 0; i+3 <= len(v); i++ {
		if slices.Contains(dateNames, lower3(v[i:])) {
			return false
		}
	}
	return true
}

// lower3 packs the first three bytes of v, letters lowercased, into one number.
func lower3(v []byte) uint32 {
	return uint32(v[0]|0x20)<<16 | uint32(v[1]|0x20)<<8 | uint32(v[2]|0x20)
}
