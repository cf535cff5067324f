package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/promapi"
	"github.com/svc-data/svc/workflows/alerts"
)

// promInstant evaluates an alert's PromQL through the Prometheus app's query API, as
// the organization (its concurrency and byte budgets apply).
type promInstant struct {
	api   *promapi.API
	model *catalog.Model
}

func (p promInstant) Instant(ctx context.Context, org, cluster uuid.UUID, database, expr string, at time.Time) ([]alerts.Sample, error) {
	db, ok := p.model.Database(cluster, database)
	if !ok {
		return nil, fmt.Errorf("database %q does not exist", database)
	}
	form := url.Values{"query": {expr}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, promapi.Prefix+"/query?"+form.Encode(), nil)
	if err != nil {
		return nil, err
	}
	w := httptest.NewRecorder()
	p.api.Serve(w, r, promapi.Request{Org: org, Cluster: cluster, Database: db.Engine, QueryID: org.String() + "." + db.Name + ".alert-" + uuid.NewString()})
	var env struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
		return nil, fmt.Errorf("the PromQL query answered %d", w.Code)
	}
	if env.Status != "success" {
		return nil, errors.New("PromQL: " + env.Error)
	}
	num := func(v [2]any) (float64, error) {
		s, _ := v[1].(string)
		return strconv.ParseFloat(s, 64)
	}
	switch env.Data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(env.Data.Result, &vec); err != nil {
			return nil, err
		}
		out := make([]alerts.Sample, 0, len(vec))
		for _, s := range vec {
			f, err := num(s.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, alerts.Sample{Labels: s.Metric, Value: f})
		}
		return out, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(env.Data.Result, &v); err != nil {
			return nil, err
		}
		f, err := num(v)
		if err != nil {
			return nil, err
		}
		return []alerts.Sample{{Labels: map[string]string{}, Value: f}}, nil
	}
	return nil, fmt.Errorf("an alert's PromQL must return an instant vector or a scalar, not a %s", env.Data.ResultType)
}
