package edge

import (
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
)

// Membership with consent: administrators invite user names; users accept or decline
// their own invitations. Every answer to an administrator is the same whether or not
// a user name exists, so that the API cannot be used to list the service's users. An
// invitation is bound to the user who held the name when it was made: only that user
// sees it in GET /v1/invitations and may answer it (catalog.Invitation.Redeemable).

type invitationView struct {
	ID           string    `json:"id"`
	Organization orgRef    `json:"organization"`
	Username     string    `json:"username"`
	Role         string    `json:"role"`
	CreatedAt    time.Time `json:"created_at"`
	ExpiresAt    time.Time `json:"expires_at"`
}

type orgRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (s *Server) viewInvitation(inv *catalog.Invitation) invitationView {
	v := invitationView{ID: inv.ID.String(), Organization: orgRef{ID: inv.OrgID.String()}, Username: inv.Username,
		Role: inv.Role, CreatedAt: inv.CreatedAt, ExpiresAt: inv.ExpiresAt}
	if o, ok := s.deps.Catalog.Organization(inv.OrgID); ok {
		v.Organization.Name = o.Name
	}
	return v
}

// inviteMember: POST /v1/organizations/{org}/invitations {username, role}.
func (s *Server) inviteMember(ctx *fasthttp.RequestCtx, p *Principal) error {
	o, err := s.orgParam(ctx, p, true)
	if err != nil {
		return err
	}
	var req memberRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	if req.Username == "" {
		return requiredField("invalid_username", "username")
	}
	if req.Role == "" {
		req.Role = catalog.RoleMember
	}
	if _, err := s.deps.Commands.Invite(s.work(), o.ID, req.Username, p.User.ID, req.Role); err != nil {
		return err
	}
	// The same answer for every name: existing or not, member already or not.
	writeJSON(ctx, 202, map[string]any{"username": req.Username, "role": req.Role, "invited": true})
	return nil
}

// listOrgInvitations: GET /v1/organizations/{org}/invitations (administrators).
func (s *Server) listOrgInvitations(ctx *fasthttp.RequestCtx, p *Principal) error {
	o, err := s.orgParam(ctx, p, true)
	if err != nil {
		return err
	}
	s.writeInvitations(ctx, s.deps.Catalog.Invitations(o.ID, ""))
	return nil
}

func (s *Server) writeInvitations(ctx *fasthttp.RequestCtx, invs []*catalog.Invitation) {
	out := []invitationView{}
	now := time.Now()
	for _, inv := range invs {
		if inv.ExpiresAt.After(now) {
			out = append(out, s.viewInvitation(inv))
		}
	}
	writeJSON(ctx, 200, map[string]any{"invitations": out})
}

var errInvitationNotFound = apiErr(404, "invitation_not_found", "no such pending invitation", "")

// invitationError answers a missing invitation with the one 404.
func invitationError(err error) error {
	if errors.Is(err, catalog.ErrNotFound) {
		return errInvitationNotFound
	}
	return err
}

// invitationID reads the {id} path parameter.
func invitationID(ctx *fasthttp.RequestCtx) (uuid.UUID, error) {
	id, err := uuid.Parse(stringParam(ctx, "id"))
	if err != nil {
		return id, errInvitationNotFound
	}
	return id, nil
}

// revokeInvitation: DELETE /v1/organizations/{org}/invitations/{id} (administrators).
func (s *Server) revokeInvitation(ctx *fasthttp.RequestCtx, p *Principal) error {
	o, err := s.orgParam(ctx, p, true)
	if err != nil {
		return err
	}
	id, err := invitationID(ctx)
	if err != nil {
		return err
	}
	if err := s.deps.Commands.RevokeInvitation(s.work(), o.ID, id); err != nil {
		return invitationError(err)
	}
	writeJSON(ctx, 200, map[string]any{"id": id.String(), "revoked": true})
	return nil
}

// myInvitations: GET /v1/invitations, the caller's pending invitations.
func (s *Server) myInvitations(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := userOnly(p, "read invitations"); err != nil {
		return err
	}
	s.writeInvitations(ctx, s.deps.Catalog.UserInvitations(p.User.ID))
	return nil
}

// answerInvitation: POST /v1/invitations/{id}/accept and …/decline.
func (s *Server) answerInvitation(accept bool) keyHandler {
	return func(ctx *fasthttp.RequestCtx, p *Principal) error {
		if err := userOnly(p, "answer invitations"); err != nil {
			return err
		}
		id, err := invitationID(ctx)
		if err != nil {
			return err
		}
		inv, err := s.deps.Commands.AnswerInvitation(s.work(), id, p.User, accept)
		if err != nil {
			return invitationError(err)
		}
		out := map[string]any{"id": id.String(), "accepted": accept}
		if o, ok := s.deps.Catalog.Organization(inv.OrgID); ok && accept {
			out["organization"] = s.viewOrg(o, p.User.ID)
		}
		writeJSON(ctx, 200, out)
		return nil
	}
}
