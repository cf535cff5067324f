package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(metricsCommand) }

// metricsCommand reads stored observations of the organization's clusters (GET /v1/metrics).
func metricsCommand(a *app) *cobra.Command {
	var metric, start, end string
	var window int
	var filters []string
	var baseline, allClusters bool
	cmd := &cobra.Command{Use: "metrics", Short: "Read stored metrics of the organization's clusters (the selected one, else all)", Args: args(0, 0)}
	cmd.RunE = runE(func(ctx context.Context, _ []string) error {
		p := client.GetMetricsParams{}
		if metric != "" {
			p.Metric = ptr(metric)
		}
		if cmd.Flags().Changed("window-seconds") {
			p.WindowSeconds = ptr(window)
		}
		var err error
		if p.StartTime, err = timeFlag("--start-time", start); err != nil {
			return err
		}
		if p.EndTime, err = timeFlag("--end-time", end); err != nil {
			return err
		}
		if len(filters) > 0 {
			f, err := filterJSON(filters)
			if err != nil {
				return err
			}
			p.Filters = ptr(f)
		}
		if baseline {
			p.IncludeBaseline = ptr(true)
		}
		// By names the API wants both organization and cluster; every cluster of the
		// organization is its id's scope.
		org, err := a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
			return c.GetOrganization(ctx, a.sel.org, &client.GetOrganizationParams{})
		})
		if err != nil {
			return err
		}
		s := scopeOrg
		if a.sel.cluster != "" && !allClusters {
			p.Cluster = ptr(a.sel.cluster)
		} else {
			id, err := client.ParseUUID(fmt.Sprint(field(org, "id")))
			if err != nil {
				return fmt.Errorf("organization %q: no id in %v", a.sel.org, org)
			}
			p.OrganizationId, s = &id, scopeNone
		}
		return a.emit(a.call(ctx, s, func(ctx context.Context, c *client.Client) (*http.Response, error) {
			return c.GetMetrics(ctx, &p)
		}))
	})
	f := cmd.Flags()
	f.StringVar(&metric, "metric", "", "comma-separated metric names (default max_cpu_cores,max_memory_bytes)")
	f.IntVar(&window, "window-seconds", 0, "the range is the last N seconds (1 to 604800; default the last hour)")
	f.StringVar(&start, "start-time", "", "range start, RFC 3339, inclusive (with --end-time)")
	f.StringVar(&end, "end-time", "", "range end, RFC 3339, exclusive")
	f.StringArrayVar(&filters, "filter", nil, "exact attribute match KEY=VALUE (repeatable), or a JSON object")
	f.BoolVar(&baseline, "include-baseline", false, "add the latest observation of each series before the range")
	f.BoolVar(&allClusters, "all-clusters", false, "every cluster of the organization, even when one is selected")
	return cmd
}

// clusterMetricsCommand reads a cluster's usage series: by id for NAME|ID, else the
// selected cluster by name (GET /v1/clusters/metrics).
func (a *app) clusterMetricsCommand() *cobra.Command {
	var names, start, end string
	var all bool
	cmd := &cobra.Command{Use: "metrics [NAME|ID]", Short: "Usage series of a cluster, or --all clusters: queries, CPU, memory (default: the selected cluster)", Args: args(0, 1)}
	cmd.RunE = runE(func(ctx context.Context, arg []string) error {
		to, from := time.Now().UTC(), time.Time{}
		if t, err := timeFlag("--end-time", end); err != nil {
			return err
		} else if t != nil {
			to = *t
		}
		if t, err := timeFlag("--start-time", start); err != nil {
			return err
		} else if t != nil {
			from = *t
		} else {
			from = to.Add(-time.Hour)
		}
		var metrics *string
		if names != "" {
			metrics = ptr(names)
		}
		if all {
			if len(arg) > 0 {
				return usageErr("--all reads every cluster: name none")
			}
			return a.emit(a.allClusterMetrics(ctx, from, to, metrics))
		}
		if len(arg) == 0 {
			return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
				return c.GetClusterMetricsByName(ctx, &client.GetClusterMetricsByNameParams{StartTime: from, EndTime: to, Metrics: metrics})
			}))
		}
		id, err := a.clusterID(ctx, arg[0])
		if err != nil {
			return err
		}
		return a.emit(a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
			return c.GetClusterMetrics(ctx, id, &client.GetClusterMetricsParams{StartTime: from, EndTime: to, Metrics: metrics})
		}))
	})
	f := cmd.Flags()
	f.StringVar(&names, "metrics", "", "comma-separated: total_read_queries, total_write_queries, max_cpu_cores, max_memory_bytes (default all)")
	f.StringVar(&start, "start-time", "", "range start, RFC 3339, inclusive (default an hour before the end)")
	f.StringVar(&end, "end-time", "", "range end, RFC 3339, exclusive (default now)")
	f.BoolVar(&all, "all", false, "every cluster of the organization: {clusters: [{id, name, metrics | error}]}")
	return cmd
}

// allClusterMetrics reads every cluster's series; a cluster that cannot answer (a stopped
// one: 503) gets its error in place of metrics, the others still answer.
func (a *app) allClusterMetrics(ctx context.Context, from, to time.Time, metrics *string) (any, error) {
	list, err := a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
		return c.ListClusters(ctx, &client.ListClustersParams{})
	})
	if err != nil {
		return nil, err
	}
	out := []any{}
	items, _ := field(list, "clusters").([]any)
	for _, it := range items {
		id, err := client.ParseUUID(fmt.Sprint(field(it, "id")))
		if err != nil {
			return nil, fmt.Errorf("cluster without an id: %v", it)
		}
		entry := map[string]any{"id": field(it, "id"), "name": field(it, "name")}
		v, err := a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
			return c.GetClusterMetrics(ctx, id, &client.GetClusterMetricsParams{StartTime: from, EndTime: to, Metrics: metrics})
		})
		var ae *apiError
		switch {
		case errors.As(err, &ae) && (ae.status == 503 || ae.status == 404): // stopped, or deleted meanwhile
			entry["error"], entry["status"] = ae.body, ae.status
		case err != nil:
			return nil, err
		default:
			entry["metrics"] = field(v, "metrics")
		}
		out = append(out, entry)
	}
	return map[string]any{"clusters": out}, nil
}

// timeFlag parses an optional RFC 3339 flag.
func timeFlag(name, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, usageErr("%s: not an RFC 3339 time: %q", name, v)
	}
	return &t, nil
}

// filterJSON turns --filter KEY=VALUE flags (or one JSON object) into the filters parameter.
func filterJSON(flags []string) (string, error) {
	if len(flags) == 1 && strings.HasPrefix(strings.TrimSpace(flags[0]), "{") {
		return flags[0], nil
	}
	m := map[string]string{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return "", usageErr("--filter: want KEY=VALUE, got %q", f)
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	return string(b), err
}
