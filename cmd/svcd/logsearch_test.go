package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestHECIngestion sends the exact wire format of Splunk's HTTP Event Collector: the
// token in "Authorization: Splunk <token>", concatenated (not array) JSON events with
// time, host, source, sourcetype, index, fields, string and object events, and raw text.
func TestHECIngestion(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	installApp(t, s, "logsearch")
	splunk := []string{"Authorization", "Splunk " + s.AdminKey}
	// The log-search table is made by HEC, with its typed fields: neither creating it
	// nor a first insert through the table API makes a plain table search cannot read.
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/tables", `{"name": "logsearch_events"}`},
		{"POST", "/v1/tables/logsearch_events", `[{"_raw": "made by the table API"}]`},
	} {
		r := s.Must(400, c.method, c.path, c.body)
		if !strings.Contains(string(r.Body), "/services/collector/event") {
			t.Fatalf("%s %s: %s, want the HEC route named", c.method, c.path, r.Body)
		}
	}
	s.Must(404, "GET", "/v1/tables/logsearch_events", nil)
	r := s.Must(200, "GET", "/services/collector/health", nil, "Authorization", "")
	if !strings.Contains(string(r.Body), `"code":17`) {
		t.Fatalf("health: %s", r.Body)
	}
	body := `{"time": 1426279439.123, "host": "web-01", "source": "/var/log/access.log", "sourcetype": "access_combined", "index": "web", "event": "GET /index.html 200"}
{"time": "1426279440", "event": {"status": 500, "path": "/checkout", "user": {"id": 7}}, "sourcetype": "_json", "fields": {"region": "eu", "shard": 3}}
{"event": "no time given"}`
	r = s.Must(200, "POST", "/services/collector/event", body, splunk...)
	if string(r.Body) != `{"code":0,"text":"Success"}` {
		t.Fatalf("success body: %s", r.Body)
	}
	s.Must(200, "POST", "/services/collector/raw?sourcetype=syslog&host=db-02", "line one\nline two\n\n", "Authorization", "Bearer "+s.AdminKey)
	s.WaitCount("logsearch_events", 5, time.Minute)
	// HEC made it sorted by the hour, then each host's events together.
	var desc struct {
		SortingKey string `json:"sorting_key"`
	}
	s.Must(200, "GET", "/v1/tables/logsearch_events", nil).JSON(t, &desc)
	if desc.SortingKey != "toStartOfHour(_time), host, _time" {
		t.Fatalf("sorting key %q", desc.SortingKey)
	}
	d := s.Query("SELECT toString(_time) AS t, host, source, sourcetype, index, _raw FROM logsearch_events ORDER BY _time, _raw")
	first := d[0]
	if first["t"] != "2015-03-13 20:43:59.123" || first["host"] != "web-01" || first["source"] != "/var/log/access.log" ||
		first["sourcetype"] != "access_combined" || first["index"] != "web" || first["_raw"] != "GET /index.html 200" {
		t.Fatalf("first event: %v", first)
	}
	obj := s.Query("SELECT status, path, user.id AS uid, region, shard, index, source FROM logsearch_events WHERE sourcetype = '_json'")
	if len(obj) != 1 || obj[0]["status"] != float64(500) || obj[0]["uid"] != float64(7) || obj[0]["region"] != "eu" ||
		obj[0]["index"] != "main" || obj[0]["source"] != "http:hec" {
		t.Fatalf("object event: %v", obj)
	}
	raw := s.Query("SELECT _raw, host FROM logsearch_events WHERE sourcetype = 'syslog' ORDER BY _raw")
	if len(raw) != 2 || raw[0]["_raw"] != "line one" || raw[0]["host"] != "db-02" {
		t.Fatalf("raw events: %v", raw)
	}
	// HEC's error bodies.
	cases := []struct {
		body, want string
		headers    []string
		status     int
	}{
		{`{"event":"x"}`, `"code":2`, []string{"Authorization", ""}, 401},
		{`{"event":"x"}`, `"code":4`, []string{"Authorization", "Splunk svck_wrong"}, 403},
		{``, `"code":5`, splunk, 400},
		{`{"time": 1}`, `"code":12`, splunk, 400},
		{`{"event": ""}`, `"code":13`, splunk, 400},
		{`{"event":"a"} {"event":`, `"invalid-event-number":1`, splunk, 400},
	}
	for _, c := range cases {
		r := s.Must(c.status, "POST", "/services/collector/event", c.body, c.headers...)
		if !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%q: %s, want %s", c.body, r.Body, c.want)
		}
	}
	// Nothing of the refused requests landed.
	s.WaitCaughtUp("logsearch_events", 30*time.Second)
	if n := s.Count("logsearch_events"); n != 5 {
		t.Fatalf("%d events, want 5", n)
	}
	// Once HEC made it, the table API inserts into it, and search reads those rows.
	s.Must(202, "POST", "/v1/tables/logsearch_events", `[{"_time": "2015-03-13 20:44:00.000", "_raw": "inserted by name", "host": "web-02"}]`)
	s.WaitCount("logsearch_events", 6, time.Minute)
	var res struct{ Data []map[string]any }
	s.Must(200, "POST", "/v1/spl/search", map[string]string{"spl": `"inserted by name" | stats count BY host`, "earliest": "0"}).JSON(t, &res)
	if len(res.Data) != 1 || res.Data[0]["host"] != "web-02" || res.Data[0]["count"] != float64(1) {
		t.Fatalf("search over a row inserted by name: %v", res.Data)
	}
}

func TestSavedSearches(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	admin := login(t, s, "admin", adminPassword)
	installApp(t, s, "logsearch")
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "ann", "password": "ann's password"}, "Authorization", "Bearer "+admin)
	joinByInvitation(t, s, admin, "default", "ann", "ann's password", "member")
	ann := "Bearer " + login(t, s, "ann", "ann's password")
	scope := "?organization=default&cluster=default"
	type search struct {
		ID            string
		Name          string
		SPL           *string
		Earliest      string
		Visualization string
		SpanMinutes   *int `json:"span_minutes"`
		KeepResults   bool `json:"keep_results"`
		Visibility    string
		Revision      int
		CreatedBy     struct{ Username string } `json:"created_by"`
	}
	var mine search
	s.Must(201, "POST", "/v1/apps/logsearch/searches"+scope, map[string]any{"name": "errors by host", "spl": "status>=500 | stats count by host",
		"earliest": "-1h", "visualization": "chart", "span_minutes": 5, "keep_results": true}, "Authorization", ann).JSON(t, &mine)
	if mine.Visibility != "private" || mine.SPL == nil || mine.SpanMinutes == nil || *mine.SpanMinutes != 5 || !mine.KeepResults ||
		mine.CreatedBy.Username != "ann" || mine.Revision != 1 {
		t.Fatalf("created: %+v", mine)
	}
	var shared search
	s.Must(201, "POST", "/v1/apps/logsearch/searches"+scope, map[string]any{"name": "all 404s", "spl": "status=404", "visibility": "shared"},
		"Authorization", ann).JSON(t, &shared)
	// The admin sees the shared search but not ann's private one.
	var list struct {
		Searches  []search
		Truncated bool
	}
	s.Must(200, "GET", "/v1/apps/logsearch/searches"+scope, nil, "Authorization", "Bearer "+admin).JSON(t, &list)
	if len(list.Searches) != 1 || list.Searches[0].Name != "all 404s" || list.Searches[0].SPL != nil || list.Truncated {
		t.Fatalf("admin's list: %+v", list)
	}
	s.Must(404, "GET", "/v1/apps/logsearch/searches/"+mine.ID+scope, nil, "Authorization", "Bearer "+admin)
	// Filters.
	for q, want := range map[string]int{"&search=host": 1, "&visibility=shared": 1, "&created_by=ann": 2, "&created_by=me": 2,
		"&database=default": 2, "&database=other": 0} {
		s.Must(200, "GET", "/v1/apps/logsearch/searches"+scope+q, nil, "Authorization", ann).JSON(t, &list)
		if len(list.Searches) != want {
			t.Errorf("filter %s: %d searches, want %d", q, len(list.Searches), want)
		}
	}
	// Update keeps what is not sent; the full record persists.
	var upd search
	s.Must(200, "PATCH", "/v1/apps/logsearch/searches/"+mine.ID+scope, map[string]any{"name": "5xx by host", "span_minutes": nil},
		"Authorization", ann).JSON(t, &upd)
	if upd.Name != "5xx by host" || upd.SpanMinutes != nil || upd.Earliest != "-1h" || upd.Visualization != "chart" || upd.Revision != 2 {
		t.Fatalf("updated: %+v", upd)
	}
	// Only the creator changes a private search; an admin may change a shared one.
	s.Must(200, "PATCH", "/v1/apps/logsearch/searches/"+shared.ID+scope, map[string]any{"description": "from the admin"}, "Authorization", "Bearer "+admin)
	s.Must(404, "DELETE", "/v1/apps/logsearch/searches/"+mine.ID+scope, nil, "Authorization", "Bearer "+admin)
	// Scope and validation.
	s.Must(400, "GET", "/v1/apps/logsearch/searches", nil, "Authorization", ann)
	s.Must(403, "GET", "/v1/apps/logsearch/searches"+scope, nil)
	for _, bad := range []map[string]any{{"spl": "x"}, {"name": "n"}, {"name": "n", "spl": "x", "visibility": "public"},
		{"name": "n", "spl": "x", "visualization": "pie"}, {"name": "n", "spl": "x", "span_minutes": 0}} {
		s.Must(400, "POST", "/v1/apps/logsearch/searches"+scope, bad, "Authorization", ann)
	}
	// Survives a restart; deleting removes it.
	s.Restart()
	s.Must(200, "GET", "/v1/apps/logsearch/searches/"+mine.ID+scope, nil, "Authorization", ann)
	s.Must(204, "DELETE", "/v1/apps/logsearch/searches/"+mine.ID+scope, nil, "Authorization", ann)
	s.Must(404, "GET", "/v1/apps/logsearch/searches/"+mine.ID+scope, nil, "Authorization", ann)
	// At most 200 are listed, with truncated set.
	for i := range 201 {
		s.Must(201, "POST", "/v1/apps/logsearch/searches"+scope, map[string]any{"name": fmt.Sprintf("s%d", i), "spl": "x"}, "Authorization", ann)
	}
	s.Must(200, "GET", "/v1/apps/logsearch/searches"+scope, nil, "Authorization", ann).JSON(t, &list)
	if len(list.Searches) != 200 || !list.Truncated {
		t.Fatalf("%d searches listed, truncated %v", len(list.Searches), list.Truncated)
	}
}

func TestSearchOverHTTP(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	installApp(t, s, "logsearch")
	splunk := []string{"Authorization", "Splunk " + s.AdminKey}
	now := time.Now().Unix()
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, `{"time": %d, "host": "web-%d", "sourcetype": "access", "event": {"status": %d, "path": "/p/%d"}}`+"\n",
			now-int64(i), i%3, 200+(i%4)*100, i%5)
	}
	s.Must(200, "POST", "/services/collector/event", b.String(), splunk...)
	s.WaitCount("logsearch_events", 300, time.Minute)
	var res struct {
		Meta       []struct{ Name, Type string }
		Data       []map[string]any
		Rows       int
		ResultKind string `json:"result_kind"`
		Format     string `json:"result_format"`
		Truncated  bool
		Timeline   []struct{ Count int }
		Stages     []struct {
			Command    string
			OutputRows *int `json:"output_rows"`
		}
		FieldStatistics []struct{ Field string } `json:"field_statistics"`
		SPL             string
	}
	r := s.Must(200, "POST", "/v1/spl/search", map[string]any{"spl": "status=500 | head 5", "earliest": "-1h", "include_field_statistics": true,
		"query_id": "search-1"})
	r.JSON(t, &res)
	timeline := 0
	for _, b := range res.Timeline {
		timeline += b.Count
	}
	// 75 events match; head keeps 5, and the timeline shows the events returned.
	if res.ResultKind != "events" || res.Rows != 5 || res.Format != "native_columns" || timeline != 5 || len(res.Stages) != 2 ||
		res.Stages[0].OutputRows == nil || *res.Stages[0].OutputRows != 75 || res.Stages[1].OutputRows == nil || *res.Stages[1].OutputRows != 5 ||
		len(res.FieldStatistics) == 0 || res.SPL != "status=500 | head 5" ||
		r.Header.Get("X-Engine-Query-Id") != "search-1" {
		t.Fatalf("event search: %+v", res)
	}
	s.Must(200, "POST", "/v1/spl/search", map[string]any{"spl": "* | stats count by host", "earliest": "-1h"}).JSON(t, &res)
	if res.ResultKind != "statistics" || res.Rows != 3 || len(res.Timeline) != 0 {
		t.Fatalf("stats search: %+v", res)
	}
	r = s.Must(400, "POST", "/v1/spl/search", map[string]any{"spl": "* | transaction host"})
	if !strings.Contains(string(r.Body), "1:") {
		t.Fatalf("unsupported command error should carry a position: %s", r.Body)
	}
	s.Must(400, "POST", "/v1/spl/search", map[string]any{"spl": "*", "earliest": "yesterday"})
	// Capabilities need no credentials.
	r = s.Must(200, "GET", "/v1/spl/capabilities", nil, "Authorization", "")
	if !strings.Contains(string(r.Body), "timechart") {
		t.Fatalf("capabilities: %s", r.Body)
	}
	// Readable keys and members search; custom-role and write-only keys do not.
	ro, _ := createKey(t, s, map[string]any{"name": "ro", "permission": "read_only"})
	s.Must(200, "POST", "/v1/spl/search", map[string]any{"spl": "*"}, "Authorization", "Bearer "+ro)
	wo, _ := createKey(t, s, map[string]any{"name": "wo", "permission": "write_only"})
	s.Must(403, "POST", "/v1/spl/search", map[string]any{"spl": "*"}, "Authorization", "Bearer "+wo)
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE r"})
	role, _ := createKey(t, s, map[string]any{"name": "role", "database_roles": []string{"r"}})
	s.Must(403, "POST", "/v1/spl/search", map[string]any{"spl": "*"}, "Authorization", "Bearer "+role)
	member := login(t, s, "admin", adminPassword)
	s.Must(200, "POST", "/v1/spl/search?organization=default&cluster=default", map[string]any{"spl": "*"}, "Authorization", "Bearer "+member)
	// A database without events yet.
	s.Must(200, "POST", "/v1/databases", map[string]string{"name": "empty"})
	s.Must(404, "POST", "/v1/spl/search?database=empty", map[string]any{"spl": "*"})
	// Saved searches are validated with the language.
	s.Must(400, "POST", "/v1/apps/logsearch/searches?organization=default&cluster=default",
		map[string]any{"name": "bad", "spl": "* | transaction host"}, "Authorization", "Bearer "+member)
}
