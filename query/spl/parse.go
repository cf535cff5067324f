package spl

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// parser is a recursive-descent parser over a mode-switching lexer. A
// syntax error inside a segment is recorded and the parser resumes at the
// next pipe, so that one response lists the errors of every segment.
type parser struct {
	lex      lexer
	errs     errorList
	peeked   bool
	peekTok  token
	peekMode lexMode
	lastEnd  Pos
	depth    int
}

// abort unwinds the parse of the current segment after an error.
type abort struct{}

// Parse parses a search. User errors are returned as Errors; a panic in
// the parser itself is returned as an error wrapping ErrInternal.
func Parse(src string) (p *Pipeline, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("%w: parse: %v", ErrInternal, r)
		}
	}()
	ps := &parser{lex: lexer{src: src}, errs: errorList{src: src}}
	if len(src) > MaxSearchBytes {
		ps.errs.add(CodeLimit, 0, "", "search is %d bytes long; the limit is %d", len(src), MaxSearchBytes)
		return nil, ps.errs.err()
	}
	pl := ps.pipeline()
	if err := ps.errs.err(); err != nil {
		return nil, err
	}
	return pl, nil
}

func (p *parser) peek(m lexMode) token {
	if p.peeked {
		if p.peekMode == m {
			return p.peekTok
		}
		// Re-lex the same text in the requested mode.
		p.lex.pos = int(p.peekTok.pos)
	}
	p.peekTok = p.lex.next(m)
	p.peekMode = m
	p.peeked = true
	return p.peekTok
}

func (p *parser) next(m lexMode) token {
	t := p.peek(m)
	p.peeked = false
	if t.kind != tEOF {
		p.lastEnd = t.end
	}
	return t
}

type mark struct {
	pos     int
	lastEnd Pos
}

func (p *parser) mark() mark {
	pos := p.lex.pos
	if p.peeked {
		pos = int(p.peekTok.pos)
	}
	return mark{pos, p.lastEnd}
}

func (p *parser) reset(m mark) {
	p.lex.pos = m.pos
	p.lastEnd = m.lastEnd
	p.peeked = false
}

// fail records an error and aborts the segment.
func (p *parser) fail(code string, pos Pos, format string, args ...any) {
	p.errs.add(code, pos, "", format, args...)
	panic(abort{})
}

func (p *parser) failHint(code string, pos Pos, hint, format string, args ...any) {
	p.errs.add(code, pos, hint, format, args...)
	panic(abort{})
}

// unexpected fails on token t.
func (p *parser) unexpected(t token, want string) {
	switch t.kind {
	case tError:
		if strings.HasPrefix(t.text, "unterminated") {
			p.fail(CodeSyntax, t.pos, "%s", t.text)
		}
		p.fail(CodeSyntax, t.pos, "unexpected character %q", t.text)
	case tLBracket:
		p.fail(CodeUnsupported, t.pos, "subsearches ([...]) are not supported")
	case tBacktick:
		p.fail(CodeUnsupported, t.pos, "macros (`...`) are not supported")
	case tEOF:
		p.fail(CodeSyntax, t.pos, "unexpected end of search, expected %s", want)
	case tPipe:
		// Leave the pipe for the next segment.
		p.lex.pos, p.peeked = int(t.pos), false
		p.fail(CodeSyntax, t.pos, "unexpected |, expected %s", want)
	}
	p.fail(CodeSyntax, t.pos, "unexpected %s, expected %s", describe(t), want)
}

func describe(t token) string {
	switch t.kind {
	case tWord, tIdent, tNumber:
		return strconv.Quote(t.text)
	case tString, tQuoted:
		return t.text
	}
	return strconv.Quote(t.kind.String())
}

func (p *parser) expect(m lexMode, k tokKind, want string) token {
	t := p.next(m)
	if t.kind != k {
		p.unexpected(t, want)
	}
	return t
}

// atSegmentEnd reports whether the next token ends the segment.
func (p *parser) atSegmentEnd(m lexMode) bool {
	k := p.peek(m).kind
	return k == tPipe || k == tEOF
}

// skipSegment advances to the next top-level pipe or the end.
func (p *parser) skipSegment() {
	for {
		t := p.peek(modeArgs)
		if t.kind == tPipe || t.kind == tEOF {
			return
		}
		p.next(modeArgs)
		if t.kind == tError && strings.HasPrefix(t.text, "unterminated") {
			return
		}
	}
}

// segment runs fn, recovering from an abort by skipping to the next pipe.
func (p *parser) segment(fn func() Command) (c Command) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(abort); !ok {
				panic(r)
			}
			c = nil
			p.skipSegment()
		}
	}()
	p.depth = 0
	return fn()
}

func (p *parser) pipeline() *Pipeline {
	pl := &Pipeline{Rng: PosRange{0, Pos(len(p.lex.src))}, src: p.lex.src}
	first := p.segment(p.baseSearch)
	if first != nil {
		pl.Commands = append(pl.Commands, first)
	}
	for !p.errs.full() {
		t := p.next(modeArgs)
		if t.kind == tEOF {
			break
		}
		if t.kind != tPipe {
			// A segment parser stopped early; report and resync.
			p.segment(func() Command { p.unexpected(t, "|"); return nil })
			continue
		}
		if len(pl.Commands) >= MaxCommands {
			p.errs.add(CodeLimit, t.pos, "", "search has more than %d commands", MaxCommands)
			break
		}
		c := p.segment(p.command)
		if c != nil {
			pl.Commands = append(pl.Commands, c)
		}
	}
	return pl
}

// baseSearch parses the first segment: an optional `search` keyword and a
// search expression, possibly empty.
func (p *parser) baseSearch() Command {
	t := p.peek(modeSearch)
	c := &SearchCommand{cmdBase: cmdBase{Rng: PosRange{t.pos, t.pos}, Args: t.pos}}
	if t.kind == tWord && strings.EqualFold(t.text, "search") {
		p.next(modeSearch)
		c.Explicit = true
		c.Args = p.peek(modeSearch).pos
	}
	if !p.atSegmentEnd(modeSearch) {
		c.Expr = p.searchExpr()
		if !p.atSegmentEnd(modeSearch) {
			p.unexpected(p.peek(modeSearch), "| or end of search")
		}
	}
	c.Rng.End = max(p.lastEnd, c.Rng.Start)
	return c
}

func (p *parser) command() Command {
	t := p.next(modeArgs)
	if t.kind != tWord {
		if t.kind == tPipe || t.kind == tEOF {
			p.fail(CodeSyntax, t.pos, "empty command between pipes")
		}
		p.unexpected(t, "a command name")
	}
	name := strings.ToLower(t.text)
	spec, ok := commandTable[name]
	if !ok || !spec.Later {
		p.failHint(CodeUnsupported, t.pos, "supported commands: "+strings.Join(sortedCommandNames(), ", "),
			"command %q is not supported", t.text)
	}
	args := p.peek(modeArgs).pos
	c := spec.parse(p, cmdBase{Rng: PosRange{t.pos, t.end}, Args: args})
	mode := modeArgs
	if name == "search" {
		mode = modeSearch
	}
	if !p.atSegmentEnd(mode) {
		p.unexpected(p.peek(mode), "| or end of search")
	}
	return c
}

func (p *parser) finish(b *cmdBase) {
	b.Rng.End = max(p.lastEnd, b.Rng.End)
	if b.Args > b.Rng.End {
		b.Args = b.Rng.End
	}
}

// ---- search language ----

// searchExpr: AND of OR-groups; in the search language OR binds tighter
// than AND, and AND may be implicit.
func (p *parser) searchExpr() SearchExpr {
	p.enter()
	defer p.leave()
	left := p.searchOr()
	for {
		t := p.peek(modeSearch)
		if t.kind == tEOF || t.kind == tPipe || t.kind == tRParen {
			return left
		}
		if t.kind == tWord && t.text == "AND" {
			p.next(modeSearch)
		}
		right := p.searchOr()
		left = &SearchBinary{Op: SearchAnd, L: left, R: right, Rng: PosRange{left.Range().Start, right.Range().End}}
	}
}

func (p *parser) searchOr() SearchExpr {
	left := p.searchNot()
	for {
		t := p.peek(modeSearch)
		if t.kind != tWord || t.text != "OR" {
			return left
		}
		p.next(modeSearch)
		right := p.searchNot()
		left = &SearchBinary{Op: SearchOr, L: left, R: right, Rng: PosRange{left.Range().Start, right.Range().End}}
	}
}

func (p *parser) searchNot() SearchExpr {
	t := p.peek(modeSearch)
	if t.kind == tWord && t.text == "NOT" {
		p.next(modeSearch)
		p.enter()
		x := p.searchNot()
		p.leave()
		return &SearchNot{X: x, Rng: PosRange{t.pos, x.Range().End}}
	}
	return p.searchAtom()
}

func (p *parser) searchAtom() SearchExpr {
	t := p.next(modeSearch)
	switch t.kind {
	case tLParen:
		x := p.searchExpr()
		p.expect(modeSearch, tRParen, ")")
		return x
	case tString:
		if isCompareTok(p.peek(modeSearch).kind) {
			p.fail(CodeUnsupported, t.pos, "a quoted field name cannot be compared in a search; use where 'name'=\"value\"")
		}
		return &SearchTerm{Text: t.val, Quoted: true, Rng: PosRange{t.pos, t.end}}
	case tWord:
		switch t.text {
		case "AND", "OR":
			p.fail(CodeSyntax, t.pos, "%s needs a search term on its left", t.text)
		case "IN":
			p.fail(CodeSyntax, t.pos, "IN needs a field on its left")
		}
		nt := p.peek(modeSearch)
		if isCompareTok(nt.kind) {
			return p.searchCompare(t)
		}
		if nt.kind == tWord && nt.text == "IN" {
			return p.searchIn(t)
		}
		return &SearchTerm{Text: t.text, Rng: PosRange{t.pos, t.end}}
	}
	p.unexpected(t, "a search term")
	return nil
}

func isCompareTok(k tokKind) bool {
	switch k {
	case tEq, tEqEq, tNeq, tLt, tLe, tGt, tGe:
		return true
	}
	return false
}

func (p *parser) searchField(t token) *FieldName {
	if strings.Contains(t.text, "*") {
		p.fail(CodeUnsupported, t.pos, "wildcards in field names are not supported in comparisons")
	}
	if timeModifierFields[strings.ToLower(t.text)] {
		p.failHint(CodeUnsupported, t.pos, "pass the time window in the request's earliest and latest fields",
			"time modifier %s is not supported in the search text", t.text)
	}
	return &FieldName{Name: t.text, Rng: PosRange{t.pos, t.end}}
}

func (p *parser) searchCompare(ft token) SearchExpr {
	f := p.searchField(ft)
	opTok := p.next(modeSearch)
	var op CompareOp
	switch opTok.kind {
	case tEq:
		op = OpEq
	case tNeq:
		op = OpNe
	case tLt:
		op = OpLt
	case tLe:
		op = OpLe
	case tGt:
		op = OpGt
	case tGe:
		op = OpGe
	default:
		p.fail(CodeSyntax, opTok.pos, "use = to compare in a search")
	}
	v := p.searchValue("a value after " + op.String())
	return &SearchCompare{Field: f, Op: op, Value: v, Rng: PosRange{ft.pos, v.Rng.End}}
}

func (p *parser) searchValue(want string) *SearchValue {
	t := p.next(modeSearchValue)
	switch t.kind {
	case tWord:
		return &SearchValue{Text: t.text, Rng: PosRange{t.pos, t.end}}
	case tString:
		return &SearchValue{Text: t.val, Quoted: true, Rng: PosRange{t.pos, t.end}}
	}
	p.unexpected(t, want)
	return nil
}

func (p *parser) searchIn(ft token) SearchExpr {
	f := p.searchField(ft)
	p.next(modeSearch) // IN
	p.expect(modeSearch, tLParen, "( after IN")
	n := &SearchIn{Field: f}
	for {
		if len(n.Values) >= MaxInValues {
			p.fail(CodeLimit, p.peek(modeSearchValue).pos, "IN lists are limited to %d values", MaxInValues)
		}
		n.Values = append(n.Values, p.searchValue("a value"))
		t := p.next(modeSearch)
		if t.kind == tRParen {
			n.Rng = PosRange{ft.pos, t.end}
			return n
		}
		if t.kind != tComma {
			p.unexpected(t, ", or )")
		}
	}
}

func (p *parser) enter() {
	p.depth++
	if p.depth > MaxExprDepth {
		p.fail(CodeLimit, p.peek(modeArgs).pos, "expression nesting exceeds %d levels", MaxExprDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// ---- eval expressions ----

func (p *parser) expr() Expr {
	p.depth = 0
	return p.exprPrec(precXor)
}

// binaryOp returns the binary operator at t, if any.
func binaryOp(t token) (*binaryOpSpec, bool) {
	var text string
	switch t.kind {
	case tIdent:
		text = strings.ToUpper(t.text)
		if text != "AND" && text != "OR" && text != "XOR" && text != "LIKE" && text != "IN" {
			return nil, false
		}
	case tEq, tEqEq, tNeq, tLt, tLe, tGt, tGe, tPlus, tMinus, tStar, tSlash, tPercent, tDot:
		text = t.text
	default:
		return nil, false
	}
	return lookupBinaryOp(text)
}

func (p *parser) exprPrec(minPrec int) Expr {
	p.enter()
	defer p.leave()
	left := p.unary()
	for {
		t := p.peek(modeExpr)
		op, ok := binaryOp(t)
		if !ok || op.Prec < minPrec {
			return left
		}
		p.next(modeExpr)
		if op.Text == "IN" {
			left = p.inList(left)
			continue
		}
		right := p.exprPrec(op.Prec + 1)
		left = &BinaryExpr{Op: op.Text, L: left, R: right, Rng: PosRange{left.Range().Start, right.Range().End}}
	}
}

func (p *parser) inList(x Expr) Expr {
	p.expect(modeExpr, tLParen, "( after IN")
	n := &InExpr{X: x}
	for {
		if len(n.List) >= MaxInValues {
			p.fail(CodeLimit, p.peek(modeExpr).pos, "IN lists are limited to %d values", MaxInValues)
		}
		n.List = append(n.List, p.exprPrec(precXor))
		t := p.next(modeExpr)
		if t.kind == tRParen {
			n.Rng = PosRange{x.Range().Start, t.end}
			return n
		}
		if t.kind != tComma {
			p.unexpected(t, ", or )")
		}
	}
}

func (p *parser) unary() Expr {
	t := p.peek(modeExpr)
	if t.kind == tIdent && strings.EqualFold(t.text, "NOT") {
		p.next(modeExpr)
		x := p.exprPrec(precNot)
		return &UnaryExpr{Op: "NOT", X: x, Rng: PosRange{t.pos, x.Range().End}}
	}
	if t.kind == tMinus {
		p.next(modeExpr)
		x := p.exprPrec(precUnary)
		return &UnaryExpr{Op: "-", X: x, Rng: PosRange{t.pos, x.Range().End}}
	}
	return p.primary()
}

func isExprKeyword(s string) bool {
	switch strings.ToUpper(s) {
	case "AND", "OR", "XOR", "NOT", "LIKE", "IN":
		return true
	}
	return false
}

func (p *parser) primary() Expr {
	t := p.next(modeExpr)
	switch t.kind {
	case tNumber:
		return &NumberLit{Text: t.text, Rng: PosRange{t.pos, t.end}}
	case tString:
		return &StringLit{Value: t.val, Rng: PosRange{t.pos, t.end}}
	case tQuoted:
		if t.val == "" {
			p.fail(CodeSyntax, t.pos, "empty field name")
		}
		return &FieldRef{Name: t.val, Quoted: true, Rng: PosRange{t.pos, t.end}}
	case tLParen:
		x := p.exprPrec(precXor)
		p.expect(modeExpr, tRParen, ")")
		return x
	case tIdent:
		// like(s, pattern) is a function as well as an operator.
		if strings.EqualFold(t.text, "like") && p.peek(modeExpr).kind == tLParen {
			return p.call(t)
		}
		if isExprKeyword(t.text) {
			p.fail(CodeSyntax, t.pos, "unexpected %s, expected an expression", strings.ToUpper(t.text))
		}
		if p.peek(modeExpr).kind == tLParen {
			return p.call(t)
		}
		return &FieldRef{Name: t.text, Rng: PosRange{t.pos, t.end}}
	}
	p.unexpected(t, "an expression")
	return nil
}

func (p *parser) call(name token) Expr {
	p.next(modeExpr) // (
	c := &CallExpr{Func: strings.ToLower(name.text)}
	if p.peek(modeExpr).kind == tRParen {
		t := p.next(modeExpr)
		c.Rng = PosRange{name.pos, t.end}
		return c
	}
	for {
		c.Args = append(c.Args, p.exprPrec(precXor))
		t := p.next(modeExpr)
		if t.kind == tRParen {
			c.Rng = PosRange{name.pos, t.end}
			return c
		}
		if t.kind != tComma {
			p.unexpected(t, ", or )")
		}
	}
}

// ---- argument helpers ----

// isKeyword reports whether an argument word is the keyword kw.
func isKeyword(t token, kw string) bool {
	return t.kind == tWord && strings.EqualFold(t.text, kw)
}

// fieldName reads a field name or pattern in argument mode.
func (p *parser) fieldName(wildcards bool, want string) *FieldName {
	t := p.next(modeArgs)
	var f *FieldName
	switch t.kind {
	case tWord:
		if t.text == "-" || strings.HasPrefix(t.text, "-") {
			p.fail(CodeSyntax, t.pos, "unexpected %q, expected %s", t.text, want)
		}
		f = &FieldName{Name: t.text, Rng: PosRange{t.pos, t.end}}
	case tQuoted, tString:
		f = &FieldName{Name: t.val, Quoted: true, Rng: PosRange{t.pos, t.end}}
	default:
		p.unexpected(t, want)
	}
	if f.Name == "" {
		p.fail(CodeSyntax, t.pos, "empty field name")
	}
	if !wildcards && strings.Contains(f.Name, "*") {
		p.fail(CodeUnsupported, t.pos, "wildcards are not supported here")
	}
	return f
}

// optionAhead reports whether the next tokens are `word =`.
func (p *parser) optionAhead() bool {
	t := p.peek(modeArgs)
	if t.kind != tWord {
		return false
	}
	m := p.mark()
	p.next(modeArgs)
	eq := p.peek(modeArgs).kind == tEq
	p.reset(m)
	return eq
}

// option reads `name=value` and validates the name against allowed.
func (p *parser) option(cmd string, allowed []optionSpec) *Option {
	nt := p.next(modeArgs)
	p.next(modeArgs) // =
	vt := p.next(modeArgs)
	name := strings.ToLower(nt.text)
	var value string
	switch vt.kind {
	case tWord:
		value = vt.text
	case tString, tQuoted:
		value = vt.val
	default:
		p.unexpected(vt, "an option value")
	}
	o := &Option{Name: name, Value: value, Rng: PosRange{nt.pos, vt.end}}
	known := false
	for _, a := range allowed {
		if a.Name == name {
			known = true
		}
	}
	if !known {
		if why, ok := unsupportedOptions[name]; ok {
			p.fail(CodeUnsupported, nt.pos, "%s: %s", cmd, why)
		}
		p.fail(CodeUnsupported, nt.pos, "%s has no option %q", cmd, nt.text)
	}
	p.checkOption(o, vt.pos)
	return o
}

var limitRe = regexp.MustCompile(`^(?i:(top|bottom)?)([0-9]+)$`)

// checkOption validates an option value where it is written.
func (p *parser) checkOption(o *Option, at Pos) {
	switch o.Name {
	case "useother", "usenull", "cont", "keepempty":
		if _, ok := parseBool(o.Value); !ok {
			p.fail(CodeSyntax, at, "%s must be true or false, not %q", o.Name, o.Value)
		}
	case "limit":
		if _, _, ok := parseLimit(o.Value); !ok {
			p.fail(CodeSyntax, at, "limit must be N, topN or bottomN, not %q", o.Value)
		}
	case "bins":
		n, err := strconv.Atoi(o.Value)
		if err != nil || n < 1 || n > MaxBuckets {
			p.fail(CodeSyntax, at, "bins must be a whole number from 1 to %d, not %q", MaxBuckets, o.Value)
		}
	case "span":
		if _, err := parseSpan(o.Value); err != nil {
			p.fail(CodeUnsupported, at, "%v", err)
		}
	}
}

// parseBool accepts Splunk's boolean spellings.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "t", "1", "yes":
		return true, true
	case "false", "f", "0", "no":
		return false, true
	}
	return false, false
}

// parseLimit parses limit=N|topN|bottomN; bottom is true for bottomN.
func parseLimit(s string) (n int, bottom bool, ok bool) {
	m := limitRe.FindStringSubmatch(s)
	if m == nil {
		return 0, false, false
	}
	v, err := strconv.Atoi(m[2])
	if err != nil || v > 1<<20 {
		return 0, false, false
	}
	return v, strings.EqualFold(m[1], "bottom"), true
}

var spanRe = regexp.MustCompile(`^([0-9]+)([A-Za-z]*)$`)

// parseSpan parses a timechart span into seconds.
func parseSpan(s string) (int64, error) {
	m := spanRe.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("span must be a whole number and a unit (s, m, h, d, w), not %q", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("span %q is out of range", s)
	}
	unit := m[2]
	if unit == "" {
		unit = "s"
	}
	u, ok := lookupSpanUnit(unit)
	if !ok {
		switch strings.ToLower(unit) {
		case "mon", "month", "months", "q", "qtr", "qtrs", "quarter", "quarters", "y", "yr", "yrs", "year", "years":
			return 0, fmt.Errorf("calendar spans (%s) are not supported; use d or w", unit)
		case "ms", "us", "cs", "ds":
			return 0, fmt.Errorf("subsecond spans are not supported; the smallest span is 1s")
		}
		return 0, fmt.Errorf("unknown span unit %q; use s, m, h, d or w", unit)
	}
	if n > MaxSpanSeconds { // also guards the multiplication
		return 0, fmt.Errorf("span %s is longer than 31 days", s)
	}
	secs := n * u.Seconds
	if secs < MinSpanSeconds {
		return 0, fmt.Errorf("span must be at least 1s")
	}
	if secs > MaxSpanSeconds {
		return 0, fmt.Errorf("span %s is longer than 31 days", s)
	}
	return secs, nil
}

// intArg reads an integer word of at least minV.
func (p *parser) intArg(t token, what string, minV int64) *Int {
	v, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil || v < minV || v > 1<<31-1 {
		p.fail(CodeSyntax, t.pos, "%s must be a whole number from %d to %d, not %q", what, minV, 1<<31-1, t.text)
	}
	return &Int{Value: v, Rng: PosRange{t.pos, t.end}}
}

func isNumberWord(t token) bool {
	if t.kind != tWord || t.text == "" {
		return false
	}
	for i := 0; i < len(t.text); i++ {
		if !isDigit(t.text[i]) {
			return false
		}
	}
	return true
}

// fieldList reads field names separated by optional commas until the end
// of the segment or a keyword in stop.
func (p *parser) fieldList(wildcards bool, stop ...string) []*FieldName {
	var out []*FieldName
	for {
		t := p.peek(modeArgs)
		if t.kind == tPipe || t.kind == tEOF {
			break
		}
		if t.kind == tComma && len(out) > 0 {
			p.next(modeArgs)
			continue
		}
		if slicesContainsFold(stop, t) {
			break
		}
		if len(out) >= MaxListedFields {
			p.fail(CodeLimit, t.pos, "at most %d fields may be listed", MaxListedFields)
		}
		out = append(out, p.fieldName(wildcards, "a field name"))
	}
	return out
}

func slicesContainsFold(words []string, t token) bool {
	if t.kind != tWord {
		return false
	}
	for _, w := range words {
		if strings.EqualFold(t.text, w) {
			return true
		}
	}
	return false
}

// ---- commands ----

func (p *parser) parseSearchCmd(b cmdBase) Command {
	c := &SearchCommand{cmdBase: b, Explicit: true}
	if p.atSegmentEnd(modeSearch) {
		p.fail(CodeSyntax, p.peek(modeSearch).pos, "search needs a search expression")
	}
	c.Expr = p.searchExpr()
	p.finish(&c.cmdBase)
	return c
}

func (p *parser) parseWhere(b cmdBase) Command {
	if p.atSegmentEnd(modeExpr) {
		p.fail(CodeSyntax, p.peek(modeExpr).pos, "where needs a condition")
	}
	c := &WhereCommand{cmdBase: b, Cond: p.expr()}
	p.finish(&c.cmdBase)
	return c
}

func (p *parser) parseEval(b cmdBase) Command {
	c := &EvalCommand{cmdBase: b}
	for {
		t := p.next(modeExpr)
		var f *FieldName
		switch t.kind {
		case tIdent:
			f = &FieldName{Name: t.text, Rng: PosRange{t.pos, t.end}}
		case tQuoted, tString:
			f = &FieldName{Name: t.val, Quoted: true, Rng: PosRange{t.pos, t.end}}
			if t.val == "" {
				p.fail(CodeSyntax, t.pos, "empty field name")
			}
		default:
			p.unexpected(t, "a field name to assign")
		}
		eq := p.next(modeExpr)
		if eq.kind != tEq {
			p.unexpected(eq, "= after the field name")
		}
		if len(c.Assignments) >= MaxEvalAssignments {
			p.fail(CodeLimit, t.pos, "eval is limited to %d assignments", MaxEvalAssignments)
		}
		x := p.expr()
		c.Assignments = append(c.Assignments, &Assignment{Field: f, X: x, Rng: PosRange{t.pos, x.Range().End}})
		nt := p.peek(modeExpr)
		if nt.kind != tComma {
			break
		}
		p.next(modeExpr)
	}
	p.finish(&c.cmdBase)
	return c
}

func (p *parser) parseFields(b cmdBase) Command {
	c := &FieldsCommand{cmdBase: b}
	t := p.peek(modeArgs)
	switch {
	case t.kind == tPlus:
		p.next(modeArgs)
		c.Plus = true
	case t.kind == tWord && t.text == "-":
		p.fail(CodeUnsupported, t.pos, "fields - (removing fields) is not supported; list the fields to keep")
	case t.kind == tWord && strings.HasPrefix(t.text, "-"):
		p.fail(CodeUnsupported, t.pos, "fields - (removing fields) is not supported; list the fields to keep")
	}
	c.Fields = p.fieldList(true)
	if len(c.Fields) == 0 {
		p.fail(CodeSyntax, p.peek(modeArgs).pos, "fields needs at least one field")
	}
	p.finish(&c.cmdBase)
	return c
}

func (p *parser) parseTable(b cmdBase) Command {
	c := &TableCommand{cmdBase: b, Fields: p.fieldList(true)}
	if len(c.Fields) == 0 {
		p.fail(CodeSyntax, p.peek(modeArgs).pos, "table needs at least one field")
	}
	p.finish(&c.cmdBase)
	return c
}

func (p *parser) parseMvexpand(b cmdBase) Command {
	c := &MvexpandCommand{cmdBase: b, Field: p.fieldName(false, "a multivalue field")}
	if p.optionAhead() {
		p.fail(CodeUnsupported, p.peek(modeArgs).pos, "mvexpand options are not supported; use head after it")
	}
	p.finish(&c.cmdBase)
	return c
}

func (p *parser) parseRename(b cmdBase) Command {
	c := &RenameCommand{cmdBase: b}
	for {
		from := p.fieldName(true, "a field to rename")
		as := p.next(modeArgs)
		if !isKeyword(as, "as") {
			p.unexpected(as, "AS")
		}
		to := p.fieldName(true, "a new field name")
		if strings.Count(from.Name, "*") != strings.Count(to.Name, "*") {
			p.fail(CodeInvalid, to.Rng.Start, "rename patterns must have the same number of wildcards")
		}
		if len(c.Pairs) >= MaxListedFields {
			p.fail(CodeLimit, from.Rng.Start, "at most %d renames", MaxListedFields)
		}
		c.Pairs = append(c.Pairs, &RenamePair{From: from, To: to, Rng: PosRange{from.Rng.Start, to.Rng.End}})
		t := p.peek(modeArgs)
		if t.kind == tComma {
			p.next(modeArgs)
			continue
		}
		if t.kind == tPipe || t.kind == tEOF {
			break
		}
	}
	p.finish(&c.cmdBase)
	return c
}

// aggregates reads aggregate terms until the end of the segment, a keyword
// in stop or an option.
func (p *parser) aggregates(cmd string, stop ...string) []*Aggregate {
	var out []*Aggregate
	for {
		t := p.peek(modeArgs)
		if t.kind == tComma && len(out) > 0 {
			p.next(modeArgs)
			continue
		}
		if t.kind == tPipe || t.kind == tEOF || slicesContainsFold(stop, t) || p.optionAhead() {
			break
		}
		if len(out) >= MaxAggregates {
			p.fail(CodeLimit, t.pos, "at most %d aggregates", MaxAggregates)
		}
		out = append(out, p.aggregate(cmd))
	}
	if len(out) == 0 {
		p.fail(CodeSyntax, p.peek(modeArgs).pos, "%s needs at least one aggregate such as count", cmd)
	}
	return out
}

func (p *parser) aggregate(cmd string) *Aggregate {
	t := p.next(modeArgs)
	if t.kind != tWord {
		p.unexpected(t, "an aggregate function")
	}
	name := strings.ToLower(t.text)
	spec, ok := lookupAgg(name)
	if !ok {
		p.failHint(CodeUnsupported, t.pos, "supported aggregates: count, dc, sum, avg, min, max, values, earliest, latest",
			"aggregate function %q is not supported", t.text)
	}
	a := &Aggregate{Func: name, Rng: PosRange{t.pos, t.end}}
	if p.peek(modeArgs).kind == tLParen {
		p.next(modeArgs)
		at := p.peek(modeArgs)
		if isKeyword(at, "eval") {
			p.next(modeArgs)
			if spec.Name != "count" {
				p.fail(CodeUnsupported, at.pos, "eval() is only supported inside count(); use eval before %s", cmd)
			}
			p.expect(modeArgs, tLParen, "( after eval")
			a.Eval = p.expr()
			p.expect(modeExpr, tRParen, ")")
		} else if at.kind == tRParen && spec.Arg == aggArgOptional {
			// count() is count
		} else {
			a.Field = p.fieldName(true, "a field name")
			if strings.Contains(a.Field.Name, "*") {
				p.fail(CodeUnsupported, a.Field.Rng.Start, "wildcard aggregates such as avg(*) are not supported")
			}
		}
		rp := p.expect(modeArgs, tRParen, ")")
		a.Rng.End = rp.end
	} else if spec.Arg == aggArgField {
		p.fail(CodeSyntax, t.end, "%s needs a field: %s(<field>)", name, name)
	}
	if isKeyword(p.peek(modeArgs), "as") {
		p.next(modeArgs)
		a.Alias = p.fieldName(false, "a name after AS")
		a.Rng.End = a.Alias.Rng.End
	}
	return a
}

func (p *parser) parseStats(b cmdBase) Command {
	c := &StatsCommand{cmdBase: b}
	if p.optionAhead() {
		t := p.peek(modeArgs)
		p.option("stats", nil)
		p.fail(CodeUnsupported, t.pos, "stats has no options")
	}
	c.Aggs = p.aggregates("stats", "by")
	if isKeyword(p.peek(modeArgs), "by") {
		by := p.next(modeArgs)
		c.By = p.fieldList(false)
		if len(c.By) == 0 {
			p.fail(CodeSyntax, by.end, "BY needs at least one field")
		}
		if len(c.By) > MaxByFields {
			p.fail(CodeLimit, c.By[MaxByFields].Rng.Start, "stats is limited to %d BY fields", MaxByFields)
		}
	}
	p.finish(&c.cmdBase)
	return c
}

// chartOptions reads name=value options and rejects series where clauses.
func (p *parser) chartOptions(cmd string, allowed []optionSpec, opts *[]*Option) {
	for p.optionAhead() {
		*opts = append(*opts, p.option(cmd, allowed))
	}
	if t := p.peek(modeArgs); isKeyword(t, "where") {
		p.fail(CodeUnsupported, t.pos, "series where clauses are not supported")
	}
}

func (p *parser) parseChart(b cmdBase) Command {
	c := &ChartCommand{cmdBase: b}
	p.chartOptions("chart", chartOptions, &c.Options)
	c.Aggs = p.aggregates("chart", "over", "by")
	if isKeyword(p.peek(modeArgs), "over") {
		p.next(modeArgs)
		c.Over = p.fieldName(false, "a field after OVER")
	}
	if t := p.peek(modeArgs); isKeyword(t, "by") {
		p.next(modeArgs)
		f := p.fieldName(false, "a field after BY")
		if c.Over == nil {
			c.ByForm = true
			c.Over = f
			if nt := p.peek(modeArgs); nt.kind == tWord && !p.optionAhead() && !isKeyword(nt, "where") || nt.kind == tQuoted || nt.kind == tString || nt.kind == tComma {
				if nt.kind == tComma {
					p.next(modeArgs)
				}
				c.By = p.fieldName(false, "a split field")
			}
		} else {
			c.By = f
		}
		if nt := p.peek(modeArgs); (nt.kind == tWord && !p.optionAhead() && !isKeyword(nt, "where")) || nt.kind == tQuoted || nt.kind == tString || nt.kind == tComma {
			p.fail(CodeUnsupported, nt.pos, "chart takes one row field and one split field")
		}
	}
	p.chartOptions("chart", chartOptions, &c.Options)
	p.finish(&c.cmdBase)
	return c
}

func (p *parser) parseTimechart(b cmdBase) Command {
	c := &TimechartCommand{cmdBase: b}
	p.chartOptions("timechart", timechartOptions, &c.Options)
	c.Aggs = p.aggregates("timechart", "by")
	if isKeyword(p.peek(modeArgs), "by") {
		p.next(modeArgs)
		c.By = p.fieldName(false, "a split field after BY")
		if nt := p.peek(modeArgs); (nt.kind == tWord && !p.optionAhead() && !isKeyword(nt, "where")) || nt.kind == tQuoted || nt.kind == tString || nt.kind == tComma {
			p.fail(CodeUnsupported, nt.pos, "timechart takes one split field")
		}
	}
	p.chartOptions("timechart", timechartOptions, &c.Options)
	p.finish(&c.cmdBase)
	return c
}

func (p *parser) parseSort(b cmdBase) Command {
	c := &SortCommand{cmdBase: b}
	if t := p.peek(modeArgs); isNumberWord(t) {
		p.next(modeArgs)
		c.Limit = p.intArg(t, "sort count", 0)
	} else if p.optionAhead() && isKeyword(t, "limit") {
		p.next(modeArgs)
		p.next(modeArgs)
		vt := p.next(modeArgs)
		c.Limit = p.intArg(vt, "sort limit", 0)
	}
	if c.Limit != nil && c.Limit.Value == 0 {
		c.Limit = nil // sort 0: no limit
	}
	for {
		t := p.peek(modeArgs)
		if t.kind == tPipe || t.kind == tEOF {
			break
		}
		if t.kind == tComma && len(c.Keys) > 0 {
			p.next(modeArgs)
			continue
		}
		// Trailing desc/d reverses every key.
		if len(c.Keys) > 0 && (isKeyword(t, "desc") || isKeyword(t, "d")) {
			m := p.mark()
			p.next(modeArgs)
			if p.atSegmentEnd(modeArgs) {
				for _, k := range c.Keys {
					k.Desc = !k.Desc
				}
				break
			}
			p.reset(m)
		}
		if len(c.Keys) >= MaxListedFields {
			p.fail(CodeLimit, t.pos, "at most %d sort keys", MaxListedFields)
		}
		c.Keys = append(c.Keys, p.sortKey())
	}
	if len(c.Keys) == 0 {
		p.fail(CodeSyntax, p.peek(modeArgs).pos, "sort needs at least one field")
	}
	p.finish(&c.cmdBase)
	return c
}

func (p *parser) sortKey() *SortKey {
	t := p.peek(modeArgs)
	k := &SortKey{Rng: PosRange{t.pos, t.pos}}
	switch {
	case t.kind == tPlus:
		p.next(modeArgs)
	case t.kind == tWord && t.text == "-":
		p.next(modeArgs)
		k.Desc = true
	case t.kind == tWord && strings.HasPrefix(t.text, "-"):
		// -field lexes as one word.
		p.next(modeArgs)
		k.Desc = true
		name := t.text[1:]
		if strings.HasPrefix(name, "-") {
			p.fail(CodeSyntax, t.pos, "unexpected %q", t.text)
		}
		if p.peek(modeArgs).kind == tLParen {
			return p.sortFunc(k, token{kind: tWord, pos: t.pos + 1, end: t.end, text: name})
		}
		k.Field = &FieldName{Name: name, Rng: PosRange{t.pos + 1, t.end}}
		if strings.Contains(name, "*") {
			p.fail(CodeUnsupported, t.pos+1, "wildcards are not supported here")
		}
		k.Rng.End = t.end
		return k
	}
	nt := p.peek(modeArgs)
	if nt.kind == tWord {
		m := p.mark()
		p.next(modeArgs)
		if p.peek(modeArgs).kind == tLParen {
			return p.sortFunc(k, nt)
		}
		p.reset(m)
	}
	k.Field = p.fieldName(false, "a field to sort by")
	k.Rng.End = k.Field.Rng.End
	return k
}

func (p *parser) sortFunc(k *SortKey, fn token) *SortKey {
	mode := strings.ToLower(fn.text)
	switch mode {
	case "auto", "num", "str":
	case "ip":
		p.fail(CodeUnsupported, fn.pos, "sort by ip() is not supported")
	default:
		p.fail(CodeUnsupported, fn.pos, "sort function %q is not supported; use auto, num or str", fn.text)
	}
	p.next(modeArgs) // (
	k.Mode = mode
	k.Field = p.fieldName(false, "a field")
	rp := p.expect(modeArgs, tRParen, ")")
	k.Rng.End = rp.end
	return k
}

func (p *parser) parseHead(b cmdBase) Command {
	c := &HeadCommand{cmdBase: b}
	t := p.peek(modeArgs)
	switch {
	case isNumberWord(t) || t.kind == tWord && strings.HasPrefix(t.text, "-"):
		p.next(modeArgs)
		c.Count = p.intArg(t, "head count", 1)
	case p.optionAhead():
		if !isKeyword(t, "limit") {
			p.option("head", nil)
		}
		p.next(modeArgs)
		p.next(modeArgs)
		c.Count = p.intArg(p.next(modeArgs), "head limit", 1)
	case t.kind == tLParen:
		p.fail(CodeUnsupported, t.pos, "head with a condition is not supported; use where")
	}
	p.finish(&c.cmdBase)
	return c
}

func (p *parser) parseDedup(b cmdBase) Command {
	c := &DedupCommand{cmdBase: b}
	if t := p.peek(modeArgs); isNumberWord(t) {
		p.next(modeArgs)
		c.Count = p.intArg(t, "dedup count", 1)
	}
	for {
		t := p.peek(modeArgs)
		if t.kind == tPipe || t.kind == tEOF {
			break
		}
		if t.kind == tComma && len(c.Fields) > 0 {
			p.next(modeArgs)
			continue
		}
		if p.optionAhead() {
			o := p.option("dedup", dedupOptions)
			if c.KeepEmpty != nil {
				p.fail(CodeSyntax, o.Rng.Start, "keepempty given twice")
			}
			c.KeepEmpty = o
			continue
		}
		if isKeyword(t, "sortby") {
			p.fail(CodeUnsupported, t.pos, "dedup sortby is not supported; use sort before dedup")
		}
		if len(c.Fields) >= MaxListedFields {
			p.fail(CodeLimit, t.pos, "at most %d dedup fields", MaxListedFields)
		}
		c.Fields = append(c.Fields, p.fieldName(false, "a field"))
	}
	if len(c.Fields) == 0 {
		p.fail(CodeSyntax, p.peek(modeArgs).pos, "dedup needs at least one field")
	}
	p.finish(&c.cmdBase)
	return c
}
