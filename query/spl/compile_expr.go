package spl

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/svc-data/svc/query/sqlquote"
)

// ---- search language ----

// searchCond compiles a search expression to a condition that is never
// null: a missing field makes a comparison false, and NOT of it true, as in
// Splunk's search command.
func (c *compiler) searchCond(e SearchExpr) string {
	switch e := e.(type) {
	case *SearchBinary:
		l, r := c.searchCond(e.L), c.searchCond(e.R)
		if e.Op == SearchOr {
			if l == "1" || r == "1" {
				return "1"
			}
			return "(" + l + " OR " + r + ")"
		}
		switch {
		case l == "1":
			return r
		case r == "1":
			return l
		}
		return "(" + l + " AND " + r + ")"
	case *SearchNot:
		x := c.searchCond(e.X)
		switch x {
		case "1":
			return "0"
		case "0":
			return "1"
		}
		return "(NOT " + x + ")"
	case *SearchTerm:
		return c.termCond(e)
	case *SearchCompare:
		return total(c.compareCond(e.Field, e.Op, e.Value))
	case *SearchIn:
		parts := make([]string, len(e.Values))
		for i, v := range e.Values {
			parts[i] = total(c.compareCond(e.Field, OpEq, v))
		}
		return "(" + strings.Join(parts, " OR ") + ")"
	}
	panic(fmt.Sprintf("spl: searchCond: unexpected %T", e))
}

// total makes a possibly-null condition false when null.
func total(cond string) string {
	if cond == "1" || cond == "0" {
		return cond
	}
	return "ifNull(" + cond + ", 0)"
}

func (c *compiler) termCond(t *SearchTerm) string {
	if strings.Trim(t.Text, "*") == "" {
		return "1" // * matches every row
	}
	raw := c.cur.sch.resolve("_raw")
	if raw.k == kNull {
		c.errs.add(CodeInvalid, t.Rng.Start, "compare a field instead, e.g. field=value",
			"search terms match _raw, which these rows do not have")
		return "0"
	}
	return total(termMatch(raw.s, t.Text))
}

// termMatch matches a search term against text: case-insensitive, at token
// boundaries (a boundary is any character that is not a letter or digit)
// on the sides where the term starts or ends with a letter or digit, with *
// matching any run of characters.
func termMatch(text, term string) string {
	if isASCIIAlnum(term) {
		return "hasTokenCaseInsensitive(" + text + ", " + sqlquote.String(term) + ")"
	}
	return "match(" + text + ", " + sqlquote.String(TermRegexp(term)) + ")"
}

// TermRegexp is the RE2 expression a search term compiles to (exported
// for tests that compute expected results in Go).
func TermRegexp(term string) string {
	parts := strings.Split(term, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	body := strings.Join(parts, ".*")
	const boundary = `[^\pL\pN]`
	pre, post := "", ""
	if r, _ := utf8.DecodeRuneInString(term); isLetterOrDigit(r) {
		pre = "(?:^|" + boundary + ")"
	}
	if r, _ := utf8.DecodeLastRuneInString(term); isLetterOrDigit(r) {
		post = "(?:$|" + boundary + ")"
	}
	return "(?is)" + pre + body + post
}

func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isASCIIAlnum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z') {
			return false
		}
	}
	return true
}

var numericRe = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// IsNumericLiteral reports whether a search value is compared numerically.
func IsNumericLiteral(s string) bool { return numericRe.MatchString(s) }

// defaultFields are always present in Splunk; here they are null when the
// event has no value, so field=* on them matches every event instead.
var defaultFields = map[string]bool{"host": true, "source": true, "sourcetype": true, "index": true}

// compareCond compiles `field op value` of the search language.
func (c *compiler) compareCond(f *FieldName, op CompareOp, v *SearchValue) string {
	x := c.cur.sch.resolve(f.Name)
	if op == OpEq && v.Text == "*" && defaultFields[f.Name] && x.s == c.cur.sch.base(f.Name).s {
		return "1"
	}
	if x.k == kNull {
		return "0"
	}
	if isMV(x.k) {
		// a multivalue field matches when one of its values does
		return mvAny(x, c.compareValue(mvElem(x), op, v))
	}
	return c.compareValue(x, op, v)
}

// compareValue compiles `x op value` of the search language for a field's value x.
func (c *compiler) compareValue(x sqlExpr, op CompareOp, v *SearchValue) string {
	eq := func() string {
		switch {
		case v.Text == "*":
			return isNotNull(x)
		case strings.Contains(v.Text, "*"):
			return "ilike(" + toStr(x).s + ", " + sqlquote.String(likePattern(v.Text)) + ")"
		case IsNumericLiteral(v.Text):
			f, _ := strconv.ParseFloat(v.Text, 64)
			if n, ok := c.integerLiteral(x, f); ok {
				return "(" + x.s + " = " + n + ")"
			}
			if x.k == kNum {
				return "(" + x.s + " = " + sqlFloat(f) + ")"
			}
			return "(" + toNum(x).s + " = " + sqlFloat(f) + " OR lowerUTF8(" + toStr(x).s + ") = " + sqlquote.String(strings.ToLower(v.Text)) + ")"
		}
		return "(lowerUTF8(" + toStr(x).s + ") = " + sqlquote.String(strings.ToLower(v.Text)) + ")"
	}
	switch op {
	case OpEq:
		return eq()
	case OpNe:
		return "(" + isNotNull(x) + " AND NOT ifNull(" + eq() + ", 0))"
	}
	if strings.Contains(v.Text, "*") {
		c.errs.add(CodeInvalid, v.Rng.Start, "", "wildcards can only be used with = and !=")
		return "0"
	}
	if IsNumericLiteral(v.Text) {
		f, _ := strconv.ParseFloat(v.Text, 64)
		if n, ok := c.integerLiteral(x, f); ok {
			return "(" + x.s + " " + op.String() + " " + n + ")"
		}
		return "(" + toNum(x).s + " " + op.String() + " " + sqlFloat(f) + ")"
	}
	return "(" + toStr(x).s + " " + op.String() + " " + sqlquote.String(v.Text) + ")"
}

// likePattern turns a search wildcard value into a LIKE pattern.
func likePattern(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '%', '_', '\\':
			b.WriteByte('\\')
			b.WriteByte(v[i])
		case '*':
			b.WriteByte('%')
		default:
			b.WriteByte(v[i])
		}
	}
	return b.String()
}

// ---- eval language ----

// expr compiles an eval expression against the current schema.
func (c *compiler) expr(e Expr) sqlExpr {
	switch e := e.(type) {
	case *FieldRef:
		x := c.operand(e)
		if isMV(x.k) {
			c.errs.add(CodeUnsupported, e.Rng.Start, "compare it (where "+e.Name+"=\"x\" matches when any value does), aggregate it in stats or list it with table",
				"%s is a multivalue field; here it can only be compared", e.Name)
			return nullExpr
		}
		return x
	case *StringLit:
		return sqlExpr{sqlquote.String(e.Value), kStr}
	case *NumberLit:
		f, err := strconv.ParseFloat(e.Text, 64)
		if err != nil || math.IsInf(f, 0) {
			c.errs.add(CodeInvalid, e.Rng.Start, "", "number %s is out of range", e.Text)
			return nullExpr
		}
		return sqlExpr{sqlFloat(f), kNum}
	case *UnaryExpr:
		if e.Op == "NOT" {
			return sqlExpr{"(NOT " + c.cond(e.X) + ")", kBool}
		}
		return sqlExpr{"(-" + toNum(c.expr(e.X)).s + ")", kNum}
	case *BinaryExpr:
		return c.binary(e)
	case *InExpr:
		x := c.operand(e.X)
		parts := make([]string, len(e.List))
		for i, item := range e.List {
			parts[i] = compare("=", x, c.expr(item)).s
		}
		return sqlExpr{"(" + strings.Join(parts, " OR ") + ")", kBool}
	case *CallExpr:
		spec, ok := funcTable[e.Func]
		if !ok {
			if _, isAgg := lookupAgg(e.Func); isAgg {
				c.errs.add(CodeUnsupported, e.Rng.Start, "aggregate in stats, chart or timechart", "%s() is an aggregate, not an eval function", e.Func)
			} else {
				c.errs.add(CodeUnsupported, e.Rng.Start, "see GET /v1/spl/capabilities for the supported functions", "function %s() is not supported", e.Func)
			}
			return nullExpr
		}
		if len(e.Args) < spec.Min || (spec.Max >= 0 && len(e.Args) > spec.Max) {
			c.errs.add(CodeInvalid, e.Rng.Start, "", "%s: %s", e.Func, spec.Signature)
			return nullExpr
		}
		return spec.compile(c, e)
	}
	panic(fmt.Sprintf("spl: expr: unexpected %T", e))
}

// operand compiles an operand of a comparison: a field reference may be a multivalue
// field there (compare matches when any value does).
func (c *compiler) operand(e Expr) sqlExpr {
	f, ok := e.(*FieldRef)
	if !ok {
		return c.expr(e)
	}
	if strings.Contains(f.Name, "*") && !f.Quoted {
		c.errs.add(CodeInvalid, f.Rng.Start, "", "wildcards are not allowed in expressions")
		return nullExpr
	}
	return c.cur.sch.resolve(f.Name)
}

// cond compiles an expression that must be a condition.
func (c *compiler) cond(e Expr) string {
	x := c.expr(e)
	switch x.k {
	case kBool:
		return x.s
	case kNull:
		return "CAST(NULL AS Nullable(UInt8))"
	}
	c.errs.add(CodeInvalid, e.Range().Start, "compare it, e.g. x=1 or isnotnull(x)",
		"expected a condition, got %s", x.k)
	return "0"
}

func (c *compiler) binary(e *BinaryExpr) sqlExpr {
	switch e.Op {
	case "AND", "OR":
		return sqlExpr{"(" + c.cond(e.L) + " " + e.Op + " " + c.cond(e.R) + ")", kBool}
	case "XOR":
		return sqlExpr{"xor(" + c.cond(e.L) + ", " + c.cond(e.R) + ")", kBool}
	case "=", "==", "!=", "<", "<=", ">", ">=":
		l, r := c.operand(e.L), c.operand(e.R)
		if isMV(l.k) && isMV(r.k) {
			c.errs.add(CodeUnsupported, e.Rng.Start, "compare one of them with a value", "a comparison of two multivalue fields is not supported")
			return sqlExpr{"0", kBool}
		}
		return compare(e.Op, l, r)
	case "LIKE":
		return sqlExpr{"like(" + toStr(c.expr(e.L)).s + ", " + toStr(c.expr(e.R)).s + ")", kBool}
	case ".":
		return sqlExpr{"concat(" + toStr(c.expr(e.L)).s + ", " + toStr(c.expr(e.R)).s + ")", kStr}
	case "+", "-", "*":
		return sqlExpr{"(" + toNum(c.expr(e.L)).s + " " + e.Op + " " + toNum(c.expr(e.R)).s + ")", kNum}
	case "/", "%":
		l, r := toNum(c.expr(e.L)).s, toNum(c.expr(e.R)).s
		return sqlExpr{"if(" + r + " = 0, NULL, " + l + " " + e.Op + " " + r + ")", kNum}
	}
	panic("spl: binary: unknown operator " + e.Op)
}

// compare compiles a comparison with Splunk's loose typing: numerically
// when both sides are numbers or numeric strings, otherwise as text.
func compare(op string, a, b sqlExpr) sqlExpr {
	if op == "==" {
		op = "="
	}
	if a.k == kNull || b.k == kNull {
		return sqlExpr{"CAST(NULL AS Nullable(UInt8))", kBool}
	}
	// A multivalue field (at most one side) matches when one of its values does.
	if isMV(a.k) {
		return sqlExpr{mvAny(a, compare(op, mvElem(a), b).s), kBool}
	}
	if isMV(b.k) {
		return sqlExpr{mvAny(b, compare(op, a, mvElem(b)).s), kBool}
	}
	num := func(k kind) bool { return k == kNum || k == kTime }
	switch {
	case a.k == b.k && a.k != kDyn && a.k != kArr:
		return sqlExpr{"(" + a.s + " " + op + " " + b.s + ")", kBool}
	case num(a.k) && num(b.k):
		return sqlExpr{"(" + toNum(a).s + " " + op + " " + toNum(b).s + ")", kBool}
	}
	na, nb := toNum(a), toNum(b)
	return sqlExpr{"if(" + na.s + " IS NOT NULL AND " + nb.s + " IS NOT NULL, " + na.s + " " + op + " " + nb.s + ", " +
		toStr(a).s + " " + op + " " + toStr(b).s + ")", kBool}
}

// ---- functions ----

// funcSpec is an eval function.
type funcSpec struct {
	Name        string
	Min, Max    int // Max < 0: any number
	Signature   string
	Description string
	compile     func(c *compiler, call *CallExpr) sqlExpr
}

var funcTable map[string]*funcSpec

// numFn builds a one-argument numeric function from an SQL template with
// %[1]s for the argument.
func numFn(tmpl string) func(*compiler, *CallExpr) sqlExpr {
	return func(c *compiler, call *CallExpr) sqlExpr {
		n := toNum(c.expr(call.Args[0])).s
		return sqlExpr{fmt.Sprintf(tmpl, n), kNum}
	}
}

func strFn(tmpl string) func(*compiler, *CallExpr) sqlExpr {
	return func(c *compiler, call *CallExpr) sqlExpr {
		s := toStr(c.expr(call.Args[0])).s
		return sqlExpr{fmt.Sprintf(tmpl, s), kStr}
	}
}

// literalArg returns the string literal at call.Args[i].
func (c *compiler) literalArg(call *CallExpr, i int, what string) (string, bool) {
	lit, ok := call.Args[i].(*StringLit)
	if !ok {
		c.errs.add(CodeUnsupported, call.Args[i].Range().Start, "", "%s: the %s must be a string literal", call.Func, what)
		return "", false
	}
	return lit.Value, true
}

// regexArg returns a literal regular expression checked with RE2 syntax,
// which is what the engine uses.
func (c *compiler) regexArg(call *CallExpr, i int) (string, bool) {
	re, ok := c.literalArg(call, i, "regular expression")
	if !ok {
		return "", false
	}
	if _, err := regexp.Compile(re); err != nil {
		c.errs.add(CodeInvalid, call.Args[i].Range().Start, "regular expressions use RE2 syntax (no backreferences or lookaround)",
			"%s: invalid regular expression: %v", call.Func, err)
		return "", false
	}
	return re, true
}

func (c *compiler) intLiteralArg(call *CallExpr, i int, lo, hi int) (int, bool) {
	lit, ok := call.Args[i].(*NumberLit)
	if ok {
		if v, err := strconv.Atoi(lit.Text); err == nil && v >= lo && v <= hi {
			return v, true
		}
	}
	c.errs.add(CodeInvalid, call.Args[i].Range().Start, "", "%s: argument %d must be a whole number from %d to %d", call.Func, i+1, lo, hi)
	return 0, false
}

// strftimeFormats maps strftime conversions to formatDateTime's.
var strftimeFormats = map[byte]string{
	'Y': "%Y", 'y': "%y", 'm': "%m", 'd': "%d", 'e': "%e", 'H': "%H", 'I': "%I",
	'M': "%i", 'S': "%S", 'p': "%p", 'j': "%j", 'a': "%a", 'A': "%W", 'b': "%b",
	'B': "%M", 'F': "%F", 'T': "%T", 'D': "%D", 'z': "%z", '%': "%%",
}

func translateStrftime(f string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		if i+1 >= len(f) {
			return "", fmt.Errorf("format ends with %%")
		}
		i++
		t, ok := strftimeFormats[f[i]]
		if !ok {
			return "", fmt.Errorf("conversion %%%c is not supported", f[i])
		}
		b.WriteString(t)
	}
	return b.String(), nil
}

// asTime converts a time or epoch seconds to DateTime64(3, 'UTC').
func asTime(e sqlExpr) string {
	if e.k == kTime {
		return e.s
	}
	return "fromUnixTimestamp64Milli(toInt64(" + toNum(e).s + " * 1000), 'UTC')"
}

func init() {
	fns := []*funcSpec{
		{Name: "abs", Min: 1, Max: 1, Signature: "abs(x)", Description: "absolute value", compile: numFn("abs(%s)")},
		{Name: "ceil", Min: 1, Max: 1, Signature: "ceil(x)", Description: "smallest integer not below x", compile: numFn("ceil(%s)")},
		{Name: "ceiling", Min: 1, Max: 1, Signature: "ceiling(x)", Description: "same as ceil", compile: numFn("ceil(%s)")},
		{Name: "floor", Min: 1, Max: 1, Signature: "floor(x)", Description: "largest integer not above x", compile: numFn("floor(%s)")},
		{Name: "sqrt", Min: 1, Max: 1, Signature: "sqrt(x)", Description: "square root; null for negative x", compile: numFn("if(%[1]s < 0, NULL, sqrt(%[1]s))")},
		{Name: "exp", Min: 1, Max: 1, Signature: "exp(x)", Description: "e to the power x", compile: numFn("exp(%s)")},
		{Name: "ln", Min: 1, Max: 1, Signature: "ln(x)", Description: "natural logarithm; null for x <= 0", compile: numFn("if(%[1]s <= 0, NULL, log(%[1]s))")},
		{Name: "pi", Min: 0, Max: 0, Signature: "pi()", Description: "the constant pi", compile: func(*compiler, *CallExpr) sqlExpr { return sqlExpr{"pi()", kNum} }},
		{Name: "log", Min: 1, Max: 2, Signature: "log(x [, base])", Description: "logarithm, base 10 by default; null for x <= 0", compile: func(c *compiler, call *CallExpr) sqlExpr {
			x := toNum(c.expr(call.Args[0])).s
			if len(call.Args) == 1 {
				return sqlExpr{"if(" + x + " <= 0, NULL, log10(" + x + "))", kNum}
			}
			b := toNum(c.expr(call.Args[1])).s
			return sqlExpr{"if(" + x + " <= 0 OR " + b + " <= 0 OR " + b + " = 1, NULL, log(" + x + ") / log(" + b + "))", kNum}
		}},
		{Name: "pow", Min: 2, Max: 2, Signature: "pow(x, y)", Description: "x to the power y", compile: func(c *compiler, call *CallExpr) sqlExpr {
			return sqlExpr{"pow(" + toNum(c.expr(call.Args[0])).s + ", " + toNum(c.expr(call.Args[1])).s + ")", kNum}
		}},
		{Name: "round", Min: 1, Max: 2, Signature: "round(x [, digits])", Description: "round half away from zero to digits (0 to 15) decimals", compile: func(c *compiler, call *CallExpr) sqlExpr {
			x := toNum(c.expr(call.Args[0])).s
			d := 0
			if len(call.Args) == 2 {
				var ok bool
				if d, ok = c.intLiteralArg(call, 1, 0, 15); !ok {
					return nullExpr
				}
			}
			if d == 0 {
				return sqlExpr{"(sign(" + x + ") * floor(abs(" + x + ") + 0.5))", kNum}
			}
			p := sqlFloat(math.Pow10(d))
			return sqlExpr{"(sign(" + x + ") * floor(abs(" + x + ") * " + p + " + 0.5) / " + p + ")", kNum}
		}},
		{Name: "len", Min: 1, Max: 1, Signature: "len(s)", Description: "length in characters", compile: func(c *compiler, call *CallExpr) sqlExpr {
			return sqlExpr{"lengthUTF8(" + toStr(c.expr(call.Args[0])).s + ")", kNum}
		}},
		{Name: "lower", Min: 1, Max: 1, Signature: "lower(s)", Description: "lower case", compile: strFn("lowerUTF8(%s)")},
		{Name: "upper", Min: 1, Max: 1, Signature: "upper(s)", Description: "upper case", compile: strFn("upperUTF8(%s)")},
		{Name: "urldecode", Min: 1, Max: 1, Signature: "urldecode(s)", Description: "decode %XX escapes", compile: strFn("decodeURLComponent(%s)")},
		{Name: "md5", Min: 1, Max: 1, Signature: "md5(s)", Description: "MD5 digest, lower-case hex", compile: strFn("lower(hex(MD5(%s)))")},
		{Name: "sha1", Min: 1, Max: 1, Signature: "sha1(s)", Description: "SHA-1 digest, lower-case hex", compile: strFn("lower(hex(SHA1(%s)))")},
		{Name: "sha256", Min: 1, Max: 1, Signature: "sha256(s)", Description: "SHA-256 digest, lower-case hex", compile: strFn("lower(hex(SHA256(%s)))")},
		{Name: "tostring", Min: 1, Max: 1, Signature: "tostring(x)", Description: "text form of x (format arguments are not supported)", compile: func(c *compiler, call *CallExpr) sqlExpr {
			return toStr(c.expr(call.Args[0]))
		}},
		{Name: "tonumber", Min: 1, Max: 1, Signature: "tonumber(x)", Description: "number from a number or numeric string, otherwise null (base arguments are not supported)", compile: func(c *compiler, call *CallExpr) sqlExpr {
			return toNum(c.expr(call.Args[0]))
		}},
		{Name: "substr", Min: 2, Max: 3, Signature: "substr(s, start [, length])", Description: "substring from 1-based start; negative start counts from the end", compile: func(c *compiler, call *CallExpr) sqlExpr {
			s := toStr(c.expr(call.Args[0])).s
			args := s + ", toInt64(" + toNum(c.expr(call.Args[1])).s + ")"
			if len(call.Args) == 3 {
				args += ", toInt64(greatest(" + toNum(c.expr(call.Args[2])).s + ", 0))"
			}
			return sqlExpr{"substringUTF8(" + args + ")", kStr}
		}},
		{Name: "trim", Min: 1, Max: 2, Signature: "trim(s [, chars])", Description: "remove chars (default space and tab) from both ends", compile: trimFn("BOTH")},
		{Name: "ltrim", Min: 1, Max: 2, Signature: "ltrim(s [, chars])", Description: "remove chars from the start", compile: trimFn("LEADING")},
		{Name: "rtrim", Min: 1, Max: 2, Signature: "rtrim(s [, chars])", Description: "remove chars from the end", compile: trimFn("TRAILING")},
		{Name: "replace", Min: 3, Max: 3, Signature: `replace(s, "regex", "replacement")`, Description: `replace every match; \1 refers to a group`, compile: func(c *compiler, call *CallExpr) sqlExpr {
			s := toStr(c.expr(call.Args[0])).s
			re, ok := c.regexArg(call, 1)
			rep, ok2 := c.literalArg(call, 2, "replacement")
			if !ok || !ok2 {
				return nullExpr
			}
			return sqlExpr{"replaceRegexpAll(" + s + ", " + sqlquote.String(re) + ", " + sqlquote.String(rep) + ")", kStr}
		}},
		{Name: "match", Min: 2, Max: 2, Signature: `match(s, "regex")`, Description: "true when the regular expression matches part of s", compile: func(c *compiler, call *CallExpr) sqlExpr {
			s := toStr(c.expr(call.Args[0])).s
			re, ok := c.regexArg(call, 1)
			if !ok {
				return nullExpr
			}
			return sqlExpr{"match(" + s + ", " + sqlquote.String(re) + ")", kBool}
		}},
		{Name: "like", Min: 2, Max: 2, Signature: `like(s, "pattern")`, Description: "SQL LIKE: % any run, _ one character", compile: func(c *compiler, call *CallExpr) sqlExpr {
			return sqlExpr{"like(" + toStr(c.expr(call.Args[0])).s + ", " + toStr(c.expr(call.Args[1])).s + ")", kBool}
		}},
		{Name: "if", Min: 3, Max: 3, Signature: "if(condition, then, else)", Description: "then when the condition is true, else otherwise (also when null)", compile: func(c *compiler, call *CallExpr) sqlExpr {
			cond := c.cond(call.Args[0])
			vs, k := unify([]sqlExpr{c.expr(call.Args[1]), c.expr(call.Args[2])})
			if k == kBool {
				c.errs.add(CodeInvalid, call.Rng.Start, "", "if() cannot return a condition")
			}
			return sqlExpr{"if(" + cond + ", " + vs[0].s + ", " + vs[1].s + ")", k}
		}},
		{Name: "case", Min: 2, Max: -1, Signature: "case(condition, value [, condition, value]...)", Description: "value of the first true condition, null if none", compile: func(c *compiler, call *CallExpr) sqlExpr {
			if len(call.Args)%2 != 0 {
				c.errs.add(CodeInvalid, call.Rng.Start, "", "case: %s", "arguments come in condition, value pairs")
				return nullExpr
			}
			var conds []string
			var vals []sqlExpr
			for i := 0; i < len(call.Args); i += 2 {
				conds = append(conds, c.cond(call.Args[i]))
				vals = append(vals, c.expr(call.Args[i+1]))
			}
			vals = append(vals, nullExpr)
			vs, k := unify(vals)
			if k == kNull {
				return nullExpr
			}
			vs[len(vs)-1] = typedNull(k)
			parts := make([]string, 0, len(call.Args)+1)
			for i, cd := range conds {
				parts = append(parts, cd, vs[i].s)
			}
			parts = append(parts, vs[len(vs)-1].s)
			return sqlExpr{"multiIf(" + strings.Join(parts, ", ") + ")", k}
		}},
		{Name: "coalesce", Min: 1, Max: -1, Signature: "coalesce(x, y, ...)", Description: "first non-null argument", compile: func(c *compiler, call *CallExpr) sqlExpr {
			var vals []sqlExpr
			for _, a := range call.Args {
				vals = append(vals, c.expr(a))
			}
			vs, k := unify(vals)
			if k == kNull {
				return nullExpr
			}
			parts := make([]string, len(vs))
			for i, v := range vs {
				parts[i] = v.s
			}
			return sqlExpr{"coalesce(" + strings.Join(parts, ", ") + ")", k}
		}},
		{Name: "nullif", Min: 2, Max: 2, Signature: "nullif(x, y)", Description: "null when x equals y, otherwise x", compile: func(c *compiler, call *CallExpr) sqlExpr {
			x, y := c.expr(call.Args[0]), c.expr(call.Args[1])
			if x.k == kNull {
				return nullExpr
			}
			return sqlExpr{"if(ifNull(" + compare("=", x, y).s + ", 0), " + typedNull(x.k).s + ", " + x.s + ")", x.k}
		}},
		{Name: "null", Min: 0, Max: 0, Signature: "null()", Description: "the null value", compile: func(*compiler, *CallExpr) sqlExpr { return nullExpr }},
		{Name: "true", Min: 0, Max: 0, Signature: "true()", Description: "the true condition", compile: func(*compiler, *CallExpr) sqlExpr { return sqlExpr{"true", kBool} }},
		{Name: "false", Min: 0, Max: 0, Signature: "false()", Description: "the false condition", compile: func(*compiler, *CallExpr) sqlExpr { return sqlExpr{"false", kBool} }},
		{Name: "isnull", Min: 1, Max: 1, Signature: "isnull(x)", Description: "true when x is null", compile: func(c *compiler, call *CallExpr) sqlExpr {
			x := c.expr(call.Args[0])
			if x.k == kNull {
				return sqlExpr{"true", kBool}
			}
			return sqlExpr{"(" + x.s + " IS NULL)", kBool}
		}},
		{Name: "isnotnull", Min: 1, Max: 1, Signature: "isnotnull(x)", Description: "true when x is not null", compile: func(c *compiler, call *CallExpr) sqlExpr {
			return sqlExpr{isNotNull(c.expr(call.Args[0])), kBool}
		}},
		{Name: "isnum", Min: 1, Max: 1, Signature: "isnum(x)", Description: "true when x is a number or a numeric string", compile: func(c *compiler, call *CallExpr) sqlExpr {
			return sqlExpr{"(" + toNum(c.expr(call.Args[0])).s + " IS NOT NULL)", kBool}
		}},
		{Name: "isint", Min: 1, Max: 1, Signature: "isint(x)", Description: "true when x is a whole number or such a numeric string", compile: func(c *compiler, call *CallExpr) sqlExpr {
			n := toNum(c.expr(call.Args[0])).s
			return sqlExpr{"ifNull(" + n + " = floor(" + n + "), false)", kBool}
		}},
		{Name: "isstr", Min: 1, Max: 1, Signature: "isstr(x)", Description: "true when x is present and not numeric", compile: func(c *compiler, call *CallExpr) sqlExpr {
			x := c.expr(call.Args[0])
			return sqlExpr{"(" + isNotNull(x) + " AND " + toNum(x).s + " IS NULL)", kBool}
		}},
		{Name: "typeof", Min: 1, Max: 1, Signature: "typeof(x)", Description: "Number, String, Boolean or Invalid (null)", compile: func(c *compiler, call *CallExpr) sqlExpr {
			x := c.expr(call.Args[0])
			switch x.k {
			case kNull:
				return sqlExpr{"'Invalid'", kStr}
			case kNum, kTime:
				return sqlExpr{"if(" + x.s + " IS NULL, 'Invalid', 'Number')", kStr}
			case kStr, kArr:
				return sqlExpr{"if(" + x.s + " IS NULL, 'Invalid', 'String')", kStr}
			case kBool:
				return sqlExpr{"if(" + x.s + " IS NULL, 'Invalid', 'Boolean')", kStr}
			}
			return sqlExpr{"multiIf(" + x.s + " IS NULL, 'Invalid', dynamicType(" + x.s + ") IN ('Int64', 'UInt64', 'Float64'), 'Number', dynamicType(" + x.s + ") = 'Bool', 'Boolean', 'String')", kStr}
		}},
		{Name: "now", Min: 0, Max: 0, Signature: "now()", Description: "time the search started, epoch seconds", compile: func(c *compiler, _ *CallExpr) sqlExpr {
			return sqlExpr{sqlFloat(float64(c.opts.Now.UnixMilli()) / 1000), kNum}
		}},
		{Name: "time", Min: 0, Max: 0, Signature: "time()", Description: "same as now()", compile: func(c *compiler, _ *CallExpr) sqlExpr {
			return sqlExpr{sqlFloat(float64(c.opts.Now.UnixMilli()) / 1000), kNum}
		}},
		{Name: "strftime", Min: 2, Max: 2, Signature: `strftime(time, "format")`, Description: "format epoch seconds or _time in UTC: %Y %y %m %d %e %H %I %M %S %p %j %a %A %b %B %F %T %D %z %%", compile: func(c *compiler, call *CallExpr) sqlExpr {
			t := c.expr(call.Args[0])
			f, ok := c.literalArg(call, 1, "format")
			if !ok {
				return nullExpr
			}
			tf, err := translateStrftime(f)
			if err != nil {
				c.errs.add(CodeUnsupported, call.Args[1].Range().Start, "", "strftime: %v", err)
				return nullExpr
			}
			if t.k == kNull {
				return nullExpr
			}
			return sqlExpr{"formatDateTime(" + asTime(t) + ", " + sqlquote.String(tf) + ", 'UTC')", kStr}
		}},
		{Name: "strptime", Min: 2, Max: 2, Signature: `strptime(s, "format")`, Description: "parse text in UTC to epoch seconds, null when it does not parse (conversions as strftime)", compile: func(c *compiler, call *CallExpr) sqlExpr {
			s := toStr(c.expr(call.Args[0])).s
			f, ok := c.literalArg(call, 1, "format")
			if !ok {
				return nullExpr
			}
			tf, err := translateStrftime(f)
			if err != nil {
				c.errs.add(CodeUnsupported, call.Args[1].Range().Start, "", "strptime: %v", err)
				return nullExpr
			}
			return sqlExpr{"toFloat64(toUnixTimestamp(parseDateTimeOrNull(" + s + ", " + sqlquote.String(tf) + ", 'UTC')))", kNum}
		}},
	}
	funcTable = make(map[string]*funcSpec, len(fns))
	for _, f := range fns {
		funcTable[f.Name] = f
	}
}

func trimFn(side string) func(*compiler, *CallExpr) sqlExpr {
	return func(c *compiler, call *CallExpr) sqlExpr {
		s := toStr(c.expr(call.Args[0])).s
		chars := " \t"
		if len(call.Args) == 2 {
			var ok bool
			if chars, ok = c.literalArg(call, 1, "characters"); !ok {
				return nullExpr
			}
			if chars == "" {
				return sqlExpr{s, kStr}
			}
		}
		return sqlExpr{"trim(" + side + " " + sqlquote.String(chars) + " FROM " + s + ")", kStr}
	}
}
