package statement

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzAnalyze feeds arbitrary statements to Analyze for several callers. It
// must never panic, and whatever it accepts must be engine SQL that lexes and
// names no foreign database.
//
//	go test ./query/statement -run '^$' -fuzz FuzzAnalyze -fuzztime 5m
func FuzzAnalyze(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.sql")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, part := range strings.Split(string(data), "-- case ") {
			if i := strings.IndexByte(part, '\n'); i >= 0 {
				f.Add(part[i+1:])
			}
		}
	}
	principals := []Principal{KeyWithPermission(PermAdmin), KeyWithRoles("eu"), KeyWithRoles("analyst", "writer")}
	f.Fuzz(func(t *testing.T, sql string) {
		for _, p := range principals {
			env := Env{Principal: p, Database: "default", Catalog: fixtureCatalog(), Access: fixtureAccess()}
			st, err := Analyze(sql, env)
			if err != nil {
				e, ok := err.(*Error)
				if !ok {
					t.Fatalf("error of type %T", err)
				}
				if e.Code == codePanic {
					t.Fatalf("panic: %v\n%q", err, sql)
				}
				if e.Code == CodeInternal {
					t.Fatalf("verification failed: %v\n%q", err, sql)
				}
				continue
			}
			if st.SQL == "" {
				continue
			}
			assertNoLeak(t, goldenCase{name: "fuzz"}, st)
			if st.Kind.IsRead() || st.Kind == KindInsertSelect {
				assertTables(t, goldenCase{name: "fuzz"}, st)
			}
		}
	})
}
