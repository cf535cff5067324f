package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// consoleData is the known data set: 48 five-minute buckets from t0, bucket i holding
// (7i mod 11) events, each with a host, a status and a path.
type consoleData struct {
	t0     time.Time
	counts []int
	total  int
}

func newConsoleData() consoleData {
	d := consoleData{t0: time.Now().UTC().Truncate(time.Hour).Add(-5 * time.Hour)}
	for i := range 48 {
		n := (7 * i) % 11
		d.counts = append(d.counts, n)
		d.total += n
	}
	return d
}

func (d consoleData) hec() string {
	var b strings.Builder
	for i, n := range d.counts {
		for j := range n {
			ts := d.t0.Unix() + int64(i*300+j*20)
			fmt.Fprintf(&b, `{"time": %d, "host": "web-%d", "sourcetype": "access", "event": {"status": %d, "path": "/p/%d", "msg": "request %d.%d"}}`+"\n",
				ts, j%3, 200+100*((i+j)%4), j%5, i, j)
		}
	}
	return b.String()
}

// shots writes a screenshot per step into .data/test/artifacts/<test>/.
type shots struct {
	t   *testing.T
	dir string
	n   int
}

func (s *shots) take(ctx context.Context, name string) {
	s.t.Helper()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&png)); err != nil {
		s.t.Fatalf("screenshot %s: %v", name, err)
	}
	s.n++
	if err := os.WriteFile(filepath.Join(s.dir, fmt.Sprintf("%02d-%s.png", s.n, name)), png, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

type apiSearch struct {
	Rows       int
	Statistics struct{ Elapsed float64 }
	ResultKind string `json:"result_kind"`
	Timeline   []struct{ Count int }
	Stages     []struct {
		Command    string
		OutputRows *int `json:"output_rows"`
	}
	Meta []struct{ Name string }
	Data []map[string]any
}

// TestConsoleInChromium drives the web console in headless Chromium against the real
// svcd over events ingested through HEC: sign-in, search, timeline bars measured on the
// canvas, per-stage counts beside the API's, completion, an error at the caret, a field
// filter, a timechart, saved searches, the URL, cancel of a slow search and a slow query,
// SQL, a narrow screen and sign-out.
func TestConsoleInChromium(t *testing.T) {
	t.Parallel() // see TestMain
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	ctx := svcdtest.BrowserFor(t, 6*time.Minute)
	art := &shots{t: t, dir: filepath.Join("..", "..", ".data", "test", "artifacts", t.Name())}
	os.RemoveAll(art.dir)
	if err := os.MkdirAll(art.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := newConsoleData()
	splunk := []string{"Authorization", "Splunk " + s.AdminKey}
	// Log search is an app once the apps API is in: install it where that route exists.
	user := []string{"Authorization", "Bearer " + login(t, s, "admin", adminPassword)}
	apps := setApp(t, s, "PUT", user)
	s.Must(200, "POST", "/services/collector/event", data.hec(), splunk...)
	// A second database with many events for the slow search.
	s.Must(200, "POST", "/v1/databases", map[string]string{"name": "big"})
	s.Must(200, "POST", "/services/collector/event?database=big", `{"time": 1700000000, "event": "seed"}`, splunk...)
	s.WaitCount("logsearch_events", data.total, time.Minute)

	// The gateway: the cookie alone never reaches the API, and /ui/api needs the token.
	consoleGatewayRules(t, s)

	earliest, latest := fmt.Sprint(data.t0.Unix()), fmt.Sprint(data.t0.Add(4*time.Hour).Unix())
	apiFor := func(spl string) apiSearch {
		t.Helper()
		var r apiSearch
		s.Must(200, "POST", "/v1/spl/search", map[string]any{"spl": spl, "earliest": earliest, "latest": latest}).JSON(t, &r)
		return r
	}
	run := func(name string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			art.take(context.WithoutCancel(ctx), name+"-failed")
			t.Fatalf("%s: %v", name, err)
		}
	}
	waitJS := func(cond string) chromedp.Action {
		var ok bool
		return chromedp.Poll(cond, &ok, chromedp.WithPollingTimeout(2*time.Minute), chromedp.WithPollingInterval(50*time.Millisecond))
	}
	eval := func(expr string, out any) chromedp.Action { return chromedp.Evaluate(expr, out) }
	// search sets the editor and runs, waiting for the answer (and the field sidebar).
	search := func(spl string) chromedp.Action {
		q, _ := json.Marshal(spl)
		return chromedp.Tasks{
			eval(`document.getElementById("search-view").dataset.state = ""; document.getElementById("spl").value = `+string(q), nil),
			chromedp.Click("#run", chromedp.ByID),
			waitJS(`["done", "error", "canceled"].includes(document.getElementById("search-view").dataset.state)`),
			waitJS(`document.getElementById("fields").dataset.state === "done"`),
		}
	}
	stagesOnScreen := func() []string {
		var out []string
		run("stages", eval(`Array.from(document.querySelectorAll("#stages li")).map(li => li.dataset.outputRows)`, &out))
		return out
	}
	stagesOfAPI := func(r apiSearch) []string {
		var out []string
		for _, st := range r.Stages {
			if st.OutputRows == nil {
				out = append(out, "")
			} else {
				out = append(out, fmt.Sprint(*st.OutputRows))
			}
		}
		return out
	}

	// Sign in.
	run("sign-in page", emulation.SetDeviceMetricsOverride(1280, 800, 1, false), chromedp.Navigate(s.URL+"/ui/"), chromedp.WaitVisible("#login-form", chromedp.ByID))
	art.take(ctx, "login")
	run("sign in",
		chromedp.SendKeys("#username", "admin", chromedp.ByID),
		chromedp.SendKeys("#password", "wrong", chromedp.ByID),
		chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible("#login-error", chromedp.ByID),
		eval(`document.getElementById("password").value = ""`, nil),
		chromedp.SendKeys("#password", adminPassword, chromedp.ByID),
		chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible("#app", chromedp.ByID),
		waitJS(`document.getElementById("database").value === "default"`),
	)

	// A search over the absolute window: the timeline's bars against the data.
	run("absolute range", eval(fmt.Sprintf(`(() => {
		const r = document.getElementById("range"); r.value = "custom"; r.dispatchEvent(new Event("change"));
		document.getElementById("earliest").value = %q; document.getElementById("latest").value = %q; })()`,
		data.t0.Format("2006-01-02T15:04:05"), data.t0.Add(4*time.Hour).Format("2006-01-02T15:04:05")), nil))
	run("search", search("sourcetype=access"))
	art.take(ctx, "search")
	var tl struct {
		Buckets, Total string
		Events         int
		Bars           []struct{ X0, X1, H int }
	}
	run("timeline", eval(timelineBarsJS, &tl))
	var nonzero []int
	for _, c := range data.counts {
		if c > 0 {
			nonzero = append(nonzero, c)
		}
	}
	if tl.Buckets != "48" || tl.Total != fmt.Sprint(data.total) || len(tl.Bars) != len(nonzero) || tl.Events != min(100, data.total) {
		t.Fatalf("timeline: %s buckets, %s events, %d bars drawn, %d events listed; want 48, %d, %d, %d",
			tl.Buckets, tl.Total, len(tl.Bars), tl.Events, data.total, len(nonzero), min(100, data.total))
	}
	checkBars(t, tl.Bars, nonzero)
	first := apiFor("sourcetype=access")
	if got, want := stagesOnScreen(), stagesOfAPI(first); !slices.Equal(got, want) {
		t.Fatalf("stages on screen %v, API %v", got, want)
	}
	// An event's fields open under it: the API's fields of that event but _raw.
	var shown struct {
		Summary string
		Fields  []string
	}
	run("event fields", chromedp.Click(`#events > li:first-child summary`, chromedp.ByQuery),
		waitJS(`document.querySelector("#events > li:first-child details table") !== null`),
		eval(`({summary: document.querySelector("#events > li:first-child summary").textContent,
			fields: Array.from(document.querySelectorAll("#events > li:first-child details th")).map(th => th.textContent)})`, &shown))
	var want []string
	for k, v := range first.Data[0] {
		if k != "_raw" && v != nil {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(shown.Fields))
	if !slices.Equal(got, want) || shown.Summary != fmt.Sprintf("%d fields", len(want)) {
		t.Fatalf("the first event shows %q and fields %v; the API's are %v", shown.Summary, got, want)
	}

	// Drag across the timeline: the search runs again over the selected range.
	var over struct{ X, Y, W, H float64 }
	run("timeline box", eval(`(() => { const r = document.querySelector("#timeline .u-over").getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; })()`, &over))
	y := over.Y + over.H/2
	run("drag", eval(`document.getElementById("search-view").dataset.state = ""`, nil),
		chromedp.MouseEvent(input.MousePressed, over.X+over.W*0.5, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.MouseMoved, over.X+over.W*0.6, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.MouseMoved, over.X+over.W*0.75, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.MouseReleased, over.X+over.W*0.75, y, chromedp.ButtonLeft),
		waitJS(`document.getElementById("search-view").dataset.state === "done" && document.getElementById("fields").dataset.state === "done"`))
	var zoom struct{ Range, Earliest, Latest, Buckets, Total string }
	run("zoomed", eval(`(() => { const u = new URL(location.href); return {range: document.getElementById("range").value, earliest: u.searchParams.get("earliest"),
		latest: u.searchParams.get("latest"), buckets: document.getElementById("timeline").dataset.buckets, total: document.getElementById("timeline").dataset.total}; })()`, &zoom))
	var zoomed apiSearch
	s.Must(200, "POST", "/v1/spl/search", map[string]any{"spl": "sourcetype=access", "earliest": zoom.Earliest, "latest": zoom.Latest}).JSON(t, &zoomed)
	zoomTotal := 0
	for _, b := range zoomed.Timeline {
		zoomTotal += b.Count
	}
	var e0, l0 int64
	fmt.Sscan(zoom.Earliest, &e0)
	fmt.Sscan(zoom.Latest, &l0)
	if zoom.Range != "custom" || e0 <= data.t0.Unix() || l0 >= data.t0.Add(4*time.Hour).Unix() || l0-e0 > 3*3600 ||
		zoom.Buckets != fmt.Sprint(len(zoomed.Timeline)) || zoom.Total != fmt.Sprint(zoomTotal) || zoomTotal >= data.total {
		t.Fatalf("after the drag: %+v; the API has %d buckets, %d events", zoom, len(zoomed.Timeline), zoomTotal)
	}
	// The zoomed timeline is drawn again over its own range (the plot is reused).
	nonzero = nil
	for _, b := range zoomed.Timeline {
		if b.Count > 0 {
			nonzero = append(nonzero, b.Count)
		}
	}
	run("zoomed timeline", eval(timelineBarsJS, &tl))
	if len(tl.Bars) != len(nonzero) {
		t.Fatalf("zoomed timeline: %d bars drawn, the API has %d non-empty buckets", len(tl.Bars), len(nonzero))
	}
	checkBars(t, tl.Bars, nonzero)
	art.take(ctx, "zoomed")
	run("reset range", eval(fmt.Sprintf(`(() => { document.getElementById("earliest").value = %q; document.getElementById("latest").value = %q; })()`,
		data.t0.Format("2006-01-02T15:04:05"), data.t0.Add(4*time.Hour).Format("2006-01-02T15:04:05")), nil))

	// Per-stage counts of a longer pipeline, then a field value adds a filter.
	pipeline := "sourcetype=access | where status>=300 | head 40"
	run("pipeline", search(pipeline))
	before := stagesOnScreen()
	if want := stagesOfAPI(apiFor(pipeline)); !slices.Equal(before, want) || len(before) != 3 {
		t.Fatalf("stages on screen %v, API %v", before, want)
	}
	art.take(ctx, "pipeline-stages")
	var spl string
	run("field filter",
		chromedp.Click(`#fields details[data-field="host"] summary`),
		eval(`document.getElementById("search-view").dataset.state = ""`, nil),
		chromedp.Click(`#fields button[data-field="host"][data-value="web-1"]`),
		waitJS(`document.getElementById("search-view").dataset.state === "done" && document.getElementById("fields").dataset.state === "done"`),
		chromedp.Value("#spl", &spl, chromedp.ByID))
	if spl != `sourcetype=access host="web-1" | where status>=300 | head 40` {
		t.Fatalf("after the field click the search is %q", spl)
	}
	after := stagesOnScreen()
	if want := stagesOfAPI(apiFor(spl)); !slices.Equal(after, want) || slices.Equal(after, before) {
		t.Fatalf("filtered stages on screen %v, API %v, before %v", after, want, before)
	}
	art.take(ctx, "field-filter")

	// Completion from the manifest, then a timechart in the statistics view.
	var options []string
	run("completion",
		eval(`document.getElementById("spl").value = ""`, nil),
		chromedp.Focus("#spl", chromedp.ByID),
		chromedp.SendKeys("#spl", "sourcetype=access | timec", chromedp.ByID),
		chromedp.WaitVisible("#completions", chromedp.ByID),
		eval(`Array.from(document.querySelectorAll("#completions li")).map(li => li.firstChild.textContent)`, &options))
	if !slices.Contains(options, "timechart") {
		t.Fatalf("completions %v", options)
	}
	art.take(ctx, "completion")
	run("accept completion", chromedp.KeyEvent("\t"), chromedp.Value("#spl", &spl, chromedp.ByID))
	if spl != "sourcetype=access | timechart " {
		t.Fatalf("after accepting the completion the search is %q", spl)
	}
	chart := "sourcetype=access | timechart span=1h count by host"
	var chartRows, series string
	// Typed on from the completion and run with Enter.
	run("timechart",
		eval(`document.getElementById("search-view").dataset.state = ""`, nil),
		chromedp.SendKeys("#spl", "span=1h count by host", chromedp.ByID),
		chromedp.Value("#spl", &spl, chromedp.ByID),
		chromedp.KeyEvent("\r"),
		waitJS(`document.getElementById("search-view").dataset.state === "done" && document.getElementById("fields").dataset.state === "done"`),
		chromedp.WaitVisible("#stats-table", chromedp.ByID),
		eval(`document.getElementById("stats-table").dataset.rows`, &chartRows),
		eval(`document.getElementById("chart").dataset.series`, &series))
	if spl != chart {
		t.Fatalf("typed search %q", spl)
	}
	if r := apiFor(chart); r.ResultKind != "statistics" || chartRows != fmt.Sprint(r.Rows) || series != fmt.Sprint(len(r.Meta)-1) {
		t.Fatalf("timechart: %s rows and %s series on screen, API %d rows, %d columns", chartRows, series, r.Rows, len(r.Meta))
	}
	art.take(ctx, "timechart")

	// Functions complete inside eval; Escape closes the list.
	var hidden bool
	run("function completion",
		eval(`document.getElementById("spl").value = ""`, nil),
		chromedp.SendKeys("#spl", "sourcetype=access | eval x=low", chromedp.ByID),
		chromedp.WaitVisible("#completions", chromedp.ByID),
		eval(`Array.from(document.querySelectorAll("#completions li")).map(li => li.firstChild.textContent)`, &options),
		chromedp.KeyEvent(kb.Escape),
		eval(`document.getElementById("completions").hidden`, &hidden))
	if !slices.Contains(options, "lower") || !hidden {
		t.Fatalf("eval completions %v, closed by Escape: %v", options, hidden)
	}

	// An error shown at the position the API reports.
	bad := "sourcetype=access | transaction host"
	var caret struct{ Offset, Code string }
	run("error", search(bad), eval(`({offset: document.getElementById("search-error").dataset.offset, code: document.getElementById("search-error").dataset.code})`, &caret))
	var apiErr struct{ Error struct{ Message string } }
	s.Must(400, "POST", "/v1/spl/search", map[string]any{"spl": bad}).JSON(t, &apiErr)
	var line, col int
	if _, err := fmt.Sscanf(apiErr.Error.Message, "%d:%d:", &line, &col); err != nil || line != 1 || caret.Offset != fmt.Sprint(col-1) {
		t.Fatalf("error at offset %q (%s); the API says %q", caret.Offset, caret.Code, apiErr.Error.Message)
	}
	art.take(ctx, "error-at-caret")

	// Save a shared search, then reopen it from a fresh page.
	run("save",
		chromedp.Click("#save", chromedp.ByID),
		chromedp.WaitVisible("#save-dialog", chromedp.ByID),
		chromedp.SendKeys("#save-name", "web-1 errors", chromedp.ByID),
		eval(`document.getElementById("save-visibility").value = "shared"; document.getElementById("spl").value = `+jsString(pipeline), nil),
		chromedp.Click("#save-ok", chromedp.ByID),
		waitJS(`Array.from(document.querySelectorAll("#saved option")).some(o => o.textContent === "web-1 errors (shared)")`),
	)
	art.take(ctx, "saved")
	run("reopen",
		chromedp.Navigate(s.URL+"/ui/"),
		chromedp.WaitVisible("#search-view", chromedp.ByID),
		waitJS(`Array.from(document.querySelectorAll("#saved option")).some(o => o.textContent.startsWith("web-1 errors"))`),
		eval(`(() => { const s = document.getElementById("saved"); s.value = Array.from(s.options).find(o => o.textContent.startsWith("web-1 errors")).value;
			document.getElementById("search-view").dataset.state = ""; s.dispatchEvent(new Event("change")); })()`, nil),
		waitJS(`document.getElementById("search-view").dataset.state === "done" && document.getElementById("fields").dataset.state === "done"`),
		chromedp.Value("#spl", &spl, chromedp.ByID))
	if spl != pipeline {
		t.Fatalf("reopened search %q", spl)
	}
	if got, want := stagesOnScreen(), before; !slices.Equal(got, want) {
		t.Fatalf("reopened search's stages %v, want %v", got, want)
	}
	// The URL holds the search: loading it runs it again.
	var loc string
	run("url", chromedp.Location(&loc))
	run("open url", chromedp.Navigate(loc), chromedp.WaitVisible("#search-view", chromedp.ByID), waitJS(`document.getElementById("search-view").dataset.state === "done" && document.getElementById("fields").dataset.state === "done"`), chromedp.Value("#spl", &spl, chromedp.ByID))
	if spl != pipeline || !strings.Contains(loc, "q=") {
		t.Fatalf("the URL %s reopened %q", loc, spl)
	}
	art.take(ctx, "reopened")

	// Cancel a slow search over many events in database big.
	for from := 0; from < 3_000_000; from += 500_000 { // in slices, each inside the query timeout on a loaded machine
		s.Must(200, "POST", "/v1/query?database=big", map[string]string{"sql": fmt.Sprintf(`INSERT INTO logsearch_events SELECT toDateTime64('2023-11-14 22:13:20', 3, 'UTC') AS _time, concat('line ', toString(number)) AS _raw, concat('h', toString(number %% 7)) AS host FROM numbers(%d, 500000)`, from)})
	}
	slow := "* | eval h=sha256(sha256(sha256(sha256(sha256(_raw))))) | stats dc(h) AS n"
	var state string
	var stale int
	run("slow search",
		eval(`(() => { const d = document.getElementById("database"); d.value = "big"; d.dispatchEvent(new Event("change"));
			const r = document.getElementById("range"); r.value = "all"; r.dispatchEvent(new Event("change"));
			const v = document.getElementById("search-view"); v.dataset.state = ""; document.getElementById("spl").value = `+jsString(slow)+`; })()`, nil),
		chromedp.Click("#run", chromedp.ByID),
		waitJS(`document.getElementById("search-view").dataset.state === "running"`),
		chromedp.Click("#cancel", chromedp.ByID),
		waitJS(`document.getElementById("search-view").dataset.state !== "running"`),
		eval(`document.getElementById("search-view").dataset.state`, &state))
	art.take(ctx, "search-canceled")
	run("nothing stale", eval(`document.querySelectorAll("#events li, #stages li, #stats-table tr, #timeline canvas").length`, &stale))
	if stale != 0 {
		var status string
		_ = chromedp.Run(ctx, chromedp.Text("#search-status", &status, chromedp.ByID))
		t.Fatalf("%d results of earlier searches stay after the cancel (state %q: %s)", stale, state, status)
	}
	if state != "canceled" {
		var msg string
		_ = chromedp.Run(ctx, chromedp.Text("#search-error", &msg, chromedp.ByID))
		t.Fatalf("slow search ended %q: %s", state, msg)
	}
	// All time is earliest 0 (no earliest is the API's default, the last 24 hours).
	run("all time", chromedp.Location(&loc))
	if u, err := url.Parse(loc); err != nil || u.Query().Get("earliest") != "0" {
		t.Fatalf("an all-time search's URL %s has no earliest=0", loc)
	}

	// SQL: a result table with statistics, then a slow query canceled.
	var sqlRows string
	var stats map[string]string
	run("sql",
		chromedp.Click("#nav-sql", chromedp.ByID),
		eval(`(() => { const d = document.getElementById("database"); d.value = "default"; d.dispatchEvent(new Event("change"));
			document.getElementById("sql").value = "SELECT host, count() AS n FROM logsearch_events GROUP BY host ORDER BY host"; })()`, nil),
		chromedp.Click("#sql-run", chromedp.ByID),
		waitJS(`document.getElementById("sql-view").dataset.state === "done"`),
		eval(`document.getElementById("sql-table").dataset.rows`, &sqlRows),
		eval(`Object.fromEntries(Array.from(document.querySelectorAll("#sql-stats dd")).map(d => [d.dataset.stat, d.textContent]))`, &stats))
	if sqlRows != "3" || stats["rows read"] != fmt.Sprint(data.total) || stats["elapsed"] == "" || stats["bytes read"] == "" {
		t.Fatalf("SQL: %s rows, statistics %v", sqlRows, stats)
	}
	art.take(ctx, "sql")
	var csv string
	run("sql csv",
		eval(`document.getElementById("format").value = "CSVWithNames"; document.getElementById("sql-view").dataset.state = ""`, nil),
		chromedp.Click("#sql-run", chromedp.ByID),
		waitJS(`document.getElementById("sql-view").dataset.state === "done"`),
		chromedp.Text("#sql-raw", &csv, chromedp.ByID),
		eval(`document.getElementById("format").value = "JSON"`, nil))
	hosts := [3]int{}
	for _, n := range data.counts {
		for j := range n {
			hosts[j%3]++
		}
	}
	if want := fmt.Sprintf("\"host\",\"n\"\n\"web-0\",%d\n\"web-1\",%d\n\"web-2\",%d", hosts[0], hosts[1], hosts[2]); strings.TrimSpace(csv) != want {
		t.Fatalf("CSVWithNames shows %q, want %q", csv, want)
	}
	run("slow sql",
		eval(`document.getElementById("sql").value = "SELECT sum(number) FROM numbers(100000000000)"`, nil),
		chromedp.Click("#sql-run", chromedp.ByID),
		waitJS(`document.getElementById("sql-view").dataset.state === "running"`),
		chromedp.Click("#sql-cancel", chromedp.ByID),
		waitJS(`document.getElementById("sql-view").dataset.state !== "running"`),
		eval(`document.getElementById("sql-view").dataset.state`, &state))
	art.take(ctx, "sql-canceled")
	run("nothing stale", eval(`document.querySelectorAll("#sql-table tr").length + (document.getElementById("sql-raw").hidden ? 0 : 1)`, &stale))
	if state != "canceled" || stale != 0 {
		t.Fatalf("slow query ended %q, with %d stale results on screen", state, stale)
	}

	// Alerts: the list shows an alert and, once evaluated, its firing groups.
	s.Must(201, "POST", "/v1/alerts?organization=default&cluster=default", map[string]any{"name": "hosts seen", "interval_seconds": 1,
		"query":     map[string]any{"database": "default", "sql": "SELECT host, count() AS value FROM logsearch_events GROUP BY host"},
		"condition": map[string]any{"op": ">", "threshold": 0}})
	var alertsShown string
	run("alerts", chromedp.Click("#nav-alerts", chromedp.ByID),
		waitJS(`(() => { const t = document.getElementById("alerts-table");
			if (t.textContent.includes("firing {host=web-2")) return true;
			if (!document.getElementById("alerts-status").textContent.startsWith("Loading")) document.getElementById("alerts-refresh").click();
			return false; })()`),
		eval(`document.getElementById("alerts-table").dataset.rows`, &alertsShown))
	art.take(ctx, "alerts")
	if alertsShown != "1" {
		t.Fatalf("the alerts page shows %s rows", alertsShown)
	}

	// Tables: each table's retention as the engine enforces it, and a table's details.
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "kept", "retention": "30d"})
	s.Must(202, "POST", "/v1/tables/kept", `[{"n":1}]`)
	s.WaitCount("kept", 1, time.Minute)
	var listed, fact string
	run("tables", chromedp.Click("#nav-tables", chromedp.ByID),
		waitJS(`(() => { const b = document.querySelector('#tables-table button[data-table="kept"]');
			return b !== null && b.closest("tr").textContent.includes("30din_sync"); })()`),
		eval(`document.querySelector('#tables-table button[data-table="kept"]').closest("tr").textContent`, &listed),
		chromedp.Click(`#tables-table button[data-table="kept"]`, chromedp.ByQuery),
		waitJS(`!document.getElementById("table-detail").hidden`),
		eval(`document.querySelector('#table-detail-facts dd[data-fact="retention setting"]').textContent`, &fact))
	art.take(ctx, "tables")
	if !strings.Contains(listed, "30d") || fact != "30d" {
		t.Fatalf("the tables page shows %q, the table's retention setting %q", listed, fact)
	}

	// Without the log search app, the page shows the API's 403 and its hint.
	if apps {
		setApp(t, s, "DELETE", user)
		var shown struct{ Code, Text string }
		run("app not installed", chromedp.Click("#nav-search", chromedp.ByID), search(pipeline),
			eval(`({code: document.getElementById("search-error").dataset.code, text: document.getElementById("search-error").textContent})`, &shown))
		art.take(ctx, "app-not-installed")
		if shown.Code != "app_not_installed" || !strings.Contains(shown.Text, "not installed") || !strings.Contains(shown.Text, "Hint:") {
			t.Fatalf("without the app the page shows %+v", shown)
		}
		setApp(t, s, "PUT", user)
	} else {
		t.Log("no apps API in this build: the app_not_installed step is skipped")
	}

	// A narrow screen: nothing wider than the viewport.
	var scrollWidth int
	run("narrow",
		emulation.SetDeviceMetricsOverride(390, 844, 2, true),
		chromedp.Navigate(loc),
		chromedp.WaitVisible("#search-view", chromedp.ByID),
		waitJS(`document.getElementById("search-view").dataset.state === "done" && document.getElementById("fields").dataset.state === "done"`),
		eval(`document.documentElement.scrollWidth`, &scrollWidth))
	art.take(ctx, "narrow")
	if scrollWidth > 390 {
		t.Errorf("at 390 px the page is %d px wide", scrollWidth)
	}

	// Sign out: the page asks to sign in, and the old cookie opens nothing.
	var status int
	run("sign out",
		emulation.SetDeviceMetricsOverride(1280, 800, 1, false),
		chromedp.Click("#logout", chromedp.ByID),
		chromedp.WaitVisible("#login-form", chromedp.ByID),
		chromedp.Evaluate(`fetch("/ui/session").then(r => r.status)`, &status, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	art.take(ctx, "signed-out")
	if status != 401 {
		t.Fatalf("after sign-out /ui/session answers %d", status)
	}
}

// timelineBarsJS finds the timeline's bars on its canvas: runs of columns with bar-coloured
// pixels, each with its height in pixels.
const timelineBarsJS = `(() => {
	const n = document.getElementById("timeline"), c = n.querySelector("canvas"), g = c.getContext("2d");
	const w = c.width, h = c.height, d = g.getImageData(0, 0, w, h).data;
	const bar = (x, y) => { const i = (y * w + x) * 4; return Math.abs(d[i] - 37) < 16 && Math.abs(d[i+1] - 99) < 16 && Math.abs(d[i+2] - 235) < 16 && d[i+3] > 200; };
	const bars = []; let cur = null;
	for (let x = 0; x < w; x++) {
		let k = 0; for (let y = 0; y < h; y++) if (bar(x, y)) k++;
		if (k === 0) { cur = null; continue; }
		if (!cur) { cur = {x0: x, x1: x, h: 0}; bars.push(cur); }
		cur.x1 = x; cur.h = Math.max(cur.h, k);
	}
	return {buckets: n.dataset.buckets, total: n.dataset.total, events: document.querySelectorAll("#events > li").length, bars};
})()`

// checkBars checks the bars' heights are proportional to the counts, the tallest
// bar standing for the largest count.
func checkBars(t *testing.T, bars []struct{ X0, X1, H int }, counts []int) {
	t.Helper()
	maxH, maxC := 0, 0
	for _, b := range bars {
		maxH = max(maxH, b.H)
	}
	for _, c := range counts {
		maxC = max(maxC, c)
	}
	for i, b := range bars {
		want := float64(counts[i]) / float64(maxC) * float64(maxH)
		if math.Abs(float64(b.H)-want) > 2.5 {
			t.Errorf("bar %d is %d px high, want %.1f (count %d of %d)", i, b.H, want, counts[i], maxC)
		}
	}
}

// setApp installs (PUT) or uninstalls (DELETE) the log search app on the default
// cluster, reporting false when this build has no apps API.
func setApp(t *testing.T, s *svcdtest.Service, method string, user []string) bool {
	t.Helper()
	r, err := s.Do(method, "/v1/apps/logsearch?organization=default&cluster=default", nil, user...)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status == 404 && strings.Contains(string(r.Body), "route_not_found") {
		return false
	}
	if r.Status >= 300 {
		t.Fatalf("%s the log search app: %d %s", method, r.Status, r.Body)
	}
	return true
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// consoleGatewayRules checks the console's session rules over plain HTTP.
func consoleGatewayRules(t *testing.T, s *svcdtest.Service) {
	t.Helper()
	s.Must(415, "POST", "/ui/login", "username=admin&password=x", "Content-Type", "application/x-www-form-urlencoded", "Authorization", "")
	s.Must(401, "POST", "/ui/login", map[string]string{"username": "admin", "password": "wrong"}, "Authorization", "")
	r := s.Must(200, "POST", "/ui/login", map[string]string{"username": "admin", "password": adminPassword}, "Authorization", "")
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "svc_session" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("console sign-in cookie %+v", cookie)
	}
	var sess struct {
		CSRF string `json:"csrf_token"`
	}
	r.JSON(t, &sess)
	c := "svc_session=" + cookie.Value
	s.Must(401, "GET", "/v1/me", nil, "Authorization", "", "Cookie", c)
	s.Must(401, "GET", "/ui/api/me", nil, "Authorization", "", "X-CSRF-Token", sess.CSRF)
	s.Must(403, "GET", "/ui/api/me", nil, "Authorization", "", "Cookie", c)
	s.Must(403, "GET", "/ui/api/me", nil, "Authorization", "", "Cookie", c, "X-CSRF-Token", "forged")
	s.Must(200, "GET", "/ui/api/me", nil, "Authorization", "", "Cookie", c, "X-CSRF-Token", sess.CSRF)
	s.Must(404, "GET", "/ui/api/../health", nil, "Authorization", "", "Cookie", c, "X-CSRF-Token", sess.CSRF)
	s.Must(200, "GET", "/ui", nil, "Authorization", "") // redirected to /ui/
	s.Must(200, "GET", "/ui/assets/uPlot.min.js", nil, "Authorization", "")
	s.Must(204, "POST", "/ui/logout", nil, "Authorization", "", "Cookie", c, "X-CSRF-Token", sess.CSRF)
	s.Must(401, "GET", "/ui/api/me", nil, "Authorization", "", "Cookie", c, "X-CSRF-Token", sess.CSRF)
}

// TestBenchConsole is `go tool task bench-console`: the time from pressing Enter in the
// console to the timeline and the first 100 events painted, over SVC_BENCH_EVENTS events
// (default 1,000,000) of a day of web-server logs, beside the same search request sent
// by a Go client with keep-alive, as a ratio, with where the page's time went. Runs only
// with SVC_BENCH_CONSOLE=1.
func TestBenchConsole(t *testing.T) {
	if os.Getenv("SVC_BENCH_CONSOLE") == "" {
		t.Skip("a benchmark: set SVC_BENCH_CONSOLE=1 (go tool task bench-console)")
	}
	events := 1_000_000
	if v := os.Getenv("SVC_BENCH_EVENTS"); v != "" {
		fmt.Sscan(v, &events)
	}
	runs := 5
	fmt.Printf("load average before: %s", loadAverage())
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	ctx := svcdtest.BrowserFor(t, 30*time.Minute)
	installApp(t, s, "logsearch")
	s.Must(200, "POST", "/services/collector/event", `{"time": 1700000000, "event": "seed"}`, "Authorization", "Splunk "+s.AdminKey)
	now := time.Now().Unix()
	// In slices, each well inside the query timeout on a loaded machine.
	for from := 0; from < events; from += 100_000 {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": webLogSQL(now, from, min(100_000, events-from))})
	}
	// Every twentieth event (number % 20 = 1) is an error-log line; the rest are access lines.
	access := events - (events+18)/20
	spl := "sourcetype=access_combined"
	body := map[string]any{"spl": spl, "earliest": "-24h", "latest": "now", "include_field_statistics": false}
	var raw, page []float64
	phases := map[string][]float64{}
	run := func(actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatal(err)
		}
	}
	run(emulation.SetDeviceMetricsOverride(1280, 800, 1, false), chromedp.Navigate(s.URL+"/ui/"), chromedp.WaitVisible("#login-form", chromedp.ByID),
		chromedp.SendKeys("#username", "admin", chromedp.ByID), chromedp.SendKeys("#password", adminPassword, chromedp.ByID),
		chromedp.Click("#login", chromedp.ByID), chromedp.WaitVisible("#app", chromedp.ByID),
		chromedp.Evaluate(`document.getElementById("range").value = "-24h"; document.getElementById("spl").value = `+jsString(spl), nil))
	// The raw call is the page's request as the API has it: a session of the same user,
	// the same scope parameters and body.
	session := []string{"Authorization", "Bearer " + login(t, s, "admin", adminPassword)}
	calls := 0
	rawCall := func() (float64, apiSearch, int) {
		calls++
		body["query_id"] = fmt.Sprintf("bench-raw-%d", calls)
		start := time.Now()
		r := s.Must(200, "POST", "/v1/spl/search?organization=default&cluster=default&database=default", body, session...)
		ms := float64(time.Since(start).Microseconds()) / 1000
		var res apiSearch
		r.JSON(t, &res)
		// The data is there: a full page of events, and the timeline counts (nearly) all
		// access lines of the day (the oldest seconds leave the window as time passes).
		inTimeline := 0
		for _, b := range res.Timeline {
			inTimeline += b.Count
		}
		if res.Rows != min(10000, access) || inTimeline > access || inTimeline < access*9/10 {
			t.Fatalf("the search found %d events, its timeline %d; %d access events were inserted", res.Rows, inTimeline, access)
		}
		return ms, res, len(r.Body)
	}
	pageSearch := func() (float64, map[string]float64) {
		var paint string
		var ok bool
		run(chromedp.Evaluate(`delete document.getElementById("search-view").dataset.paintMs`, nil),
			chromedp.Focus("#spl", chromedp.ByID), chromedp.KeyEvent("\r"),
			chromedp.Poll(`document.getElementById("search-view").dataset.paintMs !== undefined`, &ok, chromedp.WithPollingTimeout(5*time.Minute)),
			chromedp.Evaluate(`document.getElementById("search-view").dataset.paintMs`, &paint))
		var ph map[string]float64
		run(chromedp.Evaluate(consolePhasesJS, &ph),
			// The page's field statistics come next; the raw call must not share the engine with them.
			chromedp.Poll(`document.getElementById("fields").dataset.state === "done"`, &ok, chromedp.WithPollingTimeout(5*time.Minute)))
		var n, total int
		var pageTotal string
		run(chromedp.Evaluate(`document.querySelectorAll("#events > li").length`, &n), chromedp.Evaluate(`document.getElementById("timeline").dataset.total`, &pageTotal))
		var ms float64
		fmt.Sscan(paint, &ms)
		fmt.Sscan(pageTotal, &total)
		if n != min(100, access) || total > access || total < access*9/10 {
			t.Fatalf("%d events painted, timeline of %d events; want %d and about %d", n, total, min(100, access), access)
		}
		return ms, ph
	}
	for i := range runs + 1 {
		// The page and the raw call take turns going first, so neither always finds the
		// other's work in the engine's caches.
		var rawMs, pageMs float64
		var res apiSearch
		var size int
		var ph map[string]float64
		if i%2 == 0 {
			rawMs, res, size = rawCall()
			pageMs, ph = pageSearch()
		} else {
			pageMs, ph = pageSearch()
			rawMs, res, size = rawCall()
		}
		if i == 0 {
			continue // warm-up
		}
		raw, page = append(raw, rawMs), append(page, pageMs)
		for k, v := range ph {
			phases[k] = append(phases[k], v)
		}
		t.Logf("run %d: raw API %.1f ms (%d bytes, search %.1f ms), Enter → painted %.1f ms", i, rawMs, size, res.Statistics.Elapsed*1000, pageMs)
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	mr, mp := median(raw), median(page)
	fmt.Printf("console over %d events, median of %d runs:\n  raw API call                         %8.1f ms  1.00\n  Enter → timeline + 100 events painted %7.1f ms  %.2f\n",
		events, runs, mr, mp, mp/mr)
	own := make([]float64, len(page))
	for i := range own {
		own[i] = phases["total"][i] - phases["2 server (to first byte)"][i]
	}
	fmt.Printf("  the page's own cost (Enter → painted minus its request's time to first byte): median %.1f ms\n", median(own))
	fmt.Println("where the page's time went (median of each phase, ms):")
	for _, k := range slices.Sorted(maps.Keys(phases)) {
		fmt.Printf("  %-28s %8.1f\n", k, median(phases[k]))
	}
	fmt.Printf("load average after: %s", loadAverage())
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown\n"
	}
	return string(b)
}

// consolePhasesJS reads where the page's time went in the last search, from its
// performance marks and the resource timing of the search request (milliseconds).
const consolePhasesJS = `(() => {
	const marks = performance.getEntriesByType("mark"), m = Object.fromEntries(marks.map(e => [e.name.replace("search:", ""), e.startTime]));
	const r = performance.getEntriesByType("resource").find(e => e.name.includes("/ui/api/spl/search"));
	const d = (a, b) => Math.round((b - a) * 10) / 10;
	return {
		"1 to request": d(m.start, r.requestStart),
		"2 server (to first byte)": d(r.requestStart, r.responseStart),
		"2a of which the search": d(0, marks.find(e => e.name === "search:parsed").detail),
		"3 download": d(r.responseStart, r.responseEnd),
		"4 text+JSON.parse": d(r.responseEnd, m.parsed),
		"5 events DOM": d(m.parsed, m.events),
		"6 stages DOM": d(m.events, m.stages),
		"7 timeline (uPlot)": d(m.stages, m.timeline),
		"8 rest, to the frame": d(m.timeline, m.frame),
		"9 style+layout+paint": d(m.frame, m.painted),
		"total": d(m.start, m.painted),
	};
})()`

// webLogSQL inserts events from..from+n-1 of a day of web-server logs ending at now: times
// spread over the 24 hours, with a 20-minute incident six hours ago (503s); 12 hosts,
// access logs (95%) and error logs, status codes, methods, paths, client addresses,
// user agents, sizes and durations, and an access-combined _raw line built from them.
func webLogSQL(now int64, from, n int) string {
	return fmt.Sprintf(`INSERT INTO logsearch_events
SELECT t AS _time, raw AS _raw, host, source, sourcetype, status, method, path, bytes, duration_ms, clientip FROM (
	SELECT number, cityHash64(number) AS h, cityHash64(number, 1) AS g, number %% 20 = 0 AS incident, number %% 20 = 1 AS err,
		toDateTime64(%d, 3, 'UTC') - toIntervalMillisecond(if(incident, 21600000 + h %% 1200000, h %% 86400000)) AS t,
		concat('web-', leftPad(toString(g %% 12 + 1), 2, '0')) AS host,
		if(err, '/var/log/nginx/error.log', '/var/log/nginx/access.log') AS source,
		if(err, 'nginx_error', 'access_combined') AS sourcetype,
		['GET', 'GET', 'GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE', 'HEAD'][g %% 10 + 1] AS method,
		concat('/api/v1/', ['users', 'orders', 'items', 'cart', 'search', 'login', 'health'][intDiv(g, 10) %% 7 + 1], '/', toString(intDiv(h, 7) %% 5000)) AS path,
		multiIf(incident, 503, h %% 100 < 80, 200, h %% 100 < 88, 304, h %% 100 < 94, 404, h %% 100 < 97, 302, h %% 100 < 99, 500, 403) AS status,
		intDiv(g, 70) %% 50000 AS bytes,
		round(exp((intDiv(h, 13) %% 1000) / 125) / 10, 1) AS duration_ms,
		IPv4NumToString(toUInt32(intDiv(g, 3) %% 4294967296)) AS clientip,
		['Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) Safari/605.1.15',
			'curl/8.5.0', 'Go-http-client/1.1', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5) Mobile/15E148'][intDiv(g, 11) %% 5 + 1] AS ua,
		if(err, concat(formatDateTime(t, '%%Y/%%m/%%d %%H:%%i:%%S'), ' [error] ', toString(h %% 30000), '#0: *', toString(number),
				' upstream timed out (110: Connection timed out) while reading response header from upstream, client: ', clientip,
				', request: "', method, ' ', path, ' HTTP/1.1"'),
			concat(clientip, ' - - [', formatDateTime(t, '%%d/%%b/%%Y:%%H:%%i:%%S +0000'), '] "', method, ' ', path, ' HTTP/1.1" ',
				toString(status), ' ', toString(bytes), ' "-" "', ua, '" ', toString(duration_ms))) AS raw
	FROM numbers(%d, %d))`, now, from, n)
}
