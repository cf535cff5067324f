package spl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// stripPositions zeroes every position in a tree so that trees parsed from
// different texts can be compared.
func stripPositions(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			stripPositions(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			switch {
			case f.Type() == reflect.TypeOf(PosRange{}) || f.Type() == reflect.TypeOf(Pos(0)):
				f.Set(reflect.Zero(f.Type()))
			case v.Type().Field(i).Name == "Quoted" && (v.Type() == reflect.TypeOf(FieldName{}) || v.Type() == reflect.TypeOf(FieldRef{})):
				// Quoting a name is presentation, not meaning.
				f.SetBool(false)
			case v.Type().Field(i).Name == "src":
				reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem().SetString("")
			case f.CanSet() || f.Kind() == reflect.Struct:
				stripPositions(f)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			stripPositions(v.Index(i))
		}
	}
}

func equalTrees(a, b *Pipeline) bool {
	stripPositions(reflect.ValueOf(a))
	stripPositions(reflect.ValueOf(b))
	return reflect.DeepEqual(a, b)
}

// checkRoundTrip verifies that String parses back to an equal tree and is
// a fixed point.
func checkRoundTrip(t testing.TB, src string, p *Pipeline) {
	t.Helper()
	printed := p.String()
	q, err := Parse(printed)
	if err != nil {
		t.Fatalf("%q printed as %q which does not parse: %v", src, printed, err)
	}
	if again := q.String(); again != printed {
		t.Fatalf("%q: printing is not a fixed point: %q then %q", src, printed, again)
	}
	if !equalTrees(p, q) {
		t.Fatalf("%q printed as %q parses to a different tree", src, printed)
	}
}

func TestParsePrint(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		p, err := Parse(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := p.String(); got != want {
			t.Errorf("%q printed as\n  %q, want\n  %q", in, got, want)
		}
		checkRoundTrip(t, in, p)
	}
	f(``, ``)
	f(`*`, `*`)
	f(`error`, `error`)
	f(`search error`, `search error`)
	f(`| stats count`, `| stats count`)
	f(`a b c`, `a AND b AND c`)
	f(`a OR b c`, `(a OR b) AND c`)
	f(`a (b c) OR d`, `a AND ((b AND c) OR d)`)
	f(`NOT NOT a`, `NOT NOT a`)
	f(`NOT (a OR b)`, `NOT (a OR b)`)
	f(`"AND" and "x y"`, `"AND" AND and AND "x y"`)
	f(`host=web* status!=200 x<5 x<=5 x>"a b" x>=-1`, `host=web* AND status!=200 AND x<5 AND x<=5 AND x>"a b" AND x>=-1`)
	f(`url=/a?b=c&d=e`, `url=/a?b=c&d=e`)
	f(`status IN (200,"a b" , x*)`, `status IN (200, "a b", x*)`)
	f(`"say \"hi\"" "back\\slash"`, `"say \"hi\"" AND "back\\slash"`)
	f(`x | where a=1 AND b!=2 OR NOT c<3`, `x | where a = 1 AND b != 2 OR NOT c < 3`)
	f(`x | where (a OR b) AND c`, `x | where (a OR b) AND c`)
	f(`x | where a XOR b OR c`, `x | where a XOR b OR c`)
	f(`x | where a OR (b XOR c)`, `x | where a OR (b XOR c)`)
	f(`x | eval y=1+2*3, z=(1+2)*3, w=1-(2-3), v=-(-x), u=-x*2`, `x | eval y=1 + 2 * 3, z=(1 + 2) * 3, w=1 - (2 - 3), v=- -x, u=-x * 2`)
	f("x | eval y=a.b . \"c\" . 'd e' . 'it\\'s'", "x | eval y=a.b . \"c\" . 'd e' . 'it\\'s'")
	f(`x | eval 'a b'="v", "c"=if(x IN (1, 2), "y", null())`, `x | eval 'a b'="v", 'c'=if(x IN (1, 2), "y", null())`)
	f(`x | where x LIKE "a%" AND like(y, "b_")`, `x | where x LIKE "a%" AND like(y, "b_")`)
	f(`items{}.sku=a | where items{}.qty>1 AND 'items[].sku'!="b" | stats sum(items{}.qty) BY items{}.sku | table items{}.sku`,
		`items{}.sku=a | where items{}.qty > 1 AND 'items[].sku' != "b" | stats sum(items{}.qty) BY items{}.sku | table items{}.sku`)
	f(`x | eval y=a{}.b.c{}.d . e`, `x | eval y=a{}.b.c{}.d . e`)
	f(`x | mvexpand   items{}.sku | mvexpand "a b{}.c"`, `x | mvexpand items{}.sku | mvexpand "a b{}.c"`)
	f(`x | where NOT a = b`, `x | where NOT a = b`)
	f(`x | where (NOT a) = b`, `x | where (NOT a) = b`)
	f(`x | where a = (b = c)`, `x | where a = (b = c)`)
	f(`x | eval y=1.5e3 + .5`, `x | eval y=1.5e3 + .5`)
	f(`x | fields + a, b* | fields c d`, `x | fields + a, b* | fields c, d`)
	f(`x | table a "b c" 'd'`, `x | table a, "b c", "d"`)
	f(`x | rename a as b, "c d" AS e, f* as g*`, `x | rename a AS b, "c d" AS e, f* AS g*`)
	f(`x | stats count c(x) dc(y) as d BY a, b`, `x | stats count, c(x), dc(y) AS d BY a, b`)
	f(`x | stats count(eval(a>1 AND b="x")) as n`, `x | stats count(eval(a > 1 AND b = "x")) AS n`)
	f(`x | stats count() by a`, `x | stats count BY a`)
	f(`x | chart count by a b`, `x | chart count BY a b`)
	f(`x | chart count by a`, `x | chart count BY a`)
	f(`x | chart useother=f count over a by b limit=top3 usenull=true`, `x | chart useother=f limit=top3 usenull=true count OVER a BY b`)
	f(`x | timechart span=1h count, avg(b) as avg by host limit=bottom2`, `x | timechart span=1h limit=bottom2 count, avg(b) AS avg BY host`)
	f(`x | sort - a, +b, -num(c), str(d) | sort 10 a | sort limit=5 b`, `x | sort -a, b, -num(c), str(d) | sort 10 a | sort 5 b`)
	f(`x | sort a, b desc`, `x | sort -a, -b`)
	f(`x | sort desc`, `x | sort desc`)
	f(`x | sort 0 a`, `x | sort a`)
	f(`x | head | head 5 | head limit=3`, `x | head | head 5 | head 3`)
	f(`x | dedup 3 a b keepempty=t`, `x | dedup 3 a, b keepempty=t`)
	f("a\n| stats count\n| head 1", "a | stats count | head 1")
}

func TestParseErrors(t *testing.T) {
	// Errors from several segments are reported together, in order.
	_, err := Parse("a | stats | eval x= | head -1 | bogus")
	es, ok := AsErrors(err)
	if !ok || len(es) != 4 {
		t.Fatalf("want 4 errors, got %v", err)
	}
	for i, want := range []int{11, 21, 28, 33} {
		if es[i].Position.Column != want {
			t.Errorf("error %d at column %d, want %d: %v", i, es[i].Position.Column, want, es[i])
		}
	}
	if es.Code() != CodeSyntax || es.Hint() != "supported commands: chart, dedup, eval, fields, head, mvexpand, rename, search, sort, stats, table, timechart, where" {
		t.Errorf("envelope: %q %q", es.Code(), es.Hint())
	}
	// At most maxErrors are reported.
	_, err = Parse(strings.Repeat("a | bogus ", 30))
	if es, _ := AsErrors(err); len(es) != maxErrors {
		t.Errorf("want %d errors, got %d", maxErrors, len(es))
	}
	// Positions count code points, and lines.
	_, err = Parse("é | head x\n| bogus")
	es, _ = AsErrors(err)
	if len(es) != 2 || es[0].Position != (Position{Offset: 10, Line: 1, Column: 10}) || es[1].Position.Line != 2 || es[1].Position.Column != 3 {
		t.Errorf("positions: %+v", es)
	}
	if _, err := Parse(strings.Repeat("x", MaxSearchBytes+1)); err == nil {
		t.Error("overlong search accepted")
	}
	if _, err := Parse(strings.Repeat("(", 1000)); err == nil || errors.Is(err, ErrInternal) {
		t.Errorf("deep nesting: %v", err)
	}
}

func TestWalk(t *testing.T) {
	p, err := Parse(`a host=x | eval y=f(1, z) | stats count(eval(q>1)) AS n BY h`)
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	Inspect(p, func(n Node) bool {
		switch n := n.(type) {
		case *FieldRef:
			fields = append(fields, n.Name)
		case *FieldName:
			fields = append(fields, n.Name)
		}
		return true
	})
	if got := strings.Join(fields, ","); got != "host,y,z,q,n,h" {
		t.Errorf("Inspect visited %s", got)
	}
}

// seeds returns every search in the golden inputs, for fuzzing.
func seeds(t testing.TB) []string {
	var out []string
	files, _ := filepath.Glob("testdata/*/*.spl")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, strings.ReplaceAll(l, `\n`, "\n"))
			}
		}
	}
	return out
}

func FuzzLexer(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, m := range []lexMode{modeSearch, modeSearchValue, modeExpr, modeArgs} {
			l := lexer{src: src}
			last := -1
			for i := 0; ; i++ {
				tok := l.next(m)
				if tok.kind == tEOF {
					break
				}
				if int(tok.pos) <= last || tok.end <= tok.pos || int(tok.end) > len(src) {
					t.Fatalf("mode %d: token %+v does not advance (last %d)", m, tok, last)
				}
				last = int(tok.pos)
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	opts := goldenOptions("")
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Parse(src)
		if err != nil {
			if errors.Is(err, ErrInternal) {
				t.Fatalf("parser panicked: %v", err)
			}
			if _, ok := AsErrors(err); !ok {
				t.Fatalf("not a user error: %v", err)
			}
			return
		}
		checkRoundTrip(t, src, p)
		if _, err := Compile(context.Background(), p, opts); err != nil {
			if errors.Is(err, ErrInternal) {
				t.Fatalf("compiler panicked: %v", err)
			}
			if _, ok := AsErrors(err); !ok {
				t.Fatalf("not a user error: %v", err)
			}
		}
	})
}
