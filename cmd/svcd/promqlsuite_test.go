package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/promread"
	"github.com/svc-data/svc/query/promread/promqlsuite"
)

// promSuiteParallel is how many test files run at once: their loads wait on the
// pipeline (Kafka, the consumers' linger), not on the CPU.
const promSuiteParallel = 6

// TestUpstreamPromQLSuite runs the upstream PromQL test suite (promqlsuite: every
// built-in .test file of the pinned Prometheus module, less its KnownFailing evals, each
// with its reason) on one svcd with the Prometheus app installed: each segment of a file
// (cut at its clear commands) gets a database of its own, each load command's series go
// through remote write (Prometheus's own client, edge -> Kafka -> consumer -> engine,
// all of a load in as few requests as PromWriteBatch allows) and the upstream engine
// evaluates over promread's Queryable on the same engine database.
func TestUpstreamPromQLSuite(t *testing.T) {
	t.Parallel() // see TestMain
	eng := sharedEngine(t)
	s := svcdtest.Start(t, "SVC_CLICKHOUSE_URL="+eng.URL(), "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	installApp(t, s, catalog.AppPrometheus)
	direct := chtest.Client(t, eng.URL())
	var orgs struct{ Organizations []struct{ ID string } }
	s.Must(200, "GET", "/v1/organizations", nil).JSON(t, &orgs)
	org := uuid.MustParse(orgs.Organizations[0].ID)

	var n atomic.Int64
	promqlsuite.Run(t, promSuiteParallel, func(t testing.TB) storage.Storage {
		name := fmt.Sprintf("promql_%d", n.Add(1))
		s.Must(200, "POST", "/v1/databases", map[string]string{"name": name})
		return &promread.Storage{
			Queryable: promread.New(promread.Target{Engine: direct, Database: catalog.EngineDatabase(org, name)}),
			Loader:    remoteWriteLoader{s: s, database: name},
			OnClose: func() error {
				_, err := s.Do("DELETE", "/v1/databases/"+name, nil)
				return err
			},
		}
	})
}

// remoteWriteLoader loads series through svcd's remote-write endpoint into a database.
type remoteWriteLoader struct {
	s        *svcdtest.Service
	database string
}

// Load implements promread.Loader: one WritePrometheus of the whole batch, which returns
// once the series are queryable.
func (l remoteWriteLoader) Load(_ context.Context, batch []promread.SeriesSamples) error {
	if series := promTimeSeries(batch); len(series) > 0 {
		l.s.WritePrometheus(l.s.AdminKey, l.database, series)
	}
	return nil
}

// promTimeSeries are series as remote write sends them (those without samples left out).
func promTimeSeries(batch []promread.SeriesSamples) []prompb.TimeSeries {
	var series []prompb.TimeSeries
	for _, b := range batch {
		if len(b.Samples) == 0 {
			continue
		}
		ts := prompb.TimeSeries{Labels: prompb.FromLabels(b.Labels, nil)}
		for _, smp := range b.Samples {
			if smp.H != nil {
				ts.Histograms = append(ts.Histograms, prompb.FromFloatHistogram(smp.T, smp.H))
			} else {
				ts.Samples = append(ts.Samples, prompb.Sample{Timestamp: smp.T, Value: smp.F})
			}
		}
		series = append(series, ts)
	}
	return series
}
