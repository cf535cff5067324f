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

	var o applyOptions
	apply := &cobra.Command{Use: "apply -f RULES.yml", Short: "Create or update alerts from a Prometheus rule file (groups:), idempotently; --prune deletes the ones it made that the file no longer has; --dry-run shows the changes only", Args: args(0, 0)}
	apply.RunE = runE(func(ctx context.Context, _ []string) error {
		if o.file == "" {
			return usageErr("apply needs -f RULES.yml (\"-\" reads stdin)")
		}
		if strings.TrimSpace(o.managedBy) == "" {
			return usageErr("--managed-by must not be empty")
		}
		return a.applyRules(ctx, o)
	})
	apply.Flags().StringVarP(&o.file, "file", "f", "", "a Prometheus alerting-rule file (groups: [{name, interval, labels, rules: [{alert, expr, for, labels, annotations}]}])")
	apply.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what would be created, changed or deleted, change nothing")
	apply.Flags().BoolVar(&o.prune, "prune", false, "delete the alerts this tool manages (--managed-by) that the file no longer has; never alerts made otherwise")
	apply.Flags().StringVar(&o.managedBy, "managed-by", defaultManager, "the owner recorded on every applied alert (managed_by), and the only alerts --prune deletes; give each rule file its own when several are applied")
	apply.Flags().StringVar(&o.destinations, "destinations", "", "a YAML file of destinations ({destinations: [{name, type, url, secret, routing_key}]}, values may name ${ENV} variables) every applied alert notifies; without it destinations are left as they are")
	apply.Flags().BoolVar(&o.refreshDestinations, "refresh-destinations", false, "send --destinations' URLs and secrets again even where the names and types already match (secrets are never read back, so a changed one is not seen otherwise)")

	return group("alert", "Alerts (SQL, PromQL or log-search conditions with webhook, Slack and PagerDuty notifications): list, get, history, delete, apply",
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

// defaultManager is the managed_by svc alert apply records unless told otherwise.
const defaultManager = "svc alert apply"

type applyOptions struct {
	file, managedBy, destinations string
	dryRun, prune                 bool
	refreshDestinations           bool
}

// destinationFile is --destinations: the destinations every applied alert notifies.
type destinationFile struct {
	Destinations []struct {
		Name       string `yaml:"name" json:"name"`
		Type       string `yaml:"type" json:"type"`
		URL        string `yaml:"url" json:"url,omitempty"`
		Secret     string `yaml:"secret" json:"secret,omitempty"`
		RoutingKey string `yaml:"routing_key" json:"routing_key,omitempty"`
	} `yaml:"destinations"`
}

func readInput(a *app, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(a.stdin)
	}
	return os.ReadFile(name)
}

// readDestinations reads --destinations, expanding ${VAR} from the environment (so no
// secret need be written in the file); a variable that is not set is an error.
func readDestinations(a *app, name string) ([]map[string]any, []string, error) {
	raw, err := readInput(a, name)
	if err != nil {
		return nil, nil, usageErr("--destinations: %v", err)
	}
	var df destinationFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&df); err != nil && err != io.EOF {
		return nil, nil, usageErr("--destinations %s: not a destinations file ({destinations: [{name, type, url, secret, routing_key}]}): %v", name, err)
	}
	var missing []string
	expand := func(v string) string {
		return os.Expand(v, func(k string) string {
			val, ok := os.LookupEnv(k)
			if !ok {
				missing = append(missing, k)
			}
			return val
		})
	}
	out := []map[string]any{}
	var keys []string
	seen := map[string]bool{}
	for i, d := range df.Destinations {
		if strings.TrimSpace(d.Name) == "" || seen[d.Name] {
			return nil, nil, usageErr("--destinations %s: destination %d needs a name of its own (apply matches destinations by name)", name, i+1)
		}
		seen[d.Name] = true
		m := map[string]any{"name": d.Name, "type": d.Type}
		for k, v := range map[string]string{"url": d.URL, "secret": d.Secret, "routing_key": d.RoutingKey} {
			if v != "" {
				m[k] = expand(v)
			}
		}
		out = append(out, m)
		keys = append(keys, d.Type+":"+d.Name)
	}
	if len(missing) > 0 {
		return nil, nil, usageErr("--destinations %s: environment variables not set: %s", name, strings.Join(missing, ", "))
	}
	return out, keys, nil
}

// destinationKeys are an alert's destinations as apply compares them: type and name.
func destinationKeys(alert any) []string {
	keys := []string{}
	list, _ := field(alert, "destinations").([]any)
	for _, d := range list {
		n, _ := field(d, "name").(string)
		t, _ := field(d, "type").(string)
		keys = append(keys, t+":"+n)
	}
	return keys
}

// applyRules creates the file's alerting rules that do not exist (by name, in the
// cluster) and updates those that differ, over --database, recording --managed-by on
// each; recording rules are skipped. With --prune it deletes the alerts of that manager
// the file no longer has; with --destinations every applied alert gets those
// destinations (compared by type and name: URLs and secrets are never read back).
func (a *app) applyRules(ctx context.Context, o applyOptions) error {
	name := o.file
	raw, err := readInput(a, name)
	if err != nil {
		return usageErr("-f: %v", err)
	}
	var rf ruleFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		return usageErr("-f %s: not a Prometheus rule file: %v", name, err)
	}
	var dests []map[string]any
	var destKeys []string
	if o.destinations != "" {
		if dests, destKeys, err = readDestinations(a, o.destinations); err != nil {
			return err
		}
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
		Group  string         `json:"group,omitempty"`
		Diff   map[string]any `json:"diff,omitempty"`
		Reason string         `json:"reason,omitempty"`
	}
	params := func() (*client.CreateAlertParams, *client.UpdateAlertParams) {
		return &client.CreateAlertParams{Organization: a.sel.org, Cluster: a.sel.cluster}, &client.UpdateAlertParams{Organization: a.sel.org, Cluster: a.sel.cluster}
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
				"for_seconds": float64(forS), "labels": labels, "annotations": ann, "condition": map[string]any{"op": "any"},
				"managed_by": o.managedBy}
			body := map[string]any{"name": r.Alert, "query": want["query"], "interval_seconds": interval, "for": forS,
				"labels": labels, "annotations": ann, "condition": map[string]any{"op": "any"}, "managed_by": o.managedBy}
			var note string
			if r.KeepFiringFor != "" || g.QueryOffset != "" || g.Limit != 0 {
				note = "keep_firing_for, query_offset and limit are not supported by alerts; ignored"
			}
			cur, ok := byName[key]
			if !ok {
				if dests != nil {
					body["destinations"] = dests
				}
				changes = append(changes, change{Action: "create", Name: key, Group: g.Name, Reason: note})
				if !o.dryRun {
					if _, err := a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
						b, _ := json.Marshal(body)
						cp, _ := params()
						return c.CreateAlertWithBody(ctx, cp, "application/json", bytes.NewReader(b))
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
			if dests != nil {
				if have := destinationKeys(cur); !slices.Equal(have, destKeys) || o.refreshDestinations {
					diff["destinations"] = map[string]any{"from": have, "to": destKeys}
					body["destinations"] = dests
				}
			}
			if len(diff) == 0 {
				changes = append(changes, change{Action: "unchanged", Name: key, Group: g.Name, Reason: note})
				continue
			}
			changes = append(changes, change{Action: "update", Name: key, Group: g.Name, Diff: diff, Reason: note})
			if !o.dryRun {
				id, _ := field(cur, "id").(string)
				delete(body, "name")
				if _, err := a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					b, _ := json.Marshal(body)
					_, up := params()
					return c.UpdateAlertWithBody(ctx, id, up, "application/json", bytes.NewReader(b))
				}); err != nil {
					return err
				}
			}
		}
	}
	if o.prune {
		// Only alerts this manager made: never one made by hand or by another file.
		for _, it := range existing {
			n, _ := field(it, "name").(string)
			if m, _ := field(it, "managed_by").(string); m != o.managedBy || seen[n] {
				continue
			}
			changes = append(changes, change{Action: "delete", Name: n, Reason: "managed by " + o.managedBy + " and no longer in the file"})
			if !o.dryRun {
				id, _ := field(it, "id").(string)
				if _, err := a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.DeleteAlert(ctx, id, &client.DeleteAlertParams{Organization: a.sel.org, Cluster: a.sel.cluster})
				}); err != nil {
					return err
				}
			}
		}
	}
	return a.emit(map[string]any{"dry_run": o.dryRun, "database": database, "managed_by": o.managedBy, "changes": changes}, nil)
}
