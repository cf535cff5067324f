// Package sortkey parses a table's logical sorting key (SQL expressions over JSON paths)
// and compiles it to the physical key of a generation, with each path typed by the data.
package sortkey

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	p "github.com/AfterShip/clickhouse-sql-parser/parser"

	"github.com/svc-data/svc/query/sqlquote"
)

// Column is the document column every table stores its rows in.
const Column = "doc"

// ErrSyntax marks a sorting key that is not a list of SQL expressions.
var ErrSyntax = errors.New("sorting key syntax")

// Key is a parsed logical sorting key.
type Key struct {
	src   string // the SELECT the expressions were parsed from
	exprs []p.Expr
	refs  []ref // path references, in source order
}

type ref struct {
	start, end int // byte span in src
	path       []string
}

// Empty reports whether the key is empty: the table then chooses its key from the data.
func (k *Key) Empty() bool { return len(k.exprs) == 0 }

// Paths returns the distinct JSON paths the key reads, as dotted strings.
func (k *Key) Paths() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range k.refs {
		s := strings.Join(r.path, ".")
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

const prefix = "SELECT "

// Parse parses a sorting key: SQL expressions separated by commas (commas inside function
// arguments stay inside the function). Bare and dotted names are paths into the row's
// JSON; unusual names use SQL identifier quotes.
func Parse(key string) (*Key, error) {
	if strings.TrimSpace(key) == "" {
		return &Key{}, nil
	}
	src := prefix + key
	stmts, err := p.NewParser(src).ParseStmts()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, trimPrefixPositions(err.Error()))
	}
	if len(stmts) != 1 {
		return nil, fmt.Errorf("%w: one list of expressions expected", ErrSyntax)
	}
	sel, ok := stmts[0].(*p.SelectQuery)
	if !ok || sel.From != nil || sel.Where != nil || sel.GroupBy != nil || sel.OrderBy != nil || sel.Limit != nil ||
		sel.Settings != nil || sel.With != nil || sel.HasDistinct || sel.UnionAll != nil || sel.UnionDistinct != nil ||
		sel.Except != nil || sel.Having != nil || sel.Format != nil || int(sel.StatementEnd) < len(src)-1 {
		return nil, fmt.Errorf("%w: only expressions separated by commas are allowed", ErrSyntax)
	}
	// The parser tolerates a trailing comma; a key with one is a typo, not a shorter key.
	if strings.HasSuffix(strings.TrimSpace(key), ",") {
		return nil, fmt.Errorf("%w: trailing comma", ErrSyntax)
	}
	k := &Key{src: src}
	for _, it := range sel.SelectItems {
		if it.Alias != nil {
			return nil, fmt.Errorf("%w: aliases (AS) are not allowed in a sorting key", ErrSyntax)
		}
		if err := k.collect(it.Expr); err != nil {
			return nil, err
		}
		k.exprs = append(k.exprs, it.Expr)
	}
	sort.Slice(k.refs, func(i, j int) bool { return k.refs[i].start < k.refs[j].start })
	return k, nil
}

// collect records the path references of one expression. The parser's Walk stops the
// whole walk when the callback returns false, so names that are not paths (function
// names, the fields of a path already recorded) are skipped through a set instead.
func (k *Key) collect(e p.Expr) error {
	var err error
	skip := map[*p.Ident]bool{}
	p.Walk(e, func(n p.Expr) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *p.SelectQuery, *p.SubQuery:
			err = fmt.Errorf("%w: subqueries are not allowed in a sorting key", ErrSyntax)
		case *p.BinaryOperation:
			if string(n.Operation) == "->" {
				err = fmt.Errorf("%w: lambdas are not allowed in a sorting key", ErrSyntax)
			}
		case *p.FunctionExpr:
			skip[n.Name] = true
		case *p.Path:
			var path []string
			for _, f := range n.Fields {
				path = append(path, f.Name)
				skip[f] = true
			}
			k.refs = append(k.refs, ref{start: int(n.Pos()), end: int(n.End()), path: path})
		case *p.Ident:
			if skip[n] {
				break
			}
			if n.Name == "*" {
				err = fmt.Errorf("%w: * is not allowed in a sorting key", ErrSyntax)
				break
			}
			k.refs = append(k.refs, ref{start: int(n.Pos()), end: int(n.End()), path: []string{n.Name}})
		}
		return err == nil
	})
	return err
}

// Compile returns the physical ORDER BY expression list of a generation: every path
// becomes the document's subcolumn of the type types gives it (a concrete engine type,
// or "" for a path that is typed by the column declaration itself), every expression
// keeps its own text. An empty key compiles to tuple().
func (k *Key) Compile(types map[string]string) string {
	if k.Empty() {
		return "tuple()"
	}
	var b strings.Builder
	last := len(prefix)
	for _, r := range k.refs {
		b.WriteString(k.src[last:spanStart(k.src, r.start)])
		b.WriteString(Subcolumn(r.path, types[strings.Join(r.path, ".")]))
		last = spanEnd(k.src, r.end)
	}
	b.WriteString(k.src[last:])
	return b.String()
}

// Subcolumn renders the document subcolumn of path, typed when typ is not empty.
func Subcolumn(path []string, typ string) string {
	var b strings.Builder
	b.WriteString(Column)
	for _, seg := range path {
		b.WriteByte('.')
		b.WriteString(quoteIdent(seg))
	}
	if typ != "" {
		b.WriteString(".:")
		if isPlainTypeName(typ) {
			b.WriteString(typ)
		} else {
			b.WriteString(quoteIdent(typ))
		}
	}
	return b.String()
}

func isPlainTypeName(s string) bool {
	for i, r := range s {
		if !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')) {
			return false
		}
	}
	return s != ""
}

func quoteIdent(s string) string {
	if isPlainTypeName(s) {
		return s
	}
	return sqlquote.Ident(s)
}

// spanStart and spanEnd widen a node's span over the identifier quotes the parser
// leaves outside it.
func spanStart(src string, i int) int {
	if i > 0 && (src[i-1] == '`' || src[i-1] == '"') {
		return i - 1
	}
	return i
}

func spanEnd(src string, i int) int {
	if i < len(src) && (src[i] == '`' || src[i] == '"') {
		return i + 1
	}
	return i
}

func trimPrefixPositions(msg string) string {
	return strings.ReplaceAll(msg, prefix, "")
}
