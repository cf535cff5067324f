package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// logSearch is one search, in SPL through svcd and in LogsQL on VictoriaLogs, with the
// columns whose values are compared (in the same order in both answers).
type logSearch struct {
	label    string
	spl      string
	logsql   string
	svcCols  []string
	vlCols   []string
	events   bool // an event search: newest first, a page and its timeline
	dropZero bool // svcd zero-fills timechart buckets; VictoriaLogs returns observed ones
}

// peersLogs sends the same web-log events into svcd through Splunk HEC and into
// VictoriaLogs through JSON lines, each until all are searchable, then runs the same
// searches on each and compares the answers.
func peersLogs(ctx context.Context, st *stack, o peersOptions, bins map[string]string) error {
	const (
		perRequest = 5000
		workers    = 4
	)
	total := max(10_000, int(1e6*o.scale+0.5))
	t0 := time.Now().Add(-24*time.Hour - 10*time.Minute).Truncate(time.Minute).UnixMilli()
	span := int64(24 * 3600 * 1000)
	hosts := 12
	paths := []string{"/", "/checkout", "/cart", "/api/items", "/login", "/search", "/static/app.js"}
	hec, jsonl := webLogs(total, perRequest, t0, span, hosts, paths, 26)
	// The warm-up: a third as many events three days earlier (outside every search's
	// range), sent to each path first and left out of its figures, so that no path pays
	// for starting cold (the broker's JIT compiler, the table's creation).
	warmTotal := total / 3
	warmHEC, warmJSONL := webLogs(warmTotal, perRequest, t0-3*span, span, hosts, paths, 28)

	if _, _, err := st.post(ctx, "/v1/query", []byte(`{"sql":"SELECT 1"}`), nil); err != nil {
		return err
	}
	engineDB, err := st.engineDatabase(ctx)
	if err != nil {
		return err
	}
	if err := st.installApp(ctx, "logsearch"); err != nil {
		return err
	}
	vl, err := startPeer(ctx, "victoria-logs", filepath.Join(st.dir, "vl"), bins["vl"], "/health",
		"-httpListenAddr=ADDR", "-storageDataPath="+filepath.Join(st.dir, "vl", "data"), "-retentionPeriod=100y", "-loggerLevel=WARN")
	if err != nil {
		return err
	}
	defer vl.stop()
	vlQuery := func(q string, extra url.Values) ([]byte, error) {
		v := url.Values{"query": {q}, "start": {strconv.FormatInt(t0/1000, 10)}, "end": {strconv.FormatInt((t0+span)/1000+1, 10)}}
		for k, x := range extra {
			v[k] = x
		}
		path := "/select/logsql/query"
		if extra.Has("step") {
			path = "/select/logsql/hits"
		}
		code, b, err := httpDo(ctx, "POST", vl.url+path, []byte(v.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
		if err != nil || code != 200 {
			return nil, fmt.Errorf("VictoriaLogs %s: %d %.300s %v", q, code, b, err)
		}
		return b, nil
	}
	spl := func(s string, stats bool) ([]byte, error) {
		body := jsonString(map[string]any{"spl": s, "earliest": strconv.FormatInt(t0/1000, 10), "latest": strconv.FormatInt((t0+span)/1000+1, 10),
			"include_field_statistics": stats})
		code, b, err := st.post(ctx, "/v1/spl/search", []byte(body), map[string]string{"Content-Type": "application/json"})
		if err != nil || code != 200 {
			return nil, fmt.Errorf("svcd SPL %s: %d %.300s %v", s, code, b, err)
		}
		return b, nil
	}

	type target struct {
		name         string
		send         func(body []byte) error
		bodies, warm [][]byte
		cpu          pathCPU
		count        func() (int64, error) // events in all, the warm-up's and the benchmark's
	}
	targets := []target{
		{name: "this service (HEC)", send: func(body []byte) error {
			code, b, err := st.post(ctx, "/services/collector/event", body, map[string]string{"Authorization": "Splunk " + st.key})
			return answerError("HEC", code, b, err)
		}, bodies: hec, warm: warmHEC, cpu: pathCPU{names: []string{"svcd", "engine", "broker"}, pids: []int{st.svcd.Process.Pid, st.engine.PID(), st.broker.PID()}},
			count: func() (int64, error) {
				c, err := st.direct.QueryStrings(ctx, fmt.Sprintf("SELECT toString(count()) FROM `%s`.logsearch_events", engineDB))
				if err != nil || len(c) != 1 {
					return 0, err
				}
				return strconv.ParseInt(c[0], 10, 64)
			}},
		{name: "VictoriaLogs " + vlVersion + " (JSON lines)", send: func(body []byte) error {
			q := url.Values{"_msg_field": {"_raw"}, "_time_field": {"_time"}, "_stream_fields": {"host,source"}}
			code, b, err := httpDo(ctx, "POST", vl.url+"/insert/jsonline?"+q.Encode(), body, map[string]string{"Content-Type": "application/stream+json"})
			return answerError("jsonline", code, b, err)
		}, bodies: jsonl, warm: warmJSONL, cpu: pathCPU{names: []string{"victoria-logs"}, pids: []int{vl.pid()}},
			count: func() (int64, error) {
				v := url.Values{"query": {"* | stats count() as n"}, "start": {strconv.FormatInt((t0-3*span)/1000, 10)}, "end": {strconv.FormatInt((t0+span)/1000+1, 10)}}
				code, b, err := httpDo(ctx, "POST", vl.url+"/select/logsql/query", []byte(v.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
				if err != nil || code != 200 {
					return 0, fmt.Errorf("VictoriaLogs count: %d %.300s %v", code, b, err)
				}
				var row struct{ N string }
				if err := json.Unmarshal(bytes.TrimSpace(b), &row); err != nil {
					return 0, err
				}
				return strconv.ParseInt(row.N, 10, 64)
			}},
	}
	fmt.Printf("\nlogs: %d web-log events over 24 h (%d hosts, %d paths, a burst of 503s), %d events per request, %d concurrent\n",
		total, hosts, len(paths), perRequest, workers)
	ingest := [][]string{{"log events", "events/s until all searchable", "events/s acknowledged", "core-seconds per million events (every process of the path)", "total"}}
	for _, t := range targets {
		if _, err := sendAll(ctx, len(t.warm), workers, func(j int) error { return t.send(t.warm[j]) }); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		if err := waitFor(ctx, t.name+" warm-up", int64(warmTotal), 10*time.Minute, t.count); err != nil {
			return err
		}
		c0 := t.cpu.read()
		start := time.Now()
		last, err := sendAll(ctx, len(t.bodies), workers, func(j int) error { return t.send(t.bodies[j]) })
		if err != nil {
			return err
		}
		if err := waitFor(ctx, t.name, int64(warmTotal+total), 10*time.Minute, t.count); err != nil {
			return err
		}
		d := time.Since(start)
		by, sum := t.cpu.perMillionBy(c0, t.cpu.read(), total)
		ingest = append(ingest, []string{t.name, fmt.Sprintf("%.1fk", float64(total)/d.Seconds()/1000),
			fmt.Sprintf("%.1fk", float64(total)/last.Sub(start).Seconds()/1000), by, fmt.Sprintf("%.2f", sum)})
	}
	table(ingest)

	searches := []logSearch{
		{label: "a term, counted", spl: "checkout | stats count", logsql: "checkout | stats count() as count", svcCols: []string{"count"}, vlCols: []string{"count"}},
		{label: "count by status", spl: "sourcetype=access_combined | stats count by status", logsql: "sourcetype:=access_combined | stats by (status) count() as count",
			svcCols: []string{"status", "count"}, vlCols: []string{"status", "count"}},
		{label: "503s per hour", spl: "status=503 | timechart span=1h count", logsql: "status:=503 | stats by (_time:1h) count() as count",
			svcCols: []string{"_time", "count"}, vlCols: []string{"_time", "count"}, dropZero: true},
		{label: "avg(bytes) by host over status>=500", spl: "status>=500 | stats avg(bytes) by host", logsql: "status:>=500 | stats by (host) avg(bytes) as a",
			svcCols: []string{"host", "avg(bytes)"}, vlCols: []string{"host", "a"}},
		{label: "a host and a term, 100 newest + timeline", spl: "host=web-03 checkout | head 100", logsql: "host:=web-03 checkout",
			svcCols: []string{"_raw"}, vlCols: []string{"_msg"}, events: true},
		{label: "the console's request (sourcetype=access_combined)", spl: "sourcetype=access_combined", logsql: "sourcetype:=access_combined",
			svcCols: []string{"_raw"}, vlCols: []string{"_msg"}, events: true},
	}
	fmt.Printf("\nsearches over the day, median of %d taking turns (svcd: POST /v1/spl/search; VictoriaLogs: /select/logsql/query, plus /select/logsql/hits for the timeline where svcd returns one)\n", o.runs)
	report := [][]string{{"search", "this service (SPL)", "VictoriaLogs (LogsQL)", "ratio", "answers"}}
	for _, s := range searches {
		// One search first (not timed) tells the size of the page and the timeline's
		// buckets that VictoriaLogs is asked for; then both take turns.
		ours, err := spl(s.spl, false)
		if err != nil {
			return err
		}
		var answer struct {
			Meta     []struct{ Name string }
			Data     []json.RawMessage
			Rows     int
			Timeline []struct {
				Time        string
				SpanSeconds int64 `json:"span_seconds"`
				Count       int64
			}
		}
		if err := json.Unmarshal(ours, &answer); err != nil {
			return fmt.Errorf("%s: svcd's answer: %w", s.label, err)
		}
		logsql := s.logsql
		var step string
		if s.events {
			logsql += fmt.Sprintf(" | sort by (_time desc) | limit %d", answer.Rows)
			if len(answer.Timeline) > 0 {
				step = fmt.Sprintf("%ds", answer.Timeline[0].SpanSeconds)
			}
		}
		// The timeline of the same events svcd's covers: every match (hits), or for a search
		// that keeps a page (head), that page's events counted per bucket.
		var hits []byte
		timeline := func() ([]byte, error) {
			if strings.Contains(s.spl, "| head") {
				return vlQuery(logsql+fmt.Sprintf(" | stats by (_time:%s) count() as count", step), nil)
			}
			return vlQuery(s.logsql, url.Values{"step": {step}})
		}
		ds, answers, err := timedTurns(o.runs, func() ([]byte, error) { return spl(s.spl, false) }, func() ([]byte, error) {
			b, err := vlQuery(logsql, nil)
			if err == nil && step != "" {
				hits, err = timeline()
			}
			return b, err
		})
		if err != nil {
			return err
		}
		dSvc, dVL, theirs := ds[0], ds[1], answers[1]
		same := compareLogAnswers(s, answer.Meta, answer.Data, theirs)
		if step != "" {
			same += "; timeline " + compareTimeline(answer.Timeline, hits)
		}
		report = append(report, []string{s.label, msf(dSvc), msf(dVL), fmt.Sprintf("%.1f×", float64(dSvc)/float64(dVL)), same})
	}
	table(report)
	fmt.Printf("load average after the logs workload: %s\n", loadavg())
	if o.hold {
		holdForInspection(ctx, st, vl)
	}
	return nil
}

// canonical is a value as text both sides agree on: numbers to 10 significant digits,
// times as Unix milliseconds.
func canonical(col string, v any) string {
	s := ""
	switch x := v.(type) {
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		return "null"
	default:
		s = fmt.Sprint(x)
	}
	if col == "_time" {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.000", "2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
			if t, err := time.Parse(layout, s); err == nil {
				return strconv.FormatInt(t.UnixMilli(), 10)
			}
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && col != "_raw" && col != "_msg" {
		return strconv.FormatFloat(f, 'g', 10, 64)
	}
	return s
}

// compareLogAnswers compares svcd's rows (objects, or arrays in meta's order) with
// VictoriaLogs' JSON lines on the search's columns: in order for events, as sets otherwise.
func compareLogAnswers(s logSearch, meta []struct{ Name string }, data []json.RawMessage, vl []byte) string {
	var ours, theirs []string
	for _, raw := range data {
		row := map[string]any{}
		var arr []any
		if json.Unmarshal(raw, &arr) == nil {
			for i, v := range arr {
				if i < len(meta) {
					row[meta[i].Name] = v
				}
			}
		} else if err := json.Unmarshal(raw, &row); err != nil {
			return "unreadable"
		}
		var parts []string
		zero := false
		for _, c := range s.svcCols {
			v := canonical(c, row[c])
			parts = append(parts, v)
			if c == "count" && v == "0" {
				zero = true
			}
		}
		if s.dropZero && zero {
			continue
		}
		ours = append(ours, strings.Join(parts, " | "))
	}
	sc := bufio.NewScanner(bytes.NewReader(vl))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		row := map[string]any{}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return "unreadable VictoriaLogs answer"
		}
		var parts []string
		for i, c := range s.vlCols {
			parts = append(parts, canonical(s.svcCols[i], row[c]))
		}
		theirs = append(theirs, strings.Join(parts, " | "))
	}
	if !s.events {
		slices.Sort(ours)
		slices.Sort(theirs)
	}
	if slices.Equal(ours, theirs) {
		return fmt.Sprintf("equal (%d rows)", len(ours))
	}
	for i := range min(len(ours), len(theirs)) {
		if ours[i] != theirs[i] {
			return fmt.Sprintf("DIFFER (%d vs %d rows; row %d: %.80q vs %.80q)", len(ours), len(theirs), i, ours[i], theirs[i])
		}
	}
	return fmt.Sprintf("DIFFER (%d vs %d rows)", len(ours), len(theirs))
}

// compareTimeline compares svcd's timeline (zero-filled) with VictoriaLogs' hits.
func compareTimeline(ours []struct {
	Time        string
	SpanSeconds int64 `json:"span_seconds"`
	Count       int64
}, hits []byte) string {
	var h struct {
		Hits []struct {
			Timestamps []string
			Values     []int64
		}
	}
	if err := json.Unmarshal(hits, &h); err != nil || h.Hits == nil {
		// Stats by _time: JSON lines of _time and count (one line, a single bucket, is
		// also a JSON object, without hits).
		h.Hits = h.Hits[:0]
		sc := bufio.NewScanner(bytes.NewReader(hits))
		var s struct {
			Timestamps []string
			Values     []int64
		}
		for sc.Scan() {
			var row struct{ Time, Count string }
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			if err := json.Unmarshal(bytes.ReplaceAll(sc.Bytes(), []byte(`"_time"`), []byte(`"time"`)), &row); err != nil {
				return "unreadable timeline"
			}
			n, _ := strconv.ParseInt(row.Count, 10, 64)
			s.Timestamps, s.Values = append(s.Timestamps, row.Time), append(s.Values, n)
		}
		h.Hits = append(h.Hits, s)
	}
	a, b := map[string]int64{}, map[string]int64{}
	for _, t := range ours {
		if t.Count > 0 {
			a[canonical("_time", t.Time)] += t.Count
		}
	}
	for _, s := range h.Hits {
		for i, ts := range s.Timestamps {
			// Both sides' empty buckets are left out: svcd zero-fills its window, and
			// VictoriaLogs' hits may name the bucket its end falls in.
			if s.Values[i] > 0 {
				b[canonical("_time", ts)] += s.Values[i]
			}
		}
	}
	var sa, sb int64
	for _, v := range a {
		sa += v
	}
	for _, v := range b {
		sb += v
	}
	if len(a) == len(b) {
		same := true
		for k, v := range a {
			if b[k] != v {
				same = false
			}
		}
		if same {
			return fmt.Sprintf("equal (%d buckets, %d events)", len(a), sa)
		}
	}
	return fmt.Sprintf("DIFFER (%d buckets / %d events vs %d / %d)", len(a), sa, len(b), sb)
}

// webLogs are total web-log events over span from t0 (hosts web-00.., paths, status codes
// with a burst of 503s in the 15th hour, sizes, durations, an access-log line), as HEC
// requests and as VictoriaLogs JSON lines, perRequest events each.
func webLogs(total, perRequest int, t0, span int64, hosts int, paths []string, seed uint64) (hec, jsonl [][]byte) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	var hb, jb bytes.Buffer
	for i := range total {
		ts := t0 + int64(i)*span/int64(total)
		host := fmt.Sprintf("web-%02d", r.IntN(hosts))
		path := paths[r.IntN(len(paths))]
		method := "GET"
		if path == "/checkout" || path == "/login" {
			method = "POST"
		}
		status := []int{200, 200, 200, 200, 200, 200, 200, 301, 404, 500}[r.IntN(10)]
		// A burst of 503s in the 15th hour.
		if h := (ts - t0) / 3600_000; h == 14 && r.IntN(10) < 3 {
			status = 503
		}
		size := 200 + r.IntN(50_000)
		dur := float64(1+r.IntN(2500)) / 1000
		t := time.UnixMilli(ts).UTC()
		raw := fmt.Sprintf(`10.%d.%d.%d - - [%s] "%s %s HTTP/1.1" %d %d "-" "Mozilla/5.0 (X11; Linux x86_64)" %.3f`,
			r.IntN(4), r.IntN(256), r.IntN(256), t.Format("02/Jan/2006:15:04:05 -0700"), method, path, status, size, dur)
		fmt.Fprintf(&hb, `{"time":"%d.%03d","host":%q,"source":"/var/log/nginx/access.log","sourcetype":"access_combined","event":%s,"fields":{"status":%d,"bytes":%d,"duration":%.3f,"path":%q,"method":%q}}`+"\n",
			ts/1000, ts%1000, host, jsonString(raw), status, size, dur, path, method)
		fmt.Fprintf(&jb, `{"_time":%q,"_raw":%s,"host":%q,"source":"/var/log/nginx/access.log","sourcetype":"access_combined","status":%d,"bytes":%d,"duration":%.3f,"path":%q,"method":%q}`+"\n",
			t.Format("2006-01-02T15:04:05.000Z"), jsonString(raw), host, status, size, dur, path, method)
		if (i+1)%perRequest == 0 || i == total-1 {
			hec, jsonl = append(hec, bytes.Clone(hb.Bytes())), append(jsonl, bytes.Clone(jb.Bytes()))
			hb.Reset()
			jb.Reset()
		}
	}
	return hec, jsonl
}
