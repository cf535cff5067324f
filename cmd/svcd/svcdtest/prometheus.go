package svcdtest

import (
	"context"
	"net/url"
	"time"

	"github.com/klauspost/compress/snappy"
	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	config_util "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage/remote"
)

// PromWriteClient returns Prometheus's own remote-write client (storage/remote), sending
// message type msg to svcd's /prometheus/api/v1/write with key as bearer token;
// database, when not empty, is sent as ?database=.
func (s *Service) PromWriteClient(key, database string, msg remoteapi.WriteMessageType) remote.WriteClient {
	s.t.Helper()
	u, err := url.Parse(s.URL + "/prometheus/api/v1/write")
	if err != nil {
		s.t.Fatal(err)
	}
	if database != "" {
		u.RawQuery = url.Values{"database": {database}}.Encode()
	}
	c, err := remote.NewWriteClient("svc", &remote.ClientConfig{
		URL:     &config_util.URL{URL: u},
		Timeout: model.Duration(time.Minute),
		HTTPClientConfig: config_util.HTTPClientConfig{
			Authorization: &config_util.Authorization{Type: "Bearer", Credentials: config_util.Secret(key)},
		},
		WriteProtoMsg: msg,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// PromWriteBatch is how many samples and histograms one request of WritePrometheus
// carries at most (Prometheus sends 2,000 by default; larger is faster here).
const PromWriteBatch = 20_000

// WritePrometheus sends series (labels, float samples, native histograms, exemplars) to
// svcd through remote write 1.0 with Prometheus's own client, in requests of at most
// PromWriteBatch samples, into database (the key's default when empty), and returns
// once they are queryable: every request was acknowledged and the consumers caught up
// (consumer lag 0, WaitCaughtUp on a table it creates in the database, "prom_sync").
// The Prometheus app must be installed. Build series with prompb.FromLabels,
// prompb.FromIntHistogram and prompb.FromFloatHistogram.
func (s *Service) WritePrometheus(key, database string, series []prompb.TimeSeries) {
	s.t.Helper()
	c := s.PromWriteClient(key, database, remoteapi.WriteV1MessageType)
	send := func(req *prompb.WriteRequest) {
		s.t.Helper()
		raw, err := req.Marshal()
		if err != nil {
			s.t.Fatal(err)
		}
		if _, err := c.Store(context.Background(), snappy.Encode(nil, raw), 0); err != nil {
			s.t.Fatalf("remote write: %v", err)
		}
	}
	var req prompb.WriteRequest
	n := 0
	for _, ts := range series {
		// A series longer than a batch is cut into several.
		for len(ts.Samples)+len(ts.Histograms) > 0 || len(ts.Exemplars) > 0 {
			part := prompb.TimeSeries{Labels: ts.Labels, Exemplars: ts.Exemplars}
			ts.Exemplars = nil
			k := min(len(ts.Samples), PromWriteBatch-n)
			part.Samples, ts.Samples = ts.Samples[:k], ts.Samples[k:]
			k = min(len(ts.Histograms), PromWriteBatch-n-len(part.Samples))
			part.Histograms, ts.Histograms = ts.Histograms[:k], ts.Histograms[k:]
			req.Timeseries = append(req.Timeseries, part)
			n += len(part.Samples) + len(part.Histograms)
			if n >= PromWriteBatch {
				send(&req)
				req, n = prompb.WriteRequest{}, 0
			}
		}
	}
	if len(req.Timeseries) > 0 {
		send(&req)
	}
	s.WaitPrometheus(database)
}

// WaitPrometheus waits until everything written to the default cluster is queryable
// (consumer lag 0), through a table "prom_sync" it writes a row to in database (the
// admin key's default when empty), with the admin key.
func (s *Service) WaitPrometheus(database string) {
	s.t.Helper()
	q := ""
	if database != "" {
		q = "?database=" + url.QueryEscape(database)
	}
	s.Must(202, "POST", "/v1/tables/prom_sync"+q, map[string]any{"at": time.Now().UTC().Format(time.RFC3339Nano)})
	s.waitCaughtUp("/v1/tables/prom_sync/freshness"+q, "prom_sync", 2*time.Minute)
}
