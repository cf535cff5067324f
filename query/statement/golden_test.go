package statement

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The fixture organization of every golden test.
const (
	fixtureOrg   = "0123456789abcdef0123456789abcdef"
	otherOrg     = "fedcba9876543210fedcba9876543210"
	fixtureUser  = "k_0001" // the database user of a custom-role key
	defaultDB    = "o_" + fixtureOrg + "__default"
	analyticsDB  = "o_" + fixtureOrg + "__analytics"
	otherOrgDB   = "o_" + otherOrg + "__default"
	fixtureLogDB = "o_" + fixtureOrg + "__logs"
)

func fixtureCatalog() *StaticCatalog {
	return &StaticCatalog{
		DBs: []Database{
			{Name: "default", Engine: defaultDB},
			{Name: "analytics", Engine: analyticsDB},
			{Name: "logs", Engine: fixtureLogDB},
		},
		Tables: map[string]map[string]Table{
			"default": {
				"events":   {Generation: 3, SortingKey: "user.id, toDate(ts)", TTL: "ts + INTERVAL 30 DAY"},
				"users":    {Generation: 1},
				"sessions": {Generation: 2},
				"fresh":    {Generation: 0},
				"order":    {Generation: 1},
			},
			"analytics": {
				"daily":    {Generation: 1},
				"sessions": {Generation: 4},
			},
			"logs": {
				"logsearch_events": {Generation: 1},
			},
		},
	}
}

func fixtureAccess() *StaticAccess {
	return &StaticAccess{
		Roles: []string{"analyst", "writer", "auditor", "eu", "restricted", "partner", "empty"},
		Users: []string{fixtureUser},
		GrantSet: []Grant{
			{Role: "analyst", Privileges: PrivSelect, Database: "default", Table: "events", Columns: []string{"user", "ts", "event", "region", "team"}},
			{Role: "analyst", Privileges: PrivSelect, Database: "default", Table: "users"},
			{Role: "writer", Privileges: PrivSelect, Database: "default", Table: "*"},
			{Role: "writer", Privileges: PrivInsert, Database: "default", Table: "events"},
			{Role: "auditor", Privileges: PrivSelect, Database: "*", Table: "*"},
			{Role: "eu", Privileges: PrivSelect, Database: "default", Table: "events"},
			{Role: "eu", Privileges: PrivSelect, Database: "default", Table: "users"},
			{Role: "restricted", Privileges: PrivSelect, Database: "default", Table: "events"},
			{Role: "partner", Privileges: PrivSelect, Database: "analytics", Table: "*"},
		},
		Policies: []RowPolicy{
			{Name: "eu_only", Database: "default", Table: "events", Filter: "region = 'eu'", Roles: []string{"eu"}},
			{Name: "no_test", Database: "default", Table: "events", Filter: "NOT startsWith(user.name, 'test')", Restrictive: true, Roles: []string{"eu", "restricted"}},
			{Name: "eu_users", Database: "default", Table: "users", Filter: "country IN ('de', 'fr')", Roles: []string{"eu"}},
		},
		Profiles: []SettingsProfile{
			{Name: "analysts", Settings: []ProfileSetting{{Name: "workload", Value: "analytics", Constraint: ConstraintReadonly}}, Roles: []string{"analyst"}},
			{Name: "eu_profile", Settings: []ProfileSetting{{Name: "workload", Value: "eu_reports"}, {Name: "use_concurrency_control", Value: "1", Constraint: ConstraintConst}}, Roles: []string{"eu"}},
		},
	}
}

// principalOf parses a case's "as" value.
func principalOf(s string) (Principal, error) {
	switch {
	case s == "" || s == "admin":
		return KeyWithPermission(PermAdmin), nil
	case s == "read_write" || s == "read_only" || s == "write_only":
		return KeyWithPermission(Permission(s)), nil
	case strings.HasPrefix(s, "roles:"):
		return KeyWithRoles(strings.Split(strings.TrimPrefix(s, "roles:"), ",")...), nil
	case s == "member":
		return Member(false), nil
	case s == "orgadmin":
		return Member(true), nil
	case s == "workflow":
		return WorkflowRun(), nil
	}
	return Principal{}, fmt.Errorf("unknown principal %q", s)
}

// goldenCase is one statement of a testdata file: a header line
//
//	-- case <name> [as=<principal>] [db=<database>] [cluster=replicated,keeper,internal] [expect=ok|refuse]
//
// followed by the statement.
type goldenCase struct {
	name, as, db, cluster, expect string
	sql                           string
}

func readCases(t *testing.T, path string) []goldenCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	var cur *goldenCase
	var body []string
	flush := func() {
		if cur != nil {
			cur.sql = strings.TrimSpace(strings.Join(body, "\n"))
			cases = append(cases, *cur)
		}
		body = nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "-- case "); ok {
			flush()
			fields := strings.Fields(rest)
			cur = &goldenCase{name: fields[0], db: "default"}
			for _, f := range fields[1:] {
				k, v, _ := strings.Cut(f, "=")
				switch k {
				case "as":
					cur.as = v
				case "db":
					cur.db = v
				case "cluster":
					cur.cluster = v
				case "expect":
					cur.expect = v
				default:
					t.Fatalf("%s: case %s: unknown field %q", path, cur.name, k)
				}
			}
			continue
		}
		if cur != nil {
			body = append(body, line)
		}
	}
	flush()
	return cases
}

func (c goldenCase) env(t *testing.T) Env {
	t.Helper()
	p, err := principalOf(c.as)
	if err != nil {
		t.Fatalf("case %s: %v", c.name, err)
	}
	env := Env{Principal: p, Database: c.db, Catalog: fixtureCatalog(), Access: fixtureAccess()}
	for _, f := range strings.Split(c.cluster, ",") {
		switch f {
		case "replicated":
			env.Cluster.ReplicatedAccessStorage = true
		case "keeper":
			env.Cluster.KeeperWorkloadStorage = true
		case "internal":
			env.Cluster.InternalOrganization = true
		case "shared":
			env.Cluster.SharedEngine = true
		}
	}
	return env
}

// describe renders the outcome of Analyze for a golden file.
func describe(sql string, st *Statement, err error) string {
	var b strings.Builder
	if err != nil {
		e := err.(*Error)
		fmt.Fprintf(&b, "error: %d %s: %s\n", e.Status, e.Code, e.Message)
		if e.Hint != "" {
			fmt.Fprintf(&b, "hint: %s\n", e.Hint)
		}
		if c := e.Caret(sql); c != "" {
			for _, l := range strings.Split(c, "\n") {
				fmt.Fprintf(&b, "| %s\n", l)
			}
		}
		return b.String()
	}
	fmt.Fprintf(&b, "kind: %s\n", st.Kind)
	if st.SQL != "" {
		fmt.Fprintf(&b, "sql: %s\n", st.SQL)
	}
	if st.Command != nil {
		j, _ := json.Marshal(st.Command)
		fmt.Fprintf(&b, "command: %T %s\n", st.Command, j)
	}
	refs := func(rs []TableRef) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Database+"."+r.Table+" -> "+r.EngineDatabase+"."+r.EngineTable)
		}
		return strings.Join(out, ", ")
	}
	if len(st.Reads) > 0 {
		fmt.Fprintf(&b, "reads: %s\n", refs(st.Reads))
	}
	if len(st.Writes) > 0 {
		fmt.Fprintf(&b, "writes: %s\n", refs(st.Writes))
	}
	if len(st.RowPolicies) > 0 {
		fmt.Fprintf(&b, "row policies: %s\n", strings.Join(st.RowPolicies, ", "))
	}
	if len(st.Settings) > 0 {
		var s []string
		for _, x := range st.Settings {
			s = append(s, x.Name+"="+x.Value)
		}
		fmt.Fprintf(&b, "settings: %s\n", strings.Join(s, ", "))
	}
	if st.EmptyResult {
		b.WriteString("empty result\n")
	}
	if st.NeedsGeneration {
		fmt.Fprintf(&b, "needs a generation; source: %s\n", st.Source)
	}
	return b.String()
}

// runGolden analyzes every case of every .sql file in dir and compares the
// outcome with the .golden file beside it. check, when not nil, is called
// with every outcome.
func runGolden(t *testing.T, dir string, check func(t *testing.T, c goldenCase, st *Statement, err error)) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s", dir)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".sql"), func(t *testing.T) {
			var out strings.Builder
			names := map[string]bool{}
			for _, c := range readCases(t, file) {
				if names[c.name] {
					t.Fatalf("duplicate case %s", c.name)
				}
				names[c.name] = true
				st, err := Analyze(c.sql, c.env(t))
				if err != nil {
					if _, ok := err.(*Error); !ok {
						t.Fatalf("case %s: error of type %T", c.name, err)
					}
				}
				switch {
				case c.expect == "refuse" && err == nil:
					t.Errorf("case %s: expected a refusal, got %s", c.name, st.SQL)
				case c.expect == "ok" && err != nil:
					t.Errorf("case %s: expected success, got %v", c.name, err)
				}
				if check != nil {
					check(t, c, st, err)
				}
				header := "== " + c.name
				if c.as != "" {
					header += " as " + c.as
				}
				fmt.Fprintf(&out, "%s\n%s\n%s\n", header, c.sql, describe(c.sql, st, err))
			}
			golden := strings.TrimSuffix(file, ".sql") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got := out.String(); got != string(want) {
				t.Errorf("%s differs from the golden file; run go test -update and review the diff:\n%s", file, firstDiff(string(want), got))
			}
		})
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, w, g)
		}
	}
	return ""
}

func TestGolden(t *testing.T) {
	runGolden(t, "testdata/analyze", func(t *testing.T, c goldenCase, st *Statement, err error) {
		if err == nil {
			assertNoLeak(t, c, st)
		}
	})
}

// assertNoLeak checks engine SQL independently of the rewrite: every engine
// database it names belongs to the fixture organization, _svc never
// appears, and system tables are readable ones.
func assertNoLeak(t *testing.T, c goldenCase, st *Statement) {
	t.Helper()
	if st.SQL == "" {
		return
	}
	toks, err := tokenize(st.SQL)
	if err != nil {
		t.Errorf("case %s: emitted SQL does not lex: %v", c.name, err)
		return
	}
	for i, tok := range toks {
		if tok.kind != tokIdent {
			continue
		}
		// Path segments (after a dot) and aliases (after AS) may take any
		// name.
		if i > 0 && (toks[i-1].isOp(".") || toks[i-1].is("AS")) {
			continue
		}
		// A name in table position is a database qualifier: db.table.
		if i+1 >= len(toks) || !toks[i+1].isOp(".") {
			continue
		}
		name := tok.text
		switch {
		case name == "_svc" || strings.EqualFold(name, "information_schema"):
			t.Errorf("case %s: %s in %s", c.name, name, st.SQL)
		case strings.HasPrefix(name, "o_") && len(name) > 34 && !strings.HasPrefix(name, "o_"+fixtureOrg+"__"):
			t.Errorf("case %s: foreign engine database %s in %s", c.name, name, st.SQL)
		case name == "system" && !tok.quoted && i+2 < len(toks) && toks[i+1].isOp("."):
			if _, ok := systemViews[toks[i+2].text]; !ok {
				t.Errorf("case %s: system.%s in %s", c.name, toks[i+2].text, st.SQL)
			}
		}
	}
}
