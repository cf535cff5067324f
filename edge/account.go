package edge

import (
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

type userView struct {
	ID        string    `json:"id"`
	Username  string    `json:"username"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

func viewUser(u *catalog.User) userView {
	return userView{ID: u.ID.String(), Username: u.Username, Name: u.Name, CreatedAt: u.CreatedAt}
}

type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// login exchanges a user name and password for a session token.
func (s *Server) login(ctx *fasthttp.RequestCtx) error {
	u, sess, token, err := s.jsonLogin(ctx)
	if err != nil {
		return err
	}
	writeJSON(ctx, 200, map[string]any{"token": token, "token_type": "Bearer", "expires_at": sess.ExpiresAt, "user": viewUser(u)})
	return nil
}

func (s *Server) logout(ctx *fasthttp.RequestCtx, p *Principal) error {
	if p.Session == nil {
		// 403, as every other user-only endpoint answers an API key: the credential is
		// valid, it may not do this.
		return apiErr(403, "not_a_session", "logout ends a user session; API keys are deleted with DELETE /v1/keys/{id}", "")
	}
	if err := s.deps.Commands.RevokeSession(s.work(), p.Session.ID); err != nil {
		return err
	}
	ctx.SetStatusCode(204)
	return nil
}

func userOnly(p *Principal, what string) error {
	if p.User == nil {
		return apiErr(403, "forbidden", "API keys cannot "+what, "use a user session or an OAuth access token")
	}
	return nil
}

func (s *Server) me(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := userOnly(p, "read account endpoints"); err != nil {
		return err
	}
	orgs := []orgView{}
	for _, o := range s.deps.Catalog.UserOrganizations(p.User.ID) {
		orgs = append(orgs, s.viewOrg(o, p.User.ID))
	}
	writeJSON(ctx, 200, map[string]any{"user": viewUser(p.User), "organizations": orgs})
	return nil
}

type createUserRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Name     string `json:"name"`
}

// errNotOperator refuses user creation to everyone but the operator, before the body
// is read: the answer is the same for every name, so it tells taken names from free ones
// to nobody.
var errNotOperator = apiErr(403, "forbidden", "only the service's operator (the bootstrap administrator) may create users",
	"ask the operator to create the user; then invite it with POST /v1/organizations/{org}/invitations")

// createUser creates a local user; only the operator may (catalog.Model.IsOperator).
// The operator's 409 for a taken name is kept: the operator is trusted and must learn
// that a name is taken to choose another.
func (s *Server) createUser(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := userOnly(p, "manage users"); err != nil {
		return err
	}
	if !s.deps.Catalog.IsOperator(p.User.ID) {
		return errNotOperator
	}
	var req createUserRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	u, err := s.deps.Commands.CreateUser(s.work(), req.Username, req.Name, req.Password)
	if err != nil {
		return err
	}
	writeJSON(ctx, 200, viewUser(u))
	return nil
}

// orgView is an organization as the API shows it. Role is the caller's membership role,
// null for API keys.
type orgView struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	Plan      string    `json:"plan"`
	AvatarURL *string   `json:"avatar_url"`
	Role      *string   `json:"role"`
}

func (s *Server) viewOrg(o *catalog.Organization, user uuid.UUID) orgView {
	v := orgView{ID: o.ID.String(), Name: o.Name, CreatedAt: o.CreatedAt, Plan: "self_hosted"}
	if user != uuid.Nil {
		if ms, ok := s.deps.Catalog.Membership(o.ID, user); ok {
			role := ms.Role
			v.Role = &role
		}
	}
	return v
}

func (s *Server) listOrganizations(ctx *fasthttp.RequestCtx, p *Principal) error {
	// Custom-role keys get their own organization too, a documented exception to the
	// spec's "no metadata API" (edge/openapi.json): it is how a client checks a key and
	// learns its organization (svc login --key), and tells nothing the key is not bound to.
	out := []orgView{}
	if p.Key != nil {
		if o, ok := s.deps.Catalog.Organization(p.Key.OrgID); ok {
			out = append(out, s.viewOrg(o, uuid.Nil))
		}
	} else {
		name := string(ctx.QueryArgs().Peek("organization"))
		for _, o := range s.deps.Catalog.UserOrganizations(p.User.ID) {
			if name == "" || strings.EqualFold(o.Name, name) {
				out = append(out, s.viewOrg(o, p.User.ID))
			}
		}
	}
	writeJSON(ctx, 200, map[string]any{"organizations": out})
	return nil
}

type orgRequest struct {
	Name *string `json:"name"`
}

func (s *Server) createOrganization(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := userOnly(p, "create organizations"); err != nil {
		return err
	}
	var req orgRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	if req.Name == nil {
		return requiredField("invalid_name", "name")
	}
	o, err := s.deps.Commands.CreateOrganizationBy(s.work(), *req.Name, p.User.ID)
	if err != nil {
		return err
	}
	writeJSON(ctx, 200, s.viewOrg(o, p.User.ID))
	return nil
}

// orgParam resolves the {org} path parameter (name or id) among the caller's
// organizations; it requires admin when admin is true.
func (s *Server) orgParam(ctx *fasthttp.RequestCtx, p *Principal, admin bool) (*catalog.Organization, error) {
	if err := userOnly(p, "manage organizations"); err != nil {
		return nil, err
	}
	ref, _ := ctx.UserValue("org").(string)
	// A reference is an id when it parses as one and a name otherwise, never both:
	// names shaped like ids are refused, and one written before that rule is reached
	// by its id.
	id, idErr := uuid.Parse(ref)
	var org *catalog.Organization
	for _, o := range s.deps.Catalog.UserOrganizations(p.User.ID) {
		if (idErr == nil && o.ID == id) || (idErr != nil && strings.EqualFold(o.Name, ref)) {
			org = o
			break
		}
	}
	if org == nil {
		return nil, apiErr(404, "organization_not_found", "no organization "+quoteName(ref)+" among yours", "")
	}
	if admin {
		if ms, ok := s.deps.Catalog.Membership(org.ID, p.User.ID); !ok || ms.Role != catalog.RoleAdmin {
			return nil, forbidden("change this organization (administrators only)")
		}
	}
	return org, nil
}

func (s *Server) getOrganization(ctx *fasthttp.RequestCtx, p *Principal) error {
	// Keys read only GET /v1/organizations, which lists their own organization.
	o, err := s.orgParam(ctx, p, false)
	if err != nil {
		return err
	}
	writeJSON(ctx, 200, s.viewOrg(o, p.User.ID))
	return nil
}

func (s *Server) renameOrganization(ctx *fasthttp.RequestCtx, p *Principal) error {
	o, err := s.orgParam(ctx, p, true)
	if err != nil {
		return err
	}
	var req orgRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	if req.Name != nil {
		if o, err = s.deps.Commands.RenameOrganization(s.work(), o.ID, *req.Name); err != nil {
			return err
		}
	}
	writeJSON(ctx, 200, s.viewOrg(o, p.User.ID))
	return nil
}

func (s *Server) deleteOrganization(ctx *fasthttp.RequestCtx, p *Principal) error {
	o, err := s.orgParam(ctx, p, true)
	if err != nil {
		return err
	}
	if err := s.deps.Commands.DeleteOrganization(s.work(), o.ID); err != nil {
		return err
	}
	writeJSON(ctx, 200, map[string]any{"deleted": true, "name": o.Name})
	return nil
}

type memberView struct {
	User userView `json:"user"`
	Role string   `json:"role"`
}

func (s *Server) listMembers(ctx *fasthttp.RequestCtx, p *Principal) error {
	o, err := s.orgParam(ctx, p, false)
	if err != nil {
		return err
	}
	out := []memberView{}
	for _, ms := range s.deps.Catalog.Members(o.ID) {
		if u, ok := s.deps.Catalog.User(ms.UserID); ok {
			out = append(out, memberView{User: viewUser(u), Role: ms.Role})
		}
	}
	writeJSON(ctx, 200, map[string]any{"members": out})
	return nil
}

type memberRequest struct {
	Username string `json:"username"`
	Role     string `json:"role"`
}

// errMemberNotFound answers for a name that is no member, whether or not a user has it.
var errMemberNotFound = apiErr(404, "member_not_found", "no such member of this organization",
	"invite users with POST /v1/organizations/{org}/invitations")

// member resolves the {user} path parameter among an organization's members.
func (s *Server) member(ctx *fasthttp.RequestCtx, o *catalog.Organization) (*catalog.User, bool) {
	u, ok := s.deps.Catalog.UserByName(stringParam(ctx, "user"))
	if !ok {
		return nil, false
	}
	if _, member := s.deps.Catalog.Membership(o.ID, u.ID); !member {
		return nil, false
	}
	return u, true
}

// setMember changes a member's role (PATCH …/members/{user}); users join only by
// accepting an invitation.
func (s *Server) setMember(ctx *fasthttp.RequestCtx, p *Principal) error {
	o, err := s.orgParam(ctx, p, true)
	if err != nil {
		return err
	}
	var req memberRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	u, ok := s.member(ctx, o)
	if !ok {
		return errMemberNotFound
	}
	if req.Role == "" {
		req.Role = catalog.RoleMember
	}
	if err := s.deps.Commands.SetMember(s.work(), o.ID, u.ID, req.Role); err != nil {
		return err
	}
	writeJSON(ctx, 200, memberView{User: viewUser(u), Role: req.Role})
	return nil
}

func (s *Server) removeMember(ctx *fasthttp.RequestCtx, p *Principal) error {
	o, err := s.orgParam(ctx, p, true)
	if err != nil {
		return err
	}
	u, ok := s.member(ctx, o)
	if !ok {
		return errMemberNotFound
	}
	if err := s.deps.Commands.RemoveMember(s.work(), o.ID, u.ID); err != nil {
		return err
	}
	writeJSON(ctx, 200, map[string]any{"removed": true, "username": u.Username})
	return nil
}

// clusterView is a cluster as the API shows it. Lifecycle fields describe an embedded
// engine that runs until cluster lifecycle management arrives.
type clusterView struct {
	ID                 string                    `json:"id"`
	Name               string                    `json:"name"`
	CreatedAt          string                    `json:"created_at"`
	Status             clusterStatus             `json:"status"`
	Resources          *clusterResources         `json:"resources"`
	CanPause           bool                      `json:"can_pause"`
	CanResume          bool                      `json:"can_resume"`
	S3Storage          *s3View                   `json:"s3_storage"`
	DatabaseS3Access   *catalog.DatabaseS3Access `json:"database_s3_access"`
	IdleTimeoutMinutes int                       `json:"idle_timeout_minutes"`
}

type clusterStatus struct {
	Phase   string  `json:"phase"`
	Ready   bool    `json:"ready"`
	Message *string `json:"message"`
}

type sizeBytes struct {
	CPUCores    float64 `json:"cpu_cores"`
	MemoryBytes int64   `json:"memory_bytes"`
}

type clusterResources struct {
	Shards                int       `json:"shards"`
	Replicas              int       `json:"replicas"`
	CPUCoresPerReplica    float64   `json:"cpu_cores_per_replica"`
	MemoryBytesPerReplica int64     `json:"memory_bytes_per_replica"`
	MinimumSize           sizeBytes `json:"minimum_size"`
	MaximumSize           sizeBytes `json:"maximum_size"`
}

func toBytes(z catalog.ClusterSize) sizeBytes {
	return sizeBytes{CPUCores: z.CPUCores, MemoryBytes: int64(z.MemoryGiB * (1 << 30))}
}

// viewCluster answers a cluster; resources are what this node's engine process got,
// null while it does not run here or was not measured yet.
func (s *Server) viewCluster(c *catalog.Cluster) clusterView {
	v := clusterView{ID: c.ID.String(), Name: c.Name, CreatedAt: c.CreatedAt.Format(time.RFC3339),
		Status: clusterStatus{Phase: c.PhaseName(), Ready: c.PhaseName() == catalog.PhaseReady}, IdleTimeoutMinutes: c.IdleTimeoutMinutes,
		CanPause: c.CanPause(), CanResume: c.CanResume(), DatabaseS3Access: c.DatabaseS3Access}
	if c.Message != "" {
		msg := c.Message
		v.Status.Message = &msg
	}
	if cpu, mem, ok := s.deps.Clusters.Resources(c.ID); ok {
		v.Resources = &clusterResources{Shards: 1, Replicas: max(1, c.Replicas), CPUCoresPerReplica: cpu,
			MemoryBytesPerReplica: mem, MinimumSize: toBytes(c.MinSize), MaximumSize: toBytes(c.MaxSize)}
	}
	if c.S3 != nil {
		v.S3Storage = &s3View{Data: c.S3.Data, Backups: c.S3.Backups}
	}
	return v
}

func (s *Server) listClusters(ctx *fasthttp.RequestCtx, p *Principal) error {
	if p.CustomRole() {
		return forbidden("list clusters") // SPEC: custom-role keys have no metadata API
	}
	out := []clusterView{}
	if p.Key != nil {
		if c, ok := s.deps.Catalog.Cluster(p.Key.ClusterID); ok {
			out = append(out, s.viewCluster(c))
		}
		writeJSON(ctx, 200, map[string]any{"clusters": out})
		return nil
	}
	if err := needOrganization(ctx, p); err != nil {
		return err
	}
	for _, c := range s.deps.Catalog.Clusters(p.OrgID) {
		out = append(out, s.viewCluster(c))
	}
	writeJSON(ctx, 200, map[string]any{"clusters": out})
	return nil
}

func (s *Server) getCluster(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := userOnly(p, "read cluster-management endpoints (GET /v1/clusters lists the key's own cluster)"); err != nil {
		return err
	}
	if err := needOrganization(ctx, p); err != nil {
		return err
	}
	id, err := uuid.Parse(stringParam(ctx, "cluster_id"))
	c, ok := s.deps.Catalog.Cluster(id)
	if err != nil || !ok || c.OrgID != p.OrgID {
		return apiErr(404, "cluster_not_found", "no such cluster", "")
	}
	if _, member := s.deps.Catalog.Membership(c.OrgID, p.User.ID); !member {
		return apiErr(404, "cluster_not_found", "no such cluster", "")
	}
	writeJSON(ctx, 200, s.viewCluster(c))
	return nil
}

func stringParam(ctx *fasthttp.RequestCtx, name string) string {
	v, _ := ctx.UserValue(name).(string)
	return v
}
