package promapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/svc-data/svc/query/promread"
)

// envelope is Prometheus's API answer.
type envelope struct {
	Status    string   `json:"status"`
	Data      any      `json:"data,omitempty"`
	ErrorType string   `json:"errorType,omitempty"`
	Error     string   `json:"error,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v envelope) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError answers an error in Prometheus's envelope (errorType bad_data, execution,
// timeout, canceled, internal, unavailable).
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, envelope{Status: "error", ErrorType: typ, Error: msg})
}

// metadata serves /metadata from the metrics-metadata table, with Prometheus's
// parameters (metric, limit, limit_per_metric).
func (a *API) metadata(w http.ResponseWriter, r *http.Request, t promread.Target) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "bad_data", "metadata is read with GET")
		return
	}
	num := func(name string) (int, bool) {
		s := r.FormValue(name)
		if s == "" {
			return -1, true
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_data", name+" must be a number")
			return 0, false
		}
		return n, true
	}
	limit, ok := num("limit")
	if !ok {
		return
	}
	perMetric, ok := num("limit_per_metric")
	if !ok {
		return
	}
	if limit == 0 {
		writeJSON(w, http.StatusOK, envelope{Status: "success", Data: map[string][]promread.Metadata{}})
		return
	}
	md, err := promread.MetricMetadata(r.Context(), t, r.FormValue("metric"), limit)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "execution", err.Error())
		return
	}
	if perMetric > 0 {
		for k, v := range md {
			if len(v) > perMetric {
				md[k] = v[:perMetric]
			}
		}
	}
	writeJSON(w, http.StatusOK, envelope{Status: "success", Data: md})
}
