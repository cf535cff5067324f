package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/klauspost/compress/snappy"
	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/prometheus/prometheus/storage/remote"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/query/promstore"
)

// engineSQL runs a query on the default cluster's engine itself (the tables remote
// write fills are not in the catalog) and returns its TabSeparated answer.
func engineSQL(t *testing.T, s *svcdtest.Service, db, q string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.DataDir, "clusters", "*", "engine", "chengine.addr"))
	if len(files) != 1 {
		t.Fatalf("engine address files: %v", files)
	}
	addr, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := uuid.Parse(filepath.Base(filepath.Dir(filepath.Dir(files[0]))))
	if err != nil {
		t.Fatal(err)
	}
	secret, err := os.ReadFile(filepath.Join(s.DataDir, secretFile))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+strings.TrimSpace(string(addr))+"/?database="+db, strings.NewReader(q))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("default", enginePassword([]byte(strings.TrimSpace(string(secret))), cluster))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("engine answered %d to %s: %s", resp.StatusCode, q, raw)
	}
	return strings.TrimSpace(string(raw))
}

func seriesID(kv ...string) string {
	var ls []promstore.Label
	for i := 0; i < len(kv); i += 2 {
		ls = append(ls, promstore.Label{Name: kv[i], Value: kv[i+1]})
	}
	return promstore.SeriesID(ls).String()
}

func store(t *testing.T, c remote.WriteClient, raw []byte, attempt int) (remote.WriteResponseStats, error) {
	t.Helper()
	return c.Store(context.Background(), snappy.Encode(nil, raw), attempt)
}

// TestPrometheusRemoteWrite sends remote write 1.0 and 2.0 with Prometheus's own client
// to a real svcd and reads the exact rows back from the engine's tables: float samples
// with a stale marker's bits, an integer and a custom-bucket float native histogram,
// exemplars, metadata and series. A retried request lands once; bad requests get 400
// (which the client does not retry), 415, 401, 403.
func TestPrometheusRemoteWrite(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	v1 := s.PromWriteClient(s.AdminKey, "", remoteapi.WriteV1MessageType)
	t0 := int64(1_700_000_000_000)
	up := []prompb.Label{{Name: "__name__", Value: "prw_up"}, {Name: "instance", Value: "a:1"}, {Name: "job", Value: "api"}}
	req1 := &prompb.WriteRequest{
		Timeseries: []prompb.TimeSeries{
			{Labels: up, Samples: []prompb.Sample{{Value: 1, Timestamp: t0}, {Value: math.Float64frombits(value.StaleNaN), Timestamp: t0 + 15000}},
				Exemplars: []prompb.Exemplar{{Labels: []prompb.Label{{Name: "trace_id", Value: "abc"}}, Value: 1, Timestamp: t0}}},
			{Labels: []prompb.Label{{Name: "__name__", Value: "prw_latency"}, {Name: "job", Value: "api"}, {Name: "empty", Value: ""}},
				Histograms: []prompb.Histogram{{Count: &prompb.Histogram_CountInt{CountInt: 5}, Sum: 12.5, Schema: 0, ZeroThreshold: 0.001,
					ZeroCount: &prompb.Histogram_ZeroCountInt{ZeroCountInt: 1}, PositiveSpans: []prompb.BucketSpan{{Offset: 0, Length: 2}, {Offset: 1, Length: 1}},
					PositiveDeltas: []int64{1, 1, -1}, ResetHint: prompb.Histogram_NO, Timestamp: t0}}},
		},
		Metadata: []prompb.MetricMetadata{{Type: prompb.MetricMetadata_GAUGE, MetricFamilyName: "prw_up", Help: "Whether the target is up."}},
	}
	raw1, err := req1.Marshal()
	if err != nil {
		t.Fatal(err)
	}

	// Not installed: 403 naming the app, which the client does not retry.
	_, err = store(t, v1, raw1, 0)
	if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "app_not_installed") || errors.As(err, &remote.RecoverableError{}) {
		t.Fatalf("write before install: %v", err)
	}
	installApp(t, s, "prometheus")

	if _, err := store(t, v1, raw1, 0); err != nil {
		t.Fatalf("remote write 1.0: %v", err)
	}
	// 2.0, with the symbols table, per-series metadata and the written-counts headers.
	syms := writev2.NewSymbolTable()
	ref := func(kv ...string) []uint32 {
		var out []uint32
		for _, s := range kv {
			out = append(out, syms.Symbolize(s))
		}
		return out
	}
	req2 := &writev2.Request{Timeseries: []writev2.TimeSeries{
		{LabelsRefs: ref("__name__", "prw_v2_total", "job", "api"),
			Samples:   []writev2.Sample{{Value: 3, Timestamp: t0}, {Value: 4, Timestamp: t0 + 15000}},
			Exemplars: []writev2.Exemplar{{LabelsRefs: ref("trace_id", "xyz"), Value: 4, Timestamp: t0 + 15000}},
			Metadata:  writev2.Metadata{Type: writev2.Metadata_METRIC_TYPE_COUNTER, HelpRef: syms.Symbolize("Requests."), UnitRef: syms.Symbolize("requests")}},
		{LabelsRefs: ref("__name__", "prw_nhcb", "job", "api"),
			Histograms: []writev2.Histogram{{Count: &writev2.Histogram_CountFloat{CountFloat: 4}, Sum: 3, Schema: -53,
				PositiveSpans: []writev2.BucketSpan{{Offset: 0, Length: 2}}, PositiveCounts: []float64{1.5, 2.5},
				CustomValues: []float64{0.1, 1}, ResetHint: writev2.Histogram_RESET_HINT_GAUGE, Timestamp: t0}},
			Metadata: writev2.Metadata{Type: writev2.Metadata_METRIC_TYPE_HISTOGRAM}},
	}}
	req2.Symbols = syms.Symbols()
	raw2, err := req2.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	v2 := s.PromWriteClient(s.AdminKey, "", remoteapi.WriteV2MessageType)
	stats, err := store(t, v2, raw2, 0)
	if err != nil {
		t.Fatalf("remote write 2.0: %v", err)
	}
	if !stats.Confirmed || stats.Samples != 2 || stats.Histograms != 1 || stats.Exemplars != 1 {
		t.Fatalf("2.0 written counts: %+v", stats)
	}
	s.WaitPrometheus("")

	db := engineSQL(t, s, "default", "SELECT database FROM system.tables WHERE name = 'prometheus_data'")
	check := func(what, q, want string) {
		t.Helper()
		if got := engineSQL(t, s, db, q+" FORMAT TabSeparated"); got != want {
			t.Errorf("%s:\n got: %s\nwant: %s", what, got, want)
		}
	}
	idUp := seriesID("__name__", "prw_up", "instance", "a:1", "job", "api")
	idLat := seriesID("__name__", "prw_latency", "job", "api")
	idV2 := seriesID("__name__", "prw_v2_total", "job", "api")
	idNHCB := seriesID("__name__", "prw_nhcb", "job", "api")
	rows := func(lines ...string) string { return strings.Join(lines, "\n") }
	check("samples", "SELECT toString(id), toUnixTimestamp64Milli(timestamp), reinterpretAsUInt64(value) FROM prometheus_data ORDER BY toString(id), timestamp",
		sortedLines(
			fmt.Sprintf("%s\t%d\t%d", idUp, t0, math.Float64bits(1)),
			fmt.Sprintf("%s\t%d\t%d", idUp, t0+15000, value.StaleNaN),
			fmt.Sprintf("%s\t%d\t%d", idV2, t0, math.Float64bits(3)),
			fmt.Sprintf("%s\t%d\t%d", idV2, t0+15000, math.Float64bits(4))))
	check("series", "SELECT toString(id), metric_name, toJSONString(tags), toUnixTimestamp64Milli(min(min_time)), toUnixTimestamp64Milli(max(max_time)) "+
		"FROM prometheus_tags GROUP BY id, metric_name, tags ORDER BY metric_name",
		rows(
			fmt.Sprintf(`%s	prw_latency	{"job":"api"}	%d	%d`, idLat, t0, t0),
			fmt.Sprintf(`%s	prw_nhcb	{"job":"api"}	%d	%d`, idNHCB, t0, t0),
			fmt.Sprintf(`%s	prw_up	{"instance":"a:1","job":"api"}	%d	%d`, idUp, t0, t0+15000),
			fmt.Sprintf(`%s	prw_v2_total	{"job":"api"}	%d	%d`, idV2, t0, t0+15000)))
	// The engine computes the same ids from the tags (a TimeSeries table's DEFAULT).
	check("ids", "SELECT countIf(id != "+promstore.IDExpression+") FROM prometheus_tags", "0")
	// Every sample carries its metric's hash, the engine's cityHash64 of the name, so the
	// data table keeps a metric's series together.
	check("metric hashes", "SELECT count(), countIf(d.metric_hash = 0), countIf(d.metric_hash != cityHash64(t.metric_name)) "+
		"FROM prometheus_data AS d INNER JOIN (SELECT DISTINCT id, metric_name FROM prometheus_tags) AS t ON d.id = t.id", "4\t0\t0")
	check("histograms", "SELECT toString(id), toUnixTimestamp64Milli(timestamp), counter_reset_hint, schema, zero_threshold, zero_count, count, sum, "+
		"toJSONString(positive_spans), toJSONString(positive_buckets), toJSONString(negative_spans), toJSONString(negative_buckets), toJSONString(custom_values) "+
		"FROM prometheus_histograms ORDER BY schema DESC",
		rows(
			fmt.Sprintf(`%s	%d	2	0	0.001	1	5	12.5	[{"offset":0,"length":2},{"offset":1,"length":1}]	[1,2,1]	[]	[]	[]`, idLat, t0),
			fmt.Sprintf(`%s	%d	3	-53	0	0	4	3	[{"offset":0,"length":2}]	[1.5,2.5]	[]	[]	[0.1,1]`, idNHCB, t0)))
	check("exemplars", "SELECT toString(id), toUnixTimestamp64Milli(timestamp), value, toJSONString(labels) FROM prometheus_exemplars ORDER BY timestamp",
		rows(
			fmt.Sprintf(`%s	%d	1	{"trace_id":"abc"}`, idUp, t0),
			fmt.Sprintf(`%s	%d	4	{"trace_id":"xyz"}`, idV2, t0+15000)))
	check("metadata", "SELECT metric_family_name, type, unit, help FROM prometheus_metrics FINAL ORDER BY metric_family_name",
		rows("prw_nhcb\thistogram\t\t", "prw_up\tgauge\t\tWhether the target is up.", "prw_v2_total\tcounter\trequests\tRequests."))

	// A retried request (the client's attempt 1, same bytes) is acknowledged and lands once.
	if _, err := store(t, v1, raw1, 1); err != nil {
		t.Fatalf("retried remote write: %v", err)
	}
	if _, err := store(t, v2, raw2, 1); err != nil {
		t.Fatalf("retried remote write 2.0: %v", err)
	}
	s.WaitPrometheus("")
	check("rows after the retries", "SELECT (SELECT count() FROM prometheus_data), (SELECT count() FROM prometheus_histograms), (SELECT count() FROM prometheus_exemplars)",
		"4\t2\t2")

	// Bad data is 400 and not retried by the client.
	badRefs := &writev2.Request{Symbols: []string{"", "__name__"}, Timeseries: []writev2.TimeSeries{{LabelsRefs: []uint32{1, 7}, Samples: []writev2.Sample{{Value: 1, Timestamp: t0}}}}}
	rawBadRefs, _ := badRefs.Marshal()
	for name, c := range map[string]struct {
		client remote.WriteClient
		body   []byte
	}{"garbage": {v1, []byte("not a protobuf \xff\xff\xff")}, "2.0 garbage": {v2, []byte("\xff\xff")}, "2.0 label out of the symbols": {v2, rawBadRefs}} {
		_, err := store(t, c.client, c.body, 0)
		if err == nil || !strings.Contains(err.Error(), "400") || errors.As(err, &remote.RecoverableError{}) {
			t.Errorf("%s: %v; want a 400 the client does not retry", name, err)
		}
	}
	bad := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{{Name: "job", Value: "x"}}, Samples: []prompb.Sample{{Value: 1, Timestamp: t0}}}}}
	rawBad, _ := bad.Marshal()
	if _, err := store(t, v1, rawBad, 0); err == nil || !strings.Contains(err.Error(), "__name__") {
		t.Errorf("series without a metric name: %v", err)
	}
	post := func(headers ...string) *svcdtest.Response {
		r, err := s.Do("POST", "/prometheus/api/v1/write", snappy.Encode(nil, raw1), headers...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	auth := "Bearer " + s.AdminKey
	if r := post("Authorization", auth, "Content-Type", "application/x-protobuf;proto=io.prometheus.write.v3.Request", "Content-Encoding", "snappy"); r.Status != 415 {
		t.Errorf("unknown proto: %d %s", r.Status, r.Body)
	}
	if r := post("Authorization", auth, "Content-Type", "application/json", "Content-Encoding", "snappy"); r.Status != 415 {
		t.Errorf("json: %d %s", r.Status, r.Body)
	}
	if r := post("Authorization", auth, "Content-Type", "application/x-protobuf", "Content-Encoding", "zstd"); r.Status != 415 {
		t.Errorf("zstd: %d %s", r.Status, r.Body)
	}
	if r := post("Authorization", "", "Content-Type", "application/x-protobuf", "Content-Encoding", "snappy"); r.Status != 401 {
		t.Errorf("without a key: %d %s", r.Status, r.Body)
	}
	// ?database= selects the database; an unknown one is 404.
	if r, _ := s.Do("POST", "/prometheus/api/v1/write?database=nosuch", snappy.Encode(nil, raw1), "Content-Type", "application/x-protobuf", "Content-Encoding", "snappy"); r.Status != 404 {
		t.Errorf("unknown database: %d %s", r.Status, r.Body)
	}

	// A custom-role key writes only with INSERT granted.
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE prom_writer"})
	writer, _ := createKey(t, s, map[string]any{"name": "prom-writer", "database_roles": []string{"prom_writer"}})
	w := s.PromWriteClient(writer, "", remoteapi.WriteV1MessageType)
	other := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{{Name: "__name__", Value: "prw_granted"}}, Samples: []prompb.Sample{{Value: 7, Timestamp: t0}}}}}
	rawOther, _ := other.Marshal()
	if _, err := store(t, w, rawOther, 0); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("custom-role key without a grant: %v", err)
	}
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "GRANT INSERT ON default.* TO prom_writer"})
	if _, err := store(t, w, rawOther, 0); err != nil {
		t.Fatalf("custom-role key with INSERT: %v", err)
	}
	s.WaitPrometheus("")
	check("granted write", "SELECT count() FROM prometheus_data WHERE id = '"+seriesID("__name__", "prw_granted")+"'", "1")

	// The PromQL suite's loader: many samples in several requests, queryable on return.
	var series []prompb.TimeSeries
	for i := range 3 {
		ts := prompb.TimeSeries{Labels: []prompb.Label{{Name: "__name__", Value: "prw_load"}, {Name: "i", Value: fmt.Sprint(i)}}}
		for j := range svcdtest.PromWriteBatch/2 + 1 {
			ts.Samples = append(ts.Samples, prompb.Sample{Value: float64(j), Timestamp: t0 + int64(j)*1000})
		}
		series = append(series, ts)
	}
	series[0].Histograms = req1.Timeseries[1].Histograms
	s.WritePrometheus(s.AdminKey, "", series)
	check("loaded", "SELECT count(), uniqExact(id) FROM prometheus_data WHERE id IN (SELECT id FROM prometheus_tags WHERE metric_name = 'prw_load')",
		fmt.Sprintf("%d\t3", 3*(svcdtest.PromWriteBatch/2+1)))
	check("loaded histograms", "SELECT count() FROM prometheus_histograms WHERE id = '"+seriesID("__name__", "prw_load", "i", "0")+"'", "1")
}

// sortedLines joins lines sorted as the engine sorts strings.
func sortedLines(lines ...string) string {
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			if lines[j] < lines[i] {
				lines[i], lines[j] = lines[j], lines[i]
			}
		}
	}
	return strings.Join(lines, "\n")
}
