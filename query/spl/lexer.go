package spl

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tEOF      tokKind = iota
	tError            // Text holds the message
	tPipe             // |
	tLParen           // (
	tRParen           // )
	tComma            // ,
	tLBracket         // [ (subsearch: rejected by the parser)
	tBacktick         // ` (macro: rejected by the parser)
	tEq               // =
	tEqEq             // ==
	tNeq              // !=
	tLt               // <
	tLe               // <=
	tGt               // >
	tGe               // >=
	tPlus             // +
	tMinus            // -
	tStar             // *
	tSlash            // /
	tPercent          // %
	tDot              // . (concatenation)
	tString           // "..." ; Val holds the unescaped value
	tQuoted           // '...' ; Val holds the unescaped name
	tNumber           // expression mode number
	tIdent            // expression mode identifier
	tWord             // search or argument mode bare word
)

var tokNames = [...]string{
	tEOF: "end of search", tError: "error", tPipe: "|", tLParen: "(", tRParen: ")",
	tComma: ",", tLBracket: "[", tBacktick: "`", tEq: "=", tEqEq: "==", tNeq: "!=",
	tLt: "<", tLe: "<=", tGt: ">", tGe: ">=", tPlus: "+", tMinus: "-", tStar: "*",
	tSlash: "/", tPercent: "%", tDot: ".", tString: "string", tQuoted: "quoted name",
	tNumber: "number", tIdent: "name", tWord: "word",
}

func (k tokKind) String() string { return tokNames[k] }

type token struct {
	kind tokKind
	pos  Pos    // start offset
	end  Pos    // end offset
	text string // raw text
	val  string // unescaped value of strings and quoted names
}

// lexMode selects the token grammar. SPL has three: the search language
// (terms and field=value comparisons, where almost any punctuation belongs
// to a word), the value after a search comparison operator (which may
// itself contain = < > !), the expression language of eval and where, and
// the argument language of the other commands (field lists, options).
type lexMode uint8

const (
	modeSearch lexMode = iota
	modeSearchValue
	modeExpr
	modeArgs
)

// lexer produces tokens on demand; the parser chooses the mode per token.
type lexer struct {
	src string
	pos int
}

func (l *lexer) skipSpace() {
	for l.pos < len(l.src) {
		r, n := utf8.DecodeRuneInString(l.src[l.pos:])
		if !unicode.IsSpace(r) {
			return
		}
		l.pos += n
	}
}

func (l *lexer) next(mode lexMode) token {
	l.skipSpace()
	start := l.pos
	if l.pos >= len(l.src) {
		return token{kind: tEOF, pos: Pos(start), end: Pos(start)}
	}
	tok := func(k tokKind, n int) token {
		l.pos += n
		return token{kind: k, pos: Pos(start), end: Pos(l.pos), text: l.src[start:l.pos]}
	}
	c := l.src[l.pos]
	switch c {
	case '|':
		return tok(tPipe, 1)
	case '(':
		return tok(tLParen, 1)
	case ')':
		return tok(tRParen, 1)
	case '[':
		return tok(tLBracket, 1)
	case '`':
		return tok(tBacktick, 1)
	case '"':
		return l.quoted('"', tString)
	}
	switch mode {
	case modeSearch, modeSearchValue:
		if c == ',' {
			return tok(tComma, 1)
		}
		if mode == modeSearch {
			if k, n := l.compareOp(); n > 0 {
				return tok(k, n)
			}
		}
		n := l.searchWord(mode)
		if n == 0 {
			return l.bad()
		}
		return tok(tWord, n)
	case modeArgs:
		switch c {
		case ',':
			return tok(tComma, 1)
		case '\'':
			return l.quoted('\'', tQuoted)
		case '+':
			return tok(tPlus, 1)
		}
		if k, n := l.compareOp(); n > 0 {
			return tok(k, n)
		}
		n := l.argWord()
		if n == 0 {
			return l.bad()
		}
		return tok(tWord, n)
	}
	// modeExpr
	switch c {
	case ',':
		return tok(tComma, 1)
	case '\'':
		return l.quoted('\'', tQuoted)
	case '+':
		return tok(tPlus, 1)
	case '-':
		return tok(tMinus, 1)
	case '*':
		return tok(tStar, 1)
	case '/':
		return tok(tSlash, 1)
	case '%':
		return tok(tPercent, 1)
	case '.':
		if l.pos+1 < len(l.src) && isDigit(l.src[l.pos+1]) {
			return tok(tNumber, l.number())
		}
		return tok(tDot, 1)
	}
	if k, n := l.compareOp(); n > 0 {
		return tok(k, n)
	}
	if isDigit(c) {
		return tok(tNumber, l.number())
	}
	if n := l.ident(); n > 0 {
		return tok(tIdent, n)
	}
	return l.bad()
}

func (l *lexer) bad() token {
	start := l.pos
	_, n := utf8.DecodeRuneInString(l.src[l.pos:])
	l.pos += n
	return token{kind: tError, pos: Pos(start), end: Pos(l.pos), text: l.src[start:l.pos]}
}

func (l *lexer) compareOp() (tokKind, int) {
	s := l.src[l.pos:]
	switch {
	case strings.HasPrefix(s, "=="):
		return tEqEq, 2
	case strings.HasPrefix(s, "!="):
		return tNeq, 2
	case strings.HasPrefix(s, "<="):
		return tLe, 2
	case strings.HasPrefix(s, ">="):
		return tGe, 2
	case strings.HasPrefix(s, "="):
		return tEq, 1
	case strings.HasPrefix(s, "<"):
		return tLt, 1
	case strings.HasPrefix(s, ">"):
		return tGt, 1
	}
	return 0, 0
}

// quoted lexes a string delimited by q. Backslash escapes the quote and the
// backslash; any other escaped character stands for itself preceded by the
// backslash (so regular expressions keep their escapes, as in Splunk).
func (l *lexer) quoted(q byte, kind tokKind) token {
	start := l.pos
	var b strings.Builder
	i := l.pos + 1
	for i < len(l.src) {
		c := l.src[i]
		switch c {
		case '\\':
			if i+1 < len(l.src) && (l.src[i+1] == q || l.src[i+1] == '\\') {
				b.WriteByte(l.src[i+1])
				i += 2
				continue
			}
			b.WriteByte(c)
			i++
		case q:
			l.pos = i + 1
			return token{kind: kind, pos: Pos(start), end: Pos(l.pos), text: l.src[start:l.pos], val: b.String()}
		default:
			b.WriteByte(c)
			i++
		}
	}
	l.pos = len(l.src)
	return token{kind: tError, pos: Pos(start), end: Pos(l.pos), text: "unterminated " + map[byte]string{'"': "string", '\'': "quoted name"}[q]}
}

// searchWord is the length of a bare word of the search language: a run of
// characters up to white space, | ( ) " , [ and, outside a comparison
// value, the comparison operators.
func (l *lexer) searchWord(mode lexMode) int {
	i := l.pos
	for i < len(l.src) {
		r, n := utf8.DecodeRuneInString(l.src[i:])
		if unicode.IsSpace(r) {
			break
		}
		switch r {
		case '|', '(', ')', '"', ',', '[', ']':
			return i - l.pos
		case '=', '<', '>':
			if mode == modeSearch {
				return i - l.pos
			}
		case '!':
			if mode == modeSearch && strings.HasPrefix(l.src[i:], "!=") {
				return i - l.pos
			}
		}
		i += n
	}
	return i - l.pos
}

// isArgRune reports whether r may appear in an argument word: field names
// (with wildcards and dotted paths, items{}.sku), numbers, option values such as 1h,
// top5 or -count.
func isArgRune(r rune) bool {
	switch r {
	case '_', '.', '*', '@', ':', '-', '{', '}':
		return true
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func (l *lexer) argWord() int {
	i := l.pos
	for i < len(l.src) {
		r, n := utf8.DecodeRuneInString(l.src[i:])
		if !isArgRune(r) {
			break
		}
		i += n
	}
	return i - l.pos
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentRune(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// ident lexes a field name of the expression language: a letter or
// underscore, then letters, digits and underscores, with dotted segments
// (user.id, items{}.sku) when the dot is directly followed by a name
// character; a dot anywhere else is the concatenation operator.
func (l *lexer) ident() int {
	i := l.pos
	r, n := utf8.DecodeRuneInString(l.src[i:])
	if !isIdentStart(r) {
		return 0
	}
	i += n
	for i < len(l.src) {
		r, n := utf8.DecodeRuneInString(l.src[i:])
		if isIdentRune(r) {
			i += n
			continue
		}
		if r == '.' && i+1 < len(l.src) {
			r2, _ := utf8.DecodeRuneInString(l.src[i+1:])
			if isIdentRune(r2) {
				i++
				continue
			}
		}
		// items{}.sku: a path through an array of objects (multivalue.go)
		if r == '{' && strings.HasPrefix(l.src[i:], "{}.") && i+3 < len(l.src) {
			r2, _ := utf8.DecodeRuneInString(l.src[i+3:])
			if isIdentRune(r2) {
				i += 3
				continue
			}
		}
		break
	}
	return i - l.pos
}

// number lexes 12, 1.5, .5, 1e3, 2.5E-3.
func (l *lexer) number() int {
	s := l.src
	i := l.pos
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '.' && i+1 < len(s) && isDigit(s[i+1]) {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	return i - l.pos
}
