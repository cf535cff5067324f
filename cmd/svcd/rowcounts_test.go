package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestRowPolicyCountsDoNotLeak checks that a key whose reads a row policy filters learns
// nothing of the hidden rows from statistics, read limits or system.parts, and that
// counts over the system catalog views count only what they show.
func TestRowPolicyCountsDoNotLeak(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "t"})
	var rows []string
	for i := range 100 {
		rows = append(rows, fmt.Sprintf(`{"n":%d}`, i))
	}
	s.Must(202, "POST", "/v1/tables/t", "["+strings.Join(rows, ",")+"]")
	s.WaitCount("t", 100, time.Minute)
	for _, sql := range []string{"CREATE ROLE one_row", "GRANT SELECT ON default.t TO one_row",
		"CREATE ROW POLICY just_one ON default.t FOR SELECT USING n = 7 TO one_row"} {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql})
	}
	key, _ := createKey(t, s, map[string]any{"name": "one", "database_roles": []string{"one_row"}})
	type result struct {
		Data       []map[string]any
		Statistics struct {
			RowsRead  uint64 `json:"rows_read"`
			BytesRead uint64 `json:"bytes_read"`
		}
	}
	run := func(auth, sql string) result {
		t.Helper()
		var res result
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql}, "Authorization", auth).JSON(t, &res)
		return res
	}
	if r := run("Bearer "+key, "SELECT n FROM t"); len(r.Data) != 1 || r.Statistics.RowsRead != 1 || r.Statistics.BytesRead != 0 {
		t.Errorf("policy-filtered read: %d rows, statistics %+v, want 1 row read and no bytes", len(r.Data), r.Statistics)
	}
	if r := run("Bearer "+key, "SELECT count() AS c FROM t"); r.Statistics.RowsRead != 1 {
		t.Errorf("policy-filtered count: statistics %+v, want the one row returned", r.Statistics)
	}
	// The admin key is not filtered: the engine's counts stand.
	if r := run("Bearer "+s.AdminKey, "SELECT n FROM t"); r.Statistics.RowsRead != 100 || r.Statistics.BytesRead == 0 {
		t.Errorf("unfiltered read: statistics %+v, want 100 rows read", r.Statistics)
	}
	// Read limits would fail on the rows the engine read before the policy.
	for _, setting := range []string{"max_rows_to_read = 10", "max_bytes_to_read = 10", "min_execution_speed = 1000000000"} {
		r, err := s.Do("POST", "/v1/query", map[string]string{"sql": "SELECT n FROM t SETTINGS " + setting}, "Authorization", "Bearer "+key)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != 400 || !bytes.Contains(r.Body, []byte(`"setting_not_allowed"`)) || bytes.Contains(r.Body, []byte("100")) {
			t.Errorf("SETTINGS %s: %d %s, want 400 setting_not_allowed", setting, r.Status, r.Body)
		}
	}
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT n FROM t SETTINGS max_rows_to_read = 1000"})
	// Parts show the table's insert history.
	if r := run("Bearer "+key, "SELECT name, modification_time FROM system.parts WHERE table = 't'"); len(r.Data) != 0 {
		t.Errorf("system.parts shows a policy-filtered table's parts: %v", r.Data)
	}
	// Counts over the system catalog count only the rows shown.
	for _, sql := range []string{"SELECT name FROM system.databases", "SELECT name FROM system.tables", "SELECT name FROM system.columns"} {
		if r := run("Bearer "+s.AdminKey, sql); r.Statistics.RowsRead != uint64(len(r.Data)) {
			t.Errorf("%s: %d rows, statistics %+v", sql, len(r.Data), r.Statistics)
		}
	}
}
