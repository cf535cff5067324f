package main

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(connectorCommand) }

// connectorCommand reads a cluster's ingestion connector (its Kafka consumer); the
// connector's id is its cluster's, so a cluster name names it too.
func connectorCommand(a *app) *cobra.Command {
	return group("connector", "Ingestion connectors (a cluster's Kafka consumer): get",
		&cobra.Command{Use: "get [CLUSTER|ID]", Short: "Show a connector's state, lag and rows landed (default: the selected cluster's)", Args: args(0, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				id, _, err := a.clusterArg(ctx, arg)
				if err != nil {
					return err
				}
				return a.emit(a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.GetConnector(ctx, id, &client.GetConnectorParams{})
				}))
			})},
	)
}
