package edge

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// clusterFor resolves {cluster_id} for a user of the cluster's organization; admin
// requires an organization administrator. Unknown and foreign clusters are one 404.
func (s *Server) clusterFor(ctx *fasthttp.RequestCtx, p *Principal, what string, admin bool) (*catalog.Cluster, bool) {
	return s.clusterParam(ctx, p, "cluster_id", what, admin)
}

// clusterParam is clusterFor with the cluster's id in path parameter param.
func (s *Server) clusterParam(ctx *fasthttp.RequestCtx, p *Principal, param, what string, admin bool) (*catalog.Cluster, bool) {
	if err := userOnly(p, what); err != nil {
		writeError(ctx, err)
		return nil, false
	}
	if err := needOrganization(ctx, p); err != nil {
		writeError(ctx, err)
		return nil, false
	}
	id, err := uuid.Parse(stringParam(ctx, param))
	c, ok := s.deps.Catalog.Cluster(id)
	if err != nil || !ok || c.OrgID != p.OrgID {
		writeError(ctx, apiErr(404, "cluster_not_found", "no such cluster", ""))
		return nil, false
	}
	if _, member := s.deps.Catalog.Membership(c.OrgID, p.User.ID); !member {
		writeError(ctx, apiErr(404, "cluster_not_found", "no such cluster", ""))
		return nil, false
	}
	if admin && p.OrgRole != catalog.RoleAdmin {
		writeError(ctx, forbidden(what+" (organization administrators only)"))
		return nil, false
	}
	return c, true
}

// answerCluster lets this node act on the cluster's new phase, then answers the cluster.
func (s *Server) answerCluster(ctx *fasthttp.RequestCtx, id uuid.UUID) {
	if err := s.deps.Clusters.ReconcileCluster(s.work(), id); err != nil {
		writeError(ctx, err)
		return
	}
	c, ok := s.deps.Catalog.Cluster(id)
	if !ok {
		writeError(ctx, apiErr(404, "cluster_not_found", "no such cluster", ""))
		return
	}
	writeJSON(ctx, 200, s.viewCluster(c))
}

// stopCluster drains the cluster's consumers and stops its engine; ingestion is still
// accepted into Kafka and lands on resume.
func (s *Server) stopCluster(ctx *fasthttp.RequestCtx, p *Principal) {
	c, ok := s.clusterFor(ctx, p, "stop clusters", true)
	if !ok {
		return
	}
	if _, err := s.deps.Commands.StopCluster(s.work(), c.ID, false); err != nil {
		writeError(ctx, err)
		return
	}
	s.answerCluster(ctx, c.ID)
}

// resumeCluster starts a stopped (or failed) cluster again; 409 while it is stopping,
// provisioning or deleting.
func (s *Server) resumeCluster(ctx *fasthttp.RequestCtx, p *Principal) {
	c, ok := s.clusterFor(ctx, p, "resume clusters", true)
	if !ok {
		return
	}
	if _, err := s.deps.Commands.ResumeCluster(s.work(), c.ID); err != nil {
		writeError(ctx, err)
		return
	}
	s.answerCluster(ctx, c.ID)
}

// deleteCluster stops the cluster everywhere and removes its data, topics, databases and
// keys; the name is free afterwards.
func (s *Server) deleteCluster(ctx *fasthttp.RequestCtx, p *Principal) {
	c, ok := s.clusterFor(ctx, p, "delete clusters", true)
	if !ok {
		return
	}
	if _, err := s.deps.Commands.RequestClusterDelete(s.work(), c.ID); err != nil {
		writeError(ctx, err)
		return
	}
	if err := s.deps.Clusters.ReconcileCluster(s.work(), c.ID); err != nil {
		writeError(ctx, err)
		return
	}
	_, left := s.deps.Catalog.Cluster(c.ID)
	writeJSON(ctx, 200, map[string]bool{"deleted": !left})
}

// patchCluster changes name and idle_timeout_minutes; omitted fields stay.
func (s *Server) patchCluster(ctx *fasthttp.RequestCtx, p *Principal) {
	c, ok := s.clusterFor(ctx, p, "update clusters", true)
	if !ok {
		return
	}
	var req struct {
		Name               *string `json:"name"`
		IdleTimeoutMinutes *int    `json:"idle_timeout_minutes"`
	}
	if err := readJSON(ctx, &req); err != nil {
		writeError(ctx, err)
		return
	}
	if _, err := s.deps.Commands.UpdateCluster(s.work(), c.ID, catalog.ClusterUpdate{Name: req.Name, IdleTimeoutMinutes: req.IdleTimeoutMinutes}); err != nil {
		writeError(ctx, err)
		return
	}
	s.answerCluster(ctx, c.ID)
}
