package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

// TestWorkflowCLI drives every workflow command against a real svcd on a real Temporal
// (TEMPORAL_ADDR), parsing every JSON answer: create from a file plus flags (HTTP sink
// with a header, table sink, manual-only), get by name and id, update (and a bad value's
// 400 naming the field), a manual run whose idempotency key returns the same run twice,
// the HTTP delivery, runs paging, cancel of a slow run, logs paging and window, metrics,
// and delete.
func TestWorkflowCLI(t *testing.T) {
	svcdtest.Requirements(t)
	testenv.Temporal(t)
	s := svcdtest.Start(t, "SVC_URL_IMPORT_ALLOW=127.0.0.1", "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	c := newCLI(t, s)
	c.saveLogin(t, config{Token: userToken(t, s), TokenType: tokenOAuth, Org: "default"})

	var mu sync.Mutex
	var got []http.Header
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		w.WriteHeader(204)
	}))
	t.Cleanup(sink.Close)
	c.ok("table", "create", "wf_out", "--database", "default")

	// create: the file gives name and SQL, the flags the rest; the database is --database.
	file := filepath.Join(t.TempDir(), "wf.json")
	def := `{"name": "Hits", "query": {"sql": "SELECT number AS n FROM numbers(3)"}, "interval_seconds": 60}`
	if err := os.WriteFile(file, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	wf := c.ok("workflow", "create", "--file", file, "--database", "default", "--manual", "--description", "three rows",
		"--http-sink", sink.URL+"/hook", "--header", "X-Token: s3cret", "--table-sink", "default.wf_out")
	id, _ := wf["id"].(string)
	sinks, _ := wf["sinks"].([]any)
	if id == "" || wf["name"] != "hits" || wf["interval_seconds"] != nil || wf["enabled"] != true || wf["description"] != "three rows" ||
		field(wf["query"], "database") != "default" || len(sinks) != 2 || field(sinks[0], "type") != "http" || field(sinks[1], "type") != "table" ||
		fmt.Sprint(field(field(sinks[0], "settings"), "header_names")) != "[X-Token]" || field(field(sinks[1], "settings"), "table") != "wf_out" {
		t.Fatalf("workflow create: %v", wf)
	}
	if strings.Contains(fmt.Sprint(wf), "s3cret") {
		t.Fatalf("a header value was shown: %v", wf)
	}
	if v := c.ok("workflow", "get", "HITS"); v["id"] != id || v["next_run_at"] != nil {
		t.Fatalf("workflow get by name: %v", v)
	}
	if v := c.ok("workflow", "get", id); v["name"] != "hits" {
		t.Fatalf("workflow get by id: %v", v)
	}
	if ws := names(c.ok("workflow", "list"), "workflows"); strings.Join(ws, ",") != "hits" {
		t.Fatalf("workflow list: %v", ws)
	}
	c.fails(2, "workflow", "create", "--name", "x", "--sql", "SELECT 1", "--manual", "--interval-seconds", "5")
	c.fails(2, "workflow", "create", "--name", "x", "--sql", "SELECT 1", "--table-sink", "no_dot")
	if e := c.fails(1, "workflow", "get", "nope"); e["status"] != 404.0 {
		t.Fatalf("get of an unknown workflow: %v", e)
	}

	// update: paused on a schedule, then manual-only again; sinks untouched without sink flags.
	v := c.ok("workflow", "update", "hits", "--interval-seconds", "3600", "--enabled=false", "--description", "")
	if v["interval_seconds"] != 3600.0 || v["enabled"] != false || v["description"] != nil || v["revision"] != 2.0 || len(v["sinks"].([]any)) != 2 {
		t.Fatalf("workflow update: %v", v)
	}
	e := c.fails(1, "workflow", "update", "hits", "--interval-seconds", "0")
	if e["status"] != 400.0 || !strings.Contains(fmt.Sprint(field(e["error"], "message")), "interval_seconds") {
		t.Fatalf("bad interval: %v", e)
	}
	if v := c.ok("workflow", "update", id, "--manual", "--enabled"); v["interval_seconds"] != nil || v["enabled"] != true || v["revision"] != 3.0 {
		t.Fatalf("workflow update to manual-only: %v", v)
	}
	c.fails(2, "workflow", "update", "hits")

	// run: the same idempotency key returns the same run.
	r1 := c.ok("workflow", "run", "hits", "--idempotency-key", "cli-run-1")
	r2 := c.ok("workflow", "run", "hits", "--idempotency-key", "cli-run-1")
	run, _ := r1["id"].(string)
	if run == "" || r2["id"] != run || r1["workflow_id"] != id || r1["source"] != "manual" {
		t.Fatalf("runs with one key: %v, %v", r1, r2)
	}
	status := func(wfRef, runID string) string {
		for _, r := range c.ok("workflow", "runs", wfRef)["runs"].([]any) {
			if field(r, "id") == runID {
				return fmt.Sprint(field(r, "status"))
			}
		}
		return ""
	}
	waitUntil(t, "the run to complete", 2*time.Minute, func() bool { return status("hits", run) == "completed" })
	waitUntil(t, "the HTTP delivery", time.Minute, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 0 })
	mu.Lock()
	if got[0].Get("X-Token") != "s3cret" {
		t.Fatalf("delivery headers %v", got[0])
	}
	mu.Unlock()
	if e := c.fails(1, "workflow", "cancel", "hits", run); e["status"] != 409.0 {
		t.Fatalf("cancel of a completed run: %v", e)
	}

	// runs paging: two runs, one per page.
	other := c.ok("workflow", "run", id)["id"]
	waitUntil(t, "the second run to complete", 2*time.Minute, func() bool { return status(id, fmt.Sprint(other)) == "completed" })
	p1 := c.ok("workflow", "runs", "hits", "--limit", "1")
	cur, _ := p1["next_cursor"].(string)
	if len(p1["runs"].([]any)) != 1 || cur == "" {
		t.Fatalf("runs page 1: %v", p1)
	}
	p2 := c.ok("workflow", "runs", "hits", "--limit", "1", "--cursor", cur)
	if rs := p2["runs"].([]any); len(rs) != 1 || field(rs[0], "id") == field(p1["runs"].([]any)[0], "id") {
		t.Fatalf("runs page 2: %v after %v", p2, p1)
	}
	if e := c.fails(1, "workflow", "runs", "hits", "--limit", "0"); e["status"] != 400.0 {
		t.Fatalf("runs --limit 0: %v", e)
	}

	// cancel a slow run: it ends canceled.
	slow := c.ok("workflow", "create", "--name", "slow", "--manual", "--database", "default",
		"--sql", "SELECT count() AS n FROM numbers(100000000) WHERE sleepEachRow(0.00004) = 0")
	slowRun := fmt.Sprint(c.ok("workflow", "run", "slow")["id"])
	waitUntil(t, "the slow run to be listed", time.Minute, func() bool { return status("slow", slowRun) != "" })
	if v := c.ok("workflow", "cancel", "slow", slowRun); v == nil {
		t.Fatal("cancel answered nothing")
	}
	waitUntil(t, "the slow run to end", 2*time.Minute, func() bool { st := status("slow", slowRun); return st != "running" && st != "" })
	if st := status("slow", slowRun); st != "canceled" {
		t.Fatalf("the canceled run ended %s", st)
	}

	// logs: both runs evaluated and delivered to two sinks (6 entries); pages of 4.
	var all map[string]any
	waitUntil(t, "the log entries", time.Minute, func() bool {
		all = c.ok("workflow", "logs", "hits", "--limit", "200")
		return len(all["logs"].([]any)) >= 6
	})
	entries := all["logs"].([]any)
	if field(entries[0], "event_type") == nil || field(entries[0], "run_id") == nil {
		t.Fatalf("logs: %v", all)
	}
	from, to := fmt.Sprintf("%.0f", all["from"]), time.UnixMilli(int64(all["to"].(float64))).UTC().Format(time.RFC3339Nano)
	pg := c.ok("workflow", "logs", "hits", "--limit", "4", "--from", from, "--to", to)
	cur, _ = pg["next_cursor"].(string)
	if len(pg["logs"].([]any)) != 4 || cur == "" || fmt.Sprintf("%.0f", pg["from"]) != from {
		t.Fatalf("logs page 1: %v", pg)
	}
	pg = c.ok("workflow", "logs", "hits", "--limit", "4", "--from", from, "--to", to, "--cursor", cur)
	if n := len(pg["logs"].([]any)); n != len(entries)-4 {
		t.Fatalf("logs page 2 has %d entries, want %d: %v", n, len(entries)-4, pg)
	}
	c.fails(2, "workflow", "logs", "hits", "--from", "yesterday")

	// metrics: the two evaluations with three matches each, four deliveries.
	m := c.ok("workflow", "metrics", "hits", "--from", from)
	if tot := m["totals"]; field(tot, "executions") != 2.0 || field(tot, "matches") != 6.0 || field(tot, "sink_events") != 4.0 || field(tot, "errors") != 0.0 {
		t.Fatalf("metrics: %v", m)
	}

	// delete: gone afterwards.
	c.ok("workflow", "delete", "hits")
	c.ok("workflow", "delete", fmt.Sprint(slow["id"]))
	if e := c.fails(1, "workflow", "get", id); e["status"] != 404.0 {
		t.Fatalf("get after delete: %v", e)
	}
	if v := c.ok("workflow", "list"); len(v["workflows"].([]any)) != 0 {
		t.Fatalf("list after delete: %v", v)
	}
}
