package main

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(savedSearchCommand) }

func savedSearchCommand(a *app) *cobra.Command {
	var s struct{ name, spl, earliest, latest, description, visibility string }
	flags := func(c *cobra.Command) *cobra.Command {
		f := c.Flags()
		f.StringVar(&s.earliest, "earliest", "", "time range start, as for svc search")
		f.StringVar(&s.latest, "latest", "", "time range end")
		f.StringVar(&s.description, "description", "", "description")
		f.StringVar(&s.visibility, "visibility", "", "private or shared")
		return c
	}
	opt := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	// The saved-search routes require organization and cluster in the query string; the
	// selection fills them in for users, and for keys when --org/--cluster are given.
	ids := func(ref string) (client.SearchId, error) { return client.ParseUUID(ref) }
	return group("saved-search", "Saved log searches: list, get, create, update, delete",
		&cobra.Command{Use: "list", Short: "List saved searches", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListSavedSearches(ctx, &client.ListSavedSearchesParams{Organization: a.sel.org, Cluster: a.sel.cluster})
				}))
			})},
		&cobra.Command{Use: "get ID", Short: "Show a saved search", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				id, err := ids(arg[0])
				if err != nil {
					return usageErr("ID must be a saved search's id: %v", err)
				}
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.GetSavedSearch(ctx, id, &client.GetSavedSearchParams{Organization: a.sel.org, Cluster: a.sel.cluster})
				}))
			})},
		flags(&cobra.Command{Use: "create NAME SPL", Short: "Save a search", Args: args(2, 2),
			RunE: runE(func(ctx context.Context, arg []string) error {
				if err := a.resolve(ctx, scopeDatabase); err != nil {
					return err
				}
				body := client.CreateSavedSearchJSONRequestBody{Name: arg[0], Spl: arg[1], Earliest: opt(s.earliest), Latest: opt(s.latest),
					Description: opt(s.description), Database: opt(a.sel.database)}
				if s.visibility != "" {
					body.Visibility = ptr(client.CreateSavedSearchJSONBodyVisibility(s.visibility))
				}
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.CreateSavedSearch(ctx, &client.CreateSavedSearchParams{Organization: a.sel.org, Cluster: a.sel.cluster}, body)
				}))
			})}),
		func() *cobra.Command {
			c := flags(&cobra.Command{Use: "update ID", Short: "Change a saved search (only the flags given)", Args: args(1, 1),
				RunE: runE(func(ctx context.Context, arg []string) error {
					id, err := ids(arg[0])
					if err != nil {
						return usageErr("ID must be a saved search's id: %v", err)
					}
					body := client.UpdateSavedSearchJSONRequestBody{Name: opt(s.name), Spl: opt(s.spl), Earliest: opt(s.earliest),
						Latest: opt(s.latest), Description: opt(s.description)}
					if s.visibility != "" {
						body.Visibility = ptr(client.SavedSearchRequestVisibility(s.visibility))
					}
					return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
						return c.UpdateSavedSearch(ctx, id, &client.UpdateSavedSearchParams{Organization: a.sel.org, Cluster: a.sel.cluster}, body)
					}))
				})})
			c.Flags().StringVar(&s.name, "name", "", "new name")
			c.Flags().StringVar(&s.spl, "spl", "", "new search")
			return c
		}(),
		&cobra.Command{Use: "delete ID", Short: "Delete a saved search", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				id, err := ids(arg[0])
				if err != nil {
					return usageErr("ID must be a saved search's id: %v", err)
				}
				return a.emit(a.call(ctx, scopeCluster, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.DeleteSavedSearch(ctx, id, &client.DeleteSavedSearchParams{Organization: a.sel.org, Cluster: a.sel.cluster})
				}))
			})},
	)
}
