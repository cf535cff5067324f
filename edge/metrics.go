package edge

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/metrics"
)

// maxMetricsRange is the longest stored range one request may read.
const maxMetricsRange = 7 * 24 * time.Hour

// metricsRequest is GET /v1/metrics's parameters, checked.
type metricsRequest struct {
	org      *catalog.Organization
	clusters []*catalog.Cluster
	query    metrics.Query
}

func badParam(field, format string, args ...any) *APIError {
	return &APIError{Status: 400, Code: "invalid_" + field, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ownershipKeys are attributes a filter may not name: they decide whose data it is.
var ownershipKeys = []string{"organization", "organization_id", "cluster", "cluster_id", "service.organization.id",
	"service.organization.name", "service.cluster.id", "service.cluster.name", "tenant"}

func (s *Server) parseMetricsRequest(ctx *fasthttp.RequestCtx, p *Principal, now time.Time) (*metricsRequest, error) {
	args := ctx.QueryArgs()
	get := func(k string) (string, bool) {
		if !args.Has(k) {
			return "", false
		}
		return string(args.Peek(k)), true
	}
	req := &metricsRequest{}
	orgID, byID := get("organization_id")
	_, byName := get("organization")
	clusterIDs, hasIDs := get("cluster_id")
	_, hasCluster := get("cluster")
	switch {
	case byID && (byName || hasCluster):
		return nil, badParam("organization_id", "scope by organization_id (and cluster_id) or by organization and cluster names, not both")
	case byID:
		id, err := uuid.Parse(orgID)
		if err != nil {
			return nil, badParam("organization_id", "organization_id must be a UUID")
		}
		o, ok := s.deps.Catalog.Organization(id)
		if !ok {
			return nil, apiErr(404, "organization_not_found", "no such organization", "")
		}
		if _, member := s.deps.Catalog.Membership(o.ID, p.User.ID); !member {
			return nil, apiErr(404, "organization_not_found", "no such organization", "")
		}
		req.org = o
		if hasIDs {
			for _, c := range strings.Split(clusterIDs, ",") {
				cid, err := uuid.Parse(strings.TrimSpace(c))
				if err != nil {
					return nil, badParam("cluster_id", "cluster_id must be comma-separated UUIDs; %q is not one", c)
				}
				cl, ok := s.deps.Catalog.Cluster(cid)
				if !ok || cl.OrgID != o.ID {
					return nil, apiErr(404, "cluster_not_found", fmt.Sprintf("no cluster %s in the organization", cid), "")
				}
				req.clusters = append(req.clusters, cl)
			}
		} else {
			req.clusters = s.deps.Catalog.Clusters(o.ID)
		}
	case hasIDs:
		return nil, badParam("cluster_id", "cluster_id needs organization_id")
	case byName:
		if !hasCluster || p.ClusterID == uuid.Nil {
			return nil, badParam("cluster", "scope by name needs both organization and cluster")
		}
		o, _ := s.deps.Catalog.Organization(p.OrgID)
		cl, ok := s.deps.Catalog.Cluster(p.ClusterID)
		if o == nil || !ok {
			return nil, apiErr(404, "cluster_not_found", "no such cluster", "")
		}
		req.org, req.clusters = o, []*catalog.Cluster{cl}
	default:
		return nil, badParam("organization_id", "a scope is required: organization_id (with optional cluster_id), or organization and cluster")
	}

	names := metrics.Default
	if m, ok := get("metric"); ok {
		names = nil
		for _, n := range strings.Split(m, ",") {
			n = strings.TrimSpace(n)
			if !metrics.IsKnown(n) {
				return nil, badParam("metric", "unknown metric %q; known: %s and service.connector.*", n, strings.Join(metrics.Known, ", "))
			}
			names = append(names, n)
		}
	}
	req.query.Names = names

	if f, ok := get("filters"); ok {
		var raw map[string]any
		if err := json.Unmarshal([]byte(f), &raw); err != nil || raw == nil {
			return nil, badParam("filters", "filters must be a URL-encoded JSON object of exact string matches")
		}
		req.query.Filters = map[string]string{}
		for k, v := range raw {
			sv, isString := v.(string)
			if !isString {
				return nil, badParam("filters", "filter %q: values must be strings", k)
			}
			for _, o := range ownershipKeys {
				if strings.EqualFold(k, o) {
					return nil, badParam("filters", "filter %q would change tenant ownership; scope with organization_id and cluster_id", k)
				}
			}
			req.query.Filters[k] = sv
		}
	}

	w, hasWindow := get("window_seconds")
	st, hasStart := get("start_time")
	et, hasEnd := get("end_time")
	switch {
	case hasWindow && (hasStart || hasEnd):
		return nil, badParam("window_seconds", "window_seconds replaces start_time and end_time; send one or the other")
	case hasWindow:
		secs, err := strconv.Atoi(w)
		if err != nil || secs < 1 || secs > 604800 {
			return nil, badParam("window_seconds", "window_seconds must be an integer from 1 to 604800")
		}
		req.query.To = now
		req.query.From = now.Add(-time.Duration(secs) * time.Second)
	case hasStart || hasEnd:
		from, to, err := timeRange(st, et, hasStart, hasEnd)
		if err != nil {
			return nil, err
		}
		req.query.From, req.query.To = from, to
	default:
		req.query.To = now
		req.query.From = now.Add(-time.Hour)
	}
	if b, ok := get("include_baseline"); ok {
		switch b {
		case "true":
			req.query.Baseline = true
		case "false":
		default:
			return nil, badParam("include_baseline", "include_baseline must be true or false")
		}
	}
	return req, nil
}

type otlpAttr struct {
	Key   string `json:"key"`
	Value struct {
		StringValue string `json:"stringValue"`
	} `json:"value"`
}

func attrs(m map[string]string) []otlpAttr {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []otlpAttr{}
	for _, k := range keys {
		var a otlpAttr
		a.Key, a.Value.StringValue = k, m[k]
		out = append(out, a)
	}
	return out
}

type metricPoint struct {
	Attributes   []otlpAttr `json:"attributes"`
	TimeUnixNano string     `json:"timeUnixNano"`
	AsInt        *string    `json:"asInt,omitempty"`
	AsDouble     *float64   `json:"asDouble,omitempty"`
}

type metricSeries struct {
	Source                 string        `json:"source"`
	Name                   string        `json:"name"`
	Unit                   string        `json:"unit"`
	Type                   string        `json:"type"`
	AggregationTemporality string        `json:"aggregationTemporality,omitempty"`
	IsMonotonic            *bool         `json:"isMonotonic,omitempty"`
	Points                 []metricPoint `json:"points"`
}

type metricsResource struct {
	Attributes []otlpAttr `json:"attributes"`
	Scope      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"scope"`
	Metrics []metricSeries `json:"metrics"`
}

type partialError struct {
	ClusterID string `json:"cluster_id"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

// getMetrics answers GET /v1/metrics: stored observations of the scope's clusters in an
// OTLP-shaped form. Users only; every member of the organization may read.
func (s *Server) getMetrics(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := userOnly(p, "read metrics"); err != nil {
		return err
	}
	now := time.Now().UTC()
	req, err := s.parseMetricsRequest(ctx, p, now)
	if err != nil {
		return err
	}
	out := struct {
		StartTime     string            `json:"start_time"`
		EndTime       string            `json:"end_time"`
		Resources     []metricsResource `json:"resources"`
		PartialErrors []partialError    `json:"partial_errors"`
	}{StartTime: req.query.From.Format(time.RFC3339Nano), EndTime: req.query.To.Format(time.RFC3339Nano),
		Resources: []metricsResource{}, PartialErrors: []partialError{}}
	for _, c := range req.clusters {
		pts, err := s.deps.Clusters.ReadMetrics(s.work(), c.ID, req.query)
		if err != nil {
			code := "metrics_unavailable"
			if !c.Running() {
				code = "cluster_" + c.PhaseName()
			}
			out.PartialErrors = append(out.PartialErrors, partialError{ClusterID: c.ID.String(), Code: code, Message: err.Error()})
			continue
		}
		var r metricsResource
		r.Attributes = attrs(map[string]string{"service.organization.id": req.org.ID.String(), "service.organization.name": req.org.Name,
			"service.cluster.id": c.ID.String(), "service.cluster.name": c.Name, "service.producer": "svcd"})
		r.Scope.Name, r.Scope.Version = "svc.internal.metrics", "1"
		r.Metrics = []metricSeries{}
		idx := map[string]int{}
		for _, pt := range pts {
			i, ok := idx[pt.Name]
			if !ok {
				ms := metricSeries{Source: "internal.metrics", Name: pt.Name, Unit: pt.Unit, Type: pt.Kind, Points: []metricPoint{}}
				if pt.Kind == metrics.Sum {
					mono := true
					ms.AggregationTemporality, ms.IsMonotonic = "cumulative", &mono
				}
				r.Metrics = append(r.Metrics, ms)
				i = len(r.Metrics) - 1
				idx[pt.Name] = i
			}
			mp := metricPoint{Attributes: attrs(pt.Attrs), TimeUnixNano: strconv.FormatInt(pt.Time.UnixNano(), 10)}
			if pt.IsDouble {
				d := pt.Double
				mp.AsDouble = &d
			} else {
				v := strconv.FormatInt(pt.Int, 10)
				mp.AsInt = &v
			}
			r.Metrics[i].Points = append(r.Metrics[i].Points, mp)
		}
		out.Resources = append(out.Resources, r)
	}
	writeJSON(ctx, 200, out)
	return nil
}

// timeRange checks start_time and end_time: both present, RFC 3339, start before end
// (start inclusive, end exclusive), at most seven days apart.
func timeRange(st, et string, hasStart, hasEnd bool) (from, to time.Time, err error) {
	if !hasStart {
		return from, to, badParam("start_time", "start_time is required with end_time")
	}
	if !hasEnd {
		return from, to, badParam("end_time", "end_time is required with start_time")
	}
	if from, err = time.Parse(time.RFC3339Nano, st); err != nil {
		return from, to, badParam("start_time", "start_time must be RFC 3339")
	}
	if to, err = time.Parse(time.RFC3339Nano, et); err != nil {
		return from, to, badParam("end_time", "end_time must be RFC 3339")
	}
	if !to.After(from) {
		return from, to, badParam("end_time", "end_time must be after start_time")
	}
	if to.Sub(from) > maxMetricsRange {
		return from, to, badParam("end_time", "the interval is at most seven days")
	}
	return from.UTC(), to.UTC(), nil
}

// clusterMetricDefs are the cluster metrics routes' series.
var clusterMetricDefs = []struct {
	name, label, description, unit, aggregation, scope string
}{
	{metrics.ReadQueries, "Read queries", "Statements without a table write run through the query API, per sample interval.", "queries", "sum", "cluster"},
	{metrics.WriteQueries, "Write queries", "Statements writing a table run through the query API, per sample interval.", "queries", "sum", "cluster"},
	{metrics.MaxCPUCores, "CPU cores", "Cores allocated to the replica's engine (its max_threads).", "cores", "max", "replica"},
	{metrics.MaxMemoryBytes, "Memory", "Memory the replica's engine tracked at the sample.", "bytes", "max", "replica"},
}

// clusterMetricsByID answers GET /v1/clusters/{cluster_id}/metrics.
func (s *Server) clusterMetricsByID(ctx *fasthttp.RequestCtx, p *Principal) error {
	c, err := s.clusterFor(ctx, p, "read cluster metrics", false)
	if err != nil {
		return err
	}
	return s.clusterMetrics(ctx, c)
}

// clusterMetricsByName answers GET /v1/clusters/metrics?organization=&cluster=.
func (s *Server) clusterMetricsByName(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := userOnly(p, "read cluster metrics"); err != nil {
		return err
	}
	if err := needOrganization(ctx, p); err != nil {
		return err
	}
	c, ok := s.deps.Catalog.Cluster(p.ClusterID)
	if !ctx.QueryArgs().Has("cluster") || !ok || c.OrgID != p.OrgID {
		return badParam("cluster", "the cluster query parameter (a cluster name of the organization) is required")
	}
	return s.clusterMetrics(ctx, c)
}

func (s *Server) clusterMetrics(ctx *fasthttp.RequestCtx, c *catalog.Cluster) error {
	args := ctx.QueryArgs()
	from, to, err := timeRange(string(args.Peek("start_time")), string(args.Peek("end_time")), args.Has("start_time"), args.Has("end_time"))
	if err != nil {
		return err
	}
	want := map[string]bool{}
	if args.Has("metrics") {
		for _, n := range strings.Split(string(args.Peek("metrics")), ",") {
			known := false
			for _, d := range clusterMetricDefs {
				known = known || d.name == strings.TrimSpace(n)
			}
			if !known {
				return badParam("metrics", "unknown metric %q; known: total_read_queries, total_write_queries, max_cpu_cores, max_memory_bytes", n)
			}
			want[strings.TrimSpace(n)] = true
		}
	}
	var names []string
	for _, d := range clusterMetricDefs {
		if len(want) == 0 || want[d.name] {
			names = append(names, d.name)
		}
	}
	pts, err := s.deps.Clusters.ReadMetrics(s.work(), c.ID, metrics.Query{Names: names, From: from, To: to})
	if err != nil {
		return apiErr(503, "cluster_"+c.PhaseName(), fmt.Sprintf("cluster %q is %s: %v", c.Name, c.PhaseName(), err),
			"resume it: POST /v1/clusters/"+c.ID.String()+"/resume")
	}
	type point struct {
		Time    string  `json:"time"`
		Value   float64 `json:"value"`
		Replica string  `json:"replica,omitempty"`
	}
	type series struct {
		Name        string  `json:"name"`
		Label       string  `json:"label"`
		Description string  `json:"description"`
		Unit        string  `json:"unit"`
		Aggregation string  `json:"aggregation"`
		Scope       string  `json:"scope"`
		Source      string  `json:"source"`
		Points      []point `json:"points"`
	}
	out := []series{}
	for _, d := range clusterMetricDefs {
		if len(want) > 0 && !want[d.name] {
			continue
		}
		se := series{Name: d.name, Label: d.label, Description: d.description, Unit: d.unit, Aggregation: d.aggregation,
			Scope: d.scope, Source: "internal.metrics", Points: []point{}}
		for _, pt := range pts {
			if pt.Name != d.name {
				continue
			}
			v := float64(pt.Int)
			if pt.IsDouble {
				v = pt.Double
			}
			p := point{Time: pt.Time.Format(time.RFC3339Nano), Value: v}
			if d.scope == "replica" {
				p.Replica = "replica-1" // one engine process per cluster
			}
			se.Points = append(se.Points, p)
		}
		out = append(out, se)
	}
	writeJSON(ctx, 200, map[string]any{"metrics": out})
	return nil
}
