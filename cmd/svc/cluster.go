package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"

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
	return group("cluster", "Clusters: list, get, create, stop, resume, update, delete, metrics, sizes, select",
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
		a.clusterAction("stop", "Stop a cluster: its consumers drain, its engine stops (ingestion is still accepted)",
			func(ctx context.Context, c *client.Client, id client.UUID) (*http.Response, error) {
				return c.StopCluster(ctx, id, &client.StopClusterParams{})
			}),
		a.clusterAction("resume", "Start a stopped (or failed) cluster again",
			func(ctx context.Context, c *client.Client, id client.UUID) (*http.Response, error) {
				return c.ResumeCluster(ctx, id, &client.ResumeClusterParams{})
			}),
		a.clusterUpdateCommand(),
		a.clusterDeleteCommand(),
		a.clusterMetricsCommand(),
		a.selectCommand("cluster", scopeCluster),
	)
}

// clusterAction is a command acting on one cluster, named by NAME|ID or the selection.
func (a *app) clusterAction(use, short string, f func(ctx context.Context, c *client.Client, id client.UUID) (*http.Response, error)) *cobra.Command {
	return &cobra.Command{Use: use + " [NAME|ID]", Short: short + " (default: the selected cluster)", Args: args(0, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			id, _, err := a.clusterArg(ctx, arg)
			if err != nil {
				return err
			}
			return a.emit(a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
				return f(ctx, c, id)
			}))
		})}
}

func (a *app) clusterUpdateCommand() *cobra.Command {
	var name string
	var idle int
	cmd := &cobra.Command{Use: "update [NAME|ID]", Short: "Rename a cluster or change its idle timeout (default: the selected cluster)", Args: args(0, 1)}
	cmd.RunE = runE(func(ctx context.Context, arg []string) error {
		var body client.UpdateClusterJSONRequestBody
		if cmd.Flags().Changed("name") {
			body.Name = ptr(name)
		}
		if cmd.Flags().Changed("idle-timeout-minutes") {
			body.IdleTimeoutMinutes = ptr(idle)
		}
		if body.Name == nil && body.IdleTimeoutMinutes == nil {
			return usageErr("usage: %s: pass --name and/or --idle-timeout-minutes", cmd.UseLine())
		}
		id, old, err := a.clusterArg(ctx, arg)
		if err != nil {
			return err
		}
		v, err := a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
			return c.UpdateCluster(ctx, id, &client.UpdateClusterParams{}, body)
		})
		if err == nil && body.Name != nil && a.cfg.Cluster == old {
			a.cfg.Cluster = name // the saved selection follows the rename
			err = a.saveConfig()
		}
		return a.emit(v, err)
	})
	cmd.Flags().StringVar(&name, "name", "", "new name, unique in the organization")
	cmd.Flags().IntVar(&idle, "idle-timeout-minutes", 0, "stop the cluster after this many idle minutes (0 never, else 15 to 43200)")
	return cmd
}

func (a *app) clusterDeleteCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{Use: "delete [NAME|ID]", Short: "Delete a cluster with its data, databases, topics and keys (default: the selected cluster)",
		Args: args(0, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			id, name, err := a.clusterArg(ctx, arg)
			if err != nil {
				return err
			}
			if !yes && !a.json && isTerminal(a.stdin) && isTerminal(a.stderr) {
				if err := a.confirm(fmt.Sprintf("Delete cluster %s (%s) with all its data? Type yes to confirm: ", name, id)); err != nil {
					return err
				}
			}
			v, err := a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
				return c.DeleteCluster(ctx, id, &client.DeleteClusterParams{})
			})
			if err == nil && a.cfg.Cluster == name {
				a.cfg.Cluster, a.cfg.Database = "", ""
				err = a.saveConfig()
			}
			return a.emit(v, err)
		})}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation on a terminal")
	return cmd
}

// confirm asks a question on the terminal; any answer but yes aborts (exit 1).
func (a *app) confirm(question string) error {
	fmt.Fprint(a.stderr, question)
	line, _ := bufio.NewReader(a.stdin).ReadString('\n')
	if strings.ToLower(strings.TrimSpace(line)) != "yes" {
		return &apiError{body: map[string]any{"code": "aborted", "message": "not confirmed; nothing was changed", "hint": "pass --yes to skip the question"}}
	}
	return nil
}

// clusterArg is the cluster a command names (NAME|ID), else the selected one (--cluster,
// SERVICE_CLUSTER, the saved selection, or the organization's only cluster): its id and name.
func (a *app) clusterArg(ctx context.Context, arg []string) (client.UUID, string, error) {
	ref := ""
	if len(arg) == 1 {
		ref = arg[0]
	} else {
		if err := a.resolve(ctx, scopeCluster); err != nil {
			return client.UUID{}, "", err
		}
		if ref = a.sel.cluster; ref == "" {
			return client.UUID{}, "", usageErr("name the cluster: NAME|ID, --cluster or SERVICE_CLUSTER")
		}
	}
	return a.clusterRef(ctx, ref)
}

// clusterID finds a cluster of the organization by id or name.
func (a *app) clusterID(ctx context.Context, ref string) (client.UUID, error) {
	id, _, err := a.clusterRef(ctx, ref)
	return id, err
}

// clusterRef finds a cluster of the organization by id or name: its id and name.
func (a *app) clusterRef(ctx context.Context, ref string) (client.UUID, string, error) {
	v, err := a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
		return c.ListClusters(ctx, &client.ListClustersParams{})
	})
	if err != nil {
		return client.UUID{}, "", err
	}
	items, _ := field(v, "clusters").([]any)
	for _, it := range items {
		if field(it, "name") == ref || field(it, "id") == ref {
			name, _ := field(it, "name").(string)
			s, _ := field(it, "id").(string)
			id, err := client.ParseUUID(s)
			return id, name, err
		}
	}
	return client.UUID{}, "", &apiError{status: 404, body: map[string]any{"code": "cluster_not_found",
		"message": fmt.Sprintf("no cluster %q in organization %q", ref, a.sel.org), "hint": "list them with svc cluster list"}}
}
