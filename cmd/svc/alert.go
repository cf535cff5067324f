package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(alertCommand) }

func alertCommand(a *app) *cobra.Command {
	var limit int
	history := &cobra.Command{Use: "history NAME|ID", Short: "An alert's transitions and deliveries, newest first", Args: args(1, 1)}
	history.RunE = runE(func(ctx context.Context, arg []string) error {
		return a.alertCall(ctx, arg[0], func(ctx context.Context, c *client.Client, id client.AlertId) (*http.Response, error) {
			p := client.AlertHistoryParams{Organization: a.sel.org, Cluster: a.sel.cluster}
			if history.Flags().Changed("limit") {
				p.Limit = ptr(limit)
			}
			return c.AlertHistory(ctx, id, &p)
		})
	})
	history.Flags().IntVar(&limit, "limit", 0, "entries, 1 to 1000 (default 100)")

	var file string
	var dryRun bool
	apply := &cobra.Command{Use: "apply -f RULES.yml", Short: "Create or update alerts from a Prometheus rule file (groups:), idempotently; --dry-run shows the changes only", Args: args(0, 0)}
	apply.RunE = runE(func(ctx context.Context, _ []string) error {
		if file == "" {
			return usageErr("apply needs -f RULES.yml (\"-\" reads stdin)")
		}
		return a.applyRules(ctx, file, dryRun)
	})
	apply.Flags().StringVarP(&file, "file", "f", "", "a Prometheus alerting-rule file (groups: [{name, interval, labels, rules: [{alert, expr, for, labels, annotations}]}])")
	apply.Flags().BoolVar(&dryRun, "dry-run", false, "show what would be created or changed, change nothing")

	return group("alert", "Alerts (SQL or PromQL conditions with webhook, Slack and PagerDuty notifications): list, get, history, delete, apply",
		&cobra.Command{Use: "list", Short: "List the cluster's alerts with their state", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListAlerts(ctx, &client.ListAlertsParams{Organization: a.sel.org, Cluster: a.sel.cluster})
				}))
			})},
		&cobra.Command{Use: "get NAME|ID", Short: "Show an alert with its state and groups", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.alertCall(ctx, arg[0], func(ctx context.Context, c *client.Client, id client.AlertId) (*http.Response, error) {
					return c.GetAlert(ctx, id, &client.GetAlertParams{Organization: a.sel.org, Cluster: a.sel.cluster})
				})
			})},
		history,
		&cobra.Command{Use: "delete NAME|ID", Short: "Delete an alert and its schedule", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.alertCall(ctx, arg[0], func(ctx context.Context, c *client.Client, id client.AlertId) (*http.Response, error) {
					return c.DeleteAlert(ctx, id, &client.DeleteAlertParams{Organization: a.sel.org, Cluster: a.sel.cluster})
				})
			})},
		apply,
	)
}

func (a *app) alertCall(ctx context.Context, ref string, f func(ctx context.Context, c *client.Client, id client.AlertId) (*http.Response, error)) error {
	id, err := a.alertID(ctx, ref)
	if err != nil {
		return err
	}
	return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
		return f(ctx, c, id)
	}))
}

func (a *app) listAlerts(ctx context.Context) ([]any, error) {
	v, err := a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
		return c.ListAlerts(ctx, &client.ListAlertsParams{Organization: a.sel.org, Cluster: a.sel.cluster})
	})
	if err != nil {
		return nil, err
	}
	items, _ := field(v, "alerts").([]any)
	return items, nil
}

func (a *app) alertID(ctx context.Context, ref string) (client.AlertId, error) {
	if _, err := client.ParseUUID(ref); err == nil {
		return ref, nil
	}
	items, err := a.listAlerts(ctx)
	if err != nil {
		return "", err
	}
	for _, it := range items {
		if n, _ := field(it, "name").(string); n == strings.ToLower(strings.TrimSpace(ref)) {
			id, _ := field(it, "id").(string)
			return id, nil
		}
	}
	return "", &apiError{status: 404, body: map[string]any{"code": "alert_not_found",
		"message": fmt.Sprintf("no alert %q in cluster %q", ref, a.sel.cluster), "hint": "list them with svc alert list"}}
}

// ruleFile is Prometheus's rule file format (the parts alerts use).
type ruleFile struct {
	Groups []struct {
		Name        string            `yaml:"name"`
		Interval    string            `yaml:"interval"`
		QueryOffset string            `yaml:"query_offset"`
		Limit       int               `yaml:"limit"`
		Labels      map[string]string `yaml:"labels"`
		Rules       []struct {
			Record        string            `yaml:"record"`
			Alert         string            `yaml:"alert"`
			Expr          string            `yaml:"expr"`
			For           string            `yaml:"for"`
			KeepFiringFor string            `yaml:"keep_firing_for"`
			Labels        map[string]string `yaml:"labels"`
			Annotations   map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func promSeconds(what, d string, def int) (int, error) {
	if d == "" {
		return def, nil
	}
	v, err := model.ParseDuration(d)
	if err != nil {
		return 0, usageErr("%s: %v", what, err)
	}
	return int(time.Duration(v) / time.Second), nil
}

// applyRules creates the file's alerting rules that do not exist (by name, in the
// cluster) and updates those that differ, over --database; recording rules are skipped.
// Alerts not in the file are left alone, and so are destinations.
func (a *app) applyRules(ctx context.Context, name string, dryRun bool) error {
	var raw []byte
	var err error
	if name == "-" {
		raw, err = io.ReadAll(a.stdin)
	} else {
		raw, err = os.ReadFile(name)
	}
	if err != nil {
		return usageErr("-f: %v", err)
	}
	var rf ruleFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		return usageErr("-f %s: not a Prometheus rule file: %v", name, err)
	}
	if err := a.resolve(ctx, scopeDatabase); err != nil {
		return err
	}
	database := a.sel.database
	if database == "" {
		database = "default"
	}
	existing, err := a.listAlerts(ctx)
	if err != nil {
		return err
	}
	byName := map[string]any{}
	for _, it := range existing {
		n, _ := field(it, "name").(string)
		byName[n] = it
	}
	type change struct {
		Action string         `json:"action"`
		Name   string         `json:"name"`
		Group  string         `json:"group"`
		Diff   map[string]any `json:"diff,omitempty"`
		Reason string         `json:"reason,omitempty"`
	}
	changes := []change{}
	seen := map[string]bool{}
	for _, g := range rf.Groups {
		interval, err := promSeconds("group "+g.Name+" interval", g.Interval, 60)
		if err != nil {
			return err
		}
		for _, r := range g.Rules {
			if r.Alert == "" {
				changes = append(changes, change{Action: "skipped", Name: r.Record, Group: g.Name, Reason: "recording rules are not alerts"})
				continue
			}
			key := strings.ToLower(strings.TrimSpace(r.Alert))
			if seen[key] {
				return usageErr("-f %s: alert %q appears twice (names are unique per cluster, compared lowercased)", name, r.Alert)
			}
			seen[key] = true
			forS, err := promSeconds("alert "+r.Alert+" for", r.For, 0)
			if err != nil {
				return err
			}
			labels := map[string]any{}
			for k, v := range g.Labels {
				labels[k] = v
			}
			for k, v := range r.Labels {
				labels[k] = v
			}
			ann := map[string]any{}
			for k, v := range r.Annotations {
				ann[k] = v
			}
			want := map[string]any{"query": map[string]any{"database": database, "promql": r.Expr}, "interval_seconds": float64(interval),
				"for_seconds": float64(forS), "labels": labels, "annotations": ann, "condition": map[string]any{"op": "any"}}
			body := map[string]any{"name": r.Alert, "query": want["query"], "interval_seconds": interval, "for": forS,
				"labels": labels, "annotations": ann, "condition": map[string]any{"op": "any"}}
			var note string
			if r.KeepFiringFor != "" || g.QueryOffset != "" || g.Limit != 0 {
				note = "keep_firing_for, query_offset and limit are not supported by alerts; ignored"
			}
			cur, ok := byName[key]
			if !ok {
				changes = append(changes, change{Action: "create", Name: key, Group: g.Name, Reason: note})
				if !dryRun {
					if _, err := a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
						b, _ := json.Marshal(body)
						return c.CreateAlertWithBody(ctx, &client.CreateAlertParams{Organization: a.sel.org, Cluster: a.sel.cluster}, "application/json", bytes.NewReader(b))
					}); err != nil {
						return err
					}
				}
				continue
			}
			diff := map[string]any{}
			for _, k := range slices.Sorted(maps.Keys(want)) {
				have := field(cur, k)
				if k == "condition" {
					have = map[string]any{"op": field(have, "op")}
				}
				if !reflect.DeepEqual(have, want[k]) {
					diff[k] = map[string]any{"from": have, "to": want[k]}
				}
			}
			if len(diff) == 0 {
				changes = append(changes, change{Action: "unchanged", Name: key, Group: g.Name, Reason: note})
				continue
			}
			changes = append(changes, change{Action: "update", Name: key, Group: g.Name, Diff: diff, Reason: note})
			if !dryRun {
				id, _ := field(cur, "id").(string)
				delete(body, "name")
				if _, err := a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					b, _ := json.Marshal(body)
					return c.UpdateAlertWithBody(ctx, id, &client.UpdateAlertParams{Organization: a.sel.org, Cluster: a.sel.cluster}, "application/json", bytes.NewReader(b))
				}); err != nil {
					return err
				}
			}
		}
	}
	return a.emit(map[string]any{"dry_run": dryRun, "database": database, "changes": changes}, nil)
}
