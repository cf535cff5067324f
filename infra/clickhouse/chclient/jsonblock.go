package chclient

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// jsonBlock encodes JSON documents as one block of the engine's Native format with one
// column, doc, in the JSON type's flattened serialization (object serialization version
// 3): the paths and their values typed as the engine would type them, so the engine
// copies columns instead of parsing text. Measured on the pinned engine, 25k HEC events
// per insert: 2.4-2.7 core-seconds of engine CPU per million events, against 4.9-5.1
// for the same documents as text (docs/performance.md, stop 38).
//
// It encodes only what it can type exactly as the engine's own JSON reader would, with
// the insert's settings (type_json_skip_duplicated_paths aside, which never applies:
// a document naming a path twice is not encoded). Anything else is refused (ok false)
// and the caller sends the documents as text, as before: a value of a kind the encoder
// does not take, a document that is not one plain JSON object, a column type other than
// JSON with String or DateTime64(3, 'UTC') typed paths. Strings whose type the
// encoder cannot tell by itself (a digit in 50 bytes or fewer: the engine may read a date
// or a time in them) are returned in ambiguous, for the caller to ask the engine
// (stringTypes); TestJSONBlockMatchesTheEngine holds every choice to the engine's.
//
// Layout, all of it read back from the engine's own output in this serialization:
//
//	column count, row count, "doc", the column type;
//	UInt64 3; the dynamic paths (count, then each name), sorted;
//	per dynamic path: UInt64 3; its types (count, then each name), sorted;
//	the typed paths' data, in the order of their names, then per dynamic path one
//	UInt8 per row (the index of the row's type, the type count for no value) and the
//	values of each type in the order of the types.
type jsonBlock struct {
	typed  []*typedPath
	byPath map[string]*dynPath
	order  []*dynPath
	rows   int

	// ambiguous are the distinct strings written as String whose type the engine must
	// confirm before the block is sent.
	ambiguous []string
	seen      map[string]struct{}

	// hint is the rows expected (the input's lines), input its bytes and reserved the
	// bytes reserved for columns so far (reserve).
	hint, input, reserved int
	gen                   int // the batches encoded with these buffers

	key []byte // the path being read
	tmp []byte // an unescaped string
	// inferTimes is whether strings in the timestamp shapes are typed DateTime and
	// DateTime64(9) without asking the engine (the engine's zone is UTC and it agreed
	// on the shapes: probeTimes).
	inferTimes bool
}

// A jsonKind is the engine type of a dynamic path's value.
type jsonKind uint8

const (
	kindInt64 jsonKind = iota
	kindUInt64
	kindFloat64
	kindBool
	kindString
	kindDateTime
	kindDateTime64
	kindArrayString
	kindArrayInt64
	kindArrayFloat64
	kindArrayBool
	jsonKinds
)

var kindNames = [jsonKinds]string{"Int64", "UInt64", "Float64", "Bool", "String", "DateTime", "DateTime64(9)",
	"Array(Nullable(String))", "Array(Nullable(Int64))", "Array(Nullable(Float64))", "Array(Nullable(Bool))"}

// arrayKinds are the array kinds.
var arrayKinds = []jsonKind{kindArrayBool, kindArrayFloat64, kindArrayInt64, kindArrayString}

// isArray reports whether k is an array kind, whose data are its offsets and whose
// elements are in dynPath.elem.
func (k jsonKind) isArray() bool { return k >= kindArrayString }

// noValue is a row's kind index where the path has no value.
const noValue = 0xff

type dynPath struct {
	name string
	gen  int        // the block it holds values of (jsonBlock.gen)
	hint int        // rows expected
	kind []jsonKind // per row
	data [jsonKinds][]byte
	has  [jsonKinds]bool
	// elem and elems are the elements of the arrays of each array kind (their data and
	// count; data holds their cumulative offsets).
	elem  [jsonKinds][]byte
	elems [jsonKinds]uint64
}

type typedPath struct {
	name  string
	ms    bool // DateTime64(3, 'UTC'), else String
	data  []byte
	row   int // rows written
	valid bool
}

// flattenedSerialization is the JSON and Dynamic types' serialization version of whole
// columns per path and per type, which the Native format reads from clients.
const flattenedSerialization = 3

// maxDynamicPaths bounds the dynamic paths of a block below the JSON type's default
// max_dynamic_paths (1024), past which the engine keeps paths in shared data.
const maxDynamicPaths = 1000

// typedPaths parses a column type into its typed paths, sorted by name; ok is false for a
// type the encoder does not take. Results are kept per type.
func typedPaths(columnType string) ([]string, []bool, bool) {
	if v, ok := typeCache.Load(columnType); ok {
		t := v.(parsedType)
		return t.names, t.ms, t.ok
	}
	t := parseColumnType(columnType)
	typeCache.Store(columnType, t)
	return t.names, t.ms, t.ok
}

type parsedType struct {
	names []string
	ms    []bool
	ok    bool
}

var typeCache sync.Map

func parseColumnType(s string) parsedType {
	if s == "" || s == "JSON" {
		return parsedType{ok: true}
	}
	inner, ok := strings.CutPrefix(s, "JSON(")
	if !ok || !strings.HasSuffix(inner, ")") {
		return parsedType{}
	}
	inner = inner[:len(inner)-1]
	type entry struct {
		name string
		ms   bool
	}
	var es []entry
	for len(inner) > 0 {
		name, rest, ok := strings.Cut(inner, " ")
		if !ok || !plainIdent(name) {
			return parsedType{}
		}
		var e entry
		switch {
		case strings.HasPrefix(rest, "String"):
			e, rest = entry{name: name}, rest[len("String"):]
		case strings.HasPrefix(rest, "DateTime64(3, 'UTC')"):
			e, rest = entry{name: name, ms: true}, rest[len("DateTime64(3, 'UTC')"):]
		default:
			return parsedType{}
		}
		if rest != "" {
			if rest, ok = strings.CutPrefix(rest, ", "); !ok || rest == "" {
				return parsedType{}
			}
		}
		es, inner = append(es, e), rest
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var t parsedType
	for i, e := range es {
		if i > 0 && es[i-1].name == e.name {
			return parsedType{}
		}
		t.names, t.ms = append(t.names, e.name), append(t.ms, e.ms)
	}
	t.ok = true
	return t
}

// plainIdent is a name of letters, digits and underscores, as the typed paths of the
// tables' types are.
func plainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// encodeJSONBlock encodes the documents of parts (newline-separated, blank lines skipped as
// nativeBody skips them) as a block of columnType. ok is false where the encoder refuses
// (see jsonBlock); ambiguous then lists the strings the engine must confirm as String.
func encodeJSONBlock(columnType string, parts [][]byte, inferTimes bool) (block []byte, paths map[string][]string, ambiguous []string, ok bool) {
	names, ms, ok := typedPaths(columnType)
	if !ok {
		return nil, nil, nil, false
	}
	j := getJSONBlock(names, ms)
	defer j.release()
	j.inferTimes = inferTimes
	for _, part := range parts {
		j.hint, j.input = j.hint+bytes.Count(part, []byte{'\n'})+1, j.input+len(part)
	}
	for _, part := range parts {
		for len(part) > 0 {
			line := part
			if i := bytes.IndexByte(part, '\n'); i >= 0 {
				line, part = part[:i], part[i+1:]
			} else {
				part = nil
			}
			line = bytes.TrimRight(line, "\r")
			if len(line) == 0 {
				continue
			}
			if !j.row(line) {
				return nil, nil, nil, false
			}
		}
	}
	if j.rows == 0 || len(j.order) > maxDynamicPaths {
		return nil, nil, nil, false
	}
	if columnType == "" {
		columnType = "JSON"
	}
	block = j.encode(columnType)
	return block, j.paths(), j.ambiguous, true
}

// paths are the block's leaf paths with the types of their values, as the engine's
// distinctJSONPathsAndTypes reports them: every typed path with its type, every dynamic
// path with the types it holds in the order of their names (encode sorted them).
func (j *jsonBlock) paths() map[string][]string {
	out := make(map[string][]string, len(j.typed)+len(j.order))
	for _, t := range j.typed {
		if t.ms {
			out[t.name] = []string{"DateTime64(3, 'UTC')"}
		} else {
			out[t.name] = []string{"String"}
		}
	}
	for _, p := range j.order {
		var types []string
		for k := range jsonKinds {
			if p.has[k] {
				types = append(types, kindNames[k])
			}
		}
		slices.Sort(types)
		out[p.name] = types
	}
	return out
}

// blocks keeps encoders between batches with their columns' buffers, which a block's
// encode has copied out: a batch of a table then reuses the last one's memory.
var blocks sync.Pool

// getJSONBlock is an empty encoder for the typed paths names (ms: DateTime64(3, 'UTC')).
func getJSONBlock(names []string, ms []bool) *jsonBlock {
	j, _ := blocks.Get().(*jsonBlock)
	if j == nil {
		j = &jsonBlock{byPath: make(map[string]*dynPath)}
	}
	j.gen++
	j.order, j.rows, j.ambiguous, j.hint, j.input, j.reserved = j.order[:0], 0, nil, 0, 0, 0
	clear(j.seen)
	same := len(j.typed) == len(names)
	for i := 0; same && i < len(names); i++ {
		same = j.typed[i].name == names[i] && j.typed[i].ms == ms[i]
	}
	if !same {
		j.typed = j.typed[:0]
		for i, n := range names {
			j.typed = append(j.typed, &typedPath{name: n, ms: ms[i]})
		}
	}
	for _, t := range j.typed {
		t.data = t.data[:0]
	}
	return j
}

// release gives the encoder back, unless it holds the paths of too many tables.
func (j *jsonBlock) release() {
	if len(j.byPath) <= 4*maxDynamicPaths {
		blocks.Put(j)
	}
}

// row reads one document into the columns.
func (j *jsonBlock) row(doc []byte) bool {
	for _, t := range j.typed {
		t.valid = false
	}
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return false
	}
	i, ok := j.object(doc, i, 0)
	if !ok || skipSpace(doc, i) != len(doc) {
		return false
	}
	for _, t := range j.typed {
		if !t.valid { // the type's default, as the engine writes for a path not given
			if t.ms {
				t.data = binary.LittleEndian.AppendUint64(j.reserve(t.data, 8), 0)
			} else {
				t.data = append(j.reserve(t.data, 1), 0)
			}
		}
	}
	j.rows++
	return true
}

// object reads the object at doc[i] whose path so far is j.key[:prefix].
func (j *jsonBlock) object(doc []byte, i, prefix int) (int, bool) {
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' { // an empty object holds no path, as the engine reads one
		return i + 1, true
	}
	for {
		if i >= len(doc) || doc[i] != '"' {
			return 0, false
		}
		j.key = j.key[:prefix]
		if prefix > 0 {
			j.key = append(j.key, '.')
		}
		// The key: doc's own bytes up to its quote, else unescaped (jsonString's two ways,
		// told apart here, since an unescaped key may hold bytes a plain one cannot).
		var key []byte
		ok := true
		k := plainRun(doc, i+1)
		escaped := k >= len(doc) || doc[k] != '"'
		if escaped {
			j.tmp, i, ok = appendJSONString(append(j.tmp[:0], doc[i+1:k]...), doc, k-1)
			key = j.tmp
		} else {
			key, i = doc[i+1:k], k+1
		}
		dotted := bytes.IndexByte(key, '.') >= 0
		if !ok || len(key) == 0 || (dotted || escaped) && !plainKey(key) {
			return 0, false
		}
		j.key = append(j.key, key...)
		i = skipSpace(doc, i)
		if i >= len(doc) || doc[i] != ':' {
			return 0, false
		}
		// Typed paths are top-level names without dots; a dotted top-level key may name
		// a path under one.
		var t *typedPath
		if prefix == 0 && !dotted {
			t = j.typedAt(j.key)
		}
		if prefix == 0 && dotted && j.underTyped(j.key) {
			return 0, false
		}
		if i, ok = j.value(t, doc, skipSpace(doc, i+1)); !ok {
			return 0, false
		}
		i = skipSpace(doc, i)
		if i >= len(doc) {
			return 0, false
		}
		switch doc[i] {
		case ',':
			i = skipSpace(doc, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// plainKey is an object key the encoder takes: not empty, no dot at either end or twice
// in a row (the engine splits keys at dots into paths), no control bytes.
func plainKey(k []byte) bool {
	if len(k) == 0 || k[0] == '.' || k[len(k)-1] == '.' || bytes.Contains(k, []byte("..")) {
		return false
	}
	for _, c := range k {
		if c < 0x20 {
			return false
		}
	}
	return true
}

// value reads the value at doc[i] for the path j.key, the typed path t if not nil.
func (j *jsonBlock) value(t *typedPath, doc []byte, i int) (int, bool) {
	if i >= len(doc) {
		return 0, false
	}
	if t != nil {
		return j.typedValue(t, doc, i)
	}
	switch c := doc[i]; {
	case c == '{':
		return j.object(doc, i, len(j.key))
	case c == '"':
		str, tmp, end, ok := jsonString(j.tmp, doc, i)
		if j.tmp, i = tmp, end; !ok {
			return 0, false
		}
		p := j.path(true)
		if p == nil {
			return 0, false
		}
		kind, ns, amb, ok := j.stringKind(p, str)
		if !ok {
			return 0, false
		}
		switch kind {
		case kindDateTime:
			p.add(j.rows, kindDateTime, binary.LittleEndian.AppendUint32(j.reserve(p.data[kindDateTime], 4), uint32(ns/1e9)))
		case kindDateTime64:
			p.add(j.rows, kindDateTime64, binary.LittleEndian.AppendUint64(j.reserve(p.data[kindDateTime64], 8), uint64(ns)))
		default:
			if amb {
				j.ambiguousString(str)
			}
			d := binary.AppendUvarint(j.reserve(p.data[kindString], len(str)), uint64(len(str)))
			p.add(j.rows, kindString, append(d, str...))
		}
		return i, true
	case c == 't' || c == 'f':
		v, n := byte(1), 4
		if c == 'f' {
			v, n = 0, 5
		}
		if !bytes.HasPrefix(doc[i:], []byte("true")) && !bytes.HasPrefix(doc[i:], []byte("false")) {
			return 0, false
		}
		p := j.path(true)
		if p == nil {
			return 0, false
		}
		p.add(j.rows, kindBool, append(j.reserve(p.data[kindBool], 1), v))
		return i + n, true
	case c == 'n':
		if !bytes.HasPrefix(doc[i:], []byte("null")) {
			return 0, false
		}
		return i + 4, true // no value, as the engine reads a null
	case c == '[':
		p := j.path(true)
		if p == nil {
			return 0, false
		}
		return j.array(p, doc, i)
	case c == '-' || c >= '0' && c <= '9':
		end, frac, ok := scanNumber(doc, i)
		if !ok {
			return 0, false
		}
		text := doc[i:end]
		p := j.path(true)
		if p == nil {
			return 0, false
		}
		if frac {
			f, err := strconv.ParseFloat(string(text), 64)
			if err != nil || math.IsInf(f, 0) {
				return 0, false
			}
			p.add(j.rows, kindFloat64, binary.LittleEndian.AppendUint64(j.reserve(p.data[kindFloat64], 8), math.Float64bits(f)))
			return end, true
		}
		digits := len(text)
		if text[0] == '-' {
			digits--
		}
		if digits > 18 { // Int64 for certain; larger integers are left to the engine
			return 0, false
		}
		n, err := strconv.ParseInt(string(text), 10, 64)
		if err != nil {
			return 0, false
		}
		p.add(j.rows, kindInt64, binary.LittleEndian.AppendUint64(j.reserve(p.data[kindInt64], 8), uint64(n)))
		return end, true
	}
	return 0, false
}

// array reads the array at doc[i] for path p. It takes arrays of one kind of scalar:
// strings the engine reads as strings, integers of up to 18 digits, numbers with a
// fraction or an exponent (integers beside them too: the engine makes them Float64), or
// booleans; no nulls, arrays or objects in them. As for scalars, the engine first tries
// the array types the path already has in this block, without conversion, as seen on the
// pinned engine: Array(Nullable(String)) takes any array of strings (its strings then
// need no inference) and no other; Array(Nullable(Bool)) only booleans;
// Array(Nullable(Int64)) integers; Array(Nullable(Float64)) integers where the path has
// no Int64 array, and numbers with a fraction. Every array type takes an empty array; one
// on a path with two array types or more is left to the engine, which picks by an order
// not pinned here.
func (j *jsonBlock) array(p *dynPath, doc []byte, i int) (int, bool) {
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == ']' {
		k, n := kindArrayString, 0
		for _, a := range arrayKinds {
			if p.has[a] {
				k, n = a, n+1
			}
		}
		if n > 1 {
			return 0, false
		}
		p.add(j.rows, k, binary.LittleEndian.AppendUint64(j.reserve(p.data[k], 8), p.elems[k]))
		return i + 1, true
	}
	start := i
	kind, n := jsonKinds, 0
	floats := false
	for { // what the elements are, before anything is written
		if i >= len(doc) {
			return 0, false
		}
		var k jsonKind
		switch c := doc[i]; {
		case c == '"':
			str, tmp, end, ok := jsonString(j.tmp, doc, i)
			if j.tmp, i = tmp, end; !ok || !p.has[kindArrayString] && !plainString(str) {
				return 0, false
			}
			k = kindArrayString
		case c == 't' || c == 'f':
			w := "true"
			if c == 'f' {
				w = "false"
			}
			if !bytes.HasPrefix(doc[i:], []byte(w)) {
				return 0, false
			}
			k, i = kindArrayBool, i+len(w)
		case c == '-' || c >= '0' && c <= '9':
			end, frac, ok := scanNumber(doc, i)
			if !ok || !frac && end-i > 18 {
				return 0, false
			}
			k, i, floats = kindArrayInt64, end, floats || frac
		default:
			return 0, false // a null, an array or an object: left to the engine
		}
		if kind != jsonKinds && kind != k {
			return 0, false
		}
		kind, n = k, n+1
		i = skipSpace(doc, i)
		if i >= len(doc) {
			return 0, false
		}
		if doc[i] == ']' {
			break
		}
		if doc[i] != ',' {
			return 0, false
		}
		i = skipSpace(doc, i+1)
	}
	if floats || kind == kindArrayInt64 && p.has[kindArrayFloat64] && !p.has[kindArrayInt64] {
		kind = kindArrayFloat64
	}
	// Written: each element, then the array's end offset.
	for i = start; ; {
		switch kind {
		case kindArrayString:
			str, tmp, end, _ := jsonString(j.tmp, doc, i)
			j.tmp, i = tmp, end
			e := binary.AppendUvarint(j.reserveElem(p, kind, len(str)), uint64(len(str)))
			p.elem[kind] = append(e, str...)
		case kindArrayBool:
			v := byte(0)
			if doc[i] == 't' {
				v, i = 1, i+4
			} else {
				i += 5
			}
			p.elem[kind] = append(j.reserveElem(p, kind, 1), v)
		default:
			end, _, _ := scanNumber(doc, i)
			var bits uint64
			if kind == kindArrayFloat64 {
				f, err := strconv.ParseFloat(string(doc[i:end]), 64)
				if err != nil || math.IsInf(f, 0) {
					return 0, false
				}
				bits = math.Float64bits(f)
			} else {
				v, err := strconv.ParseInt(string(doc[i:end]), 10, 64)
				if err != nil {
					return 0, false
				}
				bits = uint64(v)
			}
			p.elem[kind], i = binary.LittleEndian.AppendUint64(j.reserveElem(p, kind, 8), bits), end
		}
		p.elems[kind]++
		if i = skipSpace(doc, i); doc[i] == ']' {
			break
		}
		i = skipSpace(doc, i+1)
	}
	p.add(j.rows, kind, binary.LittleEndian.AppendUint64(j.reserve(p.data[kind], 8), p.elems[kind]))
	return i + 1, true
}

// reserveElem is reserve for an element of p's arrays of kind k.
func (j *jsonBlock) reserveElem(p *dynPath, k jsonKind, n int) []byte {
	if cap(p.elem[k])-len(p.elem[k]) >= n+binary.MaxVarintLen32 {
		return p.elem[k]
	}
	return slices.Grow(p.elem[k], n+binary.MaxVarintLen32)
}

// plainString reports whether the engine infers a string as String whatever the types
// beside it: longer than a date or time can be, without a digit, or digits alone.
func plainString(s []byte) bool {
	if len(s) > 50 {
		return true
	}
	digit, other := false, false
	for _, c := range s {
		if c >= '0' && c <= '9' {
			digit = true
		} else {
			other = true
		}
	}
	return !digit || !other
}

// path is the dynamic path j.key, made if create and new; nil when it may not be made or
// already has a value in this row (a path named twice).
func (j *jsonBlock) path(create bool) *dynPath {
	p := j.byPath[string(j.key)]
	if p == nil || p.gen != j.gen {
		if !create || len(j.order) >= maxDynamicPaths {
			return nil
		}
		if p == nil {
			p = &dynPath{name: string(j.key)}
			j.byPath[p.name] = p
		}
		p.gen, p.hint, p.kind, p.has, p.elems = j.gen, j.hint, p.kind[:0], [jsonKinds]bool{}, [jsonKinds]uint64{}
		for k := range p.data {
			p.data[k], p.elem[k] = p.data[k][:0], p.elem[k][:0]
		}
		j.order = append(j.order, p)
	}
	if len(p.kind) > j.rows {
		return nil
	}
	return p
}

// reserve returns data with room for a value of n bytes. A column's first value sizes it
// for the rows expected (j.hint) while the block's columns stay within twice its input,
// so most columns are allocated once.
func (j *jsonBlock) reserve(data []byte, n int) []byte {
	n += binary.MaxVarintLen32
	if cap(data)-len(data) >= n {
		return data
	}
	if len(data) == 0 && j.hint > j.rows {
		want := n * (j.hint - j.rows) * 5 / 4
		if j.reserved+want <= 2*j.input {
			j.reserved += want
			return make([]byte, 0, want)
		}
	}
	return slices.Grow(data, n)
}

// add records the row's kind, data being p.data[k] with the value appended.
func (p *dynPath) add(row int, k jsonKind, data []byte) {
	if cap(p.kind) == 0 {
		p.kind = make([]jsonKind, 0, max(row+1, p.hint))
	}
	for len(p.kind) < row {
		p.kind = append(p.kind, noValue)
	}
	p.kind = append(p.kind, k)
	p.data[k], p.has[k] = data, true
}

func (j *jsonBlock) typedAt(key []byte) *typedPath {
	for _, t := range j.typed {
		if t.name == string(key) {
			return t
		}
	}
	return nil
}

// underTyped is whether key lies under a typed path (a.b under a).
func (j *jsonBlock) underTyped(key []byte) bool {
	for _, t := range j.typed {
		if len(key) > len(t.name) && key[len(t.name)] == '.' && string(key[:len(t.name)]) == t.name {
			return true
		}
	}
	return false
}

func (j *jsonBlock) typedValue(t *typedPath, doc []byte, i int) (int, bool) {
	if t.valid || doc[i] != '"' {
		return 0, false // named twice, or not a string: left to the engine
	}
	str, tmp, end, ok := jsonString(j.tmp, doc, i)
	if j.tmp, i = tmp, end; !ok {
		return 0, false
	}
	if t.ms {
		sec, ns, shape := parseTimestamp(str)
		if shape == shapeNone || ns%1e6 != 0 || fracDigits(str) > 3 {
			return 0, false
		}
		t.data = binary.LittleEndian.AppendUint64(j.reserve(t.data, 8), uint64(sec*1000+ns/1e6))
	} else {
		t.data = binary.AppendUvarint(j.reserve(t.data, len(str)), uint64(len(str)))
		t.data = append(t.data, str...)
	}
	t.valid = true
	return i, true
}

// stringKind is the type the engine gives a string value on path p, amb set when the
// engine may type it otherwise, ok false when the encoder cannot tell. The engine first
// tries the types the path already has in this block, in the order of their names,
// each without conversion, and infers a type only when none takes the value: a String
// takes every string, DateTime and DateTime64(9) any string their best-effort reading
// parses (even "1.5"), and no number, boolean or array takes one. So a string on a path
// that has a time type is taken only in the timestamp shapes, and one on a path that has
// String needs no inference. For a time, ns is its nanoseconds since the epoch.
func (j *jsonBlock) stringKind(p *dynPath, s []byte) (kind jsonKind, ns int64, amb, ok bool) {
	if p.has[kindDateTime] || p.has[kindDateTime64] {
		sec, frac, shape := parseTimestamp(s)
		switch {
		case shape == shapeNone:
			return 0, 0, false, false
		case p.has[kindDateTime] && fracDigits(s) == 0:
			return kindDateTime, sec * 1e9, false, true
		case !p.has[kindDateTime]:
			return kindDateTime64, sec*1e9 + frac, false, true
		}
		return 0, 0, false, false // DateTime refuses a fraction, and what follows it is left to the engine
	}
	if p.has[kindString] || plainString(s) {
		return kindString, 0, false, true
	}
	if j.inferTimes {
		if sec, frac, shape := parseTimestamp(s); shape != shapeNone {
			if fracDigits(s) > 0 {
				return kindDateTime64, sec*1e9 + frac, false, true
			}
			return kindDateTime, sec * 1e9, false, true
		}
	}
	return kindString, 0, true, true
}

func (j *jsonBlock) ambiguousString(s []byte) {
	if _, ok := j.seen[string(s)]; ok {
		return
	}
	if j.seen == nil {
		j.seen = make(map[string]struct{})
	}
	k := string(s)
	j.seen[k] = struct{}{}
	j.ambiguous = append(j.ambiguous, k)
}

// encode writes the block.
func (j *jsonBlock) encode(columnType string) []byte {
	slices.SortFunc(j.order, func(a, b *dynPath) int { return strings.Compare(a.name, b.name) })
	size := 64 + len(columnType)
	for _, t := range j.typed {
		size += len(t.data)
	}
	for _, p := range j.order {
		size += len(p.name) + 64 + j.rows
		for k := range p.data {
			size += len(p.data[k]) + len(p.elem[k]) + int(p.elems[k])
		}
	}
	b := make([]byte, 0, size)
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendUvarint(b, uint64(j.rows))
	b = appendString(b, "doc")
	b = appendString(b, columnType)
	b = binary.LittleEndian.AppendUint64(b, flattenedSerialization)
	b = binary.AppendUvarint(b, uint64(len(j.order)))
	for _, p := range j.order {
		b = appendString(b, p.name)
	}
	var index [jsonKinds]byte
	var sorted [][jsonKinds]jsonKind
	var counts []int
	for _, p := range j.order {
		var ks [jsonKinds]jsonKind
		n := 0
		for k := range jsonKinds {
			if p.has[k] {
				ks[n], n = k, n+1
			}
		}
		slices.SortFunc(ks[:n], func(a, b jsonKind) int { return strings.Compare(kindNames[a], kindNames[b]) })
		b = binary.LittleEndian.AppendUint64(b, flattenedSerialization)
		b = binary.AppendUvarint(b, uint64(n))
		for _, k := range ks[:n] {
			b = appendString(b, kindNames[k])
		}
		sorted, counts = append(sorted, ks), append(counts, n)
	}
	for _, t := range j.typed {
		b = append(b, t.data...)
	}
	for pi, p := range j.order {
		ks, n := sorted[pi], counts[pi]
		for x, k := range ks[:n] {
			index[k] = byte(x)
		}
		for _, k := range p.kind {
			if k == noValue {
				b = append(b, byte(n))
			} else {
				b = append(b, index[k])
			}
		}
		for range j.rows - len(p.kind) {
			b = append(b, byte(n))
		}
		for _, k := range ks[:n] {
			b = append(b, p.data[k]...)
			if k.isArray() { // Array(Nullable(T)): the offsets, then the null map, then the values
				b = append(b, make([]byte, p.elems[k])...)
				b = append(b, p.elem[k]...)
			}
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanNumber reads a JSON number at b[i]: its end, and whether it has a fraction or an
// exponent (which the engine reads as Float64).
func scanNumber(b []byte, i int) (end int, frac, ok bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	if i = digitsFrom(b, i); i == start || b[start] == '0' && i-start > 1 {
		return 0, false, false
	}
	if i < len(b) && b[i] == '.' {
		if s := i + 1; digitsFrom(b, s) == s {
			return 0, false, false
		}
		i, frac = digitsFrom(b, i+1), true
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digitsFrom(b, i) == i {
			return 0, false, false
		}
		i, frac = digitsFrom(b, i), true
	}
	return i, frac, true
}

// digitsFrom is the end of the run of ASCII digits at b[i].
func digitsFrom(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// jsonString is the JSON string at b[i] unescaped: b's own bytes where it has no escape
// and is ASCII, else unescaped into scratch (returned for reuse); ok as appendJSONString.
func jsonString(scratch, b []byte, i int) (s, scratchOut []byte, end int, ok bool) {
	k := plainRun(b, i+1)
	if k < len(b) && b[k] == '"' {
		return b[i+1 : k], scratch, k + 1, true
	}
	scratch, end, ok = appendJSONString(append(scratch[:0], b[i+1:k]...), b, k-1)
	return scratch, scratch, end, ok
}

// plainRun is the index of the first byte from b[i] that a JSON string cannot hold as it
// is (a quote, a backslash, a control byte) or that is not ASCII, or len(b): eight bytes
// at a time.
func plainRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q, bs := x^(ones*'"'), x^(ones*'\\')
		hit := (q-ones)&^q | (bs-ones)&^bs | (x-ones*0x20)&^x | x
		if hit&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

// appendJSONString appends the JSON string at b[i] unescaped; it refuses control bytes,
// invalid UTF-8 and lone surrogates, whose handling is the engine's to choose.
func appendJSONString(dst, b []byte, i int) ([]byte, int, bool) {
	i++
	for {
		s := i
		i = plainRun(b, i)
		dst = append(dst, b[s:i]...)
		if i >= len(b) {
			return dst, 0, false
		}
		switch c := b[i]; {
		case c == '"':
			return dst, i + 1, true
		case c < 0x20:
			return dst, 0, false
		case c >= 0x80:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				return dst, 0, false
			}
			dst, i = append(dst, b[i:i+n]...), i+n
		default: // a backslash
			if i+1 >= len(b) {
				return dst, 0, false
			}
			e := b[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, ok := hex4(b, i)
				if !ok {
					return dst, 0, false
				}
				i += 4
				if r >= 0xd800 && r < 0xdc00 {
					if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
						return dst, 0, false
					}
					lo, ok := hex4(b, i+2)
					if !ok || lo < 0xdc00 || lo >= 0xe000 {
						return dst, 0, false
					}
					r, i = 0x10000+(r-0xd800)<<10+(lo-0xdc00), i+6
				} else if r >= 0xdc00 && r < 0xe000 {
					return dst, 0, false
				}
				if r == 0 {
					return dst, 0, false // a NUL, as text, is the engine's to read
				}
				dst = utf8.AppendRune(dst, rune(r))
			default:
				return dst, 0, false
			}
		}
	}
}

func hex4(b []byte, i int) (uint32, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r uint32
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | uint32(c)
	}
	return r, true
}

// Timestamp shapes the encoder types itself: YYYY-MM-DD hh:mm:ss with an optional fraction
// of 1 to 9 digits, with a space between date and time (shapeNoZone) or a T and a final Z
// (shapeZ).
const (
	shapeNone = iota
	shapeNoZone
	shapeZ
)

// parseTimestamp reads s in a timestamp shape as UTC: seconds since the epoch and
// nanoseconds. Years are kept to 1971-2105, inside both DateTime's range and
// DateTime64(9)'s; a date that does not exist is not a timestamp.
func parseTimestamp(s []byte) (sec, ns int64, shape int) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':' {
		return 0, 0, shapeNone
	}
	switch s[10] {
	case ' ':
		shape = shapeNoZone
	case 'T':
		shape = shapeZ
		if s[len(s)-1] != 'Z' {
			return 0, 0, shapeNone
		}
		s = s[:len(s)-1]
	default:
		return 0, 0, shapeNone
	}
	num := func(b []byte) (int64, bool) {
		var n int64
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int64(c-'0')
		}
		return n, true
	}
	y, ok1 := num(s[0:4])
	mo, ok2 := num(s[5:7])
	d, ok3 := num(s[8:10])
	h, ok4 := num(s[11:13])
	mi, ok5 := num(s[14:16])
	se, ok6 := num(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || y < 1971 || y > 2105 || mo < 1 || mo > 12 ||
		d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || se > 59 {
		return 0, 0, shapeNone
	}
	if len(s) > 19 {
		f := s[20:]
		if s[19] != '.' || len(f) < 1 || len(f) > 9 {
			return 0, 0, shapeNone
		}
		v, ok := num(f)
		if !ok {
			return 0, 0, shapeNone
		}
		for range 9 - len(f) {
			v *= 10
		}
		ns = v
	}
	return daysFromCivil(y, mo, d)*86400 + h*3600 + mi*60 + se, ns, shape
}

// fracDigits is the length of a timestamp's fraction.
func fracDigits(s []byte) int {
	if len(s) > 0 && s[len(s)-1] == 'Z' {
		s = s[:len(s)-1]
	}
	if len(s) <= 20 {
		return 0
	}
	return len(s) - 20
}

func daysIn(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the days since 1970-01-01 of a proleptic Gregorian date (Howard
// Hinnant's days_from_civil).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
