package statement

import (
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

// Name resolution for the row model (DESIGN.md, Row model): a bare or dotted
// identifier is a path into the document of one of our tables unless it is a
// lambda parameter, an alias, a WITH name, or a column of a source that is not
// one of our tables (a subquery, a system view, a table function). The
// rewrite makes every path explicit (doc.user.id, t.doc.user.id), so what the
// engine resolves is decided here, on the tree.
//
// Invariants that make an identifier left as written harmless:
//   - no alias, lambda parameter or WITH name may be "doc" or the name of a
//     table source in the query, so a kept identifier can never resolve to
//     the document column of one of our tables;
//   - "doc" itself is always a path when one of our tables is in reach.

type sourceKind uint8

const (
	srcTable    sourceKind = iota + 1 // one of our tables (possibly wrapped by row policies)
	srcSubquery                       // subquery or inlined CTE
	srcSystem                         // system view
	srcFunction                       // table function
)

type source struct {
	kind sourceKind
	// name qualifies the source's columns in emitted SQL: the user's alias,
	// or the table (CTE, function) name.
	name string
	// aliased: the user gave an alias; then only the alias qualifies.
	aliased bool
	// table and db are the logical names of an unaliased table source, so
	// that both t.x and db.t.x qualify it.
	db, table string
	read      *tableRead // srcTable: usage accounting
	// columns are the known column names of subqueries, system views and
	// table functions; nil with anyColumns means unknown.
	columns    map[string]bool
	anyColumns bool
	// docCarrier: a subquery whose output is the document of one of our
	// tables (SELECT * FROM t); names resolve to paths in its doc column.
	docCarrier bool
	// paths is the path schema of the document (typing.go); nil when unknown.
	paths map[string][]string
	// elems are the columns of a subquery that are elements of an array of objects
	// (SELECT arrayJoin(items) AS it): their paths are typed by the element schema.
	elems map[string]*elemSchema
}

// hasDoc reports whether unresolved names are paths in this source.
func (s *source) hasDoc() bool { return s.kind == srcTable || s.docCarrier }

// scope is one SELECT level.
type scope struct {
	// parent is the enclosing SELECT level for correlated references; nil
	// at the top and for FROM subqueries' own parent chain beyond them.
	parent  *scope
	sources []*source
	// aliases are the expression aliases defined on this level (select
	// items, inline aliases, ARRAY JOIN aliases).
	aliases map[string]bool
	// with are WITH expression names, visible in nested levels too.
	with map[string]bool
	// ctes are the table CTEs visible on this level.
	ctes map[string]*cte
	// elems are the aliases of this level that name an element of an array of
	// objects (ARRAY JOIN items AS it, arrayJoin(items) AS it).
	elems map[string]*elemSchema
	// lambdas is the stack of lambda parameter sets being walked; a parameter
	// bound to the elements of an array of objects maps to their schema.
	lambdas []map[string]*elemSchema
	// masked counts the aliases whose own expression is being walked:
	// there the name means the column, as in SELECT toDate(ts) AS ts.
	masked map[string]int
}

// isAlias reports whether name is an expression alias or WITH name visible
// here.
func (s *scope) isAlias(name string) bool {
	return (s.aliases[name] || s.with[name]) && s.masked[name] == 0
}

// mask hides alias name while its own expression is walked; the returned
// function restores it.
func (s *scope) mask(name string) func() {
	if s.masked == nil {
		s.masked = map[string]int{}
	}
	s.masked[name]++
	return func() { s.masked[name]-- }
}

// cte is an analyzed table CTE, inlined at every reference.
type cte struct {
	name    string
	text    string // rewritten body, without parentheses
	outputs []output
}

// output is one output column of a SELECT.
type output struct {
	name string
	doc  bool // the document of one of our tables (SELECT *)
	// paths is the path schema of that document (typing.go).
	paths map[string][]string
	// elem: the column is an element of an array of objects (typing.go).
	elem *elemSchema
}

func newScope(parent *scope, ctes map[string]*cte, with map[string]bool) *scope {
	return &scope{parent: parent, aliases: map[string]bool{}, ctes: ctes, with: with, elems: map[string]*elemSchema{}}
}

func (s *scope) inLambda(name string) bool {
	_, ok := s.lambdaParam(name)
	return ok
}

// lambdaParam finds the innermost lambda parameter name and the element schema it is
// bound to (nil when it is not an element of an array of objects).
func (s *scope) lambdaParam(name string) (*elemSchema, bool) {
	for i := len(s.lambdas) - 1; i >= 0; i-- {
		if es, ok := s.lambdas[i][name]; ok {
			return es, true
		}
	}
	return nil, false
}

// sourceNamed finds the source that the qualifier segs[0] (or segs[0].segs[1]
// for db.table) names on this level; n is how many segments it took.
func (s *scope) sourceNamed(segs []*ch.Ident) (*source, int) {
	for _, src := range s.sources {
		if src.name != "" && src.name == segs[0].Name {
			return src, 1
		}
	}
	if len(segs) >= 3 {
		for _, src := range s.sources {
			if !src.aliased && src.db != "" && src.db == segs[0].Name && src.table == segs[1].Name {
				return src, 2
			}
		}
	}
	return nil, 0
}

// docSources are the sources whose documents unresolved names address.
func (s *scope) docSources() []*source {
	var out []*source
	for _, src := range s.sources {
		if src.hasDoc() {
			out = append(out, src)
		}
	}
	return out
}

// knownColumn finds the non-document sources that have a column name.
func (s *scope) knownColumn(name string) []*source {
	var out []*source
	for _, src := range s.sources {
		if src.columns[name] && !(src.docCarrier && name == docColumn) {
			out = append(out, src)
		}
	}
	return out
}

func (s *scope) hasUnknownColumns() bool {
	for _, src := range s.sources {
		if src.anyColumns {
			return true
		}
	}
	return false
}

// sourceNameTaken reports whether name is the name of a document source on
// this or an enclosing level (aliases may not take it, see the invariants
// above).
func (s *scope) sourceNameTaken(name string) bool {
	for sc := s; sc != nil; sc = sc.parent {
		for _, src := range sc.sources {
			if src.hasDoc() && (src.name == name || src.table == name) {
				return true
			}
		}
	}
	return false
}

const docColumn = "doc"

// literalWords are unquoted identifiers the parser returns as identifiers
// but the engine reads as literals.
func isLiteralWord(id *ch.Ident) bool {
	if id.QuoteType != ch.Unquoted {
		return false
	}
	switch strings.ToLower(id.Name) {
	case "null", "true", "false", "inf", "infinity", "nan":
		return true
	}
	return false
}
