package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

const wfScope = "?organization=default&cluster=default"

// startWorkflows runs svcd against the harness's Temporal (TEMPORAL_ADDR).
func startWorkflowsSvcd(t *testing.T, env ...string) *svcdtest.Service {
	t.Helper()
	svcdtest.Requirements(t)
	testenv.Temporal(t)
	return svcdtest.Start(t, env...)
}

type wfView struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	Description     *string `json:"description"`
	Query           struct{ Database, SQL string }
	IntervalSeconds *int       `json:"interval_seconds"`
	Enabled         bool       `json:"enabled"`
	Revision        int        `json:"revision"`
	NextRunAt       *time.Time `json:"next_run_at"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	Sinks           []struct {
		ID       string         `json:"id"`
		Type     string         `json:"type"`
		Settings map[string]any `json:"settings"`
	} `json:"sinks"`
}

type wfRun struct {
	ID         string     `json:"id"`
	WorkflowID string     `json:"workflow_id"`
	Source     string     `json:"source"`
	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

type runsPage struct {
	Runs       []wfRun `json:"runs"`
	NextCursor *string `json:"next_cursor"`
}

func createWorkflow(t *testing.T, s *svcdtest.Service, body map[string]any, headers ...string) wfView {
	t.Helper()
	var v wfView
	s.Must(201, "POST", "/v1/workflows"+wfScope, body, headers...).JSON(t, &v)
	return v
}

func startRun(t *testing.T, s *svcdtest.Service, wf string, headers ...string) wfRun {
	t.Helper()
	var r wfRun
	s.Must(202, "POST", "/v1/workflows/"+wf+"/runs"+wfScope, nil, headers...).JSON(t, &r)
	if r.ID == "" || r.WorkflowID != wf || r.Source != "manual" {
		t.Fatalf("started run %+v", r)
	}
	return r
}

// waitRun waits until the runs list shows run with one of the statuses.
func waitRun(t *testing.T, s *svcdtest.Service, wf, run string, statuses ...string) wfRun {
	t.Helper()
	var found wfRun
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		var p runsPage
		s.Must(200, "GET", "/v1/workflows/"+wf+"/runs"+wfScope+"&limit=100", nil).JSON(t, &p)
		for _, r := range p.Runs {
			if r.ID == run && slices.Contains(statuses, r.Status) {
				found = r
				return true, ""
			}
		}
		return false, fmt.Sprintf("run %s never reached %v; runs: %+v\n%s", run, statuses, p.Runs, tailOf(s.Logs(), 3000))
	})
	return found
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

type logEntry struct {
	EventType string `json:"event_type"`
	Revision  int    `json:"workflow_revision"`
	RunID     string `json:"run_id"`
	Status    string `json:"status"`
	Matches   int    `json:"matches"`
	SinkID    string `json:"sink_id"`
	SinkType  string `json:"sink_type"`
	Attempts  int    `json:"attempts"`
	Error     string `json:"error"`
	TimeMS    int64  `json:"time_ms"`
}

type logsPage struct {
	Logs       []logEntry `json:"logs"`
	From, To   int64
	NextCursor *string `json:"next_cursor"`
}

// waitLogs waits until run has n log entries.
func waitLogs(t *testing.T, s *svcdtest.Service, wf, run string, n int) []logEntry {
	t.Helper()
	var mine []logEntry
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		var p logsPage
		s.Must(200, "GET", "/v1/workflows/"+wf+"/logs"+wfScope+"&limit=200", nil).JSON(t, &p)
		mine = nil
		for _, e := range p.Logs {
			if e.RunID == run {
				mine = append(mine, e)
			}
		}
		return len(mine) >= n, fmt.Sprintf("run %s has log entries %+v, want %d", run, mine, n)
	})
	return mine
}

type delivery struct {
	Header http.Header
	Body   map[string]any
}

// sinkServer records deliveries; it answers 503 to the first `failFirst` attempts of each
// run's delivery (by the body's run_id), so that which of two concurrent runs delivers
// first does not decide which one is retried.
type sinkServer struct {
	*httptest.Server
	mu        sync.Mutex
	got       []delivery
	failFirst int
	attempts  map[any]int
}

func newSinkServer(t *testing.T, failFirst int) *sinkServer {
	ss := &sinkServer{failFirst: failFirst, attempts: map[any]int{}}
	ss.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		ss.mu.Lock()
		ss.got = append(ss.got, delivery{Header: r.Header.Clone(), Body: body})
		ss.attempts[body["run_id"]]++
		n := ss.attempts[body["run_id"]]
		ss.mu.Unlock()
		if n <= ss.failFirst {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(204)
	}))
	t.Cleanup(ss.Close)
	return ss
}

func (ss *sinkServer) deliveries() []delivery {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]delivery(nil), ss.got...)
}

// TestWorkflowsEndToEnd covers every endpoint, the validation rules and limits, the
// sinks, runs paging, logs and metrics, and the schedule state machine row by row.
func TestWorkflowsEndToEnd(t *testing.T) {
	t.Parallel() // see TestMain
	s := startWorkflowsSvcd(t, "SVC_URL_IMPORT_ALLOW=127.0.0.1", "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "src"})
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "dst"})
	s.Must(202, "POST", "/v1/tables/src", `[{"a":1,"b":"x"},{"a":2,"b":"y"},{"a":3,"b":"z"}]`)
	s.WaitCount("src", 3, time.Minute)
	sink := newSinkServer(t, 1)
	q := map[string]any{"database": "default", "sql": "SELECT a, b FROM src ORDER BY a"}

	t.Run("validation", func(t *testing.T) {
		long := strings.Repeat("d", 1001)
		cases := []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"query": q}, "name"},
			{map[string]any{"name": "x"}, "query"},
			{map[string]any{"name": "x", "query": map[string]any{"sql": "SELECT 1"}}, "query.database"},
			{map[string]any{"name": "x", "query": map[string]any{"database": "default"}}, "query.sql"},
			{map[string]any{"name": "x", "query": q, "sql": "SELECT 1"}, "sql"},
			{map[string]any{"name": "x", "query": q, "database": "default"}, "database"},
			{map[string]any{"name": "x", "query": map[string]any{"database": "nope", "sql": "SELECT 1"}}, "query.database"},
			{map[string]any{"name": "   ", "query": q}, "name"},
			{map[string]any{"name": "x", "query": q, "description": long}, "description"},
			{map[string]any{"name": "x", "query": q, "interval_seconds": 0}, "interval_seconds"},
			{map[string]any{"name": "x", "query": q, "interval_seconds": 86401}, "interval_seconds"},
			{map[string]any{"name": "x", "query": q, "interval_seconds": 1.5}, "interval_seconds"},
			{map[string]any{"name": "x", "query": q, "interval_seconds": "60"}, "interval_seconds"},
			{map[string]any{"name": "x", "query": q, "enabled": "yes"}, "enabled"},
			{map[string]any{"name": "x", "query": q, "sinks": []any{map[string]any{"type": "http", "url": sink.URL}}}, "sinks[0].url"},
			{map[string]any{"name": "x", "query": q, "sinks": []any{map[string]any{"type": "table", "database": "default", "table": "dst"}}}, "sinks[0].database"},
			{map[string]any{"name": "x", "query": q, "sinks": []any{map[string]any{"type": "kafka", "settings": map[string]any{}}}}, "sinks[0].type"},
			{map[string]any{"name": "x", "query": q, "sinks": []any{map[string]any{"type": "table", "settings": map[string]any{"database": "default"}}}}, "sinks[0].settings.table"},
			{map[string]any{"name": "x", "query": q, "sinks": []any{map[string]any{"type": "http", "settings": map[string]any{}}}}, "sinks[0].settings.url"},
			{map[string]any{"name": "x", "query": q, "sinks": []any{map[string]any{"type": "http", "settings": map[string]any{"url": "http://10.1.2.3/hook"}}}}, "sinks[0].settings.url"},
			{map[string]any{"name": "x", "query": q, "sinks": []any{map[string]any{"type": "http", "settings": map[string]any{"url": "ftp://example.com/"}}}}, "sinks[0].settings.url"},
			{map[string]any{"name": "x", "query": q, "sinks": []any{map[string]any{"id": "8c7e5f1a-0000-4000-8000-000000000000", "type": "table",
				"settings": map[string]any{"database": "default", "table": "dst"}}}}, "sinks[0].id"},
		}
		for _, c := range cases {
			r, err := s.Do("POST", "/v1/workflows"+wfScope, c.body)
			if err != nil {
				t.Fatal(err)
			}
			var e struct {
				Error struct{ Field, Message string }
			}
			_ = json.Unmarshal(r.Body, &e)
			if r.Status != 400 || e.Error.Field != c.field {
				t.Errorf("%v: %d %s, want 400 naming %s", c.body, r.Status, r.Body, c.field)
			}
		}
		// Exactly 1,000 characters of description is fine, and blank is null.
		v := createWorkflow(t, s, map[string]any{"name": "desc-limit", "query": q, "description": strings.Repeat("d", 1000), "interval_seconds": nil})
		if v.Description == nil || len(*v.Description) != 1000 {
			t.Errorf("description: %v", v.Description)
		}
		s.Must(204, "DELETE", "/v1/workflows/"+v.ID+wfScope, nil)
	})

	// Create: trimmed and lowercased name, blank description null, defaults.
	var wf wfView
	t.Run("create", func(t *testing.T) {
		wf = createWorkflow(t, s, map[string]any{"name": "  Rollup Hourly ", "description": "   ", "query": q, "interval_seconds": nil,
			"sinks": []any{
				map[string]any{"type": "http", "settings": map[string]any{"url": sink.URL + "/hook?secret=s3cr3t", "headers": map[string]string{"X-Token": "tok-value-123"}}},
				map[string]any{"type": "table", "settings": map[string]any{"database": "default", "table": "dst"}},
			}})
		if wf.Name != "rollup hourly" || wf.Description != nil || !wf.Enabled || wf.IntervalSeconds != nil || wf.Revision != 1 ||
			wf.NextRunAt != nil || len(wf.Sinks) != 2 || wf.Query.SQL != q["sql"] || wf.CreatedAt.IsZero() {
			t.Fatalf("created %+v", wf)
		}
		h := wf.Sinks[0].Settings
		if h["url"] != sink.URL+"/hook?secret=s3cr3t" || h["url_configured"] != true || fmt.Sprint(h["header_names"]) != "[X-Token]" {
			t.Fatalf("http sink view %+v", h)
		}
		r := s.Must(200, "GET", "/v1/workflows/"+wf.ID+wfScope, nil)
		if strings.Contains(string(r.Body), "tok-value-123") {
			t.Fatalf("a header value is in the answer: %s", r.Body)
		}
		var list struct{ Workflows []wfView }
		s.Must(200, "GET", "/v1/workflows"+wfScope, nil).JSON(t, &list)
		if len(list.Workflows) != 1 || list.Workflows[0].ID != wf.ID || strings.Contains(string(s.Must(200, "GET", "/v1/workflows"+wfScope, nil).Body), "tok-value") {
			t.Fatalf("list %+v", list)
		}
		// Defaults: interval 1, enabled, no sinks.
		d := createWorkflow(t, s, map[string]any{"name": "defaults", "query": q, "enabled": false})
		if d.IntervalSeconds == nil || *d.IntervalSeconds != 1 || d.Enabled || len(d.Sinks) != 0 || d.NextRunAt != nil {
			t.Fatalf("defaults %+v", d)
		}
		s.Must(204, "DELETE", "/v1/workflows/"+d.ID+wfScope, nil)
		// Names are unique per cluster, compared trimmed and lowercased.
		s.Must(409, "POST", "/v1/workflows"+wfScope, map[string]any{"name": "ROLLUP HOURLY", "query": q})
	})

	var first wfRun
	t.Run("run, sinks, idempotency", func(t *testing.T) {
		first = startRun(t, s, wf.ID, "Idempotency-Key", "k-1")
		again := startRun(t, s, wf.ID, "Idempotency-Key", "k-1")
		if again.ID != first.ID {
			t.Fatalf("the same Idempotency-Key started another run: %s then %s", first.ID, again.ID)
		}
		for _, bad := range []string{"has space", strings.Repeat("k", 129), "tab\there", "é"} {
			s.Must(400, "POST", "/v1/workflows/"+wf.ID+"/runs"+wfScope, nil, "Idempotency-Key", bad)
		}
		second := startRun(t, s, wf.ID, "Idempotency-Key", strings.Repeat("k", 128))
		done := waitRun(t, s, wf.ID, first.ID, "completed")
		waitRun(t, s, wf.ID, second.ID, "completed")
		if done.FinishedAt == nil || done.Source != "manual" {
			t.Fatalf("finished run %+v", done)
		}
		// Once finished, the key still recovers the same run.
		if again := startRun(t, s, wf.ID, "Idempotency-Key", "k-1"); again.ID != first.ID {
			t.Fatalf("the key started another run after the first finished: %s", again.ID)
		}
		entries := waitLogs(t, s, wf.ID, first.ID, 3)
		var sinkIDs []string
		for _, e := range entries {
			if e.Revision != 1 {
				t.Errorf("entry of revision %d: %+v", e.Revision, e)
			}
			switch e.EventType {
			case "workflow.evaluated":
				if e.Matches != 3 || e.Status != "ok" {
					t.Errorf("evaluated entry %+v", e)
				}
			case "workflow.delivered":
				if e.Status != "ok" || e.SinkID == "" {
					t.Errorf("delivery entry %+v", e)
				}
				if e.SinkType == "http" && e.Attempts != 2 {
					t.Errorf("http delivery took %d attempts, want 2 (the first answered 503)", e.Attempts)
				}
				sinkIDs = append(sinkIDs, e.SinkType+"="+e.SinkID)
			}
		}
		if len(sinkIDs) != 2 {
			t.Fatalf("deliveries %v", sinkIDs)
		}
		// The HTTP sink: two attempts of the same delivery, headers and payload.
		var got []delivery
		for _, d := range sink.deliveries() {
			if d.Body["run_id"] == first.ID {
				got = append(got, d)
			}
		}
		if len(got) != 2 {
			t.Fatalf("%d deliveries of run %s, want 2 (a 503 then a retry)", len(got), first.ID)
		}
		for _, d := range got {
			if d.Header.Get("X-Token") != "tok-value-123" || d.Header.Get("Idempotency-Key") != first.ID+"/"+wf.Sinks[0].ID ||
				d.Header.Get("Content-Type") != "application/json" {
				t.Errorf("delivery headers %v", d.Header)
			}
			rows, _ := d.Body["rows"].([]any)
			if d.Body["workflow_id"] != wf.ID || d.Body["source"] != "manual" || d.Body["row_count"] != float64(3) || len(rows) != 3 ||
				fmt.Sprint(rows[0]) != "map[a:1 b:x]" || d.Body["sink_id"] != wf.Sinks[0].ID || d.Body["workflow_revision"] != float64(1) {
				t.Errorf("delivery body %v", d.Body)
			}
		}
		// Two runs, three rows each.
		s.WaitCount("dst", 6, time.Minute)
		if got := s.Query("SELECT a, b, count() AS n FROM dst GROUP BY a, b ORDER BY a"); fmt.Sprint(got) != "[map[a:1 b:x n:2] map[a:2 b:y n:2] map[a:3 b:z n:2]]" {
			t.Fatalf("table sink rows %v", got)
		}
		var m struct {
			Points []map[string]int64
			Totals map[string]int64
			From   int64
			To     int64
		}
		s.Must(200, "GET", "/v1/workflows/"+wf.ID+"/metrics"+wfScope, nil).JSON(t, &m)
		if m.Totals["executions"] != 2 || m.Totals["matches"] != 6 || m.Totals["sink_events"] != 4 || m.Totals["errors"] != 0 ||
			m.To-m.From != 24*3600*1000 || len(m.Points) == 0 {
			t.Errorf("metrics totals %v from %d to %d, %d points", m.Totals, m.From, m.To, len(m.Points))
		}
		if _, ok := m.Points[0]["bucket_ms"]; !ok {
			t.Errorf("point %v", m.Points[0])
		}
	})

	t.Run("runs paging and cancel rules", func(t *testing.T) {
		for _, bad := range []string{"&limit=0", "&limit=101", "&limit=x", "&cursor=%21%21", "&cursor=" + "bm90LW1pbmU"} {
			s.Must(400, "GET", "/v1/workflows/"+wf.ID+"/runs"+wfScope+bad, nil)
		}
		var p runsPage
		s.Must(200, "GET", "/v1/workflows/"+wf.ID+"/runs"+wfScope, nil).JSON(t, &p)
		if len(p.Runs) != 2 || p.NextCursor != nil {
			t.Fatalf("runs %+v", p)
		}
		if p.Runs[0].FinishedAt.Before(*p.Runs[1].FinishedAt) {
			t.Errorf("finished runs not by finish time descending: %+v", p.Runs)
		}
		seen := map[string]bool{}
		cursor := ""
		for range 3 {
			var page runsPage
			s.Must(200, "GET", "/v1/workflows/"+wf.ID+"/runs"+wfScope+"&limit=1"+cursor, nil).JSON(t, &page)
			for _, r := range page.Runs {
				seen[r.ID] = true
			}
			if page.NextCursor == nil {
				break
			}
			cursor = "&cursor=" + *page.NextCursor
		}
		if len(seen) != 2 {
			t.Fatalf("paging by 1 saw %v", seen)
		}
		s.Must(409, "POST", "/v1/workflows/"+wf.ID+"/runs/"+first.ID+"/cancel"+wfScope, nil)
		s.Must(404, "POST", "/v1/workflows/"+wf.ID+"/runs/8c7e5f1a-0000-4000-8000-000000000000/cancel"+wfScope, nil)
		s.Must(404, "POST", "/v1/workflows/"+wf.ID+"/runs/not-a-run/cancel"+wfScope, nil)
		other := createWorkflow(t, s, map[string]any{"name": "other", "query": q, "interval_seconds": nil})
		s.Must(404, "POST", "/v1/workflows/"+other.ID+"/runs/"+first.ID+"/cancel"+wfScope, nil)
		s.Must(204, "DELETE", "/v1/workflows/"+other.ID+wfScope, nil)
	})

	t.Run("logs", func(t *testing.T) {
		now := time.Now().UnixMilli()
		for _, bad := range []string{"&limit=0", "&limit=201", "&from=x", fmt.Sprintf("&from=%d&to=%d", now-8*24*3600*1000, now),
			fmt.Sprintf("&from=%d&to=%d", now, now-1), "&cursor=%%%"} {
			s.Must(400, "GET", "/v1/workflows/"+wf.ID+"/logs"+wfScope+bad, nil)
		}
		var all logsPage
		s.Must(200, "GET", "/v1/workflows/"+wf.ID+"/logs"+wfScope, nil).JSON(t, &all)
		if len(all.Logs) != 6 || all.NextCursor != nil || all.To-all.From != 24*3600*1000 {
			t.Fatalf("logs %+v", all)
		}
		var n int
		cursor := ""
		for {
			var p logsPage
			s.Must(200, "GET", fmt.Sprintf("/v1/workflows/%s/logs%s&limit=4&from=%d&to=%d%s", wf.ID, wfScope, all.From, all.To, cursor), nil).JSON(t, &p)
			n += len(p.Logs)
			if p.NextCursor == nil {
				break
			}
			cursor = "&cursor=" + *p.NextCursor
		}
		if n != 6 {
			t.Fatalf("paging logs by 4 gave %d entries, want 6", n)
		}
		// to is exclusive, from inclusive.
		var none logsPage
		s.Must(200, "GET", fmt.Sprintf("/v1/workflows/%s/logs%s&from=%d&to=%d", wf.ID, wfScope, all.From, all.Logs[len(all.Logs)-1].TimeMS), nil).JSON(t, &none)
		for _, e := range none.Logs {
			if e.TimeMS >= all.Logs[len(all.Logs)-1].TimeMS {
				t.Fatalf("entry at or after to: %+v", e)
			}
		}
	})

	t.Run("state machine", func(t *testing.T) {
		patch := func(body map[string]any) wfView {
			t.Helper()
			var v wfView
			s.Must(200, "PATCH", "/v1/workflows/"+wf.ID+wfScope, body).JSON(t, &v)
			return v
		}
		// manual-only -> recurring (numeric interval, enabled).
		v := patch(map[string]any{"interval_seconds": 3600})
		if v.NextRunAt == nil || v.NextRunAt.Unix()%3600 != 0 || !v.NextRunAt.After(time.Now()) || *v.IntervalSeconds != 3600 {
			t.Fatalf("recurring: %+v", v)
		}
		// enabled -> paused: interval kept, next_run_at null.
		v = patch(map[string]any{"enabled": false})
		if v.Enabled || v.NextRunAt != nil || v.IntervalSeconds == nil || *v.IntervalSeconds != 3600 {
			t.Fatalf("paused: %+v", v)
		}
		var got wfView
		s.Must(200, "GET", "/v1/workflows/"+wf.ID+wfScope, nil).JSON(t, &got)
		if got.NextRunAt != nil {
			t.Fatalf("GET of a paused workflow has next_run_at %v", got.NextRunAt)
		}
		// Paused never blocks explicit runs.
		r := startRun(t, s, wf.ID)
		waitRun(t, s, wf.ID, r.ID, "completed")
		// paused -> enabled.
		v = patch(map[string]any{"enabled": true})
		if !v.Enabled || v.NextRunAt == nil {
			t.Fatalf("resumed: %+v", v)
		}
		// any -> manual-only.
		v = patch(map[string]any{"interval_seconds": nil})
		if v.IntervalSeconds != nil || v.NextRunAt != nil || !v.Enabled {
			t.Fatalf("manual-only: %+v", v)
		}
		// manual-only with enabled false still runs explicitly.
		patch(map[string]any{"enabled": false})
		r = startRun(t, s, wf.ID)
		waitRun(t, s, wf.ID, r.ID, "completed")
		// manual-only -> recurring, subject to enabled: still paused.
		v = patch(map[string]any{"interval_seconds": 1})
		if v.NextRunAt != nil || v.Enabled {
			t.Fatalf("recurring but disabled: %+v", v)
		}
		// Enabled at 1 s, scheduled runs appear with source scheduled.
		v = patch(map[string]any{"enabled": true, "sinks": []any{}})
		if v.NextRunAt == nil {
			t.Fatalf("recurring at 1 s: %+v", v)
		}
		testenv.Eventually(t, time.Minute, func() (bool, string) {
			var p runsPage
			s.Must(200, "GET", "/v1/workflows/"+wf.ID+"/runs"+wfScope+"&limit=100", nil).JSON(t, &p)
			sched := 0
			for _, r := range p.Runs {
				if r.Source == "scheduled" {
					sched++
				}
			}
			return sched >= 2, fmt.Sprintf("%d scheduled runs, want 2\n%s", sched, tailOf(s.Logs(), 3000))
		})
		// Pausing stops them: after the pause, at most the one already started may finish.
		patch(map[string]any{"enabled": false})
		count := func() int {
			var p runsPage
			s.Must(200, "GET", "/v1/workflows/"+wf.ID+"/runs"+wfScope+"&limit=100", nil).JSON(t, &p)
			return len(p.Runs)
		}
		before := count()
		time.Sleep(3 * time.Second) // nothing to wait on: this checks that nothing happens
		if after := count(); after > before+1 {
			t.Fatalf("%d runs before the pause settled, %d three seconds later", before, after)
		}
	})

	t.Run("patch semantics", func(t *testing.T) {
		var cur wfView
		s.Must(200, "GET", "/v1/workflows/"+wf.ID+wfScope, nil).JSON(t, &cur)
		v := createWorkflow(t, s, map[string]any{"name": "patchme", "description": "d", "query": q, "interval_seconds": nil,
			"sinks": []any{
				map[string]any{"type": "http", "settings": map[string]any{"url": sink.URL + "/a", "headers": map[string]string{"A": "1"}}},
				map[string]any{"type": "table", "settings": map[string]any{"database": "default", "table": "dst"}},
			}})
		var p wfView
		s.Must(200, "PATCH", "/v1/workflows/"+v.ID+wfScope, map[string]any{"query": map[string]any{"sql": "SELECT 1"}}).JSON(t, &p)
		if p.Query.Database != "default" || p.Query.SQL != "SELECT 1" || p.Revision != 2 || p.Description == nil || len(p.Sinks) != 2 || !p.UpdatedAt.After(p.CreatedAt) {
			t.Fatalf("after a query.sql patch: %+v", p)
		}
		s.Must(200, "PATCH", "/v1/workflows/"+v.ID+wfScope, map[string]any{"description": nil}).JSON(t, &p)
		if p.Description != nil || p.Query.SQL != "SELECT 1" || p.Revision != 3 {
			t.Fatalf("after clearing the description: %+v", p)
		}
		// Full-list replacement: the HTTP sink kept by id (with its URL and headers), a new
		// table sink, the old table sink gone.
		s.Must(200, "PATCH", "/v1/workflows/"+v.ID+wfScope, map[string]any{"sinks": []any{
			map[string]any{"id": v.Sinks[0].ID, "type": "http"},
			map[string]any{"type": "table", "settings": map[string]any{"database": "default", "table": "src"}},
		}}).JSON(t, &p)
		if len(p.Sinks) != 2 || p.Sinks[0].ID != v.Sinks[0].ID || p.Sinks[0].Settings["url"] != sink.URL+"/a" ||
			fmt.Sprint(p.Sinks[0].Settings["header_names"]) != "[A]" || p.Sinks[1].ID == v.Sinks[1].ID || p.Sinks[1].Settings["table"] != "src" {
			t.Fatalf("after replacing sinks: %+v", p.Sinks)
		}
		s.Must(400, "PATCH", "/v1/workflows/"+v.ID+wfScope, map[string]any{"sql": "SELECT 2"})
		s.Must(409, "PATCH", "/v1/workflows/"+v.ID+wfScope, map[string]any{"name": "Rollup Hourly"})
		s.Must(200, "PATCH", "/v1/workflows/"+v.ID+wfScope, map[string]any{"sinks": []any{}}).JSON(t, &p)
		if len(p.Sinks) != 0 {
			t.Fatalf("empty list kept %+v", p.Sinks)
		}
		s.Must(204, "DELETE", "/v1/workflows/"+v.ID+wfScope, nil)
	})

	t.Run("access", func(t *testing.T) {
		admin := login(t, s, "admin", adminPassword)
		s.Must(200, "POST", "/v1/users", map[string]string{"username": "mia", "password": "mia's password"}, "Authorization", "Bearer "+admin)
		joinByInvitation(t, s, admin, "default", "mia", "mia's password", "member")
		member := "Bearer " + login(t, s, "mia", "mia's password")
		ro, _ := createKey(t, s, map[string]any{"name": "ro", "permission": "read_only"})
		rw, _ := createKey(t, s, map[string]any{"name": "rw", "permission": "read_write"})
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE wfr"})
		custom, _ := createKey(t, s, map[string]any{"name": "custom", "database_roles": []string{"wfr"}})
		base := "/v1/workflows/" + wf.ID
		reads := [][2]string{{"GET", "/v1/workflows"}, {"GET", base}, {"GET", base + "/runs"}, {"GET", base + "/logs"}, {"GET", base + "/metrics"}}
		writes := [][2]string{{"POST", "/v1/workflows"}, {"PATCH", base}, {"DELETE", base}, {"POST", base + "/runs"},
			{"POST", base + "/runs/" + first.ID + "/cancel"}}
		for _, c := range reads {
			s.Must(200, c[0], c[1]+wfScope, nil, "Authorization", "Bearer "+admin)
			s.Must(200, c[0], c[1]+wfScope, nil, "Authorization", member)
			s.Must(403, c[0], c[1]+wfScope, nil, "Authorization", "Bearer "+ro)
			s.Must(403, c[0], c[1]+wfScope, nil, "Authorization", "Bearer "+custom)
			s.Must(400, c[0], c[1]+"?organization=default", nil)
			s.Must(400, c[0], c[1]+"?cluster=default", nil, "Authorization", "Bearer "+admin)
			s.Must(401, c[0], c[1]+wfScope, nil, "Authorization", "Bearer nope")
		}
		for _, c := range writes {
			s.Must(403, c[0], c[1]+wfScope, map[string]any{"name": "m", "query": q}, "Authorization", member)
			s.Must(403, c[0], c[1]+wfScope, map[string]any{"name": "m", "query": q}, "Authorization", "Bearer "+rw)
		}
		s.Must(403, "GET", "/v1/workflows?organization=other&cluster=default", nil)
		// An organization administrator runs.
		r := startRun(t, s, wf.ID, "Authorization", "Bearer "+admin)
		waitRun(t, s, wf.ID, r.ID, "completed")
	})

	t.Run("delete", func(t *testing.T) {
		s.Must(204, "DELETE", "/v1/workflows/"+wf.ID+wfScope, nil)
		for _, p := range []string{"", "/runs", "/logs", "/metrics"} {
			s.Must(404, "GET", "/v1/workflows/"+wf.ID+p+wfScope, nil)
		}
		s.Must(404, "POST", "/v1/workflows/"+wf.ID+"/runs"+wfScope, nil)
		s.Must(404, "POST", "/v1/workflows/"+wf.ID+"/runs/"+first.ID+"/cancel"+wfScope, nil)
		s.Must(404, "DELETE", "/v1/workflows/"+wf.ID+wfScope, nil)
		s.Must(404, "GET", "/v1/workflows/not-a-uuid"+wfScope, nil)
	})
}

// engineRunning counts statements in the cluster's engine whose text contains marker,
// asking the engine itself (the API does not expose system.processes).
func engineRunning(t *testing.T, s *svcdtest.Service, marker string) int {
	t.Helper()
	q := "SELECT count() FROM system.processes WHERE position(query, '" + marker + "') > 0 AND position(query, 'system.processes') = 0"
	n, err := strconv.Atoi(engineSQL(t, s, "default", q))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWorkflowCancelStopsTheEngineQuery cancels a run stuck in a long sleep-heavy
// statement: the run ends canceled, the statement leaves the engine, and the
// workflow's other runs and history stay.
func TestWorkflowCancelStopsTheEngineQuery(t *testing.T) {
	t.Parallel() // see TestMain
	s := startWorkflowsSvcd(t)
	quick := createWorkflow(t, s, map[string]any{"name": "quick", "query": map[string]any{"database": "default", "sql": "SELECT 1 AS one"},
		"interval_seconds": nil})
	done := startRun(t, s, quick.ID)
	waitRun(t, s, quick.ID, done.ID, "completed")
	slow := createWorkflow(t, s, map[string]any{"name": "slow", "interval_seconds": nil, "query": map[string]any{"database": "default",
		"sql": "SELECT count() AS n FROM numbers(100000000) WHERE sleepEachRow(0.00004) = 0 AND 'cancel-me' != ''"}})
	run := startRun(t, s, slow.ID)
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		return engineRunning(t, s, "cancel-me") != 0, "the slow statement never showed in system.processes\n" + tailOf(s.Logs(), 3000)
	})
	waitRun(t, s, slow.ID, run.ID, "running")
	s.Must(202, "POST", "/v1/workflows/"+slow.ID+"/runs/"+run.ID+"/cancel"+wfScope, nil)
	s.Must(202, "POST", "/v1/workflows/"+slow.ID+"/runs/"+run.ID+"/cancel"+wfScope, nil) // repeating is safe
	ended := waitRun(t, s, slow.ID, run.ID, "canceled", "completed", "failed")
	if ended.Status != "canceled" || ended.FinishedAt == nil {
		t.Fatalf("the canceled run ended %+v", ended)
	}
	s.Must(202, "POST", "/v1/workflows/"+slow.ID+"/runs/"+run.ID+"/cancel"+wfScope, nil) // already canceled
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		return engineRunning(t, s, "cancel-me") == 0, "the canceled run's statement is still in system.processes"
	})
	entries := waitLogs(t, s, slow.ID, run.ID, 1)
	if entries[0].Status != "canceled" || entries[0].EventType != "workflow.evaluated" {
		t.Fatalf("log of the canceled run %+v", entries)
	}
	// Other runs and history are untouched.
	waitRun(t, s, quick.ID, done.ID, "completed")
	again := startRun(t, s, slow.ID)
	waitRun(t, s, slow.ID, again.ID, "running")
	// Active runs come first, then finished ones.
	var order runsPage
	s.Must(200, "GET", "/v1/workflows/"+slow.ID+"/runs"+wfScope, nil).JSON(t, &order)
	if len(order.Runs) != 2 || order.Runs[0].ID != again.ID || order.Runs[1].ID != run.ID || order.Runs[0].FinishedAt != nil {
		t.Fatalf("runs with one active: %+v", order.Runs)
	}
	s.Must(202, "POST", "/v1/workflows/"+slow.ID+"/runs/"+again.ID+"/cancel"+wfScope, nil)
	waitRun(t, s, slow.ID, again.ID, "canceled")
	var p runsPage
	s.Must(200, "GET", "/v1/workflows/"+slow.ID+"/runs"+wfScope, nil).JSON(t, &p)
	if len(p.Runs) != 2 {
		t.Fatalf("runs after two cancels: %+v", p.Runs)
	}
}

// TestWorkflowTableSinkExactlyOnceAfterWorkerKill kills svcd (the only worker) after an
// evaluation inserted its rows and before Temporal heard it finished; the engine retries
// the evaluation on the restarted worker, and the table still holds each row once.
func TestWorkflowTableSinkExactlyOnceAfterWorkerKill(t *testing.T) {
	t.Parallel() // see TestMain
	hold := filepath.Join(t.TempDir(), "held")
	s := startWorkflowsSvcd(t, "SVC_WORKFLOW_TEST_HOLD_AFTER_SINKS="+hold)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "out"})
	wf := createWorkflow(t, s, map[string]any{"name": "copy", "interval_seconds": nil,
		"query": map[string]any{"database": "default", "sql": "SELECT number AS n, 'row' AS kind FROM numbers(100)"},
		"sinks": []any{map[string]any{"type": "table", "settings": map[string]any{"database": "default", "table": "out"}}}})
	run := startRun(t, s, wf.ID)
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		b, err := os.ReadFile(hold)
		return err == nil && string(b) == run.ID, "the evaluation never reached its sinks\n" + tailOf(s.Logs(), 3000)
	})
	if n := s.Count("out"); n != 100 {
		t.Fatalf("the sink inserted %d rows before the kill, want 100", n)
	}
	s.Kill()
	// The restarted worker runs without the hook; Temporal hands it the evaluation again
	// once the dead worker's task times out.
	env := s.Env[:0:0]
	for _, e := range s.Env {
		if !strings.HasPrefix(e, "SVC_WORKFLOW_TEST_HOLD_AFTER_SINKS=") {
			env = append(env, e)
		}
	}
	s.Env = env
	s.Resume()
	waitRun(t, s, wf.ID, run.ID, "completed")
	entries := waitLogs(t, s, wf.ID, run.ID, 2)
	for _, e := range entries {
		if e.Status != "ok" {
			t.Fatalf("log of the retried run %+v", entries)
		}
	}
	if n := s.Count("out"); n != 100 {
		t.Fatalf("the table holds %d rows after the retried evaluation, want exactly 100", n)
	}
	if d := s.Query("SELECT uniqExact(n) AS d FROM out"); d[0]["d"] != float64(100) {
		t.Fatalf("distinct rows %v", d)
	}
}

// TestWorkflowsSurviveRestarts runs svcd with its embedded Temporal (SQLite under the
// data directory) and restarts both: workflows, schedules and run history are kept.
func TestWorkflowsSurviveRestarts(t *testing.T) {
	t.Parallel() // see TestMain
	svcdtest.Requirements(t)
	testenv.TemporalBin(t)
	s := svcdtest.Start(t, "SVC_TEMPORAL_ADDR=")
	manual := createWorkflow(t, s, map[string]any{"name": "manual", "interval_seconds": nil,
		"query": map[string]any{"database": "default", "sql": "SELECT 1 AS one"}})
	first := startRun(t, s, manual.ID, "Idempotency-Key", "before-restart")
	waitRun(t, s, manual.ID, first.ID, "completed")
	every := createWorkflow(t, s, map[string]any{"name": "every second", "interval_seconds": 1,
		"query": map[string]any{"database": "default", "sql": "SELECT 2 AS two"}})
	paused := createWorkflow(t, s, map[string]any{"name": "paused", "interval_seconds": 1, "enabled": false,
		"query": map[string]any{"database": "default", "sql": "SELECT 3 AS three"}})
	scheduled := func() map[string]bool {
		var p runsPage
		s.Must(200, "GET", "/v1/workflows/"+every.ID+"/runs"+wfScope+"&limit=100", nil).JSON(t, &p)
		ids := map[string]bool{}
		for _, r := range p.Runs {
			if r.Source == "scheduled" && r.Status == "completed" {
				ids[r.ID] = true
			}
		}
		return ids
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		testenv.Eventually(t, 90*time.Second, func() (bool, string) {
			return ok(), what + "\n" + tailOf(s.Logs(), 3000)
		})
	}
	waitFor("scheduled runs", func() bool { return len(scheduled()) >= 2 })
	before := scheduled()
	pid := temporalPID(t, s)
	s.Restart()
	if temporalPID(t, s) == pid {
		t.Fatal("the embedded Temporal did not restart with svcd")
	}
	var list struct{ Workflows []wfView }
	s.Must(200, "GET", "/v1/workflows"+wfScope, nil).JSON(t, &list)
	if len(list.Workflows) != 3 {
		t.Fatalf("workflows after the restart: %+v", list.Workflows)
	}
	// History is kept, the idempotency key still recovers the run, the schedule fires
	// again and the paused one stays paused.
	waitRun(t, s, manual.ID, first.ID, "completed")
	if again := startRun(t, s, manual.ID, "Idempotency-Key", "before-restart"); again.ID != first.ID {
		t.Fatalf("the key started a new run after the restart: %s, want %s", again.ID, first.ID)
	}
	waitFor("scheduled runs after the restart", func() bool {
		now := scheduled()
		for id := range before {
			if !now[id] {
				t.Fatalf("run %s of before the restart is gone", id)
			}
		}
		return len(now) >= len(before)+2
	})
	var v wfView
	s.Must(200, "GET", "/v1/workflows/"+every.ID+wfScope, nil).JSON(t, &v)
	if v.NextRunAt == nil {
		t.Fatalf("next_run_at after the restart: %+v", v)
	}
	var p runsPage
	s.Must(200, "GET", "/v1/workflows/"+paused.ID+"/runs"+wfScope, nil).JSON(t, &p)
	if len(p.Runs) != 0 {
		t.Fatalf("the paused workflow ran: %+v", p.Runs)
	}
}

func temporalPID(t *testing.T, s *svcdtest.Service) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(s.DataDir, "temporal", "temporal.pid"))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestWorkflowsDisabledAnswer503: SVC_WORKFLOWS=off, or a Temporal nobody answers at.
func TestWorkflowsDisabledAnswer503(t *testing.T) {
	svcdtest.Requirements(t)
	for _, env := range []string{"SVC_WORKFLOWS=off", fmt.Sprintf("SVC_TEMPORAL_ADDR=127.0.0.1:%d", freePort(t))} {
		t.Run(env, func(t *testing.T) {
			s := svcdtest.Start(t, env)
			id := "8c7e5f1a-0000-4000-8000-000000000000"
			for _, c := range [][2]string{{"GET", "/v1/workflows"}, {"POST", "/v1/workflows"}, {"GET", "/v1/workflows/" + id},
				{"PATCH", "/v1/workflows/" + id}, {"DELETE", "/v1/workflows/" + id}, {"POST", "/v1/workflows/" + id + "/runs"},
				{"POST", "/v1/workflows/" + id + "/runs/x/cancel"}, {"GET", "/v1/workflows/" + id + "/runs"},
				{"GET", "/v1/workflows/" + id + "/logs"}, {"GET", "/v1/workflows/" + id + "/metrics"}} {
				r := s.Must(503, c[0], c[1]+wfScope, map[string]any{"name": "x"})
				if !strings.Contains(string(r.Body), "workflow") {
					t.Errorf("%s %s: %s", c[0], c[1], r.Body)
				}
			}
			// Everything else works.
			s.Must(200, "GET", "/v1/databases", nil)
		})
	}
}

// TestWorkflowFailuresAreRecorded: a failing statement and an unreachable sink are
// failed evaluations and deliveries in the log and the metrics; the runs complete and
// the schedule keeps firing.
func TestWorkflowFailuresAreRecorded(t *testing.T) {
	s := startWorkflowsSvcd(t, "SVC_URL_IMPORT_ALLOW=127.0.0.1")
	bad := createWorkflow(t, s, map[string]any{"name": "bad sql", "interval_seconds": 1,
		"query": map[string]any{"database": "default", "sql": "SELECT * FROM no_such_table"}})
	closed := fmt.Sprintf("http://127.0.0.1:%d/hook", freePort(t))
	dead := createWorkflow(t, s, map[string]any{"name": "dead sink", "interval_seconds": nil,
		"query": map[string]any{"database": "default", "sql": "SELECT 1 AS one"},
		"sinks": []any{map[string]any{"type": "http", "settings": map[string]any{"url": closed}},
			map[string]any{"type": "table", "settings": map[string]any{"database": "default", "table": "missing"}}}})
	run := startRun(t, s, dead.ID)
	waitRun(t, s, dead.ID, run.ID, "completed")
	entries := waitLogs(t, s, dead.ID, run.ID, 3)
	for _, e := range entries {
		switch {
		case e.EventType == "workflow.evaluated" && (e.Status != "ok" || e.Matches != 1):
			t.Errorf("evaluation %+v", e)
		case e.EventType == "workflow.delivered" && e.SinkType == "http" && (e.Status != "error" || e.Attempts != 4 || strings.Contains(e.Error, closed)):
			t.Errorf("http delivery %+v", e)
		case e.EventType == "workflow.delivered" && e.SinkType == "table" && (e.Status != "error" || !strings.Contains(e.Error, "missing")):
			t.Errorf("table delivery %+v", e)
		}
	}
	var m struct{ Totals map[string]int64 }
	s.Must(200, "GET", "/v1/workflows/"+dead.ID+"/metrics"+wfScope, nil).JSON(t, &m)
	if m.Totals["executions"] != 1 || m.Totals["errors"] != 2 || m.Totals["sink_events"] != 0 || m.Totals["matches"] != 1 {
		t.Errorf("metrics of the dead sink %v", m.Totals)
	}
	// The failing statement fails every second, and the schedule keeps going.
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		var p logsPage
		s.Must(200, "GET", "/v1/workflows/"+bad.ID+"/logs"+wfScope, nil).JSON(t, &p)
		failed := 0
		for _, e := range p.Logs {
			if e.Status == "error" && strings.Contains(e.Error, "no_such_table") {
				failed++
			}
		}
		return failed >= 3, fmt.Sprintf("failed evaluations logged: %+v", p.Logs)
	})
	var runs runsPage
	s.Must(200, "GET", "/v1/workflows/"+bad.ID+"/runs"+wfScope, nil).JSON(t, &runs)
	for _, r := range runs.Runs {
		if r.Status != "completed" && r.Status != "running" {
			t.Fatalf("a run of the failing statement %+v", r)
		}
	}
}

// TestReconcilerRestoresALostSchedule deletes a workflow's schedule behind svcd's back;
// the reconciler (at start, and every 30 s) makes it again.
func TestReconcilerRestoresALostSchedule(t *testing.T) {
	s := startWorkflowsSvcd(t)
	wf := createWorkflow(t, s, map[string]any{"name": "every second", "interval_seconds": 1,
		"query": map[string]any{"database": "default", "sql": "SELECT 1 AS one"}})
	queue := ""
	for _, e := range s.Env {
		if v, ok := strings.CutPrefix(e, "SVC_TEMPORAL_TASK_QUEUE="); ok {
			queue = v
		}
	}
	cl, err := client.Dial(client.Options{HostPort: os.Getenv("TEMPORAL_ADDR"), Namespace: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	h := cl.ScheduleClient().GetHandle(context.Background(), queue+"."+wf.ID)
	if _, err := h.Describe(context.Background()); err != nil {
		t.Fatalf("the workflow's schedule: %v", err)
	}
	if err := h.Delete(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		d, err := h.Describe(context.Background())
		return err == nil && d.Schedule.State != nil && !d.Schedule.State.Paused, fmt.Sprintf("the schedule was not made again: %v", err)
	})
}

// TestWorkflowReadsOnAStoppedCluster: a stopped cluster's workflow logs and metrics
// answer 503 cluster_stopped with the resume hint, as its queries do (issue 25, audit
// row 9: they answered 500 internal_error).
func TestWorkflowReadsOnAStoppedCluster(t *testing.T) {
	s := startWorkflowsSvcd(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	wf := createWorkflow(t, s, map[string]any{"name": "reads", "query": map[string]any{"database": "default", "sql": "SELECT 1"}})
	base := "/v1/workflows/" + wf.ID
	s.Must(200, "GET", base+"/logs"+wfScope, nil)
	a := newClusterAdmin(t, s)
	var list struct{ Clusters []clusterJSON }
	a.do(200, "GET", "/v1/clusters", nil).JSON(t, &list)
	if len(list.Clusters) != 1 {
		t.Fatalf("clusters: %+v", list)
	}
	id := list.Clusters[0].ID
	checkCluster(t, a.cluster(200, "POST", "/v1/clusters/"+id+"/stop", nil), "stopped", false, false, true)
	for _, p := range []string{base + "/logs", base + "/metrics"} {
		var e struct{ Error struct{ Code, Hint string } }
		s.Must(503, "GET", p+wfScope, nil).JSON(t, &e)
		if e.Error.Code != "cluster_stopped" || !strings.Contains(e.Error.Hint, "/v1/clusters/"+id+"/resume") {
			t.Fatalf("GET %s on a stopped cluster: %+v", p, e)
		}
	}
}

// TestPauseAWorkflowWhoseDatabaseIsGone: once the database a workflow's query names is
// deleted, PATCH {"enabled": false} (and other edits that leave the query alone) still
// answers 200 and the schedule stops; an edit of the query checks the database (issue 25,
// audit row 1: every PATCH re-validated query.database, so it could not be paused).
func TestPauseAWorkflowWhoseDatabaseIsGone(t *testing.T) {
	s := startWorkflowsSvcd(t)
	s.Must(200, "POST", "/v1/databases", map[string]string{"name": "gone"})
	wf := createWorkflow(t, s, map[string]any{"name": "orphan", "interval_seconds": 3600,
		"query": map[string]any{"database": "gone", "sql": "SELECT 1"}})
	if !wf.Enabled || wf.NextRunAt == nil {
		t.Fatalf("created: %+v", wf)
	}
	s.Must(200, "DELETE", "/v1/databases/gone", nil)
	base := "/v1/workflows/" + wf.ID + wfScope
	var v wfView
	s.Must(200, "PATCH", base, map[string]any{"enabled": false}).JSON(t, &v)
	if v.Enabled || v.NextRunAt != nil || v.IntervalSeconds == nil || *v.IntervalSeconds != 3600 {
		t.Fatalf("paused: %+v", v)
	}
	s.Must(200, "GET", base, nil).JSON(t, &v)
	if v.Enabled || v.NextRunAt != nil {
		t.Fatalf("paused, read back: %+v", v)
	}
	s.Must(200, "PATCH", base, map[string]any{"description": "kept for the record"})
	r := s.Must(400, "PATCH", base, map[string]any{"query": map[string]any{"sql": "SELECT 2"}})
	if !strings.Contains(string(r.Body), `"invalid_query_database"`) {
		t.Fatalf("query edit against a deleted database: %s", r.Body)
	}
}
