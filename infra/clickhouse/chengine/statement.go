package chengine

import (
	"fmt"
	"strings"

	"github.com/svc-data/svc/query/sqlquote"
)

// This file finds the few things the HTTP layer must know about a statement before the engine
// sees it: its kind, an explicit FORMAT clause, where the inline data of an INSERT begins, and
// the target of a KILL QUERY. It is a tokenizer over ClickHouse's lexical rules (quotes,
// escapes, nested comments, heredocs), not a parser; the engine still parses every statement.
// It decides no security question: svc's query layer does that with a real parser.

type tokKind int

const (
	tEOF tokKind = iota
	tWord
	tQuoted // `ident` or "ident"
	tString // 'string'
	tOpen   // ( [ {
	tClose  // ) ] }
	tSemicolon
	tComma
	tPunct
)

type token struct {
	kind       tokKind
	start, end int
}

// lexer yields tokens of text, skipping whitespace and comments.
type lexer struct {
	text string
	pos  int
	err  error
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// skip moves past whitespace and comments. An unterminated block comment is an error.
func (l *lexer) skip() {
	t := l.text
	for l.pos < len(t) {
		c := t[l.pos]
		switch {
		case isSpace(c):
			l.pos++
		case c == '-' && strings.HasPrefix(t[l.pos:], "--"),
			c == '#' && l.pos+1 < len(t) && (t[l.pos+1] == ' ' || t[l.pos+1] == '!'):
			if i := strings.IndexByte(t[l.pos:], '\n'); i >= 0 {
				l.pos += i + 1
			} else {
				l.pos = len(t)
			}
		case c == '/' && strings.HasPrefix(t[l.pos:], "/*"):
			// ClickHouse nests block comments.
			depth, i := 1, l.pos+2
			for depth > 0 && i+1 < len(t) {
				switch {
				case t[i] == '/' && t[i+1] == '*':
					depth++
					i += 2
				case t[i] == '*' && t[i+1] == '/':
					depth--
					i += 2
				default:
					i++
				}
			}
			if depth > 0 {
				l.err = fmt.Errorf("unterminated comment at offset %d", l.pos)
				l.pos = len(t)
				return
			}
			l.pos = i
		default:
			return
		}
	}
}

// quoted returns the end of a literal opened by q at start: backslash escapes and doubled
// quotes, as ClickHouse reads them.
func (l *lexer) quoted(start int, q byte) int {
	t := l.text
	for i := start + 1; i < len(t); i++ {
		switch t[i] {
		case '\\':
			i++
		case q:
			if i+1 < len(t) && t[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	l.err = fmt.Errorf("unterminated %c literal at offset %d", q, start)
	return len(t)
}

// heredoc returns the end of a $tag$...$tag$ literal at start, or -1 when there is none.
func (l *lexer) heredoc(start int) int {
	t := l.text
	i := start + 1
	for i < len(t) && t[i] != '$' && isWordByte(t[i]) {
		i++
	}
	if i >= len(t) || t[i] != '$' {
		return -1
	}
	tag := t[start : i+1]
	end := strings.Index(t[i+1:], tag)
	if end < 0 {
		l.err = fmt.Errorf("unterminated heredoc %s at offset %d", tag, start)
		return len(t)
	}
	return i + 1 + end + len(tag)
}

func (l *lexer) next() token {
	l.skip()
	t := l.text
	if l.pos >= len(t) || l.err != nil {
		return token{kind: tEOF, start: len(t), end: len(t)}
	}
	start := l.pos
	c := t[start]
	var k tokKind
	switch {
	case c == '\'':
		k, l.pos = tString, l.quoted(start, c)
	case c == '"' || c == '`':
		k, l.pos = tQuoted, l.quoted(start, c)
	case c == '$':
		if end := l.heredoc(start); end >= 0 {
			k, l.pos = tString, end
			break
		}
		fallthrough
	case isWordByte(c):
		i := start + 1
		for i < len(t) && isWordByte(t[i]) {
			i++
		}
		k, l.pos = tWord, i
	case c == '(' || c == '[' || c == '{':
		k, l.pos = tOpen, start+1
	case c == ')' || c == ']' || c == '}':
		k, l.pos = tClose, start+1
	case c == ';':
		k, l.pos = tSemicolon, start+1
	case c == ',':
		k, l.pos = tComma, start+1
	default:
		k, l.pos = tPunct, start+1
	}
	return token{kind: k, start: start, end: l.pos}
}

func (l *lexer) word(tk token) string {
	if tk.kind != tWord {
		return ""
	}
	return strings.ToUpper(l.text[tk.start:tk.end])
}

// statement is what the HTTP layer learned about one statement.
type statement struct {
	// Kind is the first keyword, upper-cased: SELECT, INSERT, CREATE, KILL...
	Kind string
	// Format is the name in a top-level FORMAT clause, or "".
	Format string
	// Temporary is set for CREATE TEMPORARY ...: session state.
	Temporary bool
	// Insert is set for an INSERT that takes data (FORMAT or VALUES).
	Insert *insertPlan
	// KillQueryID is set for KILL QUERY WHERE query_id = '...'.
	KillQueryID string
	KillSync    bool
}

// insertPlan rewrites an INSERT with data into one that reads the data from a file.
type insertPlan struct {
	head      string // INSERT INTO t (cols), where FROM INFILE goes after
	clause    string // [SETTINGS ...] FORMAT <name> [SETTINGS ...]
	Format    string
	DataStart int // offset in the analysed text where the inline data begins
}

// Query is the INSERT reading its data from path, compressed with compression.
func (p *insertPlan) Query(path, compression string) string {
	return fmt.Sprintf("%s FROM INFILE %s COMPRESSION %s %s", p.head, sqlquote.String(path), sqlquote.String(compression), p.clause)
}

// errStatement is a statement the HTTP layer refuses before the engine sees it.
type errStatement struct {
	code int
	msg  string
}

func (e *errStatement) Error() string { return e.msg }

// analyze inspects text, which holds one statement and, for an INSERT, possibly the start of
// its inline data. complete says text is the whole request; when it is only a prefix of a
// longer body, the statement itself must end within it.
func analyze(text string, complete bool) (*statement, error) {
	l := &lexer{text: text}
	first := l.next()
	for first.kind == tOpen { // (SELECT ...) UNION ...
		first = l.next()
	}
	st := &statement{Kind: l.word(first)}
	if first.kind == tEOF {
		if l.err != nil {
			return nil, &errStatement{codeSyntaxError, l.err.Error()}
		}
		return nil, &errStatement{codeSyntaxError, "empty query"}
	}
	if st.Kind == "INSERT" {
		l2 := &lexer{text: text}
		plan, err := analyzeInsert(l2)
		if err != nil {
			return nil, err
		}
		if plan != nil {
			st.Insert = plan
			return st, nil
		}
	}
	if !complete {
		return nil, &errStatement{codeQueryTooLarge, "query is larger than max_query_size; raise max_query_size or send the data of an INSERT after FORMAT"}
	}
	// Walk the whole statement: one statement only, and find FORMAT, INTO OUTFILE, KILL.
	l = &lexer{text: text}
	var toks []token
	depth := 0
	for {
		tk := l.next()
		if tk.kind == tEOF {
			break
		}
		switch tk.kind {
		case tOpen:
			depth++
		case tClose:
			depth--
		case tSemicolon:
			if depth == 0 {
				if rest := l.next(); rest.kind != tEOF {
					return nil, &errStatement{codeSyntaxError, "multi-statements are not allowed: send one statement per request"}
				}
			}
		}
		if depth == 0 {
			toks = append(toks, tk)
		}
	}
	if l.err != nil {
		// Leave the diagnosis to the engine's parser; a statement that does not lex does not
		// parse either.
		return st, nil
	}
	for i, tk := range toks {
		w := l.word(tk)
		next := func(j int) string {
			if i+j < len(toks) {
				return l.word(toks[i+j])
			}
			return ""
		}
		switch w {
		case "INTO":
			if next(1) == "OUTFILE" {
				return nil, &errStatement{codeNotImplemented, "INTO OUTFILE writes on the engine host and is not served; read the result from the response"}
			}
		case "FROM":
			if next(1) == "INFILE" {
				return nil, &errStatement{codeNotImplemented, "FROM INFILE reads from the engine host and is not served; send the data in the request body"}
			}
		case "FORMAT":
			// A clause, not a column named format: FORMAT <name> ends the statement or is
			// followed by SETTINGS.
			if i+1 < len(toks) && toks[i+1].kind == tWord &&
				(i+2 == len(toks) || toks[i+2].kind == tSemicolon || l.word(toks[i+2]) == "SETTINGS") {
				st.Format = text[toks[i+1].start:toks[i+1].end]
			}
		}
	}
	if st.Kind == "INSERT" && st.Format != "" {
		return nil, &errStatement{codeNotImplemented, "INSERT ... SELECT with inline data (input()) is not served; insert the data with INSERT ... FORMAT"}
	}
	if st.Kind == "CREATE" && len(toks) > 1 && l.word(toks[1]) == "TEMPORARY" {
		st.Temporary = true
	}
	if st.Kind == "KILL" && len(toks) > 1 && l.word(toks[1]) == "QUERY" {
		id, sync, ok := parseKillQuery(l, toks)
		if !ok {
			return nil, &errStatement{codeNotImplemented, "only KILL QUERY WHERE query_id = '<id>' [SYNC|ASYNC] is served"}
		}
		st.KillQueryID, st.KillSync = id, sync
	}
	return st, nil
}

// parseKillQuery reads KILL QUERY WHERE query_id = '<id>' [SYNC|ASYNC|TEST] [FORMAT f] [;].
func parseKillQuery(l *lexer, toks []token) (id string, sync bool, ok bool) {
	if len(toks) < 6 || l.word(toks[2]) != "WHERE" || l.word(toks[3]) != "QUERY_ID" ||
		l.text[toks[4].start:toks[4].end] != "=" || toks[5].kind != tString {
		return "", false, false
	}
	id, err := unquoteString(l.text[toks[5].start:toks[5].end])
	if err != nil {
		return "", false, false
	}
	rest := toks[6:]
	if len(rest) > 0 {
		switch l.word(rest[0]) {
		case "SYNC":
			sync, rest = true, rest[1:]
		case "ASYNC":
			rest = rest[1:]
		}
	}
	if len(rest) >= 2 && l.word(rest[0]) == "FORMAT" {
		rest = rest[2:]
	}
	if len(rest) > 0 && rest[0].kind == tSemicolon {
		rest = rest[1:]
	}
	return id, sync, len(rest) == 0
}

// insertDataBegins reports whether head, a prefix of a request, holds an INSERT whose inline
// data has begun: whatever follows belongs to the data, so the statement can start.
func insertDataBegins(head string) bool {
	l := &lexer{text: head}
	if l.word(l.next()) != "INSERT" {
		return false
	}
	plan, err := analyzeInsert(&lexer{text: head})
	if err != nil || plan == nil {
		return false
	}
	if plan.DataStart < len(head) {
		return true
	}
	// Nothing after the clause yet: the data begins here only if the newline that ends the
	// clause was seen (more spaces, or a longer format name, could follow otherwise).
	return plan.Format != "Values" && plan.DataStart > 0 && head[plan.DataStart-1] == '\n'
}

// analyzeInsert finds the data clause of an INSERT. It returns nil for an INSERT without
// inline data (INSERT ... SELECT).
func analyzeInsert(l *lexer) (*insertPlan, error) {
	l.next() // INSERT
	if l.word(l.next()) != "INTO" {
		return nil, nil // let the engine report the syntax
	}
	tk := l.next()
	switch l.word(tk) {
	case "FUNCTION":
		if l.next().kind != tWord || !skipGroup(l, l.next()) {
			return nil, nil
		}
		tk = l.next()
	case "TABLE":
		tk = l.next()
		fallthrough
	default:
		// [db.]table
		if tk.kind != tWord && tk.kind != tQuoted {
			return nil, nil
		}
		tk = l.next()
		if tk.kind == tPunct && l.text[tk.start:tk.end] == "." {
			l.next()
			tk = l.next()
		}
	}
	if tk.kind == tOpen { // column list
		if !skipGroup(l, tk) {
			return nil, nil
		}
		tk = l.next()
	}
	clauseStart := tk.start
	if l.word(tk) == "FROM" {
		return nil, &errStatement{codeNotImplemented, "FROM INFILE reads from the engine host and is not served; send the data in the request body"}
	}
	var settings string
	if l.word(tk) == "SETTINGS" {
		last, after, ok := skipSettings(l)
		if !ok {
			return nil, nil
		}
		settings = l.text[tk.start:last.end]
		tk = after
	}
	plan := &insertPlan{head: strings.TrimRight(l.text[:clauseStart], " \t\r\n")}
	switch l.word(tk) {
	case "VALUES":
		plan.Format = "Values"
		plan.clause = strings.TrimSpace(settings + " FORMAT Values")
		l.skip()
		plan.DataStart = l.pos // the first tuple
		return plan, nil
	case "FORMAT":
		name := l.next()
		if name.kind != tWord && name.kind != tQuoted {
			return nil, nil
		}
		plan.Format = strings.Trim(l.text[name.start:name.end], "`\"")
		last := name
		if l.word(l.next()) == "SETTINGS" {
			if end, _, ok := skipSettings(l); ok {
				last = end
			}
		}
		plan.clause = strings.TrimSpace(settings + " " + l.text[tk.start:last.end])
		// ClickHouse: the data starts after the first newline if there is one, or after the
		// whitespace otherwise.
		p := last.end
		t := l.text
		for p < len(t) && (t[p] == ' ' || t[p] == '\t' || t[p] == '\f') {
			p++
		}
		if p < len(t) && t[p] == '\r' {
			p++
		}
		if p < len(t) && t[p] == '\n' {
			p++
		}
		if p < len(t) && t[p] == ';' {
			return nil, &errStatement{codeSyntaxError, "excessive ';' before the data of an INSERT"}
		}
		plan.DataStart = p
		return plan, nil
	}
	return nil, nil
}

// skipGroup consumes a bracketed group whose opening token is open.
func skipGroup(l *lexer, open token) bool {
	if open.kind != tOpen {
		return false
	}
	for depth := 1; depth > 0; {
		switch l.next().kind {
		case tOpen:
			depth++
		case tClose:
			depth--
		case tEOF:
			return false
		}
	}
	return true
}

// skipSettings consumes "name = value [, name = value]..." after SETTINGS, and the token after
// the list. It returns the last token of the list and the token after it.
func skipSettings(l *lexer) (last, after token, ok bool) {
	for {
		name := l.next()
		if name.kind != tWord {
			return last, name, false
		}
		if eq := l.next(); l.text[eq.start:eq.end] != "=" {
			return last, eq, false
		}
		v := l.next()
		switch v.kind {
		case tOpen:
			if !skipGroup(l, v) {
				return last, v, false
			}
			last = token{kind: tClose, start: l.pos - 1, end: l.pos}
		case tPunct: // sign
			v = l.next()
			last = v
		case tEOF:
			return last, v, false
		default:
			last = v
		}
		if after = l.next(); after.kind != tComma {
			return last, after, true
		}
	}
}

// unquoteString reads a ClickHouse string literal.
func unquoteString(lit string) (string, error) {
	if len(lit) < 2 || lit[0] != '\'' || lit[len(lit)-1] != '\'' {
		return "", fmt.Errorf("not a string literal: %s", lit)
	}
	s := lit[1 : len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' && i+1 < len(s) && s[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
