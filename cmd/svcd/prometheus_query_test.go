package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/teststorage"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/promapi"
	"github.com/svc-data/svc/query/promread"
	"github.com/svc-data/svc/query/promstore"
	"github.com/svc-data/svc/query/sqlquote"
)

// promT0 is the first sample's time (ms); series run an hour at 15 s.
const promT0 = int64(1_700_000_000_000)

// promSeries is the test data: counters with a reset, a series without the path label,
// a gauge with a plain NaN and a stale marker, and a native histogram series.
func promSeries() []promread.SeriesSamples {
	var out []promread.SeriesSamples
	for _, job := range []string{"api", "db"} {
		for i := range 3 {
			ls := []string{"__name__", "http_requests_total", "job", job, "instance", fmt.Sprintf("10.0.0.%d:9090", i)}
			if i < 2 {
				ls = append(ls, "path", fmt.Sprintf("/v%d", i))
			}
			var ss []promread.Sample
			v := 0.0
			for k := range 240 {
				v += float64(i + 1)
				if job == "db" && k == 120 {
					v = 1 // a counter reset
				}
				ss = append(ss, promread.Sample{T: promT0 + int64(k)*15000, F: v})
			}
			out = append(out, promread.SeriesSamples{Labels: labels.FromStrings(ls...), Samples: ss})
		}
	}
	var g []promread.Sample
	for k := range 240 {
		f := math.Sin(float64(k) / 10)
		switch k {
		case 50:
			f = math.NaN()
		case 100:
			f = math.Float64frombits(value.StaleNaN)
		}
		g = append(g, promread.Sample{T: promT0 + int64(k)*15000, F: f})
	}
	out = append(out, promread.SeriesSamples{Labels: labels.FromStrings("__name__", "room_temperature", "room", "a b\"c"), Samples: g})
	var h []promread.Sample
	for k := range 240 {
		n := float64(k + 1)
		h = append(h, promread.Sample{T: promT0 + int64(k)*15000, H: &histogram.FloatHistogram{
			Schema: 0, ZeroThreshold: 0.001, ZeroCount: n, Count: 4 * n, Sum: 10 * n,
			PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}}, PositiveBuckets: []float64{n, n},
			NegativeSpans: []histogram.Span{{Offset: 1, Length: 1}}, NegativeBuckets: []float64{n},
		}})
	}
	out = append(out, promread.SeriesSamples{Labels: labels.FromStrings("__name__", "request_latency_seconds", "job", "api"), Samples: h})
	return out
}

// referenceAPI is the same API code over the upstream in-memory storage loaded with ss.
// Series are created in label order: Prometheus's storage answers unsorted selections
// (plain selectors, /series, and so what a limit keeps) in creation order, ours in label
// order, and neither order is a contract.
func referenceAPI(t *testing.T, ss []promread.SeriesSamples) *promapi.API {
	st := teststorage.New(t)
	app := st.AppenderV2(context.Background())
	ss = slices.Clone(ss)
	slices.SortFunc(ss, func(a, b promread.SeriesSamples) int { return labels.Compare(a.Labels, b.Labels) })
	for _, s := range ss {
		for _, smp := range s.Samples {
			if _, err := app.Append(0, s.Labels, 0, smp.T, smp.F, nil, smp.H, storage.AppendV2Options{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	a := promapi.NewOver(promapi.Config{}, st, st)
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// TestPrometheusQueryAPIMatchesUpstream loads the same series into a database through the
// engine and into Prometheus's in-memory storage, and checks that every query endpoint
// of a real svcd answers what Prometheus's own API answers over the in-memory storage;
// then the bad-data, limit and tenancy rules.
func TestPrometheusQueryAPIMatchesUpstream(t *testing.T) {
	svcdtest.Requirements(t)
	eng, err := clickhouse.NewProcess(clickhouse.ProcessConfig{Binary: svcdtest.Binary(t, "chengine"), Lib: chtest.Lib(t),
		DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer eng.Shutdown(context.Background())
	direct := chtest.Client(t, eng.URL())
	s := svcdtest.Start(t, "SVC_CLICKHOUSE_URL="+eng.URL(), "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	key := "Bearer " + s.AdminKey

	// Gated until the app is installed.
	r := s.Must(403, "GET", "/prometheus/api/v1/query?query=1%2B1", nil)
	if !strings.Contains(string(r.Body), "app_not_installed") {
		t.Fatalf("not installed: %s", r.Body)
	}
	installApp(t, s, catalog.AppPrometheus)

	var orgs struct{ Organizations []struct{ ID string } }
	s.Must(200, "GET", "/v1/organizations", nil).JSON(t, &orgs)
	db := catalog.EngineDatabase(uuid.MustParse(orgs.Organizations[0].ID), catalog.DefaultDatabase)
	ctx := context.Background()
	for _, st := range promstore.DDL(db) {
		if err := direct.Exec(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	data := promSeries()
	if err := (promread.SQLLoader{Engine: direct, Database: db}).Load(ctx, data); err != nil {
		t.Fatal(err)
	}
	if err := direct.Exec(ctx, "INSERT INTO "+sqlquote.Ident(db)+".prometheus_metrics VALUES ('http_requests_total', 'counter', '', 'Requests served.')"); err != nil {
		t.Fatal(err)
	}
	ref := referenceAPI(t, data)

	compareWithUpstream(t, s, key, ref)
	sec := func(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }
	mid := sec(promT0 + 1800_000)

	// Metadata comes from the metrics table.
	var md struct {
		Status string
		Data   map[string][]promread.Metadata
	}
	s.Must(200, "GET", "/prometheus/api/v1/metadata?metric=http_requests_total", nil).JSON(t, &md)
	if want := []promread.Metadata{{Type: "counter", Help: "Requests served."}}; md.Status != "success" || !reflect.DeepEqual(md.Data["http_requests_total"], want) {
		t.Errorf("metadata: %+v", md)
	}
	var bi struct {
		Status string
		Data   struct{ Version string }
	}
	s.Must(200, "GET", "/prometheus/api/v1/status/buildinfo", nil).JSON(t, &bi)
	if bi.Status != "success" || !strings.HasPrefix(bi.Data.Version, "3.") {
		t.Errorf("buildinfo: %+v", bi)
	}
	// The database by parameter or header: another database has none of these series.
	s.Must(200, "POST", "/v1/databases", map[string]string{"name": "other"})
	for _, sel := range [][]string{{"/prometheus/api/v1/query?database=other&query=http_requests_total&time=" + mid}, {"/prometheus/api/v1/query?query=http_requests_total&time=" + mid, "x-service-database", "other"}} {
		r := s.Must(200, "GET", sel[0], nil, sel[1:]...)
		if !strings.Contains(string(r.Body), `"result":[]`) {
			t.Errorf("database other: %s", r.Body)
		}
	}
	s.Must(404, "GET", "/prometheus/api/v1/query?database=nosuch&query=up", nil)

	// Another organization on the same engine sees none of these series.
	admin := login(t, s, "admin", adminPassword)
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "eve", "password": "eve's password"}, "Authorization", "Bearer "+admin)
	eve := login(t, s, "eve", "eve's password")
	s.Must(200, "POST", "/v1/organizations", map[string]string{"name": "other-org"}, "Authorization", "Bearer "+eve)
	s.Must(200, "POST", "/v1/clusters?organization=other-org", map[string]any{"name": "c1", "replicas": 1,
		"size": map[string]any{"cpu_cores": 1, "memory_gib": 4}}, "Authorization", "Bearer "+eve)
	s.Must(200, "PUT", "/v1/apps/prometheus?organization=other-org&cluster=c1", nil, "Authorization", "Bearer "+eve)
	var ek struct{ Token string }
	s.Must(200, "POST", "/v1/keys?organization=other-org&cluster=c1", map[string]any{"name": "k", "permission": "read_only"},
		"Authorization", "Bearer "+eve).JSON(t, &ek)
	for _, q := range []string{"/query?query=http_requests_total&time=" + mid, "/series?match[]=%7B__name__%3D~%22.%2B%22%7D",
		"/labels", "/label/job/values"} {
		r := s.Must(200, "GET", "/prometheus/api/v1"+q, nil, "Authorization", "Bearer "+ek.Token)
		if strings.Contains(string(r.Body), "http_requests_total") || strings.Contains(string(r.Body), `"api"`) {
			t.Errorf("other organization sees series: %s %s", q, r.Body)
		}
	}

	// A custom-role key reads only with a SELECT grant on the app's tables.
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE prom_reader"})
	var rk struct{ Token string }
	s.Must(200, "POST", "/v1/keys", map[string]any{"name": "roles", "database_roles": []string{"prom_reader"}}).JSON(t, &rk)
	r = s.Must(403, "GET", "/prometheus/api/v1/query?query=http_requests_total&time="+mid, nil, "Authorization", "Bearer "+rk.Token)
	if !strings.Contains(string(r.Body), `"forbidden"`) || !strings.Contains(string(r.Body), "GRANT SELECT") {
		t.Errorf("custom role without grant: %s", r.Body)
	}
	for _, tbl := range []string{"prometheus_tags", "prometheus_data", "prometheus_histograms"} {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": "GRANT SELECT ON default." + tbl + " TO prom_reader"})
	}
	r = s.Must(200, "GET", "/prometheus/api/v1/query?query=count(http_requests_total)&time="+mid, nil, "Authorization", "Bearer "+rk.Token)
	if !strings.Contains(string(r.Body), `"6"`) {
		t.Errorf("custom role with grants: %s", r.Body)
	}

	// A write-only key may not query.
	var wk struct{ Token string }
	s.Must(200, "POST", "/v1/keys", map[string]any{"name": "w", "permission": "write_only"}).JSON(t, &wk)
	s.Must(403, "GET", "/prometheus/api/v1/query?query=up", nil, "Authorization", "Bearer "+wk.Token)
}

// TestPrometheusQueryLimits: the engine's max samples answers Prometheus's execution
// error (422), a request's timeout its timeout error (503), bad parameters bad_data (400).
func TestPrometheusQueryLimits(t *testing.T) {
	svcdtest.Requirements(t)
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword, "SVC_PROMQL_MAX_SAMPLES=1000")
	installApp(t, s, catalog.AppPrometheus)
	check := func(form url.Values, wantStatus int, wantType, wantText string) {
		t.Helper()
		r := s.Must(wantStatus, "GET", "/prometheus/api/v1/query_range?"+form.Encode(), nil)
		var e struct{ Status, ErrorType, Error string }
		r.JSON(t, &e)
		if e.Status != "error" || e.ErrorType != wantType || !strings.Contains(e.Error, wantText) {
			t.Errorf("%v: %s", form, r.Body)
		}
	}
	check(url.Values{"query": {"vector(1)"}, "start": {"0"}, "end": {"5000"}, "step": {"1"}}, 422, "execution", "too many samples")
	// A deadline already past when evaluation starts: a timeout, whatever the machine's speed.
	check(url.Values{"query": {"sum(vector(1))"}, "start": {"0"}, "end": {"900"}, "step": {"1"}, "timeout": {"0.000001"}},
		503, "timeout", "")
	check(url.Values{"query": {"vector(1)"}, "start": {"0"}, "end": {"100"}, "step": {"1"}, "timeout": {"soon"}}, 400, "bad_data", "timeout")
	// Grafana's health check.
	r := s.Must(200, "GET", "/prometheus/api/v1/query?query=1%2B1&time=1", nil)
	if !strings.Contains(string(r.Body), `"result":[1,"2"]`) {
		t.Errorf("1+1: %s", r.Body)
	}
}

// compareWithUpstream sends every query endpoint's calls over the test data to svcd and
// to the reference API and wants identical answers.
func compareWithUpstream(t *testing.T, s *svcdtest.Service, key string, ref *promapi.API) {
	t.Helper()
	sec := func(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }
	start, end, mid := sec(promT0), sec(promT0+3600_000), sec(promT0+1800_000)
	type call struct {
		method, path string
		form         url.Values
	}
	calls := []call{
		{"GET", "/query", url.Values{"query": {"1+1"}, "time": {mid}}},
		{"GET", "/query", url.Values{"query": {"http_requests_total"}, "time": {mid}}},
		{"POST", "/query", url.Values{"query": {`http_requests_total{path=""}`}, "time": {mid}}},
		{"GET", "/query", url.Values{"query": {`http_requests_total{path!~"/v1|"}`}, "time": {mid}}},
		{"GET", "/query", url.Values{"query": {`{__name__=~"http_.*", job!="db"}`}, "time": {mid}}},
		{"GET", "/query", url.Values{"query": {`http_requests_total{instance=~"10\\.0\\.0\\.[12].*"}[1m]`}, "time": {mid}}},
		{"GET", "/query", url.Values{"query": {"room_temperature"}, "time": {sec(promT0 + 50*15000)}}},
		{"GET", "/query", url.Values{"query": {"room_temperature"}, "time": {sec(promT0 + 100*15000)}}},
		{"GET", "/query", url.Values{"query": {"request_latency_seconds"}, "time": {mid}}},
		{"GET", "/query", url.Values{"query": {"histogram_quantile(0.9, rate(request_latency_seconds[5m]))"}, "time": {mid}}},
		{"GET", "/query", url.Values{"query": {"sum by (job) (rate(http_requests_total[5m]))"}, "time": {mid}, "lookback_delta": {"1m"}}},
		{"GET", "/query", url.Values{"query": {"http_requests_total"}, "time": {mid}, "limit": {"2"}}},
		{"GET", "/query_range", url.Values{"query": {"rate(http_requests_total[5m])"}, "start": {start}, "end": {end}, "step": {"60"}}},
		{"POST", "/query_range", url.Values{"query": {"sum by (job) (rate(http_requests_total[5m]))"}, "start": {start}, "end": {end}, "step": {"15s"}}},
		{"GET", "/query_range", url.Values{"query": {"room_temperature"}, "start": {start}, "end": {end}, "step": {"30"}}},
		{"GET", "/query_range", url.Values{"query": {"histogram_count(request_latency_seconds)"}, "start": {start}, "end": {end}, "step": {"300"}}},
		{"GET", "/series", url.Values{"match[]": {`http_requests_total{job="api"}`, "room_temperature"}, "start": {start}, "end": {end}}},
		{"POST", "/series", url.Values{"match[]": {`{__name__=~".+"}`}, "start": {start}, "end": {end}, "limit": {"3"}}},
		{"GET", "/labels", url.Values{"start": {start}, "end": {end}}},
		{"POST", "/labels", url.Values{"match[]": {"room_temperature"}, "start": {start}, "end": {end}}},
		{"GET", "/label/job/values", url.Values{"start": {start}, "end": {end}}},
		{"GET", "/label/__name__/values", url.Values{"start": {start}, "end": {end}}},
		{"GET", "/label/path/values", url.Values{"match[]": {`{job="api"}`}, "start": {start}, "end": {end}, "limit": {"1"}}},
		{"GET", "/query_exemplars", url.Values{"query": {"http_requests_total"}, "start": {start}, "end": {end}}},
		// Bad data: Prometheus's own error answers.
		{"GET", "/query", url.Values{"query": {"sum("}}},
		{"GET", "/query_range", url.Values{"query": {"up"}, "start": {end}, "end": {start}, "step": {"15"}}},
		{"GET", "/query_range", url.Values{"query": {"up"}, "start": {start}, "end": {end}, "step": {"0"}}},
		{"GET", "/query", url.Values{"query": {"up"}, "time": {"yesterday"}}},
		{"GET", "/label/job/values", url.Values{"limit": {"x"}}},
	}
	for _, c := range calls {
		var body any
		path := "/prometheus/api/v1" + c.path
		hdr := []string{"Authorization", key}
		if c.method == "GET" {
			path += "?" + c.form.Encode()
		} else {
			body = c.form.Encode()
			hdr = append(hdr, "Content-Type", "application/x-www-form-urlencoded")
		}
		got, err := s.Do(c.method, path, body, hdr...)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(c.method, path, nil)
		if c.method == "POST" {
			req = httptest.NewRequest(c.method, path, strings.NewReader(c.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		rec := httptest.NewRecorder()
		ref.Serve(rec, req, promapi.Request{})
		if got.Status != rec.Code || !sameJSON(got.Body, rec.Body.Bytes()) {
			t.Errorf("%s %s %v:\n svcd %d %s\n upstream %d %s", c.method, c.path, c.form, got.Status, got.Body, rec.Code, rec.Body.Bytes())
		}
	}

}

// TestPrometheusRemoteWriteThenQuery writes the test data through remote write
// (Prometheus's own client, the real pipeline) and wants every query endpoint to answer
// what Prometheus answers over its in-memory storage holding the same series.
func TestPrometheusRemoteWriteThenQuery(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	installApp(t, s, catalog.AppPrometheus)
	data := promSeries()
	s.WritePrometheus(s.AdminKey, "", promTimeSeries(data))
	compareWithUpstream(t, s, "Bearer "+s.AdminKey, referenceAPI(t, data))
}

// sameJSON compares two JSON documents by value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
