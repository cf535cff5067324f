package spl

import (
	"sort"
	"strings"

	"github.com/svc-data/svc/query/sqlquote"
)

// A stage's rows are described at compile time by a schema.
//
// Event rows are open: every document path is a field, so the schema is a
// stack of layers over the doc column. eval pushes an overlay (a field held
// in a computed column), rename pushes a name mapping, fields pushes a
// projection. A name is resolved by walking the layers from the top down
// to the document; the executor maps document paths of returned events up
// through the same layers to find their output names.
//
// Rows of a transforming command (stats, chart, timechart, table) are
// closed: an ordered list of named columns. Names not in the list are null.
type schema struct {
	open   bool
	layers []layer    // open schemas
	cols   []namedCol // closed schemas
	paths  *pathSet   // document paths read; nil reads the table directly
	// direct are the typed reads of numeric paths when the table is read directly (the
	// base search condition, typing.go).
	direct map[string]string
	// multi are the multivalue fields of the table's arrays of objects, by schema path
	// (multivalue.go).
	multi map[string]mvField
}

// pathSet records the document paths a plan reads. The base relation
// projects exactly these as columns, because reading doc.x through a
// relation that selects the whole doc column reads every path.
type pathSet struct {
	names []string
	seen  map[string]bool
	// numeric are the paths read as numbers, with their typed read (typing.go).
	numeric map[string]string
	// multi are the multivalue fields, by schema path (multivalue.go).
	multi map[string]mvField
}

// col registers a path and returns the column holding it.
func (p *pathSet) col(name string) string {
	if !p.seen[name] {
		p.seen[name] = true
		p.names = append(p.names, name)
	}
	return pathCol(name)
}

// pathCol is the base relation's column of a document path.
func pathCol(name string) string { return sqlquote.Ident("@" + name) }

// docRef reads a path of the doc column itself.
func docRef(name string) string {
	if name == "_time" {
		return "doc._time"
	}
	return docPath(name)
}

type layerKind uint8

const (
	layerOverlay layerKind = iota
	layerRename
	layerProject
)

type layer struct {
	kind     layerKind
	col      namedCol // overlay
	from, to string   // rename patterns
	pats     []string // projection patterns
}

// namedCol is a field held in an internal column of the relation.
type namedCol struct {
	name string // field name users see
	col  string // internal column name (c1, c2, ...) or SQL over the relation
	k    kind
}

func (s *schema) clone() *schema {
	n := &schema{open: s.open, paths: s.paths, direct: s.direct, multi: s.multi}
	n.layers = append(n.layers, s.layers...)
	n.cols = append(n.cols, s.cols...)
	return n
}

// internalFields survive a projection: Splunk's fields keeps _time and _raw.
func internalField(name string) bool { return name == "_time" || name == "_raw" }

// base is the expression of a field read from the document.
func (s *schema) base(name string) sqlExpr {
	if key, ok := mvKey(name); ok {
		// A path through an array of objects: its values in every element, or absent
		// when the schema has no such array.
		mv, ok := s.multi[key]
		switch {
		case !ok:
			return nullExpr
		case s.paths != nil:
			return sqlExpr{s.paths.col(name), mv.k}
		}
		return sqlExpr{mv.sql, mv.k}
	}
	ref := docRef(name)
	if s.paths != nil {
		ref = s.paths.col(name)
	}
	switch name {
	case "_time":
		return sqlExpr{ref, kTime}
	case "_raw", "host", "source", "sourcetype", "index":
		// Typed paths read '' when the key is absent; absent is null.
		return sqlExpr{"nullIf(" + ref + ", '')", kStr}
	}
	if _, ok := s.paths.numericPath(name); ok {
		return sqlExpr{ref, kNum}
	}
	if typed, ok := s.direct[name]; ok && s.paths == nil {
		return sqlExpr{typed, kNum}
	}
	return sqlExpr{ref, kDyn}
}

// isBase reports whether e reads a document path that is not built in.
func (s *schema) isBase(e sqlExpr) bool {
	return (e.k == kDyn || isMV(e.k)) && s.paths != nil && strings.HasPrefix(e.s, "`@")
}

// resolve returns the expression of field name.
func (s *schema) resolve(name string) sqlExpr {
	if !s.open {
		for _, c := range s.cols {
			if c.name == name {
				return sqlExpr{c.col, c.k}
			}
		}
		return nullExpr
	}
	for i := len(s.layers) - 1; i >= 0; i-- {
		l := &s.layers[i]
		switch l.kind {
		case layerOverlay:
			if l.col.name == name {
				return sqlExpr{l.col.col, l.col.k}
			}
		case layerRename:
			if caps, ok := matchPattern(l.to, name); ok {
				name = substitute(l.from, caps)
				continue
			}
			if _, ok := matchPattern(l.from, name); ok {
				return nullExpr // renamed away
			}
		case layerProject:
			if !internalField(name) && !matchAny(l.pats, name) {
				return nullExpr
			}
		}
	}
	return s.base(name)
}

// forward maps a field present below layer index from (exclusive of
// layers < from) to its visible name at the top, or false if it is hidden.
func (s *schema) forward(name string, from int) (string, bool) {
	for i := from; i < len(s.layers); i++ {
		l := &s.layers[i]
		switch l.kind {
		case layerOverlay:
			if l.col.name == name {
				return "", false
			}
		case layerRename:
			if caps, ok := matchPattern(l.from, name); ok {
				name = substitute(l.to, caps)
				continue
			}
			if _, ok := matchPattern(l.to, name); ok {
				return "", false // overwritten by the rename
			}
		case layerProject:
			if !internalField(name) && !matchAny(l.pats, name) {
				return "", false
			}
		}
	}
	return name, true
}

// visibleOverlays returns the overlay columns still visible at the top,
// with their visible names, in creation order.
func (s *schema) visibleOverlays() []namedCol {
	var out []namedCol
	for i, l := range s.layers {
		if l.kind != layerOverlay || l.col.k == kNull {
			continue // eval f=null() removes f from events
		}
		if name, ok := s.forward(l.col.name, i+1); ok {
			c := l.col
			c.name = name
			out = append(out, c)
		}
	}
	return out
}

// matchPattern matches name against a pattern where * matches any run of
// characters, returning what each * matched (leftmost, shortest).
func matchPattern(pat, name string) ([]string, bool) {
	parts := strings.Split(pat, "*")
	if len(parts) == 1 {
		return nil, pat == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return nil, false
	}
	rest := name[len(parts[0]):]
	caps := make([]string, 0, len(parts)-1)
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, mid)
		if i < 0 {
			return nil, false
		}
		caps = append(caps, rest[:i])
		rest = rest[i+len(mid):]
	}
	last := parts[len(parts)-1]
	if !strings.HasSuffix(rest, last) {
		return nil, false
	}
	return append(caps, rest[:len(rest)-len(last)]), true
}

// substitute fills the wildcards of pat with caps, in order.
func substitute(pat string, caps []string) string {
	if len(caps) == 0 {
		return pat
	}
	var b strings.Builder
	i := 0
	for _, r := range pat {
		if r == '*' && i < len(caps) {
			b.WriteString(caps[i])
			i++
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func matchAny(pats []string, name string) bool {
	for _, p := range pats {
		if _, ok := matchPattern(p, name); ok {
			return true
		}
	}
	return false
}

// knownOpenFields lists the fields of an open schema that are known
// without looking at the data: the built-in fields and visible overlays,
// with their expressions.
func (s *schema) knownOpenFields() []namedCol {
	var out []namedCol
	for _, b := range builtinFieldTable {
		if name, ok := s.forward(b.Name, 0); ok {
			e := s.base(b.Name)
			out = append(out, namedCol{name: name, col: e.s, k: e.k})
		}
	}
	return append(out, s.visibleOverlays()...)
}

// docFields maps document paths found in the data to visible fields,
// dropping built-ins (always described by knownOpenFields) and hidden
// paths, sorted by visible name.
func (s *schema) docFields(paths []string) []namedCol {
	seen := map[string]bool{}
	for _, k := range s.knownOpenFields() {
		seen[k.name] = true
	}
	var out []namedCol
	for _, p := range paths {
		if isBuiltinField(p) {
			continue
		}
		name, ok := s.forward(p, 0)
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		e := s.base(p)
		out = append(out, namedCol{name: name, col: e.s, k: e.k})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
