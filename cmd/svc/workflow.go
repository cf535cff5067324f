package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(workflowCommand) }

// The workflow routes require organization and cluster in the query string: the selection
// fills them in for users, and for keys when --org/--cluster (or SERVICE_*) are given.

func workflowCommand(a *app) *cobra.Command {
	var runKey string
	run := &cobra.Command{Use: "run NAME|ID", Short: "Start a manual run now (the schedule is not changed)", Args: args(1, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			p := client.StartWorkflowRunParams{}
			if runKey != "" {
				p.IdempotencyKey = ptr(runKey)
			}
			return a.workflowCall(ctx, arg[0], func(ctx context.Context, c *client.Client, id client.WorkflowId) (*http.Response, error) {
				p.Organization, p.Cluster = a.sel.org, a.sel.cluster
				return c.StartWorkflowRun(ctx, id, &p)
			})
		})}
	run.Flags().StringVar(&runKey, "idempotency-key", "", "a repeated key returns the same run instead of starting another (1 to 128 visible ASCII characters)")

	var cursor string
	var limit int
	var from, to string
	runs := &cobra.Command{Use: "runs NAME|ID", Short: "List a workflow's runs, newest first (--cursor pages on)", Args: args(1, 1)}
	runs.RunE = runE(func(ctx context.Context, arg []string) error {
		p := client.ListWorkflowRunsParams{Cursor: optString(cursor)}
		if runs.Flags().Changed("limit") {
			p.Limit = ptr(limit)
		}
		return a.workflowCall(ctx, arg[0], func(ctx context.Context, c *client.Client, id client.WorkflowId) (*http.Response, error) {
			p.Organization, p.Cluster = a.sel.org, a.sel.cluster
			return c.ListWorkflowRuns(ctx, id, &p)
		})
	})
	runs.Flags().StringVar(&cursor, "cursor", "", "next_cursor of the previous page")
	runs.Flags().IntVar(&limit, "limit", 0, "runs per page, 1 to 100 (default 20)")

	logs := &cobra.Command{Use: "logs NAME|ID", Short: "Read a workflow's run log, newest first (--cursor pages on)", Args: args(1, 1)}
	logs.RunE = runE(func(ctx context.Context, arg []string) error {
		p := client.GetWorkflowLogsParams{Cursor: optString(cursor)}
		var err error
		if p.From, p.To, err = msWindow(from, to); err != nil {
			return err
		}
		if logs.Flags().Changed("limit") {
			p.Limit = ptr(limit)
		}
		return a.workflowCall(ctx, arg[0], func(ctx context.Context, c *client.Client, id client.WorkflowId) (*http.Response, error) {
			p.Organization, p.Cluster = a.sel.org, a.sel.cluster
			return c.GetWorkflowLogs(ctx, id, &p)
		})
	})
	logs.Flags().StringVar(&cursor, "cursor", "", "next_cursor of the previous page")
	logs.Flags().IntVar(&limit, "limit", 0, "entries per page, 1 to 200 (default 100)")
	windowFlags(logs, &from, &to)

	metrics := &cobra.Command{Use: "metrics NAME|ID", Short: "Executions, matches, sink events and errors per bucket, with totals", Args: args(1, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			p := client.GetWorkflowMetricsParams{}
			var err error
			if p.From, p.To, err = msWindow(from, to); err != nil {
				return err
			}
			return a.workflowCall(ctx, arg[0], func(ctx context.Context, c *client.Client, id client.WorkflowId) (*http.Response, error) {
				p.Organization, p.Cluster = a.sel.org, a.sel.cluster
				return c.GetWorkflowMetrics(ctx, id, &p)
			})
		})}
	windowFlags(metrics, &from, &to)

	return group("workflow", "Workflows (saved SQL run on a schedule or on demand, with sinks): list, get, create, update, delete, run, cancel, runs, logs, metrics",
		&cobra.Command{Use: "list", Short: "List the cluster's workflows", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListWorkflows(ctx, &client.ListWorkflowsParams{Organization: a.sel.org, Cluster: a.sel.cluster})
				}))
			})},
		&cobra.Command{Use: "get NAME|ID", Short: "Show a workflow with its schedule state (next_run_at)", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.workflowCall(ctx, arg[0], func(ctx context.Context, c *client.Client, id client.WorkflowId) (*http.Response, error) {
					return c.GetWorkflow(ctx, id, &client.GetWorkflowParams{Organization: a.sel.org, Cluster: a.sel.cluster})
				})
			})},
		a.workflowWriteCommand(false),
		a.workflowWriteCommand(true),
		&cobra.Command{Use: "delete NAME|ID", Short: "Delete a workflow and its schedule (its runs stay listed until Temporal's retention)", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.workflowCall(ctx, arg[0], func(ctx context.Context, c *client.Client, id client.WorkflowId) (*http.Response, error) {
					return c.DeleteWorkflow(ctx, id, &client.DeleteWorkflowParams{Organization: a.sel.org, Cluster: a.sel.cluster})
				})
			})},
		run,
		&cobra.Command{Use: "cancel NAME|ID RUN_ID", Short: "Cancel a run: its SQL is killed and delivery stops", Args: args(2, 2),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.workflowCall(ctx, arg[0], func(ctx context.Context, c *client.Client, id client.WorkflowId) (*http.Response, error) {
					return c.CancelWorkflowRun(ctx, id, arg[1], &client.CancelWorkflowRunParams{Organization: a.sel.org, Cluster: a.sel.cluster})
				})
			})},
		runs,
		logs,
		metrics,
	)
}

// workflowCall runs one request on the workflow named by ref (NAME|ID) and prints its answer.
func (a *app) workflowCall(ctx context.Context, ref string, f func(ctx context.Context, c *client.Client, id client.WorkflowId) (*http.Response, error)) error {
	id, err := a.workflowID(ctx, ref)
	if err != nil {
		return err
	}
	return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
		return f(ctx, c, id)
	}))
}

func windowFlags(cmd *cobra.Command, from, to *string) {
	cmd.Flags().StringVar(from, "from", "", "window start, inclusive: Unix milliseconds or RFC 3339 (default 24 hours before --to)")
	cmd.Flags().StringVar(to, "to", "", "window end, exclusive: Unix milliseconds or RFC 3339 (default now)")
}

// msWindow parses --from and --to.
func msWindow(from, to string) (*int, *int, error) {
	f, err := msFlag("--from", from)
	if err != nil {
		return nil, nil, err
	}
	t, err := msFlag("--to", to)
	return f, t, err
}

func optString(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// workflowWriteCommand is create (POST) or update NAME|ID (PATCH). The body is the
// --file JSON object (a WorkflowRequest; "-" reads stdin) with the flags given on top.
func (a *app) workflowWriteCommand(update bool) *cobra.Command {
	var w struct {
		file, name, description, sql string
		interval                     int
		manual, enabled              bool
		httpSinks, headers, tables   []string
	}
	cmd := &cobra.Command{Use: "create", Short: "Create a workflow from flags and/or a JSON file (--file)", Args: args(0, 0)}
	if update {
		cmd = &cobra.Command{Use: "update NAME|ID", Short: "Change a workflow: only the fields given (sink flags replace all sinks)", Args: args(1, 1)}
	}
	cmd.RunE = runE(func(ctx context.Context, arg []string) error {
		body := map[string]any{}
		if w.file != "" {
			if err := readJSONFile(a.stdin, w.file, &body); err != nil {
				return err
			}
		}
		f := cmd.Flags()
		if f.Changed("name") {
			body["name"] = w.name
		}
		if f.Changed("description") {
			body["description"] = w.description
		}
		if f.Changed("interval-seconds") && w.manual {
			return usageErr("--interval-seconds and --manual exclude each other")
		}
		if f.Changed("interval-seconds") {
			body["interval_seconds"] = w.interval
		}
		if w.manual {
			body["interval_seconds"] = nil
		}
		if f.Changed("enabled") {
			body["enabled"] = w.enabled
		}
		q, _ := body["query"].(map[string]any)
		if q == nil {
			q = map[string]any{}
		}
		if f.Changed("sql") {
			q["sql"] = w.sql
		}
		// The query's database is the global --database; on create also SERVICE_DATABASE,
		// the saved selection or the cluster's only database.
		if update {
			if a.database != "" {
				q["database"] = a.database
			}
		} else if _, ok := q["database"]; !ok {
			if err := a.resolve(ctx, scopeDatabase); err != nil {
				return err
			}
			if a.sel.database != "" {
				q["database"] = a.sel.database
			}
		}
		if len(q) > 0 {
			body["query"] = q
		}
		sinks, err := sinkFlags(w.httpSinks, w.headers, w.tables)
		if err != nil {
			return err
		}
		if sinks != nil {
			body["sinks"] = sinks
		}
		if update && len(body) == 0 {
			return usageErr("usage: %s: pass the fields to change (see --help) or --file", cmd.UseLine())
		}
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		if !update {
			return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
				return c.CreateWorkflowWithBody(ctx, &client.CreateWorkflowParams{Organization: a.sel.org, Cluster: a.sel.cluster},
					"application/json", bytes.NewReader(b))
			}))
		}
		id, err := a.workflowID(ctx, arg[0])
		if err != nil {
			return err
		}
		return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
			return c.UpdateWorkflowWithBody(ctx, id, &client.UpdateWorkflowParams{Organization: a.sel.org, Cluster: a.sel.cluster},
				"application/json", bytes.NewReader(b))
		}))
	})
	f := cmd.Flags()
	f.StringVar(&w.file, "file", "", `a JSON object as the API takes it ({"name", "query": {"database", "sql"}, "interval_seconds", "enabled", "sinks"}); "-" reads stdin; flags override its fields`)
	f.StringVar(&w.name, "name", "", "name, unique in the cluster (stored trimmed and lowercased)")
	f.StringVar(&w.description, "description", "", "description (empty clears it)")
	f.StringVar(&w.sql, "sql", "", "the statement to run, as for svc query (the database is --database)")
	f.IntVar(&w.interval, "interval-seconds", 0, "run every N seconds, 1 to 86400 (create default 1)")
	f.BoolVar(&w.manual, "manual", false, "manual-only: no schedule (interval_seconds null)")
	f.BoolVar(&w.enabled, "enabled", true, "--enabled=false pauses the schedule")
	f.StringArrayVar(&w.httpSinks, "http-sink", nil, "POST the matches to this URL (repeatable; HTTP sinks come before table sinks)")
	f.StringArrayVar(&w.headers, "header", nil, "'Name: value' sent by every --http-sink (repeatable; values are stored encrypted, never shown)")
	f.StringArrayVar(&w.tables, "table-sink", nil, "insert the matches into DATABASE.TABLE (repeatable)")
	return cmd
}

// sinkFlags builds the sinks list of --http-sink, --header and --table-sink; nil when
// none is given (the file's sinks, or on update the current ones, stay).
func sinkFlags(urls, headers, tables []string) ([]any, error) {
	if len(headers) > 0 && len(urls) == 0 {
		return nil, usageErr("--header goes with --http-sink")
	}
	if len(urls) == 0 && len(tables) == 0 {
		return nil, nil
	}
	h := map[string]string{}
	for _, s := range headers {
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usageErr("--header: want 'Name: value', got %q", s)
		}
		h[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	sinks := []any{}
	for _, u := range urls {
		settings := map[string]any{"url": u}
		if len(h) > 0 {
			settings["headers"] = h
		}
		sinks = append(sinks, map[string]any{"type": "http", "settings": settings})
	}
	for _, t := range tables {
		db, table, ok := strings.Cut(t, ".")
		if !ok || db == "" || table == "" {
			return nil, usageErr("--table-sink: want DATABASE.TABLE, got %q", t)
		}
		sinks = append(sinks, map[string]any{"type": "table", "settings": map[string]any{"database": db, "table": table}})
	}
	return sinks, nil
}

// readJSONFile decodes a JSON object from a file, or stdin for "-".
func readJSONFile(stdin io.Reader, name string, v *map[string]any) error {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return usageErr("--file: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil || *v == nil {
		return usageErr("--file %s: not a JSON object: %v", name, err)
	}
	return nil
}

// msFlag parses an optional time flag: Unix milliseconds or RFC 3339.
func msFlag(name, v string) (*int, error) {
	if v == "" {
		return nil, nil
	}
	if n, err := strconv.Atoi(v); err == nil {
		return &n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, usageErr("%s: want Unix milliseconds or an RFC 3339 time, got %q", name, v)
	}
	return ptr(int(t.UnixMilli())), nil
}

// workflowID is the id of a workflow named by id or name (names are unique in the cluster,
// stored lowercased).
func (a *app) workflowID(ctx context.Context, ref string) (client.WorkflowId, error) {
	if _, err := client.ParseUUID(ref); err == nil {
		return ref, nil
	}
	v, err := a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
		return c.ListWorkflows(ctx, &client.ListWorkflowsParams{Organization: a.sel.org, Cluster: a.sel.cluster})
	})
	if err != nil {
		return "", err
	}
	items, _ := field(v, "workflows").([]any)
	for _, it := range items {
		if n, _ := field(it, "name").(string); n == strings.ToLower(strings.TrimSpace(ref)) {
			id, _ := field(it, "id").(string)
			return id, nil
		}
	}
	return "", &apiError{status: 404, body: map[string]any{"code": "workflow_not_found",
		"message": fmt.Sprintf("no workflow %q in cluster %q", ref, a.sel.cluster), "hint": "list them with svc workflow list"}}
}
