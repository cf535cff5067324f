package main

import (
	"context"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(keyCommand) }

func keyCommand(a *app) *cobra.Command {
	var permission, expires string
	var roles []string
	create := &cobra.Command{Use: "create NAME", Short: "Create an API key (the secret is shown once)", Args: args(1, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			body := client.CreateKeyJSONRequestBody{Name: arg[0]}
			if len(roles) > 0 {
				body.DatabaseRoles = &roles
			} else {
				body.Permission = ptr(client.CreateKeyJSONBodyPermission(permission))
			}
			if expires != "" {
				t, err := time.Parse(time.RFC3339, expires)
				if err != nil {
					return usageErr("--expires-at must be an RFC 3339 time with a time zone: %v", err)
				}
				body.ExpiresAt = &t
			}
			return a.emit(a.call(ctx, scopeDatabase, func(ctx context.Context, c *client.Client) (*http.Response, error) {
				return c.CreateKey(ctx, &client.CreateKeyParams{}, body)
			}))
		})}
	create.Flags().StringVar(&permission, "permission", "read_only", "admin, read_write, read_only or write_only")
	create.Flags().StringSliceVar(&roles, "role", nil, "a database role the key acts with (repeatable; instead of --permission)")
	create.Flags().StringVar(&expires, "expires-at", "", "expiry, an RFC 3339 time (default: never)")
	return group("key", "API keys of the cluster: list, create, delete",
		&cobra.Command{Use: "list", Short: "List the cluster's API keys", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListKeys(ctx, &client.ListKeysParams{})
				}))
			})},
		create,
		&cobra.Command{Use: "delete ID", Short: "Delete an API key", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.DeleteKey(ctx, arg[0], &client.DeleteKeyParams{})
				}))
			})},
	)
}
