package edge

import (
	"context"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/teststorage"

	"github.com/svc-data/svc/query/promapi"
)

// promReference is the Prometheus query API over the upstream in-memory storage holding
// one series, up{job="api"} = 1 at 0 to 60 s, for the OpenAPI harness.
func promReference(t testing.TB) PromQuery {
	st := teststorage.New(t)
	app := st.AppenderV2(context.Background())
	for ts := int64(0); ts <= 60_000; ts += 15_000 {
		if _, err := app.Append(0, labels.FromStrings("__name__", "up", "job", "api"), 0, ts, 1, nil, nil, storage.AppendV2Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	a := promapi.NewOver(promapi.Config{}, st, st)
	t.Cleanup(func() { _ = a.Close() })
	return a
}
