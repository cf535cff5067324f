package main

import (
	"net/url"
	"testing"
	"time"
)

// TestQueryCountsSurviveRestart: with no periodic sample due (an hour's interval), the
// read and write counts of the query API are stored when svcd stops, so the cluster's
// metrics still count them after the restart.
func TestQueryCountsSurviveRestart(t *testing.T) {
	s := startControlPlane(t, "SVC_METRICS_INTERVAL=1h")
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "qc"})
	for range 3 {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT count() FROM qc"})
	}
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "INSERT INTO qc SELECT * FROM qc"})
	s.Restart()

	a := newClusterAdmin(t, s)
	var list struct{ Clusters []clusterJSON }
	a.do(200, "GET", "/v1/clusters", nil).JSON(t, &list)
	if len(list.Clusters) != 1 {
		t.Fatalf("clusters %+v", list.Clusters)
	}
	rng := url.Values{"start_time": {time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)},
		"end_time": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, "metrics": {"total_read_queries,total_write_queries"}}
	var cm struct {
		Metrics []struct {
			Name   string
			Points []struct{ Value float64 }
		}
	}
	a.do(200, "GET", "/v1/clusters/"+list.Clusters[0].ID+"/metrics?"+rng.Encode(), nil).JSON(t, &cm)
	sums := map[string]float64{}
	for _, m := range cm.Metrics {
		for _, p := range m.Points {
			sums[m.Name] += p.Value
		}
	}
	if sums["total_read_queries"] != 3 || sums["total_write_queries"] != 1 {
		t.Fatalf("after restart counted %v, ran 3 reads and 1 write", sums)
	}
}
