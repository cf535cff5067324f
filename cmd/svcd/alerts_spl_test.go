package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/infra/testenv"
)

// TestSPLAlertsEndToEnd: alerts whose query is a log search over events sent through
// HEC. A stats search is one group per BY value and fires only for the host over the
// threshold, after for; a plain search is counted; both resolve when their events leave
// the window relative to the evaluation, and every transition is notified once.
func TestSPLAlertsEndToEnd(t *testing.T) {
	t.Parallel() // see TestMain
	s := startWorkflowsSvcd(t, "SVC_URL_IMPORT_ALLOW=127.0.0.1", "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	rcv := newAlertReceiver(t)
	stats := map[string]any{"spl": "level=error | stats count BY host", "earliest": "-40s"}
	body := func(name string, q map[string]any, cond map[string]any) map[string]any {
		return map[string]any{"name": name, "query": q, "condition": cond, "interval_seconds": 1, "for": "2s",
			"annotations":  map[string]any{"summary": "{{ $labels.host }} logged {{ $value }} errors"},
			"destinations": []any{map[string]any{"type": "webhook", "url": rcv.URL + "/" + strings.ReplaceAll(name, " ", "-")}}}
	}
	over2 := map[string]any{"op": ">", "threshold": 2}

	// A search alert needs what a search needs: the log-search app.
	r := s.Must(403, "POST", "/v1/alerts"+wfScope, body("errors by host", stats, over2))
	if !strings.Contains(string(r.Body), "app_not_installed") {
		t.Fatalf("without the app: %s", r.Body)
	}
	installApp(t, s, "logsearch")

	t.Run("validation", func(t *testing.T) {
		f := func(q map[string]any, status int, code, field, inMessage string) {
			t.Helper()
			r, err := s.Do("POST", "/v1/alerts"+wfScope, body("bad", q, over2))
			if err != nil {
				t.Fatal(err)
			}
			var e struct {
				Error struct{ Code, Field, Message string }
			}
			_ = json.Unmarshal(r.Body, &e)
			if r.Status != status || e.Error.Code != code || e.Error.Field != field || !strings.Contains(e.Error.Message, inMessage) {
				t.Errorf("%v: %d %s, want %d %s on %s saying %q", q, r.Status, r.Body, status, code, field, inMessage)
			}
		}
		f(map[string]any{"spl": "level=error | stats count BY"}, 400, "spl_syntax_error", "query.spl", "1:")
		f(map[string]any{"spl": "level=error | transaction host"}, 400, "spl_unsupported", "query.spl", "1:15")
		f(map[string]any{"spl": "level=error", "earliest": "-5q"}, 400, "spl_invalid_time_range", "query.earliest", "-5q")
		f(map[string]any{"spl": "level=error", "earliest": "-1m", "latest": "-2m"}, 400, "spl_invalid_time_range", "query.earliest", "before latest")
		f(map[string]any{"sql": "SELECT 1 AS value", "earliest": "-5m"}, 400, "invalid_query_earliest", "query.earliest", "time window of a search")
	})

	var byHost, count alertView
	s.Must(201, "POST", "/v1/alerts"+wfScope, body("errors by host", stats, over2)).JSON(t, &byHost)
	s.Must(201, "POST", "/v1/alerts"+wfScope, body("a errors", map[string]any{"spl": "level=error host=a", "earliest": "-40s"}, over2)).JSON(t, &count)
	var got struct {
		Query map[string]string
	}
	s.Must(200, "GET", "/v1/alerts/"+byHost.ID+wfScope, nil).JSON(t, &got)
	if got.Query["spl"] != stats["spl"] || got.Query["earliest"] != "-40s" || got.Query["latest"] != "now" {
		t.Fatalf("query shown as %v", got.Query)
	}
	// PATCH validates the search as create does.
	r = s.Must(400, "PATCH", "/v1/alerts/"+byHost.ID+wfScope, map[string]any{"query": map[string]any{"spl": "| stats nosuch(x)"}})
	if !strings.Contains(string(r.Body), "query.spl") {
		t.Fatalf("patch: %s", r.Body)
	}

	// Three errors of host a, one of b, one info line of a: only a crosses 2.
	now := time.Now().Unix()
	var hec strings.Builder
	for i, e := range []struct{ host, level string }{{"a", "error"}, {"a", "error"}, {"b", "error"}, {"a", "error"}, {"a", "info"}} {
		fmt.Fprintf(&hec, `{"time": %d, "host": %q, "event": {"level": %q, "n": %d}}`+"\n", now, e.host, e.level, i)
	}
	s.Must(200, "POST", "/services/collector/event", hec.String(), "Authorization", "Splunk "+s.AdminKey)
	s.WaitCount("logsearch_events", 5, time.Minute)

	a := map[string]string{"host": "a"}
	pending := waitTransition(t, s, byHost.ID, "host", "a", "pending")
	firing := waitTransition(t, s, byHost.ID, "host", "a", "firing")
	if firing.At.Sub(pending.At) < 2*time.Second {
		t.Fatalf("fired %v after pending, before for (2s)", firing.At.Sub(pending.At))
	}
	hook := rcv.waitFor(t, s, "/errors-by-host", a, 1)
	if hook[0].Body["status"] != "firing" || hook[0].Body["value"] != 3.0 ||
		hook[0].Body["annotations"].(map[string]any)["summary"] != "a logged 3 errors" {
		t.Fatalf("webhook body %s", hook[0].Raw)
	}
	// The plain search is counted: one group without labels, its value the events.
	cnt := rcv.waitFor(t, s, "/a-errors", nil, 1)
	if cnt[0].Body["status"] != "firing" || cnt[0].Body["value"] != 3.0 || len(cnt[0].Body["labels"].(map[string]any)) != 0 {
		t.Fatalf("count alert body %s", cnt[0].Raw)
	}

	// Forty seconds after the events, they have left both windows: both resolve.
	waitTransition(t, s, byHost.ID, "host", "a", "resolved")
	hook = rcv.waitFor(t, s, "/errors-by-host", a, 2)
	cnt = rcv.waitFor(t, s, "/a-errors", nil, 2)
	if hook[1].Body["status"] != "resolved" || cnt[1].Body["status"] != "resolved" {
		t.Fatalf("after the window: %s, %s", hook[1].Raw, cnt[1].Raw)
	}
	// A later event proves later evaluations ran; none notified a transition twice.
	line := fmt.Sprintf(`{"time": %d, "host": "c", "event": {"level": "error"}}`+"\n", time.Now().Unix())
	s.Must(200, "POST", "/services/collector/event", strings.Repeat(line, 3), "Authorization", "Splunk "+s.AdminKey)
	rcv.waitFor(t, s, "/errors-by-host", map[string]string{"host": "c"}, 1)
	for path, labels := range map[string]map[string]string{"/errors-by-host": a, "/a-errors": nil} {
		got := rcv.requests(path, labels)
		keys := map[string]bool{}
		for _, r := range got {
			keys[r.Header.Get("Idempotency-Key")] = true
		}
		if len(got) != 2 || len(keys) != 2 {
			t.Errorf("%s: %d notifications (%d keys), want firing and resolved once each", path, len(got), len(keys))
		}
	}
	if n := len(rcv.requests("/errors-by-host", map[string]string{"host": "b"})); n != 0 {
		t.Errorf("b (1 error) was notified %d times", n)
	}
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		var v alertView
		s.Must(200, "GET", "/v1/alerts/"+count.ID+wfScope, nil).JSON(t, &v)
		return v.State == "resolved" || v.State == "inactive", "count alert state " + v.State
	})
}
