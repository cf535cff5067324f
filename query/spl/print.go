package spl

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String methods render SPL that parses back to an equal node (positions
// aside). Parentheses are emitted only where precedence requires them.

func (n *Pipeline) String() string {
	parts := make([]string, len(n.Commands))
	for i, c := range n.Commands {
		parts[i] = c.String()
	}
	if len(parts) > 1 && parts[0] == "" {
		// An empty base search followed by commands: "| stats count".
		return "| " + strings.Join(parts[1:], " | ")
	}
	return strings.Join(parts, " | ")
}

func (n *SearchCommand) String() string {
	var s string
	if n.Expr != nil {
		s = n.Expr.String()
	}
	if n.Explicit {
		if s == "" {
			return "search"
		}
		return "search " + s
	}
	return s
}

func (n *WhereCommand) String() string { return "where " + n.Cond.String() }

func (n *EvalCommand) String() string {
	parts := make([]string, len(n.Assignments))
	for i, a := range n.Assignments {
		parts[i] = a.String()
	}
	return "eval " + strings.Join(parts, ", ")
}

func (n *Assignment) String() string {
	return exprFieldName(n.Field.Name, n.Field.Quoted) + "=" + n.X.String()
}

func (n *FieldsCommand) String() string {
	s := "fields "
	if n.Plus {
		s += "+ "
	}
	return s + fieldNames(n.Fields)
}

func (n *TableCommand) String() string { return "table " + fieldNames(n.Fields) }

func (n *MvexpandCommand) String() string { return "mvexpand " + n.Field.String() }

func (n *RenameCommand) String() string {
	parts := make([]string, len(n.Pairs))
	for i, p := range n.Pairs {
		parts[i] = p.String()
	}
	return "rename " + strings.Join(parts, ", ")
}

func (n *RenamePair) String() string { return n.From.String() + " AS " + n.To.String() }

func (n *StatsCommand) String() string {
	s := "stats " + aggregates(n.Aggs)
	if len(n.By) > 0 {
		s += " BY " + fieldNames(n.By)
	}
	return s
}

func (n *ChartCommand) String() string {
	s := "chart " + options(n.Options) + aggregates(n.Aggs)
	if n.ByForm {
		s += " BY " + n.Over.String()
		if n.By != nil {
			s += " " + n.By.String()
		}
		return s
	}
	if n.Over != nil {
		s += " OVER " + n.Over.String()
	}
	if n.By != nil {
		s += " BY " + n.By.String()
	}
	return s
}

func (n *TimechartCommand) String() string {
	s := "timechart " + options(n.Options) + aggregates(n.Aggs)
	if n.By != nil {
		s += " BY " + n.By.String()
	}
	return s
}

func (n *SortCommand) String() string {
	s := "sort "
	if n.Limit != nil {
		s += n.Limit.String() + " "
	}
	parts := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		parts[i] = k.String()
	}
	// A last key named desc or d would read as the reverse flag.
	if last := n.Keys[len(n.Keys)-1]; len(n.Keys) > 1 && !last.Desc && last.Mode == "" &&
		(strings.EqualFold(last.Field.Name, "desc") || strings.EqualFold(last.Field.Name, "d")) {
		parts[len(parts)-1] = quoteString(last.Field.Name, '"')
	}
	return s + strings.Join(parts, ", ")
}

func (n *SortKey) String() string {
	s := ""
	if n.Desc {
		s = "-"
	}
	if n.Mode != "" {
		return s + n.Mode + "(" + n.Field.String() + ")"
	}
	return s + n.Field.String()
}

func (n *HeadCommand) String() string {
	if n.Count == nil {
		return "head"
	}
	return "head " + n.Count.String()
}

func (n *DedupCommand) String() string {
	s := "dedup "
	if n.Count != nil {
		s += n.Count.String() + " "
	}
	s += fieldNames(n.Fields)
	if n.KeepEmpty != nil {
		s += " " + n.KeepEmpty.String()
	}
	return s
}

func (n *Int) String() string { return strconv.FormatInt(n.Value, 10) }

func (n *Option) String() string {
	v := n.Value
	if !isArgWord(v) {
		v = quoteString(v, '"')
	}
	return n.Name + "=" + v
}

// String renders a field name for argument positions. Names that could
// be read as a count or a keyword are quoted.
func (n *FieldName) String() string {
	if !n.Quoted && isArgWord(n.Name) && !strings.HasPrefix(n.Name, "-") && !reservedArg(n.Name) {
		return n.Name
	}
	return quoteString(n.Name, '"')
}

func reservedArg(s string) bool {
	switch strings.ToLower(s) {
	case "as", "by", "over", "where", "sortby":
		return true
	}
	return strings.Trim(s, "0123456789") == ""
}

func (n *Aggregate) String() string {
	s := n.Func
	switch {
	case n.Eval != nil:
		s += "(eval(" + n.Eval.String() + "))"
	case n.Field != nil:
		s += "(" + n.Field.String() + ")"
	}
	if n.Alias != nil {
		s += " AS " + n.Alias.String()
	}
	return s
}

func fieldNames(fs []*FieldName) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, ", ")
}

func aggregates(as []*Aggregate) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}

func options(os []*Option) string {
	var b strings.Builder
	for _, o := range os {
		b.WriteString(o.String())
		b.WriteByte(' ')
	}
	return b.String()
}

// isArgWord reports whether s lexes as one argument-mode word.
func isArgWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isArgRune(r) {
			return false
		}
	}
	return true
}

// quoteString quotes s with q, escaping q and backslash.
func quoteString(s string, q byte) string {
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == q || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte(q)
	return b.String()
}

// ---- search language ----

const (
	slAnd = iota + 1
	slOr
	slNot
	slAtom
)

func searchPrec(e SearchExpr) int {
	switch e := e.(type) {
	case *SearchBinary:
		if e.Op == SearchAnd {
			return slAnd
		}
		return slOr
	case *SearchNot:
		return slNot
	}
	return slAtom
}

func searchChild(e SearchExpr, min int) string {
	if searchPrec(e) < min {
		return "(" + e.String() + ")"
	}
	return e.String()
}

func (n *SearchBinary) String() string {
	if n.Op == SearchOr {
		return searchChild(n.L, slOr) + " OR " + searchChild(n.R, slOr+1)
	}
	// OR binds tighter than AND in the search language; its groups are
	// parenthesised anyway, for readers used to the other way round.
	l := n.L.String()
	if _, ok := n.L.(*SearchBinary); ok && searchPrec(n.L) == slOr {
		l = "(" + l + ")"
	}
	return l + " AND " + searchChild(n.R, slOr+1)
}

func (n *SearchNot) String() string { return "NOT " + searchChild(n.X, slNot) }

func (n *SearchTerm) String() string {
	if n.Quoted || !isSearchWord(n.Text, modeSearch) || isSearchKeyword(n.Text) {
		return quoteString(n.Text, '"')
	}
	return n.Text
}

func (n *SearchValue) String() string {
	if n.Quoted || !isSearchWord(n.Text, modeSearchValue) {
		return quoteString(n.Text, '"')
	}
	return n.Text
}

func (n *SearchCompare) String() string {
	v := n.Value.String()
	if strings.ContainsAny(v[:1], "=<>!") {
		v = " " + v // keep the operator from absorbing the value
	}
	f := n.Field.Name
	if strings.HasSuffix(f, "!") {
		f += " " // "a!" "=" must not read as "a" "!="
	}
	return f + n.Op.String() + v
}

func (n *SearchIn) String() string {
	parts := make([]string, len(n.Values))
	for i, v := range n.Values {
		parts[i] = v.String()
	}
	return n.Field.Name + " IN (" + strings.Join(parts, ", ") + ")"
}

func isSearchKeyword(s string) bool {
	return s == "AND" || s == "OR" || s == "NOT" || s == "IN"
}

// isSearchWord reports whether s lexes as exactly one word in mode m.
func isSearchWord(s string, m lexMode) bool {
	if s == "" {
		return false
	}
	l := lexer{src: s}
	if r, _ := utf8.DecodeRuneInString(s); r == '`' || r == '"' {
		return false
	}
	return l.searchWord(m) == len(s) && !strings.ContainsFunc(s, unicode.IsSpace)
}

// ---- eval expressions ----

func exprPrecOf(e Expr) int {
	switch e := e.(type) {
	case *BinaryExpr:
		if op, ok := lookupBinaryOp(e.Op); ok {
			return op.Prec
		}
	case *InExpr:
		return precEq
	case *UnaryExpr:
		if e.Op == "NOT" {
			return precNot
		}
		return precUnary
	}
	return precAtom
}

func exprChild(e Expr, min int) string {
	if exprPrecOf(e) < min {
		return "(" + e.String() + ")"
	}
	return e.String()
}

func (n *BinaryExpr) String() string {
	p := exprPrecOf(n)
	return exprChild(n.L, p) + " " + n.Op + " " + exprChild(n.R, p+1)
}

func (n *UnaryExpr) String() string {
	if n.Op == "NOT" {
		return "NOT " + exprChild(n.X, precNot)
	}
	s := exprChild(n.X, precUnary)
	if strings.HasPrefix(s, "-") {
		return "- " + s
	}
	return "-" + s
}

func (n *InExpr) String() string {
	parts := make([]string, len(n.List))
	for i, e := range n.List {
		parts[i] = e.String()
	}
	return exprChild(n.X, precEq) + " IN (" + strings.Join(parts, ", ") + ")"
}

func (n *CallExpr) String() string {
	parts := make([]string, len(n.Args))
	for i, e := range n.Args {
		parts[i] = e.String()
	}
	return n.Func + "(" + strings.Join(parts, ", ") + ")"
}

func (n *FieldRef) String() string { return exprFieldName(n.Name, n.Quoted) }

func (n *StringLit) String() string { return quoteString(n.Value, '"') }

func (n *NumberLit) String() string { return n.Text }

// exprFieldName renders a field name in the expression language.
func exprFieldName(name string, quoted bool) string {
	if !quoted && isIdent(name) {
		return name
	}
	return quoteString(name, '\'')
}

// isIdent reports whether s lexes as one expression identifier that is not
// a keyword.
func isIdent(s string) bool {
	if s == "" || isExprKeyword(s) {
		return false
	}
	l := lexer{src: s}
	return l.ident() == len(s)
}
