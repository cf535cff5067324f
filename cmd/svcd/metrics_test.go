package main

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

type metricsAnswer struct {
	StartTime string `json:"start_time"`
	EndTime   string `json:"end_time"`
	Resources []struct {
		Attributes []struct {
			Key   string
			Value struct{ StringValue string }
		}
		Scope   struct{ Name string }
		Metrics []struct {
			Source, Name, Unit, Type string
			AggregationTemporality   string
			IsMonotonic              *bool
			Points                   []struct {
				Attributes []struct {
					Key   string
					Value struct{ StringValue string }
				}
				TimeUnixNano string
				AsInt        *string
				AsDouble     *float64
			}
		}
	}
	PartialErrors []struct{ ClusterID, Code string } `json:"partial_errors"`
}

// latest returns the last point of metric (with attribute attr=val when attr is set).
func (m metricsAnswer) latest(metric, attr, val string) (int64, float64, string, bool) {
	for _, r := range m.Resources {
		for _, s := range r.Metrics {
			if s.Name != metric {
				continue
			}
			for i := len(s.Points) - 1; i >= 0; i-- {
				p := s.Points[i]
				match := attr == ""
				for _, a := range p.Attributes {
					if a.Key == attr && a.Value.StringValue == val {
						match = true
					}
				}
				if !match {
					continue
				}
				var n int64
				var d float64
				if p.AsInt != nil {
					n, _ = strconv.ParseInt(*p.AsInt, 10, 64)
				}
				if p.AsDouble != nil {
					d = *p.AsDouble
				}
				return n, d, p.TimeUnixNano, true
			}
		}
	}
	return 0, 0, "", false
}

// Metrics recorded for real: values match what the test did; every parameter rule.
func TestMetricsMatchWhatHappened(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword, "SVC_METRICS_INTERVAL=200ms")
	a := newClusterAdmin(t, s)
	c := a.create("m")
	key := a.key("m")
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "ev"}, key...)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "other"}, key...)
	for i := range 3 {
		s.Must(202, "POST", "/v1/tables/ev", rows(i*100, 100), key...)
	}
	s.Must(202, "POST", "/v1/tables/other", rows(0, 7), key...)
	reads := waitCountAs(t, s, key, "ev", 300)
	reads += waitCountAs(t, s, key, "other", 7)
	var orgs struct{ Organizations []struct{ ID, Name string } }
	s.Must(200, "GET", "/v1/organizations", nil, a.auth...).JSON(t, &orgs)
	orgID := ""
	for _, o := range orgs.Organizations {
		if o.Name == "default" {
			orgID = o.ID
		}
	}
	get := func(want int, v url.Values, auth ...string) metricsAnswer {
		t.Helper()
		if auth == nil {
			auth = a.auth
		}
		r := s.Must(want, "GET", "/v1/metrics?"+v.Encode(), nil, auth...)
		var m metricsAnswer
		if want == 200 {
			r.JSON(t, &m)
		}
		return m
	}
	all := "service.table.rows,service.table.storage.size,messaging.client.consumed.messages,service.cluster.cpu.allocated,service.cluster.memory.allocated,kafka.consumer_group.lag," +
		"service.connector.events,service.connector.errors,service.connector.buffer,service.connector.availability"
	scope := url.Values{"organization_id": {orgID}, "cluster_id": {c.ID}, "metric": {all}, "window_seconds": {"600"}}
	var m metricsAnswer
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		m = get(200, scope)
		n, _, _, ok := m.latest("service.table.rows", "table", "ev")
		consumed, _, _, _ := m.latest("messaging.client.consumed.messages", "", "")
		events, _, _, _ := m.latest("service.connector.events", "", "")
		return ok && n == 300 && consumed == 307 && events == 307, fmt.Sprintf("metrics never showed 300 rows of ev and 307 consumed and landed by the connector: %+v", m)
	})
	// The connector's series (issue 25 audit row 3: accepted names that answered no points).
	if dead, _, _, ok := m.latest("service.connector.errors", "", ""); !ok || dead != 0 {
		t.Fatalf("connector errors: %d %v, want 0 dead-lettered", dead, ok)
	}
	if up, _, _, ok := m.latest("service.connector.availability", "", ""); !ok || up != 1 {
		t.Fatalf("connector availability: %d %v, want 1", up, ok)
	}
	if _, _, _, ok := m.latest("service.connector.buffer", "", ""); !ok {
		t.Fatal("no connector buffer points")
	}
	if len(m.Resources) != 1 || m.Resources[0].Scope.Name == "" || len(m.PartialErrors) != 0 {
		t.Fatalf("resources %+v", m)
	}
	attrs := map[string]string{}
	for _, at := range m.Resources[0].Attributes {
		attrs[at.Key] = at.Value.StringValue
	}
	if attrs["service.organization.id"] != orgID || attrs["service.cluster.id"] != c.ID || attrs["service.cluster.name"] != "m" || attrs["service.producer"] == "" {
		t.Fatalf("resource attributes %v", attrs)
	}
	if n, _, _, _ := m.latest("service.table.rows", "table", "other"); n != 7 {
		t.Fatalf("rows of other: %d", n)
	}
	size, _, ts, _ := m.latest("service.table.storage.size", "table", "ev")
	if size <= 0 {
		t.Fatalf("storage size of ev: %d", size)
	}
	if ns, err := strconv.ParseInt(ts, 10, 64); err != nil || time.Since(time.Unix(0, ns)) > 10*time.Minute {
		t.Fatalf("timeUnixNano %q", ts)
	}
	if _, cpu, _, _ := m.latest("service.cluster.cpu.allocated", "", ""); cpu != 1 {
		t.Fatalf("cpu allocated %v", cpu)
	}
	if mem, _, _, _ := m.latest("service.cluster.memory.allocated", "", ""); mem != 4<<30 {
		t.Fatalf("memory allocated %d", mem)
	}
	if _, _, _, ok := m.latest("kafka.consumer_group.lag", "", ""); !ok {
		t.Fatal("no lag points")
	}
	for _, ser := range m.Resources[0].Metrics {
		if ser.Source != "internal.metrics" {
			t.Fatalf("source %q", ser.Source)
		}
		if (ser.Name == "messaging.client.consumed.messages" || ser.Name == "service.connector.events") && (ser.Type != "sum" || ser.AggregationTemporality != "cumulative" || ser.IsMonotonic == nil || !*ser.IsMonotonic) {
			t.Fatalf("consumed messages series %+v", ser)
		}
	}

	// filters: exact matches on attributes.
	f := url.Values{"organization_id": {orgID}, "cluster_id": {c.ID}, "metric": {"service.table.rows"}, "window_seconds": {"600"},
		"filters": {`{"table":"other"}`}}
	for _, ser := range get(200, f).Resources[0].Metrics {
		for _, p := range ser.Points {
			if p.Attributes[1].Value.StringValue != "other" {
				t.Fatalf("filtered point %+v", p)
			}
		}
	}
	// By names, and the default series.
	def := get(200, url.Values{"organization": {"default"}, "cluster": {"m"}, "window_seconds": {"600"}})
	if _, _, _, ok := def.latest("max_cpu_cores", "", ""); !ok {
		t.Fatalf("default series: %+v", def)
	}
	if _, _, _, ok := def.latest("max_memory_bytes", "", ""); !ok {
		t.Fatalf("default series: %+v", def)
	}
	// Baseline: the latest observation before the range.
	_, _, last, _ := m.latest("service.table.rows", "table", "ev")
	ns, _ := strconv.ParseInt(last, 10, 64)
	start := time.Unix(0, ns+1).UTC()
	b := url.Values{"organization_id": {orgID}, "cluster_id": {c.ID}, "metric": {"service.table.rows"}, "filters": {`{"table":"ev"}`},
		"start_time": {start.Format(time.RFC3339Nano)}, "end_time": {start.Add(time.Nanosecond).Format(time.RFC3339Nano)}}
	if _, _, _, ok := get(200, b).latest("service.table.rows", "", ""); ok {
		t.Fatal("a point in a 1 ns range after the last one")
	}
	b.Set("include_baseline", "true")
	if n, _, ts, ok := get(200, b).latest("service.table.rows", "", ""); !ok || n != 300 || ts > strconv.FormatInt(ns, 10) && len(ts) == len(last) {
		t.Fatalf("baseline %d %s %v (last %s)", n, ts, ok, last)
	}

	// Queries run: reads and writes counted per sample interval; their sum over the range is
	// what this test ran on the cluster.
	for range 3 {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT count() FROM ev"}, key...)
	}
	for range 2 {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": "INSERT INTO other SELECT * FROM ev"}, key...)
	}
	reads += 3
	type clusterMetrics struct {
		Metrics []struct {
			Name, Unit, Aggregation, Scope, Source string
			Points                                 []struct {
				Time    string
				Value   float64
				Replica string
			}
		}
	}
	rng := url.Values{"organization": {"default"}, "start_time": {time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)},
		"end_time": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		var cm clusterMetrics
		s.Must(200, "GET", "/v1/clusters/"+c.ID+"/metrics?"+rng.Encode(), nil, a.auth...).JSON(t, &cm)
		sums := map[string]float64{}
		replica := true
		for _, m := range cm.Metrics {
			for _, p := range m.Points {
				sums[m.Name] += p.Value
				if m.Scope == "replica" && p.Replica == "" {
					replica = false
				}
			}
		}
		if len(cm.Metrics) != 4 || !replica {
			t.Fatalf("cluster metrics %+v", cm)
		}
		if sums["total_read_queries"] > float64(reads) || sums["total_write_queries"] > 2 {
			t.Fatalf("more queries counted than run: %v, ran %d reads and 2 writes", sums, reads)
		}
		return sums["total_read_queries"] == float64(reads) && sums["total_write_queries"] == 2 && sums["max_cpu_cores"] > 0,
			fmt.Sprintf("counted %v, ran %d reads and 2 writes", sums, reads)
	})
	// By name, one metric; the rules: 400 naming the field.
	byName := url.Values{"organization": {"default"}, "cluster": {"m"}, "metrics": {"max_cpu_cores"},
		"start_time": rng["start_time"], "end_time": rng["end_time"]}
	var one clusterMetrics
	s.Must(200, "GET", "/v1/clusters/metrics?"+byName.Encode(), nil, a.auth...).JSON(t, &one)
	if len(one.Metrics) != 1 || one.Metrics[0].Name != "max_cpu_cores" || len(one.Metrics[0].Points) == 0 || one.Metrics[0].Points[0].Value != 1 {
		t.Fatalf("by name: %+v", one)
	}
	for q, field := range map[string]string{
		"organization=default&end_time=" + rng.Get("end_time"):                                                      "start_time",
		"organization=default&start_time=" + rng.Get("start_time"):                                                  "end_time",
		"organization=default&metrics=cpu&start_time=" + rng.Get("start_time") + "&end_time=" + rng.Get("end_time"): "metrics",
	} {
		r := s.Must(400, "GET", "/v1/clusters/"+c.ID+"/metrics?"+q, nil, a.auth...)
		if !strings.Contains(string(r.Body), `"field":"`+field+`"`) {
			t.Errorf("%s: %s", q, r.Body)
		}
	}
	s.Must(400, "GET", "/v1/clusters/metrics?organization=default&start_time="+url.QueryEscape(rng.Get("start_time"))+"&end_time="+url.QueryEscape(rng.Get("end_time")), nil, a.auth...)
	s.Must(403, "GET", "/v1/clusters/"+c.ID+"/metrics?"+rng.Encode(), nil, key...)

	// The cluster's ingestion connector: state and lag.
	type connector struct {
		ID, State, Topic string
		Lag              *int64
		RowsLanded       *int64 `json:"rows_landed"`
		Partitions       []struct{ Partition, Lag int64 }
		Stalled          []struct{ Partition int64 }
	}
	var con connector
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		s.Must(200, "GET", "/v1/connectors/"+c.ID+"?organization=default", nil, a.auth...).JSON(t, &con)
		return con.State == "running" && con.Lag != nil && *con.Lag == 0 && con.RowsLanded != nil && *con.RowsLanded == 307 && len(con.Partitions) > 0 &&
			con.Stalled != nil && len(con.Stalled) == 0, fmt.Sprintf("connector %+v", con)
	})
	s.Must(404, "GET", "/v1/connectors/"+uuid.NewString()+"?organization=default", nil, a.auth...)
	s.Must(403, "GET", "/v1/connectors/"+c.ID+"?organization=default", nil, key...)

	// A stopped cluster: a partial error, not a failure; the connector is stopped.
	a.cluster(200, "POST", "/v1/clusters/"+c.ID+"/stop", nil)
	s.Must(200, "GET", "/v1/connectors/"+c.ID+"?organization=default", nil, a.auth...).JSON(t, &con)
	if con.State != "stopped" {
		t.Fatalf("connector of a stopped cluster: %+v", con)
	}
	pe := get(200, scope)
	if len(pe.PartialErrors) != 1 || pe.PartialErrors[0].Code != "cluster_stopped" {
		t.Fatalf("metrics of a stopped cluster: %+v", pe)
	}

	// Every parameter rule: 400 naming the field.
	now := time.Now().UTC()
	rfc := func(t time.Time) string { return t.Format(time.RFC3339) }
	for _, bad := range []struct {
		q     string
		field string
	}{
		{"", "organization_id"},
		{"organization_id=nope", "organization_id"},
		{"organization_id=" + orgID + "&organization=default", "organization_id"},
		{"cluster_id=" + c.ID, "cluster_id"},
		{"organization_id=" + orgID + "&cluster_id=nope", "cluster_id"},
		{"organization=default", "cluster"},
		{"organization_id=" + orgID + "&metric=cpu", "metric"},
		{"organization_id=" + orgID + "&filters=" + url.QueryEscape(`{"table":`), "filters"},
		{"organization_id=" + orgID + "&filters=" + url.QueryEscape(`{"table":1}`), "filters"},
		{"organization_id=" + orgID + "&filters=" + url.QueryEscape(`["table"]`), "filters"},
		{"organization_id=" + orgID + "&filters=" + url.QueryEscape(`{"cluster_id":"x"}`), "filters"},
		{"organization_id=" + orgID + "&window_seconds=0", "window_seconds"},
		{"organization_id=" + orgID + "&window_seconds=604801", "window_seconds"},
		{"organization_id=" + orgID + "&window_seconds=1.5", "window_seconds"},
		{"organization_id=" + orgID + "&window_seconds=60&start_time=" + rfc(now.Add(-time.Hour)) + "&end_time=" + rfc(now), "window_seconds"},
		{"organization_id=" + orgID + "&start_time=" + rfc(now.Add(-time.Hour)), "end_time"},
		{"organization_id=" + orgID + "&end_time=" + rfc(now), "start_time"},
		{"organization_id=" + orgID + "&start_time=yesterday&end_time=" + rfc(now), "start_time"},
		{"organization_id=" + orgID + "&start_time=" + rfc(now) + "&end_time=" + rfc(now), "end_time"},
		{"organization_id=" + orgID + "&start_time=" + rfc(now.Add(-7*24*time.Hour-time.Second)) + "&end_time=" + rfc(now), "end_time"},
		{"organization_id=" + orgID + "&include_baseline=yes", "include_baseline"},
	} {
		r := s.Must(400, "GET", "/v1/metrics?"+bad.q, nil, a.auth...)
		if !strings.Contains(string(r.Body), `"field":"`+bad.field+`"`) {
			t.Errorf("%s: want field %s: %s", bad.q, bad.field, r.Body)
		}
	}
	// Exactly seven days and 604800 seconds are fine; API keys are refused.
	get(200, url.Values{"organization_id": {orgID}, "start_time": {rfc(now.Add(-7 * 24 * time.Hour))}, "end_time": {rfc(now)}})
	get(200, url.Values{"organization_id": {orgID}, "window_seconds": {"604800"}})
	s.Must(403, "GET", "/v1/metrics?organization=default&cluster=m&window_seconds=60", nil, key...)
}
