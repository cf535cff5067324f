package statement

import (
	"errors"
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

// parseStatements runs the ClickHouse parser over text. Errors become
// syntax_error with the parser's position; shift maps positions of text back
// to the caller's statement (see parseAt).
func parseStatements(text string, shift int) ([]ch.Expr, *Error) {
	stmts, err := parseSafely(text)
	if err != nil {
		return nil, syntaxError(err, shift)
	}
	return stmts, nil
}

// parseSafely turns a parser panic (a bug of the library on odd input) into
// an error, so no input can take the process down.
func parseSafely(text string) (stmts []ch.Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			stmts, err = nil, errors.New("the statement could not be parsed")
		}
	}()
	return ch.NewParser(text).ParseStmts()
}

func syntaxError(err error, shift int) *Error {
	var pe *ch.ParseError
	if errors.As(err, &pe) {
		msg := pe.Error()
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		// "line 1:10 expected ..." -> "expected ..."
		if strings.HasPrefix(msg, "line ") {
			if i := strings.IndexByte(msg, ' '); i >= 0 {
				if j := strings.IndexByte(msg[i+1:], ' '); j >= 0 {
					msg = msg[i+1+j+1:]
				}
			}
		}
		pos := int(pe.Pos) - shift
		if pos < 0 {
			pos = 0
		}
		return badRequest(CodeSyntax, pos, "", "%s", msg)
	}
	return badRequest(CodeSyntax, -1, "", "%s", err.Error())
}

// parseAt parses the part sql[start:end] of the statement as if prefix were
// written in front of it, keeping the parser's positions equal to positions
// in sql wherever possible: the bytes before start are replaced by spaces,
// so a header this package parsed itself (INSERT INTO t, EXPLAIN, ...) is
// not seen twice. The decision about the part is then made on its tree.
func parseAt(sql string, start, end int, prefix string) ([]ch.Expr, *Error) {
	var b strings.Builder
	shift := 0
	if start >= len(prefix)+1 {
		b.WriteString(strings.Repeat(" ", start-len(prefix)-1))
		b.WriteString(prefix)
		b.WriteByte(' ')
	} else {
		b.WriteString(prefix)
		b.WriteByte(' ')
		shift = len(prefix) + 1 - start
	}
	b.WriteString(sql[start:end])
	return parseStatements(b.String(), shift)
}

// parseOneQuery parses sql[start:end] (with prefix) and requires exactly one
// SELECT query.
func parseOneQuery(sql string, start, end int, prefix string) (*ch.SelectQuery, *Error) {
	stmts, err := parseAt(sql, start, end, prefix)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, badRequest(CodeMultipleStatements, start, "send one statement per request", "expected one statement")
	}
	q, ok := stmts[0].(*ch.SelectQuery)
	if !ok {
		return nil, badRequest(CodeUnsupportedSyntax, start, "", "expected a SELECT query")
	}
	return q, nil
}

// parseExprList parses sql[start:end] as a comma-separated list of
// expressions (a sorting key, a row policy filter) and returns them.
func parseExprList(sql string, start, end int) ([]ch.Expr, *Error) {
	q, err := parseOneQuery(sql, start, end, "SELECT")
	if err != nil {
		return nil, err
	}
	if q.From != nil || q.Where != nil || q.Prewhere != nil || q.GroupBy != nil || q.Having != nil ||
		q.OrderBy != nil || q.Limit != nil || q.LimitBy != nil || q.Settings != nil || q.Format != nil ||
		q.Window != nil || q.With != nil || q.Top != nil || q.HasDistinct || q.UnionAll != nil ||
		q.UnionDistinct != nil || q.Except != nil || q.Intersect != nil || q.WithTotal {
		return nil, badRequest(CodeUnsupportedSyntax, start, "", "expected expressions only")
	}
	out := make([]ch.Expr, 0, len(q.SelectItems))
	for _, it := range q.SelectItems {
		if it.Alias != nil || len(it.Modifiers) > 0 {
			return nil, badRequest(CodeUnsupportedSyntax, int(it.Pos()), "", "aliases are not allowed here")
		}
		out = append(out, it.Expr)
	}
	return out, nil
}

// splitTopLevel finds the end of an expression that starts at token index i:
// the first token at parenthesis depth zero for which stop returns true, or
// the end of the statement.
func splitTopLevel(toks []token, i int, stop func(i int) bool) int {
	depth := 0
	for ; i < len(toks); i++ {
		t := toks[i]
		if t.kind == tokEOF {
			return i
		}
		if t.kind == tokOp {
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
		}
		if depth == 0 && stop(i) {
			return i
		}
	}
	return len(toks) - 1
}

// endOfStatement is the byte offset where a trailing ';' (or the text) ends.
func endOfStatement(toks []token) int {
	last := toks[len(toks)-1] // EOF
	if n := len(toks); n >= 2 && toks[n-2].isOp(";") {
		return toks[n-2].pos
	}
	return last.pos
}
