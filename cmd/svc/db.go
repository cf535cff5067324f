package main

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(dbCommand) }

func dbCommand(a *app) *cobra.Command {
	return group("db", "Databases of the cluster: list, create, delete, select",
		&cobra.Command{Use: "list", Short: "List the cluster's databases", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListDatabases(ctx, &client.ListDatabasesParams{})
				}))
			})},
		&cobra.Command{Use: "create NAME", Short: "Create a database", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.CreateDatabase(ctx, &client.CreateDatabaseParams{}, client.CreateDatabaseJSONRequestBody{Name: arg[0]})
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
