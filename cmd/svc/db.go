package main

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(dbCommand) }

func dbCommand(a *app) *cobra.Command {
	var retention string
	var create *cobra.Command
	create = &cobra.Command{Use: "create NAME", Short: "Create a database", Args: args(1, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			body := client.CreateDatabaseJSONRequestBody{Name: arg[0]}
			if create.Flags().Changed("retention") {
				body.Retention = &retention
			}
			return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
				return c.CreateDatabase(ctx, &client.CreateDatabaseParams{}, body)
			}))
		})}
	create.Flags().StringVar(&retention, "retention", "", "default retention of the database's new tables (30d, 12h)")
	return group("db", "Databases of the cluster: list, create, retention, delete, select",
		&cobra.Command{Use: "list", Short: "List the cluster's databases", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListDatabases(ctx, &client.ListDatabasesParams{})
				}))
			})},
		create,
		&cobra.Command{Use: "retention NAME RETENTION", Short: "Set the default retention of tables created in a database from now on (\"\" for none)", Args: args(2, 2),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ChangeDatabase(ctx, arg[0], &client.ChangeDatabaseParams{}, client.ChangeDatabaseJSONRequestBody{Retention: &arg[1]})
				}))
			})},
		&cobra.Command{Use: "delete NAME", Short: "Delete a database and its tables", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				v, err := a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.DeleteDatabase(ctx, arg[0], &client.DeleteDatabaseParams{})
				})
				if err == nil && a.cfg.Database == arg[0] {
					a.cfg.Database = ""
					err = a.saveConfig()
				}
				return a.emit(v, err)
			})},
		a.selectCommand("database", scopeDatabase),
	)
}
