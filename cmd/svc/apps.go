package main

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(appsCommand) }

// appsCommand manages the apps of the selected cluster (opentelemetry, prometheus,
// logsearch). The Apps API takes a user (saved login or OAuth token): an API key gets
// the API's 403, and an unknown app its 404.
func appsCommand(a *app) *cobra.Command {
	return group("app", "Apps of the selected cluster (opentelemetry, prometheus, logsearch): list, install, uninstall, retention",
		&cobra.Command{Use: "list", Short: "List the apps and whether each is installed in the selected cluster", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListApps(ctx, &client.ListAppsParams{})
				}))
			})},
		&cobra.Command{Use: "install APP", Short: "Install an app in the selected cluster (idempotent; organization administrators)", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.InstallApp(ctx, arg[0], &client.InstallAppParams{})
				}))
			})},
		&cobra.Command{Use: "uninstall APP", Short: "Uninstall an app from the selected cluster (idempotent; organization administrators)", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.UninstallApp(ctx, arg[0], &client.UninstallAppParams{})
				}))
			})},
		&cobra.Command{Use: "retention APP RETENTION", Short: "Set how long the app's tables keep rows in every database (30d; \"\" for forever); answers what the engine enforces", Args: args(2, 2),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ChangeApp(ctx, arg[0], &client.ChangeAppParams{}, client.ChangeAppJSONRequestBody{Retention: &arg[1]})
				}))
			})},
	)
}
