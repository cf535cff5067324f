package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(clusterCommand) }

func clusterCommand(a *app) *cobra.Command {
	var cpu, mem float32
	var replicas int
	create := &cobra.Command{Use: "create NAME", Short: "Create a cluster in the organization", Args: args(1, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			return a.emit(a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
				return c.CreateCluster(ctx, &client.CreateClusterParams{}, client.CreateClusterJSONRequestBody{
					Name: arg[0], Replicas: replicas, Size: client.ClusterSize{CpuCores: cpu, MemoryGib: mem}})
			}))
		})}
	create.Flags().Float32Var(&cpu, "cpu-cores", 1, "size: CPU cores (see svc cluster sizes)")
	create.Flags().Float32Var(&mem, "memory-gib", 4, "size: memory in GiB (see svc cluster sizes)")
	create.Flags().IntVar(&replicas, "replicas", 1, "number of replicas")
	return group("cluster", "Clusters: list, get, create, sizes, select",
		&cobra.Command{Use: "list", Short: "List the organization's clusters", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListClusters(ctx, &client.ListClustersParams{})
				}))
			})},
		&cobra.Command{Use: "get NAME|ID", Short: "Show one cluster and its status", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				id, err := a.clusterID(ctx, arg[0])
				if err != nil {
					return err
				}
				return a.emit(a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.GetCluster(ctx, id, &client.GetClusterParams{})
				}))
			})},
		create,
		&cobra.Command{Use: "sizes", Short: "List the cluster sizes and replica limits", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.GetClusterSizes(ctx)
				}))
			})},
		a.selectCommand("cluster", scopeCluster),
	)
}

// clusterID finds a cluster of the organization by id or name.
func (a *app) clusterID(ctx context.Context, ref string) (client.UUID, error) {
	v, err := a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
		return c.ListClusters(ctx, &client.ListClustersParams{})
	})
	if err != nil {
		return client.UUID{}, err
	}
	items, _ := field(v, "clusters").([]any)
	for _, it := range items {
		if field(it, "name") == ref || field(it, "id") == ref {
			s, _ := field(it, "id").(string)
			return client.ParseUUID(s)
		}
	}
	return client.UUID{}, &apiError{status: 404, body: map[string]any{"code": "cluster_not_found",
		"message": fmt.Sprintf("no cluster %q in organization %q", ref, a.sel.org), "hint": "list them with svc cluster list"}}
}
