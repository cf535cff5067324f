package edge

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// clusterFor resolves {cluster_id} for a user of the cluster's organization; admin
// requires an organization administrator. Unknown and foreign clusters are one 404.
func (s *Server) clusterFor(ctx *fasthttp.RequestCtx, p *Principal, what string, admin bool) (*catalog.Cluster, error) {
	return s.clusterParam(ctx, p, "cluster_id", what, admin)
}

// clusterParam is clusterFor with the cluster's id in path parameter param.
func (s *Server) clusterParam(ctx *fasthttp.RequestCtx, p *Principal, param, what string, admin bool) (*catalog.Cluster, error) {
	if err := userOnly(p, what); err != nil {
		return nil, err
	}
	if err := needOrganization(ctx, p); err != nil {
		return nil, err
	}
	id, err := uuid.Parse(stringParam(ctx, param))
	c, ok := s.deps.Catalog.Cluster(id)
	if err != nil || !ok || c.OrgID != p.OrgID {
		return nil, apiErr(404, "cluster_not_found", "no such cluster", "")
	}
	if _, member := s.deps.Catalog.Membership(c.OrgID, p.User.ID); !member {
		return nil, apiErr(404, "cluster_not_found", "no such cluster", "")
	}
	if admin && p.OrgRole != catalog.RoleAdmin {
		return nil, forbidden(what + " (organization administrators only)")
	}
	return c, nil
}

// answerCluster lets this node act on the cluster's new phase, then answers the cluster.
func (s *Server) answerCluster(ctx *fasthttp.RequestCtx, id uuid.UUID) error {
	if err := s.deps.Clusters.ReconcileCluster(s.work(), id); err != nil {
		return err
	}
	c, ok := s.deps.Catalog.Cluster(id)
	if !ok {
		return apiErr(404, "cluster_not_found", "no such cluster", "")
	}
	writeJSON(ctx, 200, s.viewCluster(c))
	return nil
}

// stopCluster drains the cluster's consumers and stops its engine; ingestion is still
// accepted into Kafka and lands on resume.
func (s *Server) stopCluster(ctx *fasthttp.RequestCtx, p *Principal) error {
	c, err := s.clusterFor(ctx, p, "stop clusters", true)
	if err != nil {
		return err
	}
	if _, err := s.deps.Commands.StopCluster(s.work(), c.ID, false); err != nil {
		return err
	}
	return s.answerCluster(ctx, c.ID)
}

// resumeCluster starts a stopped (or failed) cluster again; 409 while it is stopping,
// provisioning or deleting.
func (s *Server) resumeCluster(ctx *fasthttp.RequestCtx, p *Principal) error {
	c, err := s.clusterFor(ctx, p, "resume clusters", true)
	if err != nil {
		return err
	}
	if _, err := s.deps.Commands.ResumeCluster(s.work(), c.ID); err != nil {
		return err
	}
	return s.answerCluster(ctx, c.ID)
}

// deleteCluster stops the cluster everywhere and removes its data, topics, databases and
// keys; the name is free afterwards.
func (s *Server) deleteCluster(ctx *fasthttp.RequestCtx, p *Principal) error {
	c, err := s.clusterFor(ctx, p, "delete clusters", true)
	if err != nil {
		return err
	}
	if _, err := s.deps.Commands.RequestClusterDelete(s.work(), c.ID); err != nil {
		return err
	}
	if err := s.deps.Clusters.ReconcileCluster(s.work(), c.ID); err != nil {
		return err
	}
	_, left := s.deps.Catalog.Cluster(c.ID)
	writeJSON(ctx, 200, map[string]bool{"deleted": !left})
	return nil
}

// patchCluster changes name and idle_timeout_minutes; omitted fields stay.
func (s *Server) patchCluster(ctx *fasthttp.RequestCtx, p *Principal) error {
	c, err := s.clusterFor(ctx, p, "update clusters", true)
	if err != nil {
		return err
	}
	var req struct {
		Name               *string `json:"name"`
		IdleTimeoutMinutes *int    `json:"idle_timeout_minutes"`
	}
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	if _, err := s.deps.Commands.UpdateCluster(s.work(), c.ID, catalog.ClusterUpdate{Name: req.Name, IdleTimeoutMinutes: req.IdleTimeoutMinutes}); err != nil {
		return err
	}
	return s.answerCluster(ctx, c.ID)
}
