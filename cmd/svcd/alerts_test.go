package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/prompb"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

// alertReceiver is a real HTTP receiver: it keeps every request's headers and raw body.
type alertReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []alertRequest
}

type alertRequest struct {
	Path   string
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

func newAlertReceiver(t *testing.T) *alertReceiver {
	ar := &alertReceiver{}
	ar.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		ar.mu.Lock()
		ar.got = append(ar.got, alertRequest{Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw, Body: body})
		ar.mu.Unlock()
		w.WriteHeader(202)
	}))
	t.Cleanup(ar.Close)
	return ar
}

// requests returns the requests to path whose labels include want.
func (ar *alertReceiver) requests(path string, want map[string]string) []alertRequest {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	var out []alertRequest
	for _, r := range ar.got {
		if r.Path != path {
			continue
		}
		labels, _ := r.Body["labels"].(map[string]any)
		if labels == nil {
			if pl, ok := r.Body["payload"].(map[string]any); ok {
				if cd, ok := pl["custom_details"].(map[string]any); ok {
					labels, _ = cd["labels"].(map[string]any)
				}
			}
		}
		ok := true
		for k, v := range want {
			if labels[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

func (ar *alertReceiver) waitFor(t *testing.T, s *svcdtest.Service, path string, labels map[string]string, n int) []alertRequest {
	t.Helper()
	var got []alertRequest
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		got = ar.requests(path, labels)
		return len(got) >= n, fmt.Sprintf("%d of %d notifications to %s for %v\n%s", len(got), n, path, labels, tailOf(s.Logs(), 3000))
	})
	return got
}

type alertView struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	State         string     `json:"state"`
	Revision      int        `json:"revision"`
	ForSeconds    int        `json:"for_seconds"`
	SilencedUntil *time.Time `json:"silenced_until"`
	Groups        []struct {
		Labels   map[string]string `json:"labels"`
		State    string            `json:"state"`
		ActiveAt *time.Time        `json:"active_at"`
	} `json:"groups"`
	Destinations []map[string]any `json:"destinations"`
}

type alertHistoryEntry struct {
	ID       string            `json:"id"`
	Type     string            `json:"event_type"`
	At       time.Time         `json:"at"`
	Labels   map[string]string `json:"labels"`
	From, To string
	Silenced bool   `json:"silenced"`
	Trans    string `json:"transition_id"`
	Error    string `json:"error"`
}

func alertHistory(t *testing.T, s *svcdtest.Service, id string) []alertHistoryEntry {
	t.Helper()
	var h struct{ History []alertHistoryEntry }
	s.Must(200, "GET", "/v1/alerts/"+id+"/history"+wfScope+"&limit=1000", nil).JSON(t, &h)
	return h.History
}

// waitTransition waits until the history shows a transition to `to` of the group with
// labels host=host, and returns it.
func waitTransition(t *testing.T, s *svcdtest.Service, id, key, val, to string) alertHistoryEntry {
	t.Helper()
	var found alertHistoryEntry
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		h := alertHistory(t, s, id)
		for _, e := range h {
			if e.Type == "alert.transitioned" && e.To == to && e.Labels[key] == val {
				found = e
				return true, ""
			}
		}
		return false, fmt.Sprintf("no transition of %s=%s to %s: %+v\n%s", key, val, to, h, tailOf(s.Logs(), 3000))
	})
	return found
}

func TestAlertsEndToEnd(t *testing.T) {
	t.Parallel() // see TestMain
	s := startWorkflowsSvcd(t, "SVC_URL_IMPORT_ALLOW=127.0.0.1")
	rcv := newAlertReceiver(t)
	const secret = "whsec-0123456789abcdef"
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "load"})
	insert := func(rows string, total int) {
		t.Helper()
		s.Must(202, "POST", "/v1/tables/load", rows)
		s.WaitCount("load", total, time.Minute)
	}
	insert(`[{"host":"a","v":9,"ts":1},{"host":"b","v":1,"ts":1}]`, 2)
	// The latest value per host.
	q := map[string]any{"database": "default", "sql": "SELECT host, argMax(v, ts) AS value FROM load GROUP BY host"}
	dests := []any{
		map[string]any{"type": "webhook", "url": rcv.URL + "/hook", "secret": secret},
		map[string]any{"type": "slack", "url": rcv.URL + "/slack"},
		map[string]any{"type": "pagerduty", "url": rcv.URL + "/pd", "routing_key": "rk-secret-1"},
	}
	cond := map[string]any{"op": ">", "threshold": 5}

	t.Run("validation", func(t *testing.T) {
		cases := []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"query": q, "condition": cond}, "name"},
			{map[string]any{"name": "x", "condition": cond}, "query"},
			{map[string]any{"name": "x", "query": q}, "condition"},
			{map[string]any{"name": "x", "query": map[string]any{"database": "default"}, "condition": cond}, "query"},
			{map[string]any{"name": "x", "query": map[string]any{"database": "nope", "sql": "SELECT 1"}, "condition": cond}, "query.database"},
			{map[string]any{"name": "x", "query": map[string]any{"sql": "SELECT 1", "promql": "up"}, "condition": cond}, "query"},
			{map[string]any{"name": "x", "query": q, "condition": map[string]any{"op": "~", "threshold": 1}}, "condition.op"},
			{map[string]any{"name": "x", "query": q, "condition": map[string]any{"op": ">", "threshold": "1"}}, "condition.threshold"},
			{map[string]any{"name": "x", "query": q, "condition": map[string]any{"op": ">", "threshold": 1, "of": "rows"}}, "condition.of"},
			{map[string]any{"name": "x", "query": q, "condition": cond, "for": "5 minutes"}, "for"},
			{map[string]any{"name": "x", "query": q, "condition": cond, "interval_seconds": 0}, "interval_seconds"},
			{map[string]any{"name": "x", "query": q, "condition": cond, "labels": map[string]any{"bad-name": "x"}}, "labels.bad-name"},
			{map[string]any{"name": "x", "query": q, "condition": cond, "annotations": map[string]any{"summary": "{{ $labels.x "}}, "annotations.summary"},
			{map[string]any{"name": "x", "query": q, "condition": cond, "destinations": []any{map[string]any{"type": "email", "url": rcv.URL}}}, "destinations[0].type"},
			{map[string]any{"name": "x", "query": q, "condition": cond, "destinations": []any{map[string]any{"type": "webhook", "url": "http://10.1.2.3/h"}}}, "destinations[0].url"},
			{map[string]any{"name": "x", "query": q, "condition": cond, "destinations": []any{map[string]any{"type": "webhook", "url": rcv.URL, "secret": "short"}}}, "destinations[0].secret"},
			{map[string]any{"name": "x", "query": q, "condition": cond, "destinations": []any{map[string]any{"type": "pagerduty"}}}, "destinations[0].routing_key"},
			{map[string]any{"name": "x", "query": q, "condition": cond, "severity": "page"}, "severity"},
		}
		for _, c := range cases {
			r, err := s.Do("POST", "/v1/alerts"+wfScope, c.body)
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
			if strings.Contains(string(r.Body), "10.1.2.3") {
				t.Errorf("a destination URL was quoted: %s", r.Body)
			}
		}
	})

	var al alertView
	t.Run("create", func(t *testing.T) {
		s.Must(201, "POST", "/v1/alerts"+wfScope, map[string]any{"name": "High Load", "query": q, "condition": cond,
			"interval_seconds": 1, "for": "3s", "labels": map[string]any{"severity": "critical"},
			"annotations": map[string]any{"summary": "{{ $labels.host }} load is {{ $value }}"}, "destinations": dests}).JSON(t, &al)
		if al.Name != "high load" || al.ForSeconds != 3 || len(al.Destinations) != 3 {
			t.Fatalf("%+v", al)
		}
		r := s.Must(200, "GET", "/v1/alerts/"+al.ID+wfScope, nil)
		for _, leak := range []string{secret, "rk-secret-1", rcv.URL} {
			if strings.Contains(string(r.Body), leak) {
				t.Fatalf("the answer shows a secret: %s", r.Body)
			}
		}
		var list struct{ Alerts []alertView }
		s.Must(200, "GET", "/v1/alerts"+wfScope, nil).JSON(t, &list)
		if len(list.Alerts) != 1 || list.Alerts[0].ID != al.ID {
			t.Fatalf("list: %+v", list)
		}
		s.Must(409, "POST", "/v1/alerts"+wfScope, map[string]any{"name": "high load", "query": q, "condition": cond})
	})

	a := map[string]string{"host": "a"}
	t.Run("fires only after for", func(t *testing.T) {
		pending := waitTransition(t, s, al.ID, "host", "a", "pending")
		firing := waitTransition(t, s, al.ID, "host", "a", "firing")
		if firing.At.Sub(pending.At) < 3*time.Second {
			t.Fatalf("fired %v after pending, before for (3s)", firing.At.Sub(pending.At))
		}
		got := rcv.waitFor(t, s, "/hook", a, 1)
		if got[0].Body["status"] != "firing" || got[0].Body["annotations"].(map[string]any)["summary"] != "a load is 9" {
			t.Fatalf("webhook body %s", got[0].Raw)
		}
		// HMAC verifies over the raw body.
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(got[0].Raw)
		if want := "sha256=" + hex.EncodeToString(m.Sum(nil)); got[0].Header.Get("X-Svc-Signature") != want {
			t.Fatalf("signature %q, want %q", got[0].Header.Get("X-Svc-Signature"), want)
		}
		pd := rcv.waitFor(t, s, "/pd", a, 1)
		if pd[0].Body["event_action"] != "trigger" || pd[0].Body["routing_key"] != "rk-secret-1" || pd[0].Body["dedup_key"] == "" {
			t.Fatalf("pagerduty body %s", pd[0].Raw)
		}
		rcv.waitFor(t, s, "/slack", nil, 1)
		if h := rcv.requests("/hook", map[string]string{"host": "b"}); len(h) != 0 {
			t.Fatalf("b never crossed the threshold: %s", h[0].Raw)
		}
	})

	t.Run("resolves once when the condition clears", func(t *testing.T) {
		insert(`[{"host":"a","v":1,"ts":2}]`, 3)
		waitTransition(t, s, al.ID, "host", "a", "resolved")
		got := rcv.waitFor(t, s, "/hook", a, 2)
		if got[1].Body["status"] != "resolved" {
			t.Fatalf("second notification %s", got[1].Raw)
		}
		pd := rcv.waitFor(t, s, "/pd", a, 2)
		if pd[1].Body["event_action"] != "resolve" || pd[1].Body["dedup_key"] != pd[0].Body["dedup_key"] {
			t.Fatalf("pagerduty resolve %s after %s", pd[1].Raw, pd[0].Raw)
		}
		// Another group firing later proves later evaluations ran: a's two transitions
		// were still notified once each.
		insert(`[{"host":"b","v":9,"ts":2}]`, 4)
		rcv.waitFor(t, s, "/hook", map[string]string{"host": "b"}, 1)
		got = rcv.requests("/hook", a)
		keys := map[string]bool{}
		for _, r := range got {
			keys[r.Header.Get("Idempotency-Key")] = true
		}
		if len(got) != 2 || len(keys) != 2 {
			t.Fatalf("a was notified %d times (%d keys), want 2: firing and resolved", len(got), len(keys))
		}
	})

	t.Run("silence holds", func(t *testing.T) {
		until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		var v alertView
		s.Must(200, "POST", "/v1/alerts/"+al.ID+"/silence"+wfScope, map[string]any{"until": until}).JSON(t, &v)
		if v.SilencedUntil == nil {
			t.Fatalf("silence not shown: %+v", v)
		}
		s.Must(400, "POST", "/v1/alerts/"+al.ID+"/silence"+wfScope, map[string]any{"until": "tomorrow"})
		insert(`[{"host":"c","v":9,"ts":1}]`, 5)
		tr := waitTransition(t, s, al.ID, "host", "c", "firing")
		if !tr.Silenced {
			t.Fatalf("c fired during a silence without being marked silenced: %+v", tr)
		}
		// Lift it; d's notification then proves evaluations after c's went on.
		s.Must(200, "POST", "/v1/alerts/"+al.ID+"/silence"+wfScope, map[string]any{"until": nil})
		insert(`[{"host":"d","v":9,"ts":1}]`, 6)
		rcv.waitFor(t, s, "/hook", map[string]string{"host": "d"}, 1)
		if n := len(rcv.requests("/hook", map[string]string{"host": "c"})); n != 0 {
			t.Fatalf("c was notified %d times during its silence", n)
		}
	})

	t.Run("patch and delete", func(t *testing.T) {
		var v alertView
		s.Must(200, "PATCH", "/v1/alerts/"+al.ID+wfScope, map[string]any{"enabled": false, "destinations": []any{
			map[string]any{"id": al.Destinations[0]["id"]}}}).JSON(t, &v)
		if v.Revision <= al.Revision || len(v.Destinations) != 1 || v.Destinations[0]["secret_configured"] != true {
			t.Fatalf("patched %+v", v)
		}
		s.Must(204, "DELETE", "/v1/alerts/"+al.ID+wfScope, nil)
		s.Must(404, "GET", "/v1/alerts/"+al.ID+wfScope, nil)
		s.Must(404, "GET", "/v1/alerts/"+al.ID+"/history"+wfScope, nil)
	})

	// No secret reached svcd's log.
	for _, leak := range []string{secret, "rk-secret-1", rcv.URL} {
		if strings.Contains(s.Logs(), leak) {
			t.Errorf("svcd's log shows a destination secret")
		}
	}
}

// TestPromQLAlertPerSeries: a PromQL alert holds one state per series; only the series
// over the threshold fires, notified with its own labels.
func TestPromQLAlertPerSeries(t *testing.T) {
	s := startWorkflowsSvcd(t, "SVC_URL_IMPORT_ALLOW=127.0.0.1", "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	installApp(t, s, "prometheus")
	rcv := newAlertReceiver(t)
	now := time.Now().UnixMilli()
	series := func(inst string, v float64) prompb.TimeSeries {
		return prompb.TimeSeries{Labels: []prompb.Label{{Name: "__name__", Value: "alert_load"}, {Name: "instance", Value: inst}},
			Samples: []prompb.Sample{{Value: v, Timestamp: now}}}
	}
	s.WritePrometheus(s.AdminKey, "default", []prompb.TimeSeries{series("a", 9), series("b", 1), series("c", 7)})
	var al alertView
	s.Must(201, "POST", "/v1/alerts"+wfScope, map[string]any{"name": "prom load", "interval_seconds": 1,
		"query": map[string]any{"promql": "alert_load"}, "condition": map[string]any{"op": ">", "threshold": 5},
		"destinations": []any{map[string]any{"type": "webhook", "url": rcv.URL + "/hook"}}}).JSON(t, &al)
	rcv.waitFor(t, s, "/hook", map[string]string{"instance": "a"}, 1)
	rcv.waitFor(t, s, "/hook", map[string]string{"instance": "c"}, 1)
	var v alertView
	s.Must(200, "GET", "/v1/alerts/"+al.ID+wfScope, nil).JSON(t, &v)
	firing := map[string]bool{}
	for _, g := range v.Groups {
		if g.State == "firing" {
			firing[g.Labels["instance"]] = true
		}
	}
	if v.State != "firing" || len(firing) != 2 || !firing["a"] || !firing["c"] {
		t.Fatalf("groups %+v", v.Groups)
	}
	if n := len(rcv.requests("/hook", map[string]string{"instance": "b"})); n != 0 {
		t.Fatalf("b (1, under 5) was notified %d times", n)
	}

	// Grafana's view: /rules and /alerts in Prometheus's shape.
	var rules struct {
		Status string
		Data   struct {
			Groups []struct {
				Name     string
				Interval float64
				Rules    []struct {
					Name, Query, State, Health, Type string
					Duration                         float64
					Alerts                           []struct {
						Labels map[string]string
						State  string
						Value  string
					}
				}
			}
		}
	}
	s.Must(200, "GET", "/prometheus/api/v1/rules?database=default", nil).JSON(t, &rules)
	if rules.Status != "success" || len(rules.Data.Groups) != 1 || len(rules.Data.Groups[0].Rules) != 1 {
		t.Fatalf("rules: %+v", rules)
	}
	r := rules.Data.Groups[0].Rules[0]
	if r.Name != "prom load" || r.Query != "alert_load" || r.Type != "alerting" || r.State != "firing" || r.Health != "ok" || len(r.Alerts) != 2 {
		t.Fatalf("rule: %+v", r)
	}
	var active struct {
		Status string
		Data   struct {
			Alerts []struct {
				Labels map[string]string
				State  string
			}
		}
	}
	s.Must(200, "GET", "/prometheus/api/v1/alerts?database=default", nil).JSON(t, &active)
	if active.Status != "success" || len(active.Data.Alerts) != 2 || active.Data.Alerts[0].State != "firing" {
		t.Fatalf("alerts: %+v", active)
	}
}

// TestAlertsSurviveRestarts: a firing alert, svcd killed (and its embedded Temporal with
// it) and started again: the firing transition is not notified again, and the resolve
// that follows is notified once.
func TestAlertsSurviveRestarts(t *testing.T) {
	t.Parallel() // see TestMain
	svcdtest.Requirements(t)
	testenv.TemporalBin(t)
	s := svcdtest.Start(t, "SVC_TEMPORAL_ADDR=", "SVC_URL_IMPORT_ALLOW=127.0.0.1")
	rcv := newAlertReceiver(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "load"})
	s.Must(202, "POST", "/v1/tables/load", `[{"host":"a","v":9,"ts":1}]`)
	s.WaitCount("load", 1, time.Minute)
	var al alertView
	s.Must(201, "POST", "/v1/alerts"+wfScope, map[string]any{"name": "restart", "interval_seconds": 1,
		"query":        map[string]any{"sql": "SELECT host, argMax(v, ts) AS value FROM load GROUP BY host"},
		"condition":    map[string]any{"op": ">", "threshold": 5},
		"destinations": []any{map[string]any{"type": "webhook", "url": rcv.URL + "/hook"}}}).JSON(t, &al)
	a := map[string]string{"host": "a"}
	rcv.waitFor(t, s, "/hook", a, 1)
	s.Kill()
	s.Resume()
	// b firing after the restart proves evaluations run again; a was not re-notified.
	s.Must(202, "POST", "/v1/tables/load", `[{"host":"b","v":9,"ts":1}]`)
	s.WaitCount("load", 2, time.Minute)
	rcv.waitFor(t, s, "/hook", map[string]string{"host": "b"}, 1)
	if n := len(rcv.requests("/hook", a)); n != 1 {
		t.Fatalf("a's firing was notified %d times across the restart", n)
	}
	s.Must(202, "POST", "/v1/tables/load", `[{"host":"a","v":1,"ts":2}]`)
	s.WaitCount("load", 3, time.Minute)
	got := rcv.waitFor(t, s, "/hook", a, 2)
	if got[1].Body["status"] != "resolved" {
		t.Fatalf("after the restart: %s", got[1].Raw)
	}
	s.Must(202, "POST", "/v1/tables/load", `[{"host":"c","v":9,"ts":1}]`)
	s.WaitCount("load", 4, time.Minute)
	rcv.waitFor(t, s, "/hook", map[string]string{"host": "c"}, 1)
	if n := len(rcv.requests("/hook", a)); n != 2 {
		t.Fatalf("a was notified %d times, want firing and resolved once each", n)
	}
}

// TestAlertDeliveryRetriedThenRecorded: a receiver that fails makes the delivery fail,
// recorded in the history; the next evaluation delivers the same transition (same
// Idempotency-Key), and once it is accepted it is not sent again.
func TestAlertDeliveryRetriedThenRecorded(t *testing.T) {
	s := startWorkflowsSvcd(t, "SVC_URL_IMPORT_ALLOW=127.0.0.1")
	var mu sync.Mutex
	got := map[string][]string{} // Idempotency-Keys by host
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Labels map[string]string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		host := body.Labels["host"]
		got[host] = append(got[host], r.Header.Get("Idempotency-Key"))
		n := len(got[host])
		mu.Unlock()
		if host == "a" && n <= 3 { // the first evaluation's three attempts
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(204)
	}))
	t.Cleanup(srv.Close)
	requests := func(host string) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got[host]...)
	}
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "load"})
	s.Must(202, "POST", "/v1/tables/load", `[{"host":"a","v":9}]`)
	s.WaitCount("load", 1, time.Minute)
	var al alertView
	s.Must(201, "POST", "/v1/alerts"+wfScope, map[string]any{"name": "flaky receiver", "interval_seconds": 1,
		"query": map[string]any{"sql": "SELECT host, max(v) AS value FROM load GROUP BY host"}, "condition": map[string]any{"op": ">", "threshold": 5},
		"destinations": []any{map[string]any{"type": "webhook", "url": srv.URL + "/hook"}}}).JSON(t, &al)
	var h []alertHistoryEntry
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		h = alertHistory(t, s, al.ID)
		for _, e := range h {
			if e.Type == "alert.delivered" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no delivery recorded: %+v", h)
	})
	var failed, delivered int
	for _, e := range h {
		switch e.Type {
		case "alert.delivery_failed":
			failed++
			if !strings.Contains(e.Error, "500") || strings.Contains(e.Error, srv.URL) {
				t.Errorf("failure recorded as %q", e.Error)
			}
		case "alert.delivered":
			delivered++
		}
	}
	// b firing later proves later evaluations ran; they did not send a's firing again.
	s.Must(202, "POST", "/v1/tables/load", `[{"host":"b","v":9}]`)
	s.WaitCount("load", 2, time.Minute)
	testenv.Eventually(t, time.Minute, func() (bool, string) { return len(requests("b")) >= 1, "b was not notified" })
	s.Must(202, "POST", "/v1/tables/load", `[{"host":"c","v":9}]`)
	s.WaitCount("load", 3, time.Minute)
	testenv.Eventually(t, time.Minute, func() (bool, string) { return len(requests("c")) >= 1, "c was not notified" })
	keys := requests("a")
	if failed != 1 || delivered != 1 || len(keys) != 4 || keys[0] != keys[3] {
		t.Fatalf("failed %d, delivered %d, requests for a %v; want one key 4 times (3 failed attempts, then 1)", failed, delivered, keys)
	}
}

// TestAlertKilledBetweenRecordAndDelivery: svcd is killed (kill -9, its worker with it)
// while the receiver holds the firing notification's request: the transition is in the
// state stream, its delivery is not. After the restart the same transition is delivered
// again with the same Idempotency-Key and recorded once; no transition is lost, none is
// sent under two keys, and later evaluations send it no more.
func TestAlertKilledBetweenRecordAndDelivery(t *testing.T) {
	t.Parallel() // see TestMain
	s := startWorkflowsSvcd(t, "SVC_URL_IMPORT_ALLOW=127.0.0.1")
	var mu sync.Mutex
	keys := map[string][]string{} // Idempotency-Keys of each host's requests, in order
	accepted := map[string]int{}  // answered 2xx, by Idempotency-Key
	held := make(chan string, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Labels map[string]string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		host, key := body.Labels["host"], r.Header.Get("Idempotency-Key")
		mu.Lock()
		keys[host] = append(keys[host], key)
		first := host == "a" && len(keys[host]) == 1
		mu.Unlock()
		if first {
			// The whole notification has arrived; hold the answer until svcd is dead.
			held <- key
			<-release
			return
		}
		mu.Lock()
		accepted[key]++
		mu.Unlock()
		w.WriteHeader(204)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	requests := func(host string) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), keys[host]...)
	}
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "load"})
	s.Must(202, "POST", "/v1/tables/load", `[{"host":"a","v":9}]`)
	s.WaitCount("load", 1, time.Minute)
	var al alertView
	s.Must(201, "POST", "/v1/alerts"+wfScope, map[string]any{"name": "held", "interval_seconds": 1,
		"query": map[string]any{"sql": "SELECT host, max(v) AS value FROM load GROUP BY host"}, "condition": map[string]any{"op": ">", "threshold": 5},
		"destinations": []any{map[string]any{"type": "webhook", "url": srv.URL + "/hook"}}}).JSON(t, &al)

	var key string
	select {
	case key = <-held:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no notification arrived\n%s", tailOf(s.Logs(), 3000))
	}
	// The window: recorded, not delivered.
	var firing string
	for _, e := range alertHistory(t, s, al.ID) {
		switch {
		case e.Type == "alert.transitioned" && e.To == "firing":
			firing = e.ID
		case e.Type == "alert.delivered" || e.Type == "alert.delivery_failed":
			t.Fatalf("a delivery was recorded while the receiver still holds it: %+v", e)
		}
	}
	if firing == "" || !strings.HasPrefix(key, firing+"/") {
		t.Fatalf("the held request's key %q is not the recorded firing transition %q's", key, firing)
	}
	s.Kill()
	close(release)
	s.Resume()

	// Delivered again after the restart, under the same key, and recorded once.
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		mu.Lock()
		n := accepted[key]
		mu.Unlock()
		return n >= 1, fmt.Sprintf("the held transition was not delivered after the restart: requests %v\n%s", requests("a"), tailOf(s.Logs(), 3000))
	})
	// b firing later proves later evaluations ran; they did not send a's firing again.
	s.Must(202, "POST", "/v1/tables/load", `[{"host":"b","v":9}]`)
	s.WaitCount("load", 2, time.Minute)
	testenv.Eventually(t, time.Minute, func() (bool, string) { return len(requests("b")) >= 1, "b was not notified" })
	got := requests("a")
	distinct := map[string]bool{}
	for _, k := range got {
		distinct[k] = true
	}
	delivered := 0
	for _, e := range alertHistory(t, s, al.ID) {
		if e.Type == "alert.delivered" && e.Trans == firing {
			delivered++
		}
	}
	mu.Lock()
	n := accepted[key]
	mu.Unlock()
	if len(distinct) != 1 || len(got) < 2 || n != 1 || delivered != 1 {
		t.Fatalf("a's firing: requests %v (want the held one and one retry, one key), accepted %d, recorded delivered %d (want 1 each)", got, n, delivered)
	}
}
