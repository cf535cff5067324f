package main

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(tableCommand) }

func tableCommand(a *app) *cobra.Command {
	var sortingKey, retention string
	var create *cobra.Command
	create = &cobra.Command{Use: "create NAME", Short: "Create a table (an automatic sorting key unless --sorting-key)", Args: args(1, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			body := client.CreateTableJSONRequestBody{Name: arg[0]}
			if sortingKey != "" {
				body.SortingKey = &sortingKey
			}
			if create.Flags().Changed("retention") {
				body.Retention = &retention
			}
			return a.emit(a.call(ctx, scopeDatabase, func(ctx context.Context, c *client.Client) (*http.Response, error) {
				return c.CreateTable(ctx, &client.CreateTableParams{}, body)
			}))
		})}
	create.Flags().StringVar(&sortingKey, "sorting-key", "", "sorting key expression over JSON paths, e.g. \"user_id, ts\"")
	create.Flags().StringVar(&retention, "retention", "", "how long rows are kept: a duration on the path timestamp (30d, 12h) or \"<time path> + INTERVAL 30 DAY\"; \"\" keeps them forever (default: the database's)")
	return group("table", "Tables of the database: list, create, describe, alter-key, retention, delete",
		&cobra.Command{Use: "list", Short: "List the database's tables", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeDatabase, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListTables(ctx, &client.ListTablesParams{})
				}))
			})},
		create,
		&cobra.Command{Use: "describe NAME", Short: "Show a table: sorting keys, columns, row count", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeDatabase, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.DescribeTable(ctx, arg[0], &client.DescribeTableParams{})
				}))
			})},
		&cobra.Command{Use: "alter-key NAME SORTING_KEY", Short: "Change the sorting key of new rows", Args: args(2, 2),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeDatabase, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ChangeSortingKey(ctx, arg[0], &client.ChangeSortingKeyParams{}, client.ChangeSortingKeyJSONRequestBody{SortingKey: &arg[1]})
				}))
			})},
		&cobra.Command{Use: "retention NAME RETENTION", Short: "Change how long a table keeps rows (30d, \"ts + INTERVAL 90 DAY\"; \"\" for forever); the engine applies it to the rows it holds", Args: args(2, 2),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeDatabase, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ChangeSortingKey(ctx, arg[0], &client.ChangeSortingKeyParams{}, client.ChangeSortingKeyJSONRequestBody{Retention: &arg[1]})
				}))
			})},
		&cobra.Command{Use: "delete NAME", Short: "Delete a table and its rows", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeDatabase, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.DeleteTable(ctx, arg[0], &client.DeleteTableParams{})
				}))
			})},
	)
}
