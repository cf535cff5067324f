package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(queryCommand) }

// The nine result formats of POST /v1/query.
var queryFormats = []string{"JSON", "JSONEachRow", "JSONEachRowWithProgress", "JSONCompact", "CSV", "CSVWithNames", "TSV", "TSVWithNames", "TabSeparated"}

func queryCommand(a *app) *cobra.Command {
	var file, format, queryID string
	cmd := &cobra.Command{
		Use:   "query [SQL]",
		Short: "Run SQL (from the argument, --file, or stdin)",
		Long: `Runs one SQL statement in the selected database. On a terminal the result is a
table; piped, it is the raw --format (default JSON) as the service streams it.
Ctrl-C cancels the query on the service (POST /v1/query/cancel) and exits 130.`,
		Args: args(0, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			sql, err := a.readSQL(arg, file)
			if err != nil {
				return err
			}
			table := format == "" && isTerminal(a.stdout)
			if format == "" {
				format = "JSON"
			}
			if !validFormat(format) {
				return usageErr("--format must be one of %s", strings.Join(queryFormats, ", "))
			}
			if queryID == "" {
				queryID = newQueryID()
			}
			return a.runQuery(ctx, sql, format, queryID, table)
		}),
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "read the SQL from this file (- for stdin)")
	cmd.Flags().StringVar(&format, "format", "", "result format: "+strings.Join(queryFormats, ", "))
	cmd.Flags().StringVar(&queryID, "query-id", "", "the query's id (default: a random one), for cancellation")
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return queryFormats, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func validFormat(f string) bool {
	for _, q := range queryFormats {
		if q == f {
			return true
		}
	}
	return false
}

func (a *app) readSQL(arg []string, file string) (string, error) {
	var b []byte
	var err error
	switch {
	case len(arg) == 1 && file != "":
		return "", usageErr("give the SQL as an argument or with --file, not both")
	case len(arg) == 1 && arg[0] != "-":
		return arg[0], nil
	case file != "" && file != "-":
		b, err = os.ReadFile(file)
	case file == "-" || (len(arg) == 1 && arg[0] == "-") || !isTerminal(a.stdin):
		b, err = io.ReadAll(a.stdin)
	default:
		return "", usageErr("no SQL: give it as an argument, with --file, or on stdin")
	}
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", usageErr("the SQL is empty")
	}
	return string(b), nil
}

func newQueryID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "svc-cli-" + hex.EncodeToString(b[:])
}

// runQuery posts the statement and streams the answer; when ctx is interrupted it
// cancels the query on the service before returning errInterrupted.
func (a *app) runQuery(ctx context.Context, sql, format, queryID string, table bool) error {
	if err := a.resolve(ctx, scopeDatabase); err != nil {
		return err
	}
	c, err := a.client(scopeDatabase)
	if err != nil {
		return err
	}
	f := client.RunQueryJSONBodyFormat(format)
	resp, err := c.RunQuery(ctx, &client.RunQueryParams{QueryId: &queryID}, client.RunQueryJSONRequestBody{Sql: sql, Format: &f})
	if err == nil {
		if resp.StatusCode >= 400 {
			_, err = decodeAnswer(resp)
			return err
		}
		defer resp.Body.Close()
		if table {
			err = a.printTable(resp.Body)
		} else {
			_, err = io.Copy(a.stdout, resp.Body)
		}
	}
	if err != nil && ctx.Err() != nil {
		a.cancelQuery(c, queryID)
		return errInterrupted
	}
	if err != nil {
		return transportErr(ctx, err)
	}
	return nil
}

// cancelQuery asks the service to stop queryID, reporting the outcome on stderr.
func (a *app) cancelQuery(c *client.Client, queryID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.CancelQuery(ctx, &client.CancelQueryParams{}, client.CancelQueryJSONRequestBody{QueryId: queryID})
	if err == nil {
		_, err = decodeAnswer(resp)
	}
	ev := map[string]any{"event": "query_canceled", "query_id": queryID}
	if err != nil {
		ev["event"], ev["error"] = "query_cancel_failed", err.Error()
	}
	a.printEvent(ev)
}

// printTable renders a JSON-format answer as an aligned table.
func (a *app) printTable(r io.Reader) error {
	var res struct {
		Meta []struct {
			Name string `json:"name"`
		} `json:"meta"`
		Data []json.RawMessage `json:"data"`
		Rows int               `json:"rows"`
	}
	if err := json.NewDecoder(r).Decode(&res); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	names := make([]string, len(res.Meta))
	for i, m := range res.Meta {
		names[i] = m.Name
	}
	fmt.Fprintln(tw, strings.Join(names, "\t"))
	for _, raw := range res.Data {
		cells := make([]string, len(names))
		var obj map[string]json.RawMessage
		var arr []json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			for i, n := range names {
				cells[i] = cell(obj[n])
			}
		} else if json.Unmarshal(raw, &arr) == nil {
			for i := range cells {
				if i < len(arr) {
					cells[i] = cell(arr[i])
				}
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "(%d rows)\n", res.Rows)
	return nil
}

func cell(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return strings.NewReplacer("\t", " ", "\n", " ").Replace(s)
	}
	if len(v) == 0 {
		return ""
	}
	return string(v)
}
