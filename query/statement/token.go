package statement

import (
	"strings"
)

// This file is a small tokenizer for the statement forms the ClickHouse
// parser library does not know (row policies, workloads, resources, settings
// profiles, ALTER ... MODIFY ORDER BY) and for the statement headers this
// package parses itself (EXPLAIN, DESCRIBE, INSERT). It lexes like the
// parser library does (same quoting and comment rules), so both agree on
// where a header ends.

type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokIdent          // unquoted or quoted identifier; keywords are unquoted identifiers
	tokNumber         // 1, 1.5, 1e3, 0x1F
	tokString         // '...'; text is the raw body between the quotes
	tokOp             // punctuation and operators
)

type token struct {
	kind   tokKind
	text   string // identifier name, raw string body, number, or operator
	pos    int    // byte offset of the first byte (of the opening quote, for quoted tokens)
	end    int    // byte offset just past the token
	quoted bool   // quoted identifier (backticks or double quotes)
}

// is reports whether t is the unquoted keyword kw (case-insensitive).
func (t token) is(kw string) bool {
	return t.kind == tokIdent && !t.quoted && strings.EqualFold(t.text, kw)
}

func (t token) isOp(op string) bool { return t.kind == tokOp && t.text == op }

func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of statement"
	case tokString:
		return "'" + t.text + "'"
	case tokIdent:
		if t.quoted {
			return "`" + t.text + "`"
		}
	}
	return t.text
}

// tokenize splits sql into tokens, ending with a tokEOF token. Comments and
// whitespace are dropped.
func tokenize(sql string) ([]token, *Error) {
	var toks []token
	i := 0
	for {
		// whitespace and comments
		for i < len(sql) {
			c := sql[i]
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
				i++
				continue
			}
			if c == '-' && i+1 < len(sql) && sql[i+1] == '-' {
				j := strings.IndexAny(sql[i:], "\r\n")
				if j < 0 {
					i = len(sql)
				} else {
					i += j + 1
				}
				continue
			}
			if c == '/' && i+1 < len(sql) && sql[i+1] == '*' {
				j := strings.Index(sql[i+2:], "*/")
				if j < 0 {
					return nil, badRequest(CodeSyntax, i, "", "unclosed comment")
				}
				i += j + 4
				continue
			}
			break
		}
		if i >= len(sql) {
			toks = append(toks, token{kind: tokEOF, pos: len(sql), end: len(sql)})
			return toks, nil
		}
		start := i
		c := sql[i]
		switch {
		case isIdentStart(c):
			for i < len(sql) && isIdentPart(sql[i]) {
				i++
			}
			toks = append(toks, token{kind: tokIdent, text: sql[start:i], pos: start, end: i})
		case c == '`' || c == '"':
			j := strings.IndexByte(sql[i+1:], c)
			if j < 0 {
				return nil, badRequest(CodeSyntax, i, "", "unclosed quoted identifier")
			}
			i += j + 2
			toks = append(toks, token{kind: tokIdent, text: sql[start+1 : i-1], pos: start, end: i, quoted: true})
		case c == '\'':
			i++
			for {
				if i >= len(sql) {
					return nil, badRequest(CodeSyntax, start, "", "unclosed string literal")
				}
				if sql[i] == '\\' {
					i += 2
					continue
				}
				if sql[i] == '\'' {
					if i+1 < len(sql) && sql[i+1] == '\'' {
						i += 2
						continue
					}
					break
				}
				i++
			}
			i++
			toks = append(toks, token{kind: tokString, text: sql[start+1 : i-1], pos: start, end: i})
		case c >= '0' && c <= '9':
			i = scanNumber(sql, i)
			toks = append(toks, token{kind: tokNumber, text: sql[start:i], pos: start, end: i})
		case c == '$':
			return nil, badRequest(CodeUnsupportedSyntax, i, "write string literals in single quotes",
				"heredoc strings and $-identifiers are not supported")
		case c >= 0x80:
			return nil, badRequest(CodeSyntax, i, "quote identifiers that are not plain ASCII with backticks",
				"unexpected non-ASCII character outside a string or quoted identifier")
		default:
			op := string(c)
			if i+1 < len(sql) {
				switch two := sql[i : i+2]; two {
				case "->", "::", "||", "<=", ">=", "!=", "<>", "==":
					op = two
				}
			}
			i += len(op)
			toks = append(toks, token{kind: tokOp, text: op, pos: start, end: i})
		}
	}
}

func scanNumber(sql string, i int) int {
	if strings.HasPrefix(sql[i:], "0x") || strings.HasPrefix(sql[i:], "0X") {
		i += 2
		for i < len(sql) && isHex(sql[i]) {
			i++
		}
		return i
	}
	for i < len(sql) && (sql[i] >= '0' && sql[i] <= '9' || sql[i] == '.') {
		i++
	}
	if i < len(sql) && (sql[i] == 'e' || sql[i] == 'E') {
		j := i + 1
		if j < len(sql) && (sql[j] == '+' || sql[j] == '-') {
			j++
		}
		if j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
			i = j
			for i < len(sql) && sql[i] >= '0' && sql[i] <= '9' {
				i++
			}
		}
	}
	return i
}

func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' || c == '$' }
func isHex(c byte) bool        { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// tokens is a cursor over a token slice for the recursive-descent parsers of
// this package.
type tokens struct {
	toks []token
	i    int
}

func (t *tokens) peek() token { return t.toks[t.i] }
func (t *tokens) peekN(n int) token {
	if t.i+n < len(t.toks) {
		return t.toks[t.i+n]
	}
	return t.toks[len(t.toks)-1]
}

func (t *tokens) next() token {
	tok := t.toks[t.i]
	if tok.kind != tokEOF {
		t.i++
	}
	return tok
}

// accept consumes the keyword sequence kws if it comes next.
func (t *tokens) accept(kws ...string) bool {
	for n, kw := range kws {
		if !t.peekN(n).is(kw) {
			return false
		}
	}
	t.i += len(kws)
	return true
}

func (t *tokens) acceptOp(op string) bool {
	if t.peek().isOp(op) {
		t.i++
		return true
	}
	return false
}

// expect consumes the keyword sequence kws or fails with a syntax error that
// quotes hint.
func (t *tokens) expect(hint string, kws ...string) *Error {
	if t.accept(kws...) {
		return nil
	}
	got := t.peek()
	return badRequest(CodeSyntax, got.pos, hint, "expected %s, got %s", strings.Join(kws, " "), got.describe())
}

func (t *tokens) expectOp(hint, op string) *Error {
	if t.acceptOp(op) {
		return nil
	}
	got := t.peek()
	return badRequest(CodeSyntax, got.pos, hint, "expected %q, got %s", op, got.describe())
}

// atEnd reports whether only an optional ';' remains.
func (t *tokens) atEnd() bool {
	if t.peek().kind == tokEOF {
		return true
	}
	return t.peek().isOp(";") && t.peekN(1).kind == tokEOF
}

// expectEnd fails unless the statement is complete.
func (t *tokens) expectEnd(hint string) *Error {
	if t.atEnd() {
		return nil
	}
	got := t.peek()
	return badRequest(CodeUnsupportedSyntax, got.pos, hint, "unexpected %s", got.describe())
}
