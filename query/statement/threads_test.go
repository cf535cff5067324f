package statement

import (
	"strings"
	"testing"
)

// TestMaxThreadsCappedToClusterSize: a max_threads above the size's cores, or 0, is
// lowered to the cores in the statement sent to the engine (at every level) and in its
// settings; a lower value stays; no cap without a size. A lowered value is noted in the
// statement's hints (the answer's hints), once.
func TestMaxThreadsCappedToClusterSize(t *testing.T) {
	cases := []struct {
		sql     string
		limit   int
		want    string // the value every max_threads item runs with
		notWant string // a value that must not remain in the statement
		lowered bool   // the answer's hints say so
	}{
		{"SELECT 1 SETTINGS max_threads = 8", 2, "2", "8", true},
		{"SELECT 1 SETTINGS max_threads = 0", 2, "2", "= 0", true},
		{"SELECT * FROM (SELECT 1 SETTINGS max_threads = 16) SETTINGS max_threads = 4", 4, "4", "16", true},
		{"SELECT 1 SETTINGS max_threads = 1", 2, "1", "= 2", false},
		{"SELECT 1 SETTINGS max_threads = 8", 0, "8", "", false},
		{"INSERT INTO events SETTINGS max_threads = 8 SELECT * FROM events", 2, "2", "= 8", true},
	}
	for _, c := range cases {
		env := Env{Principal: KeyWithPermission(PermAdmin), Database: "default", Catalog: fixtureCatalog(), Access: fixtureAccess(),
			Cluster: Cluster{MaxThreads: c.limit}}
		st, err := Analyze(c.sql, env)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if c.notWant != "" && strings.Contains(st.SQL, c.notWant) {
			t.Errorf("%s (cap %d): the engine gets %s", c.sql, c.limit, st.SQL)
		}
		if !strings.Contains(st.SQL, "max_threads="+c.want) && !strings.Contains(st.SQL, "max_threads = "+c.want) {
			t.Errorf("%s (cap %d): the engine gets %s, want max_threads %s", c.sql, c.limit, st.SQL, c.want)
		}
		if hinted := len(st.Hints) == 1 && strings.Contains(st.Hints[0], "max_threads") && strings.Contains(st.Hints[0], "lowered to "+c.want); hinted != c.lowered || len(st.Hints) > 1 {
			t.Errorf("%s (cap %d): hints %q, want a max_threads note: %v", c.sql, c.limit, st.Hints, c.lowered)
		}
		for _, s := range st.Settings {
			if s.Name == "max_threads" && s.Value != c.want {
				t.Errorf("%s (cap %d): setting %s = %s, want %s", c.sql, c.limit, s.Name, s.Value, c.want)
			}
		}
	}
}
