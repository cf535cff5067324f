package main

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(searchCommand) }

func searchCommand(a *app) *cobra.Command {
	var earliest, latest string
	var stats bool
	cmd := &cobra.Command{
		Use:   "search SPL",
		Short: "Run a log search (SPL) over the selected database's events",
		Args:  args(1, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			body := client.SplSearchJSONRequestBody{Spl: arg[0]}
			if stats {
				body.IncludeFieldStatistics = &stats
			}
			if earliest != "" {
				body.Earliest = &client.SplSearchRequest_Earliest{}
				if err := body.Earliest.FromSplSearchRequestEarliest1(earliest); err != nil {
					return err
				}
			}
			if latest != "" {
				body.Latest = &client.SplSearchRequest_Latest{}
				if err := body.Latest.FromSplSearchRequestLatest1(latest); err != nil {
					return err
				}
			}
			return a.emit(a.call(ctx, scopeDatabase, func(ctx context.Context, c *client.Client) (*http.Response, error) {
				return c.SplSearch(ctx, &client.SplSearchParams{}, body)
			}))
		}),
	}
	cmd.Flags().StringVar(&earliest, "earliest", "", "start: epoch seconds, now, or relative like -15m, -2h, -7d (default -24h; 0 is all time)")
	cmd.Flags().StringVar(&latest, "latest", "", "end, as --earliest (default now)")
	cmd.Flags().BoolVar(&stats, "field-stats", false, "include field statistics (counts and top values per field)")
	return cmd
}
