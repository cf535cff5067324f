package main

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(orgCommand) }

func orgCommand(a *app) *cobra.Command {
	c := group("org", "Organizations: list, create, select, rename, delete, members, invite, invitations",
		&cobra.Command{Use: "list", Short: "List your organizations", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListOrganizations(ctx, &client.ListOrganizationsParams{})
				}))
			})},
		&cobra.Command{Use: "get NAME", Short: "Show one organization", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.GetOrganization(ctx, arg[0], &client.GetOrganizationParams{})
				}))
			})},
		&cobra.Command{Use: "create NAME", Short: "Create an organization (you become its administrator)", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.CreateOrganization(ctx, &client.CreateOrganizationParams{}, client.CreateOrganizationJSONRequestBody{Name: arg[0]})
				}))
			})},
		&cobra.Command{Use: "rename NAME NEW_NAME", Short: "Rename an organization", Args: args(2, 2),
			RunE: runE(func(ctx context.Context, arg []string) error {
				v, err := a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.RenameOrganization(ctx, arg[0], &client.RenameOrganizationParams{}, client.RenameOrganizationJSONRequestBody{Name: ptr(arg[1])})
				})
				if err == nil && a.cfg.Org == arg[0] {
					a.cfg.Org = arg[1]
					err = a.saveConfig()
				}
				return a.emit(v, err)
			})},
		&cobra.Command{Use: "delete NAME", Short: "Delete an organization", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				v, err := a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.DeleteOrganization(ctx, arg[0], &client.DeleteOrganizationParams{})
				})
				if err == nil && a.cfg.Org == arg[0] {
					a.cfg.Org, a.cfg.Cluster, a.cfg.Database = "", "", ""
					err = a.saveConfig()
				}
				return a.emit(v, err)
			})},
		a.selectCommand("org", scopeOrg),
	)
	c.AddCommand(memberCommands(a)...)
	return c
}

// selectCommand saves NAME as the organization, cluster or database later commands
// use when no flag or environment variable names one. The name is checked first.
func (a *app) selectCommand(what string, s scope) *cobra.Command {
	return &cobra.Command{Use: "select NAME", Short: "Save the " + what + " later commands use", Args: args(1, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			switch s {
			case scopeOrg:
				a.org = arg[0]
			case scopeCluster:
				a.cluster = arg[0]
			case scopeDatabase:
				a.database = arg[0]
			}
			if err := a.resolve(ctx, s); err != nil {
				return err
			}
			if err := a.checkSelection(ctx, s); err != nil {
				return err
			}
			switch s {
			case scopeOrg:
				a.cfg.Org, a.cfg.Cluster, a.cfg.Database = a.sel.org, "", ""
			case scopeCluster:
				a.cfg.Org, a.cfg.Cluster, a.cfg.Database = a.sel.org, a.sel.cluster, ""
			case scopeDatabase:
				a.cfg.Org, a.cfg.Cluster, a.cfg.Database = a.sel.org, a.sel.cluster, a.sel.database
			}
			if err := a.saveConfig(); err != nil {
				return err
			}
			return a.emit(map[string]any{"selected": map[string]string{"org": a.cfg.Org, "cluster": a.cfg.Cluster, "database": a.cfg.Database}}, nil)
		})}
}

// checkSelection asks the service whether the selected names exist: a request scoped
// to them fails with the service's 404 when one does not.
func (a *app) checkSelection(ctx context.Context, s scope) error {
	_, err := a.call(ctx, s, func(ctx context.Context, c *client.Client) (*http.Response, error) {
		switch s {
		case scopeOrg:
			return c.GetOrganization(ctx, a.sel.org, &client.GetOrganizationParams{})
		case scopeCluster:
			return c.ListDatabases(ctx, &client.ListDatabasesParams{})
		}
		return c.ListTables(ctx, &client.ListTablesParams{})
	})
	return err
}
