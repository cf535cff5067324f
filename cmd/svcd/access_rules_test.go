package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestAccessControlRulesLive runs the rules of the spec's role, row-policy, settings-profile
// and workload sections, one statement each, against the live service, in order.
func TestAccessControlRulesLive(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "t"})
	s.Must(202, "POST", "/v1/tables/t", `[{"a":1,"b":"x"},{"a":2,"b":"y"}]`)
	s.WaitCount("t", 2, time.Minute)
	ro, _ := createKey(t, s, map[string]any{"name": "ro", "permission": "read_only"})
	many := make([]string, 33)
	for i := range many {
		many[i] = fmt.Sprintf("r%d", i)
	}
	for _, r := range many {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE " + r})
	}
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "GRANT SELECT ON default.t TO " + strings.Join(many, ", ")})
	cases := []struct {
		sql    string
		status int
		as     string // "" admin key, "ro" read-only key
	}{
		// Roles.
		{"CREATE ROLE reader", 200, ""},
		{"CREATE ROLE reader", 409, ""},                      // never replaces an existing role
		{"CREATE ROLE writer ON CLUSTER 'default'", 200, ""}, // explicit default cluster accepted
		{"CREATE ROLE other ON CLUSTER 'elsewhere'", 400, ""},
		{"CREATE ROLE x", 403, "ro"}, // administrators only
		{"CREATE ROLE svc_key_abc", 400, ""},
		{"CREATE ROLE a; CREATE ROLE b", 400, ""}, // one statement per request
		{"CREATE USER u", 400, ""},
		{"GRANT SELECT ON default.t TO reader", 200, ""},
		{"GRANT SELECT(a), INSERT ON default.t TO writer", 200, ""},
		{"GRANT SELECT ON default.* TO writer", 200, ""},
		{"GRANT SELECT ON *.* TO writer", 200, ""},
		{"GRANT SELECT ON default.t TO nobody", 404, ""}, // roles must exist
		{"GRANT SELECT ON default.t TO reader WITH GRANT OPTION", 400, ""},
		{"GRANT reader TO writer", 400, ""}, // no role inheritance
		{"GRANT ALTER ON default.t TO reader", 400, ""},
		{"REVOKE SELECT ON default.t FROM reader", 400, ""},
		// Row policies.
		{"CREATE ROW POLICY p1 ON t FOR SELECT USING a = 1 TO reader", 200, ""},
		{"CREATE ROW POLICY p1 ON t FOR SELECT USING a = 2 TO reader", 409, ""},
		{"CREATE ROW POLICY IF NOT EXISTS p1 ON t FOR SELECT USING a = 2 TO reader", 200, ""},
		{"CREATE ROW POLICY OR REPLACE p1 ON t AS RESTRICTIVE FOR SELECT USING a > 0 TO reader", 200, ""},
		{"CREATE ROW POLICY p2 ON t FOR SELECT USING a = 1 AS RESTRICTIVE TO reader", 200, ""}, // AS after USING
		{"CREATE ROW POLICY p3 ON t FOR SELECT USING a = 1 TO nobody", 404, ""},
		{"CREATE ROW POLICY p4 ON t FOR SELECT USING a = 1 TO ALL", 400, ""},
		{"CREATE ROW POLICY p5 ON t FOR SELECT USING a IN (SELECT 1) TO reader", 400, ""},
		{"CREATE ROW POLICY p6 ON t FOR SELECT USING 1 TO " + strings.Join(many, ", "), 400, ""},      // at most 32 roles
		{"CREATE ROW POLICY p6 ON t FOR SELECT USING 1 TO " + strings.Join(many[:32], ", "), 200, ""}, // 32 is fine
		{"CREATE ROW POLICY p7 ON default.t ON CLUSTER 'default' FOR SELECT USING 1 TO reader", 200, ""},
		{"CREATE ROW POLICY p8 ON t ON CLUSTER 'default' FOR SELECT USING 1 TO reader", 400, ""}, // unqualified with ON CLUSTER
		{"CREATE ROW POLICY p9 ON system.tables FOR SELECT USING 1 TO reader", 400, ""},
		{"CREATE ROW POLICY p10 ON t FOR SELECT USING 1 TO reader", 403, "ro"},
		{"ALTER ROW POLICY p1 ON t FOR SELECT USING 1", 400, ""},
		{"DROP ROW POLICY p2 ON t", 200, ""},
		{"DROP ROW POLICY p2 ON t", 404, ""},
		{"DROP ROW POLICY IF EXISTS p2 ON t", 200, ""},
		// Settings profiles.
		{"CREATE SETTINGS PROFILE prof SETTINGS workload = 'w1' TO reader", 200, ""},
		{"CREATE SETTINGS PROFILE prof SETTINGS workload = 'w2' TO reader", 409, ""},
		{"CREATE SETTINGS PROFILE OR REPLACE prof SETTINGS workload = 'w2' CONST, use_concurrency_control = 0 READONLY TO reader, writer", 200, ""},
		{"CREATE SETTINGS PROFILE p2 SETTINGS max_threads = 2 TO reader", 400, ""}, // only workload and use_concurrency_control
		{"CREATE SETTINGS PROFILE p3 SETTINGS use_concurrency_control = 2 TO reader", 400, ""},
		{"CREATE SETTINGS PROFILE p4 SETTINGS workload = 'w' TO nobody", 404, ""},
		{"CREATE SETTINGS PROFILE p5 SETTINGS workload = 'w'", 400, ""}, // TO is required
		{"CREATE SETTINGS PROFILE p6 SETTINGS workload = 'w' TO ALL", 400, ""},
		{"ALTER SETTINGS PROFILE prof SETTINGS workload = 'x'", 400, ""},
		{"DROP SETTINGS PROFILE prof", 200, ""},
		{"DROP SETTINGS PROFILE IF EXISTS prof", 200, ""},
		// Dropping roles.
		{"DROP ROLE writer", 200, ""},
		{"DROP ROLE writer", 404, ""},
		{"DROP ROLE IF EXISTS writer", 200, ""},
		{"DROP ROLE reader, other", 400, ""}, // one role per DROP
		// Workloads and resources.
		{"CREATE RESOURCE io (WRITE ANY DISK, READ ANY DISK)", 200, ""},
		{"CREATE RESOURCE mem (MEMORY RESERVATION)", 400, ""},
		{"CREATE WORKLOAD root", 200, ""},
		{"CREATE WORKLOAD IF NOT EXISTS root", 200, ""},
		{"CREATE OR REPLACE WORKLOAD root SETTINGS max_io_requests = 10 FOR io", 200, ""},
		{"CREATE WORKLOAD child IN root", 200, ""},
		{"CREATE WORKLOAD bad ON CLUSTER 'elsewhere'", 400, ""},
		{"CREATE WORKLOAD `a\\`b`", 400, ""},
		{"CREATE WORKLOAD w2", 403, "ro"},
		{"DROP WORKLOAD child", 200, ""},
		{"DROP WORKLOAD IF EXISTS child", 200, ""},
	}
	for _, c := range cases {
		headers := []string{}
		if c.as == "ro" {
			headers = []string{"Authorization", "Bearer " + ro}
		}
		r, err := s.Do("POST", "/v1/query", map[string]string{"sql": c.sql}, headers...)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.sql, r.Status, c.status, r.Body)
		}
	}
}
