package edge

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

type appView struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Installed bool   `json:"installed"`
	// Retention is the app's retention setting for its tables (null: none).
	Retention *string `json:"retention"`
	// Tables (PATCH only): the app's tables with their retention read back from the engine.
	Tables []appTableView `json:"tables,omitempty"`
}

type appTableView struct {
	Database         string  `json:"database"`
	Table            string  `json:"table"`
	Retention        *string `json:"retention"`
	RetentionTTL     *string `json:"retention_ttl"`
	RetentionStatus  string  `json:"retention_status"`
	RetentionProblem string  `json:"retention_problem,omitempty"`
}

func (s *Server) viewApp(cluster uuid.UUID, a catalog.App, installed bool) appView {
	return appView{a.ID, a.Name, installed, nonEmpty(s.deps.Catalog.AppRetention(cluster, a.ID)), nil}
}

// appsScope checks a request to the Apps API: a user (session or OAuth token; API keys
// cannot manage apps) of the named organization, with a cluster selected. admin asks
// for an organization administrator. The cluster's lifecycle state does not matter:
// apps answer while it is provisioning, paused or stopped.
func appsScope(ctx *fasthttp.RequestCtx, p *Principal, admin bool) error {
	if err := userOnly(p, "manage apps"); err != nil {
		return err
	}
	if err := needOrganization(ctx, p); err != nil {
		return err
	}
	if p.OrgRole == "" {
		return forbidden("read the apps of an organization they are not a member of")
	}
	if err := needCluster(p); err != nil {
		return err
	}
	if admin && p.OrgRole != catalog.RoleAdmin {
		return forbidden("install or uninstall apps (organization administrators only)")
	}
	return nil
}

func (s *Server) listApps(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := appsScope(ctx, p, false); err != nil {
		return err
	}
	out := []appView{}
	for _, a := range catalog.Apps {
		out = append(out, s.viewApp(p.ClusterID, a, s.deps.Catalog.AppInstalled(p.ClusterID, a.ID)))
	}
	writeJSON(ctx, 200, map[string]any{"apps": out})
	return nil
}

func (s *Server) installApp(ctx *fasthttp.RequestCtx, p *Principal) error {
	return s.setApp(ctx, p, true)
}

func (s *Server) uninstallApp(ctx *fasthttp.RequestCtx, p *Principal) error {
	return s.setApp(ctx, p, false)
}

// setApp serves PUT and DELETE /v1/apps/{app_id}: no body, idempotent.
func (s *Server) setApp(ctx *fasthttp.RequestCtx, p *Principal, on bool) error {
	if err := appsScope(ctx, p, true); err != nil {
		return err
	}
	id, _ := ctx.UserValue("app_id").(string)
	app, ok := catalog.AppByID(id)
	if !ok {
		return apiErr(404, "app_not_found", fmt.Sprintf("no app %q", id), "list apps with GET /v1/apps")
	}
	if err := s.deps.Commands.SetApp(s.work(), p.ClusterID, app.ID, on); err != nil {
		return err
	}
	writeJSON(ctx, 200, s.viewApp(p.ClusterID, app, on))
	return nil
}

type patchAppRequest struct {
	Retention *string `json:"retention"`
}

// patchApp serves PATCH /v1/apps/{app_id}: the app's settings, for organization admins.
// retention is the retention of the app's tables in every database of the cluster
// (tables.SetAppRetention), applied to those that exist and given to those it creates.
func (s *Server) patchApp(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := appsScope(ctx, p, true); err != nil {
		return err
	}
	id, _ := ctx.UserValue("app_id").(string)
	app, ok := catalog.AppByID(id)
	if !ok {
		return apiErr(404, "app_not_found", fmt.Sprintf("no app %q", id), "list apps with GET /v1/apps")
	}
	var req patchAppRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	v := s.viewApp(p.ClusterID, app, s.deps.Catalog.AppInstalled(p.ClusterID, app.ID))
	if req.Retention != nil {
		states, err := s.deps.Tables.SetAppRetention(s.work(), p.ClusterID, app.ID, *req.Retention)
		if err != nil {
			return err
		}
		v = s.viewApp(p.ClusterID, app, v.Installed)
		v.Tables = []appTableView{}
		for _, t := range states {
			v.Tables = append(v.Tables, appTableView{Database: t.Database, Table: t.Table, Retention: nonEmpty(t.State.Engine),
				RetentionTTL: nonEmpty(t.State.TTL), RetentionStatus: t.State.Status, RetentionProblem: t.State.Problem})
		}
	}
	writeJSON(ctx, 200, v)
	return nil
}

// requireApp is the one check of app gating: the principal's cluster must have app
// installed. Its 403 names the request that installs it. A request without a cluster in
// scope passes here and gets its handler's own scope error, since no gated handler acts
// without a cluster.
func (s *Server) requireApp(p *Principal, app string) error {
	if p.ClusterID == uuid.Nil {
		return nil
	}
	if s.deps.Catalog.AppInstalled(p.ClusterID, app) {
		return nil
	}
	a, _ := catalog.AppByID(app)
	return apiErr(403, "app_not_installed", fmt.Sprintf("the %s app is not installed in this cluster", a.Name),
		fmt.Sprintf("an organization admin installs it with PUT /v1/apps/%s?organization=<org>&cluster=<cluster>", app))
}

// Gated wraps an authenticated handler so that it runs only when app is installed in the
// request's cluster (requireApp). Routes of apps use it: the OpenTelemetry app's native
// OTLP, the log-search app's search and saved searches, the Prometheus app's routes.
func (s *Server) Gated(app string, h keyHandler) keyHandler {
	return func(ctx *fasthttp.RequestCtx, p *Principal) error {
		if err := s.requireApp(p, app); err != nil {
			return err
		}
		return h(ctx, p)
	}
}
