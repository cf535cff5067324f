package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

func seedPeople(t *testing.T, s *svcdtest.Service) {
	t.Helper()
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "people", "sorting_key": "id"})
	s.Must(202, "POST", "/v1/tables/people", `[
		{"id":1,"name":"Ada","team":"eng","salary":100,"note":"tab\there, \"quoted\""},
		{"id":2,"name":"Bo","team":"eng","salary":90,"note":"line\nbreak"},
		{"id":3,"name":"Cy","team":"ops","salary":80,"note":null}]`)
	s.WaitCount("people", 3, time.Minute)
}

func runSQL(t *testing.T, s *svcdtest.Service, sql, format string, headers ...string) *svcdtest.Response {
	t.Helper()
	return s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql, "format": format}, headers...)
}

func TestEveryFormatParsesBack(t *testing.T) {
	s := svcdtest.Start(t)
	seedPeople(t, s)
	const sql = "SELECT id, name, note FROM people ORDER BY id"
	r := runSQL(t, s, sql, "JSON")
	if r.Header.Get("X-Engine-Query-Id") == "" {
		t.Fatal("no X-Engine-Query-Id")
	}
	var js struct {
		Meta       []struct{ Name, Type string }
		Data       []map[string]any
		Rows       int
		Statistics struct {
			Elapsed  float64
			RowsRead int `json:"rows_read"`
		}
		Hints []any
	}
	r.JSON(t, &js)
	if js.Rows != 3 || js.Data[1]["note"] != "line\nbreak" || js.Data[2]["note"] != nil || js.Statistics.RowsRead != 3 || js.Hints == nil {
		t.Fatalf("JSON: %s", r.Body)
	}
	var compact struct{ Data [][]any }
	json.Unmarshal(runSQL(t, s, sql, "JSONCompact").Body, &compact)
	if len(compact.Data) != 3 || compact.Data[0][1] != "Ada" {
		t.Fatalf("JSONCompact: %v", compact)
	}
	lines := func(b []byte) []map[string]any {
		var out []map[string]any
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("not JSON lines: %q", b)
			}
			out = append(out, m)
		}
		return out
	}
	if l := lines(runSQL(t, s, sql, "JSONEachRow").Body); len(l) != 3 || l[0]["note"] != "tab\there, \"quoted\"" {
		t.Fatalf("JSONEachRow: %v", l)
	}
	kinds := map[string]int{}
	for _, m := range lines(runSQL(t, s, sql, "JSONEachRowWithProgress").Body) {
		for k := range m {
			kinds[k]++
		}
	}
	if kinds["meta"] != 1 || kinds["row"] != 3 || kinds["progress"] < 1 {
		t.Fatalf("JSONEachRowWithProgress records: %v", kinds)
	}
	for _, f := range []string{"CSV", "CSVWithNames"} {
		recs, err := csv.NewReader(bytes.NewReader(runSQL(t, s, sql, f).Body)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if f == "CSVWithNames" {
			if strings.Join(recs[0], ",") != "id,name,note" {
				t.Fatalf("%s header %v", f, recs[0])
			}
			recs = recs[1:]
		}
		if len(recs) != 3 || recs[0][2] != "tab\there, \"quoted\"" || recs[1][2] != "line\nbreak" || recs[2][2] != `\N` {
			t.Fatalf("%s: %q", f, recs)
		}
	}
	for _, f := range []string{"TSV", "TSVWithNames", "TabSeparated"} {
		text := strings.TrimSuffix(string(runSQL(t, s, sql, f).Body), "\n")
		rows := strings.Split(text, "\n")
		if f == "TSVWithNames" {
			if rows[0] != "id\tname\tnote" {
				t.Fatalf("%s header %q", f, rows[0])
			}
			rows = rows[1:]
		}
		if len(rows) != 3 || strings.Split(rows[1], "\t")[2] != `line\nbreak` || strings.Split(rows[0], "\t")[2] != `tab\there, "quoted"` {
			t.Fatalf("%s: %q", f, rows)
		}
	}
	s.Must(400, "POST", "/v1/query", map[string]string{"sql": sql, "format": "Parquet"})
}

func TestStatementKinds(t *testing.T) {
	s := svcdtest.Start(t)
	seedPeople(t, s)
	// CREATE TABLE through SQL: admin only, one engine, hints for the rest.
	empty := func(r *svcdtest.Response) {
		var res struct {
			Meta []any
			Data []any
			Rows int
		}
		r.JSON(t, &res)
		if len(res.Meta) != 0 || len(res.Data) != 0 || res.Rows != 0 {
			t.Fatalf("want an empty result set: %s", r.Body)
		}
	}
	empty(s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE TABLE archive ENGINE = ReplicatedRawMergeTree ORDER BY (id)"}))
	s.Must(409, "POST", "/v1/query", map[string]string{"sql": "CREATE TABLE archive ENGINE = ReplicatedRawMergeTree"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE TABLE IF NOT EXISTS archive ENGINE = ReplicatedRawMergeTree"})
	for _, bad := range []string{"CREATE TABLE x ENGINE = MergeTree ORDER BY id", "CREATE TABLE x (a Int32) ENGINE = ReplicatedRawMergeTree",
		"CREATE TABLE x ENGINE = ReplicatedRawMergeTree AS SELECT 1", "CREATE TABLE x ENGINE = ReplicatedRawMergeTree PARTITION BY id"} {
		r := s.Must(400, "POST", "/v1/query", map[string]string{"sql": bad})
		if !strings.Contains(string(r.Body), "ReplicatedRawMergeTree") {
			t.Errorf("%s: hint should hold a supported statement: %s", bad, r.Body)
		}
	}
	// INSERT ... SELECT reports written rows.
	r := s.Must(200, "POST", "/v1/query", map[string]string{"sql": "INSERT INTO archive SELECT * FROM people WHERE team = 'eng'"})
	var ins struct {
		Statistics struct {
			WrittenRows *int `json:"written_rows"`
		}
		Rows int
	}
	r.JSON(t, &ins)
	if ins.Statistics.WrittenRows == nil || *ins.Statistics.WrittenRows != 2 || ins.Rows != 0 {
		t.Fatalf("insert select: %s", r.Body)
	}
	if d := s.Query("SELECT name FROM archive ORDER BY id"); len(d) != 2 || d[0]["name"] != "Ada" {
		t.Fatalf("archive: %v", d)
	}
	for _, bad := range []string{"INSERT INTO archive VALUES (1)", "INSERT INTO archive FORMAT JSONEachRow {}",
		"INSERT INTO nope SELECT 1", "SELECT * FROM url('http://example.com/x', JSONEachRow)", "DROP TABLE people",
		"SELECT 1; SELECT 2", "SELECT * FROM system.processes"} {
		if r, _ := s.Do("POST", "/v1/query", map[string]string{"sql": bad}); r.Status < 400 || r.Status >= 500 {
			t.Errorf("%s: status %d %s", bad, r.Status, r.Body)
		}
	}
	// Read-only keys cannot write; write-only keys cannot read.
	ro, _ := createKey(t, s, map[string]any{"name": "ro", "permission": "read_only"})
	s.Must(403, "POST", "/v1/query", map[string]string{"sql": "INSERT INTO archive SELECT * FROM people"}, "Authorization", "Bearer "+ro)
	s.Must(403, "POST", "/v1/query", map[string]string{"sql": "CREATE TABLE y ENGINE = ReplicatedRawMergeTree"}, "Authorization", "Bearer "+ro)
	runSQL(t, s, "SELECT count() FROM people", "JSON", "Authorization", "Bearer "+ro)
	// The sorting key machinery through SQL.
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "ALTER TABLE people MODIFY ORDER BY (team, id)"})
	var desc struct {
		SortingKey string `json:"sorting_key"`
	}
	s.Must(200, "GET", "/v1/tables/people", nil).JSON(t, &desc)
	if desc.SortingKey != "team, id" {
		t.Fatalf("after ALTER: %+v", desc)
	}
	// Engine errors come back as the engine's, with logical names.
	r = s.Must(400, "POST", "/v1/query", map[string]string{"sql": "SELECT nosuchfunction(1) FROM people"})
	if !strings.Contains(string(r.Body), "engine_code") || strings.Contains(string(r.Body), "o_") && strings.Contains(string(r.Body), "__default") {
		t.Fatalf("engine error: %s", r.Body)
	}
}

func TestCancelARunningQuery(t *testing.T) {
	s := svcdtest.Start(t)
	other, _ := createKey(t, s, map[string]any{"name": "other", "permission": "read_only"})
	s.Must(200, "POST", "/v1/databases", map[string]string{"name": "elsewhere"})
	var wg sync.WaitGroup
	var status int
	var body []byte
	wg.Go(func() {
		// Hours of work unless canceled. A probe below may hold the id for a moment
		// before this query registers it: then this query is refused and sent again.
		for {
			r, err := s.Do("POST", "/v1/query?query_id=long-one", map[string]string{"sql": "SELECT sum(number) FROM numbers(100000000000)"})
			if err != nil {
				return
			}
			if status, body = r.Status, r.Body; status != 409 {
				return
			}
		}
	})
	// Running once its id is taken by something other than a probe.
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		r, err := s.Do("POST", "/v1/query?query_id=long-one", map[string]string{"sql": "SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status == 409, fmt.Sprintf("the long query never ran: last answer %d %s", r.Status, r.Body)
	})
	// Not from another database's scope.
	s.Must(404, "POST", "/v1/query/cancel?database=elsewhere", map[string]string{"query_id": "long-one"}, "Authorization", "Bearer "+other)
	s.Must(200, "POST", "/v1/query/cancel", map[string]string{"query_id": "long-one"}, "Authorization", "Bearer "+other)
	wg.Wait()
	if status != 499 || !bytes.Contains(body, []byte(`"code":"canceled"`)) {
		t.Fatalf("canceled query answered %d %s", status, body)
	}
	s.Must(404, "POST", "/v1/query/cancel", map[string]string{"query_id": "long-one"})
}

func TestRequestLogFilters(t *testing.T) {
	s := svcdtest.Start(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "r"})
	s.Must(400, "POST", "/v1/query", map[string]string{"sql": "SELECT FROM WHERE"}, "User-Agent", "svc-cli/1.2.3")
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT 1 AS marker_select"}, "User-Agent", "Mozilla/5.0 test")
	s.Must(404, "GET", "/v1/tables/missing", nil)
	var page struct {
		Logs []struct {
			ID, Method, Path, Route, Source, UserAgent, TraceID string
			Status                                              int
			ClientVersion                                       string `json:"client_version"`
			Body                                                *string
			Error                                               *struct{ Code, Message string }
			Database                                            string
		}
		HasMore bool `json:"has_more"`
	}
	get := func(q string) {
		t.Helper()
		page.Logs = nil
		s.Must(200, "GET", "/v1/logs?"+q, nil).JSON(t, &page)
	}
	deadline := time.Now().Add(20 * time.Second)
	for get(""); len(page.Logs) < 4 && time.Now().Before(deadline); get("") {
		time.Sleep(300 * time.Millisecond)
	}
	get("sources=cli")
	if len(page.Logs) != 1 || page.Logs[0].Status != 400 || page.Logs[0].ClientVersion != "1.2.3" || page.Logs[0].Error == nil ||
		page.Logs[0].Route != "/v1/query" || page.Logs[0].Body == nil || page.Logs[0].Database != "default" {
		t.Fatalf("cli entries: %+v", page.Logs)
	}
	get("status_codes=404&methods=GET")
	if len(page.Logs) != 1 || page.Logs[0].Path != "/v1/tables/missing" {
		t.Fatalf("404 GETs: %+v", page.Logs)
	}
	get("search=mozilla")
	if len(page.Logs) != 1 || page.Logs[0].Source != "ui" || !strings.Contains(*page.Logs[0].Body, "marker_select") {
		t.Fatalf("search: %+v", page.Logs)
	}
	get("limit=1")
	if len(page.Logs) != 1 || !page.HasMore {
		t.Fatalf("limit: %+v", page)
	}
	get("user_agent=" + strings.ReplaceAll("Mozilla/5.0 test", " ", "%20"))
	if len(page.Logs) != 1 {
		t.Fatalf("user agent: %+v", page)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	get("start_time=" + future)
	if len(page.Logs) != 0 {
		t.Fatalf("start_time in the future: %+v", page)
	}
	for _, bad := range []string{"limit=201", "limit=0", "offset=-1", "sources=web", "status_codes=abc", "start_time=yesterday"} {
		s.Must(400, "GET", "/v1/logs?"+bad, nil)
	}
	// Credentials are never recorded.
	s.Must(401, "POST", "/v1/auth/login", map[string]string{"username": "admin", "password": "wrong"}, "Authorization", "")
	get("limit=200")
	for _, l := range page.Logs {
		if l.Body != nil && strings.Contains(*l.Body, s.AdminKey) {
			t.Fatalf("a logged body holds the key: %+v", l)
		}
	}
}

func TestCustomRoleKeysGrantsPoliciesAndProfiles(t *testing.T) {
	s := svcdtest.Start(t)
	seedPeople(t, s)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "secret"})
	s.Must(202, "POST", "/v1/tables/secret", `{"x":1}`)
	s.WaitCount("secret", 1, time.Minute)
	for _, sql := range []string{
		"CREATE ROLE eng_reader", "CREATE ROLE narrow", "CREATE ROLE everything",
		"GRANT SELECT ON default.people TO eng_reader",
		"GRANT SELECT(name, team) ON default.people TO narrow",
		"GRANT SELECT ON *.* TO everything",
		"CREATE ROW POLICY only_eng ON default.people FOR SELECT USING team = 'eng' TO eng_reader",
		"CREATE SETTINGS PROFILE analytics SETTINGS workload = 'analytics' READONLY TO eng_reader",
	} {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql})
	}
	s.Must(409, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE eng_reader"})
	eng, _ := createKey(t, s, map[string]any{"name": "eng", "database_roles": []string{"eng_reader"}})
	narrow, _ := createKey(t, s, map[string]any{"name": "narrow", "database_roles": []string{"narrow"}})
	all, _ := createKey(t, s, map[string]any{"name": "all", "database_roles": []string{"everything"}})
	as := func(key, sql string) []map[string]any {
		t.Helper()
		var res struct{ Data []map[string]any }
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql}, "Authorization", "Bearer "+key).JSON(t, &res)
		return res.Data
	}
	names := func(rows []map[string]any) string {
		var n []string
		for _, r := range rows {
			n = append(n, fmt.Sprint(r["name"]))
		}
		sort.Strings(n)
		return strings.Join(n, ",")
	}
	// The row policy filters every read by keys of its role, however the table is reached.
	if got := names(as(eng, "SELECT name FROM people")); got != "Ada,Bo" {
		t.Fatalf("eng key sees %s", got)
	}
	if got := names(as(eng, "SELECT name FROM (SELECT * FROM people) AS p UNION ALL SELECT name FROM people WHERE 0")); got != "Ada,Bo" {
		t.Fatalf("eng key through a subquery sees %s", got)
	}
	// Other roles and permission keys are unaffected.
	if got := names(as(all, "SELECT name FROM people")); got != "Ada,Bo,Cy" {
		t.Fatalf("everything key sees %s", got)
	}
	if got := names(s.Query("SELECT name FROM people")); got != "Ada,Bo,Cy" {
		t.Fatalf("admin key sees %s", got)
	}
	// Sizes would tell how many rows the policy hides: system views show NULL to its keys.
	if d := as(eng, "SELECT total_rows, total_bytes FROM system.tables WHERE name = 'people'"); len(d) != 1 || d[0]["total_rows"] != nil || d[0]["total_bytes"] != nil {
		t.Fatalf("system.tables for a policy-filtered key: %v", d)
	}
	// Parts would tell the insert history: system.parts does not list them to its keys.
	if d := as(eng, "SELECT count() AS parts FROM system.parts WHERE table = 'people'"); len(d) != 1 || d[0]["parts"] != float64(0) {
		t.Fatalf("system.parts for a policy-filtered key: %v", d)
	}
	if d := as(all, "SELECT total_rows FROM system.tables WHERE name = 'people'"); len(d) != 1 || d[0]["total_rows"] != float64(3) {
		t.Fatalf("system.tables for a key without policies: %v", d)
	}
	// Grants: table, columns.
	s.Must(403, "POST", "/v1/query", map[string]string{"sql": "SELECT * FROM secret"}, "Authorization", "Bearer "+eng)
	if got := names(as(narrow, "SELECT name, team FROM people")); got != "Ada,Bo,Cy" {
		t.Fatalf("narrow key sees %s", got)
	}
	s.Must(403, "POST", "/v1/query", map[string]string{"sql": "SELECT salary FROM people"}, "Authorization", "Bearer "+narrow)
	// Custom-role keys read only: no management API, no writes.
	s.Must(403, "GET", "/v1/tables", nil, "Authorization", "Bearer "+eng)
	s.Must(403, "POST", "/v1/query", map[string]string{"sql": "INSERT INTO secret SELECT * FROM people"}, "Authorization", "Bearer "+eng)
	// The profile's workload setting applies to the role's queries, and is READONLY.
	if d := as(eng, "SELECT getSetting('workload') AS w"); len(d) != 1 || d[0]["w"] != "analytics" {
		t.Fatalf("profile workload: %v", d)
	}
	s.Must(400, "POST", "/v1/query", map[string]string{"sql": "SELECT 1 SETTINGS workload = 'other'"}, "Authorization", "Bearer "+eng)
	// A restrictive policy narrows the permissive one; alone it would allow nothing.
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROW POLICY high ON default.people AS RESTRICTIVE FOR SELECT USING salary > 95 TO eng_reader"})
	if got := names(as(eng, "SELECT name FROM people")); got != "Ada" {
		t.Fatalf("permissive AND restrictive: %s", got)
	}
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "DROP ROW POLICY only_eng ON default.people"})
	if got := names(as(eng, "SELECT name FROM people")); got != "" {
		t.Fatalf("a restrictive policy alone must allow nothing: %s", got)
	}
	// Dropping a role removes its grants from keys using it and deletes no key.
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "DROP ROLE narrow"})
	s.Must(403, "POST", "/v1/query", map[string]string{"sql": "SELECT name FROM people"}, "Authorization", "Bearer "+narrow)
	var keys struct{ Keys []struct{ Name string } }
	s.Must(200, "GET", "/v1/keys", nil).JSON(t, &keys)
	found := false
	for _, k := range keys.Keys {
		found = found || k.Name == "narrow"
	}
	if !found {
		t.Fatal("dropping the role deleted its key")
	}
	s.Must(404, "POST", "/v1/query", map[string]string{"sql": "DROP ROLE narrow"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "DROP ROLE IF EXISTS narrow"})
}

func TestWorkloadsAndResources(t *testing.T) {
	s := svcdtest.Start(t)
	for _, sql := range []string{
		"CREATE RESOURCE cpu (MASTER THREAD, WORKER THREAD)",
		"CREATE WORKLOAD all_work",
		"CREATE WORKLOAD analytics IN all_work SETTINGS max_concurrent_threads = 2",
	} {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql})
	}
	if d := s.Query("SELECT name FROM system.workloads ORDER BY name"); len(d) != 2 || d[0]["name"] != "all_work" {
		t.Fatalf("system.workloads: %v", d)
	}
	if d := s.Query("SELECT name FROM system.resources"); len(d) != 1 || d[0]["name"] != "cpu" {
		t.Fatalf("system.resources: %v", d)
	}
	ro, _ := createKey(t, s, map[string]any{"name": "ro", "permission": "read_only"})
	runSQL(t, s, "SELECT count() FROM numbers(1000) SETTINGS workload = 'analytics'", "JSON", "Authorization", "Bearer "+ro)
	s.Must(403, "POST", "/v1/query", map[string]string{"sql": "CREATE WORKLOAD x"}, "Authorization", "Bearer "+ro)
	s.Must(400, "POST", "/v1/query", map[string]string{"sql": "CREATE RESOURCE mem (MEMORY RESERVATION)"})
	s.Must(400, "POST", "/v1/query", map[string]string{"sql": "CREATE WORKLOAD y ON CLUSTER 'other'"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "DROP WORKLOAD analytics"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "DROP WORKLOAD IF EXISTS analytics"})
}

// TestStatisticsOfALargeStreamedResult checks that a result too large to hold still
// reports what the engine read: its summary arrives after the rows.
func TestStatisticsOfALargeStreamedResult(t *testing.T) {
	s := svcdtest.Start(t)
	r := runSQL(t, s, "SELECT number, toString(number) AS s FROM numbers(300000)", "JSON")
	var res struct {
		Rows       int
		Statistics struct {
			RowsRead  int `json:"rows_read"`
			BytesRead int `json:"bytes_read"`
		}
	}
	r.JSON(t, &res)
	// chDB 26.5 counts progress per finished block, so a streamed result's count may
	// trail its last blocks; what matters here is that the count arrives at all.
	if res.Rows != 300000 || res.Statistics.RowsRead < 65_000 || res.Statistics.BytesRead == 0 {
		t.Fatalf("rows %d, statistics %+v", res.Rows, res.Statistics)
	}
}

// TestSmallResultsGoOutWhole: a small result the engine answered whole goes out as one body
// with its length; a larger one streams, chunked. Both carry every row.
func TestSmallResultsGoOutWhole(t *testing.T) {
	s := svcdtest.Start(t)
	for _, c := range []struct {
		rows  int
		whole bool
	}{{10, true}, {100000, false}} {
		r := runSQL(t, s, fmt.Sprintf("SELECT number FROM numbers(%d)", c.rows), "JSONEachRow")
		if n := bytes.Count(r.Body, []byte("\n")); n != c.rows {
			t.Fatalf("%d rows: %d lines", c.rows, n)
		}
		length := r.Header.Get("Content-Length")
		if c.whole && length != strconv.Itoa(len(r.Body)) {
			t.Errorf("%d rows: Content-Length %q, body of %d bytes", c.rows, length, len(r.Body))
		}
		if !c.whole && length != "" {
			t.Errorf("%d rows: Content-Length %q on a streamed result", c.rows, length)
		}
	}
}

// TestStatementSettingsPassedOrRefused (issue 25 audit row 6): a statement's SETTINGS are
// passed to the engine (the spec) except a short deny-list, refused with the reason in the
// hint; a setting outside the old allow-list reaches the engine, in a read and in an
// INSERT ... SELECT.
func TestStatementSettingsPassedOrRefused(t *testing.T) {
	s := svcdtest.Start(t)
	seedPeople(t, s)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "copy"})
	var res struct{ Data []map[string]any }
	runSQL(t, s, "SELECT toUInt64(getSetting('join_any_take_last_row')) AS v SETTINGS join_any_take_last_row = 1", "JSON").JSON(t, &res)
	if len(res.Data) != 1 || fmt.Sprint(res.Data[0]["v"]) != "1" {
		t.Fatalf("join_any_take_last_row did not reach the engine: %v", res.Data)
	}
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "INSERT INTO copy SETTINGS insert_null_as_default = 1 SELECT id, name FROM people SETTINGS optimize_on_insert = 0"})
	s.WaitCount("copy", 3, time.Minute)
	for _, c := range []struct{ sql, code, hint string }{
		{"SELECT 1 SETTINGS compatibility = '23.1'", "setting_not_allowed", "the analyzer"},
		{"INSERT INTO copy SETTINGS apply_deleted_mask = 0 SELECT id FROM people", "setting_not_allowed", "deleted"},
		{"SELECT 1 SETTINGS max_memory_usage_for_user = 1", "setting_not_allowed", "user-level"},
		{"SELECT 1 SETTINGS no_such_setting_anywhere = 1", "engine_error", ""},
	} {
		r, err := s.Do("POST", "/v1/query", map[string]string{"sql": c.sql})
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error struct{ Code, Hint string } }
		json.Unmarshal(r.Body, &e)
		if r.Status != 400 || e.Error.Code != c.code || !strings.Contains(e.Error.Hint, c.hint) {
			t.Errorf("%s: %d %s, want 400 %s with a hint naming %q", c.sql, r.Status, r.Body, c.code, c.hint)
		}
	}
}
