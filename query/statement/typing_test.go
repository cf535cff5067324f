package statement

import (
	"path/filepath"
	"strings"
	"testing"
)

func typedCatalog() *StaticCatalog {
	paths := map[string][]string{
		"bytes": {"Int64"}, "latency_ms": {"Float64", "Int64"}, "user.id": {"Int64"}, "user.country": {"String"},
		"tags": {"Array(Nullable(String))"}, "mixed": {"Int64", "String"}, "path": {"String"},
	}
	return &StaticCatalog{
		DBs:    []Database{{Name: "default", Engine: defaultDB}},
		Tables: map[string]map[string]Table{"default": {"events": {Generation: 1, Paths: paths}, "other": {Generation: 1, Paths: paths}}},
	}
}

func TestTypedPathsRewrite(t *testing.T) {
	env := Env{Principal: KeyWithPermission(PermAdmin), Database: "default", Catalog: typedCatalog()}
	for _, c := range []struct{ sql, want string }{
		{"SELECT sum(bytes) FROM events", "sum(dynamicElement(doc.bytes, 'Int64'))"},
		{"SELECT avg(latency_ms) FROM events", "avg(CAST(doc.latency_ms AS Nullable(Float64)))"},
		{"SELECT sum(bytes::Int64) FROM events", "sum(doc.bytes::Int64)"},
		{"SELECT has(tags, 'x') FROM events", "has(dynamicElement(doc.tags, 'Array(Nullable(String))'), 'x')"},
		{"SELECT mixed FROM events", "doc.mixed AS `mixed` FROM"},
		{"WITH c AS (SELECT * FROM events) SELECT max(user.id) FROM c", "max(dynamicElement(doc.user.id, 'Int64'))"},
		{"SELECT max(x.bytes) FROM (SELECT * FROM events) AS x", "max(dynamicElement(doc.bytes, 'Int64')) AS `max(x.bytes)` FROM (SELECT * FROM"},
		{"SELECT a.user.id FROM events AS a LEFT JOIN other AS b ON a.user.id = b.user.id", "dynamicElement(a.doc.user.id, 'Int64') = dynamicElement(b.doc.user.id, 'Int64')"},
		{"SELECT bytes FROM events UNION ALL SELECT bytes FROM other", "UNION ALL SELECT dynamicElement(doc.bytes, 'Int64')"},
	} {
		st, err := Analyze(c.sql, env)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if !strings.Contains(st.SQL, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.sql, st.SQL, c.want)
		}
	}
	st, err := Analyze("SELECT sum(mixed), sum(nope) FROM events", env)
	if err != nil {
		t.Fatal(err)
	}
	e := st.PathTypeError("Illegal type Dynamic of argument for aggregate function sum")
	if e == nil || e.Code != CodePathType || !strings.Contains(e.Message, "mixed (types seen: Int64, String)") ||
		!strings.Contains(e.Message, "nope (no row has it)") || !strings.Contains(e.Hint, "mixed::Nullable(String)") {
		t.Fatalf("path type error: %+v", e)
	}
}

func TestDescribeListsPaths(t *testing.T) {
	cat := typedCatalog()
	env := Env{Principal: KeyWithPermission(PermAdmin), Database: "default", Catalog: cat}
	st, err := Analyze("DESCRIBE TABLE events", env)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"('doc', 'JSON')", "('bytes', 'Nullable(Int64)')", "('latency_ms', 'Nullable(Float64)')",
		"('mixed', 'Dynamic')", "('tags', 'Array(Nullable(String))')", "('user.id', 'Nullable(Int64)')"} {
		if !strings.Contains(st.SQL, want) {
			t.Errorf("DESCRIBE lacks %s: %s", want, st.SQL)
		}
	}
	// A key granted only the user column sees only paths under user, and no doc.
	env.Principal = KeyWithRoles("analyst")
	env.Access = &StaticAccess{Roles: []string{"analyst"}, GrantSet: []Grant{
		{Role: "analyst", Privileges: PrivSelect, Database: "default", Table: "events", Columns: []string{"user"}}}}
	st, err = Analyze("DESCRIBE TABLE events", env)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.SQL, "('user.id', 'Nullable(Int64)')") || strings.Contains(st.SQL, "bytes") || strings.Contains(st.SQL, "'doc'") {
		t.Errorf("column grants do not limit DESCRIBE: %s", st.SQL)
	}
	st, err = Analyze("DESCRIBE (SELECT * FROM events)", Env{Principal: KeyWithPermission(PermAdmin), Database: "default", Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(st.SQL, "DESCRIBE TABLE") {
		t.Errorf("DESCRIBE of a subquery: %s", st.SQL)
	}
}

func TestSortingKeyValidator(t *testing.T) {
	for key, want := range map[string]string{
		"user.id, toDate(ts)": "user.id, toDate(ts)",
		"  a ,b":              "a, b",
		"":                    "",
		"`odd name`":          "`odd name`",
	} {
		got, err := SortingKey(key)
		if err != nil || got != want {
			t.Errorf("SortingKey(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
	for _, bad := range []string{"a,", "a AS b", "(SELECT 1)", "sum(a)", "arrayJoin(a)", "file('x')", "a -> a",
		"count() OVER ()", "1; DROP TABLE t", "0 .+0", "0 . 1", "x.-1"} {
		if got, err := SortingKey(bad); err == nil {
			t.Errorf("SortingKey(%q) = %q, want an error", bad, got)
		}
	}
}

func FuzzSortingKey(f *testing.F) {
	for _, s := range []string{"user.id, toDate(ts)", "a", "`x y`.z", "0::A", "x.1", "tuple(a, b)", "cityHash64(a) % 8", "a,", "0 .+0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		canonical, err := SortingKey(key)
		if err != nil || canonical == "" {
			return
		}
		// The canonical text is itself a valid key, and canonical.
		again, err := SortingKey(canonical)
		if err != nil {
			t.Fatalf("canonical %q of %q refused: %v", canonical, key, err)
		}
		if again != canonical {
			t.Fatalf("canonical %q of %q renders as %q", canonical, key, again)
		}
	})
}

// typedFixture wraps a catalog so that every table has a path schema covering the names
// of one statement: typing is on for every path the statement could reference, with a
// mix of typed and Dynamic paths.
type typedFixture struct {
	*StaticCatalog
	paths map[string][]string
}

func (c typedFixture) Table(db, table string) (Table, bool) {
	t, ok := c.StaticCatalog.Table(db, table)
	t.Paths = c.paths
	return t, ok
}

func pathsOf(sql string) map[string][]string {
	kinds := [][]string{{"Int64"}, {"String"}, {"Array(Nullable(String))"}, {"Float64", "Int64"}, {"Int64", "String"}, {"DateTime"}}
	out := map[string][]string{}
	toks, _ := tokenize(sql)
	var chain []string
	add := func(p string) { out[p] = kinds[len(out)%len(kinds)] }
	for i, tk := range toks {
		switch {
		case tk.kind == tokIdent:
			if i > 0 && toks[i-1].text == "." && len(chain) > 0 {
				chain = append(chain, tk.text)
			} else {
				chain = []string{tk.text}
			}
			add(strings.Join(chain, "."))
			add(tk.text)
		case tk.text != ".":
			chain = nil
		}
	}
	return out
}

// TestAttacksTyped runs the attack corpus and the statement corpus again with every
// table typed: each case is refused or accepted exactly as without typing, and what is
// accepted still passes the independent leak and table checks.
func TestAttacksTyped(t *testing.T) {
	typedCases := 0
	for _, dir := range []string{"testdata/attacks", "testdata/corpus"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.sql"))
		if len(files) == 0 {
			t.Fatalf("no cases in %s", dir)
		}
		for _, file := range files {
			for _, c := range readCases(t, file) {
				plain, perr := Analyze(c.sql, c.env(t))
				env := c.env(t)
				env.Catalog = typedFixture{StaticCatalog: env.Catalog.(*StaticCatalog), paths: pathsOf(c.sql)}
				typed, terr := Analyze(c.sql, env)
				if (perr == nil) != (terr == nil) {
					t.Errorf("%s %s: untyped %v, typed %v", file, c.name, perr, terr)
					continue
				}
				if terr != nil {
					pe, te := perr.(*Error), terr.(*Error)
					if pe.Code != te.Code || te.Code == codePanic || te.Code == CodeInternal {
						t.Errorf("%s %s: untyped %v, typed %v", file, c.name, perr, terr)
					}
					continue
				}
				assertNoLeak(t, c, typed)
				if strings.Contains(file, "attacks") {
					assertTables(t, c, typed)
				}
				if typed.SQL != plain.SQL && strings.Contains(typed.SQL, "dynamicElement(") {
					typedCases++
				}
			}
		}
	}
	// The check is only worth something if typing changed many statements.
	if typedCases < 50 {
		t.Fatalf("only %d cases read a typed path", typedCases)
	}
	t.Logf("%d cases read typed paths", typedCases)
}

func TestTypedPathFunctionError(t *testing.T) {
	st, err := Analyze("SELECT has(bytes, 1) FROM events", Env{Principal: KeyWithPermission(PermAdmin), Database: "default", Catalog: typedCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	e := st.PathTypeError("First argument for function has must be an array. Actual Nullable(Int64)")
	if e == nil || e.Code != CodePathType || !strings.Contains(e.Message, "bytes (reads as Nullable(Int64))") || !strings.Contains(e.Hint, "toString(bytes)") {
		t.Fatalf("%+v", e)
	}
	if st.PathTypeError("Illegal type String of argument") != nil {
		t.Fatal("an error naming no path's type is left as it is")
	}
}
