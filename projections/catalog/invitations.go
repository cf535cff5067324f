package catalog

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// Membership needs the user's consent: an administrator invites a user name, and the
// user of that name accepts or declines. An invitation names a user name, not a user,
// and is recorded whether or not the name exists, so that no answer tells the inviter
// which names exist. The events live on the organization's stream, so an
// acceptance and the membership it grants are appended together, at the stream's
// version.

// Event type names of invitations. Stored: never change them.
const (
	EvInvitationCreated  = "invitation.created"
	EvInvitationAccepted = "invitation.accepted"
	EvInvitationDeclined = "invitation.declined"
	EvInvitationRevoked  = "invitation.revoked"
)

// InvitationTTL is how long an invitation can be accepted.
const InvitationTTL = 7 * 24 * time.Hour

// InvitationCreated records an invitation of a user to an organization with a role.
type InvitationCreated struct {
	ID        uuid.UUID `json:"id"`
	OrgID     uuid.UUID `json:"org_id"`
	Username  string    `json:"username"`
	Role      string    `json:"role"`
	InvitedBy uuid.UUID `json:"invited_by"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// InvitationClosed records that an invitation was accepted, declined or revoked.
type InvitationClosed struct {
	ID    uuid.UUID `json:"id"`
	OrgID uuid.UUID `json:"org_id"`
}

// Invitation is a pending invitation.
type Invitation = InvitationCreated

type inviteModel struct {
	invitations map[uuid.UUID]*Invitation
}

// applyInvitation folds invitation events; it reports whether it knew the type.
func (m *Model) applyInvitation(e es.Event) (bool, error) {
	if m.invitations == nil {
		m.invitations = map[uuid.UUID]*Invitation{}
	}
	switch e.Type {
	case EvInvitationCreated:
		v, err := decode[InvitationCreated](e)
		if err != nil {
			return true, err
		}
		m.invitations[v.ID] = &v
	case EvInvitationAccepted, EvInvitationDeclined, EvInvitationRevoked:
		v, err := decode[InvitationClosed](e)
		if err != nil {
			return true, err
		}
		delete(m.invitations, v.ID)
	case EvOrganizationDeleted:
		v, err := decode[OrganizationDeleted](e)
		if err != nil {
			return true, err
		}
		for id, inv := range m.invitations {
			if inv.OrgID == v.ID {
				delete(m.invitations, id)
			}
		}
		return false, nil // identity applies it too
	default:
		return false, nil
	}
	return true, nil
}

// Invitation returns a pending invitation.
func (m *Model) Invitation(id uuid.UUID) (*Invitation, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	inv, ok := m.invitations[id]
	return inv, ok
}

// Invitations returns the pending invitations of an organization (org set) or of a user
// name (username set), oldest first.
func (m *Model) Invitations(org uuid.UUID, username string) []*Invitation {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*Invitation
	for _, inv := range m.invitations {
		if (org == uuid.Nil || inv.OrgID == org) && (username == "" || strings.EqualFold(inv.Username, username)) {
			out = append(out, inv)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// Invite invites a user name to an organization with a role. Inviting a member, or a
// name with a pending invitation, records nothing and returns nil: the caller answers
// the same either way.
func (s *Service) Invite(ctx context.Context, org uuid.UUID, username string, by uuid.UUID, role string) (*Invitation, error) {
	if role != RoleAdmin && role != RoleMember {
		return nil, invalid("role", "role must be %q or %q", RoleAdmin, RoleMember)
	}
	if err := ValidateUsername(username); err != nil {
		return nil, err
	}
	now := s.now()
	inv := &Invitation{ID: uuid.New(), OrgID: org, Username: username, Role: role, InvitedBy: by, CreatedAt: now, ExpiresAt: now.Add(InvitationTTL)}
	var skip bool
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadOrg(ctx, org)
		if err != nil {
			return 0, err
		}
		if u, ok := s.model.UserByName(username); ok {
			if _, member := st.members[u.ID]; member {
				skip = true
				return s.model.Position(), nil
			}
		}
		for _, p := range s.model.Invitations(org, username) {
			if p.ExpiresAt.After(now) {
				skip = true
				return s.model.Position(), nil
			}
		}
		return s.append(ctx, orgStream(org), es.Exact(st.version), newEvent(EvInvitationCreated, *inv))
	})
	if err != nil || skip {
		return nil, err
	}
	return inv, nil
}

// AnswerInvitation accepts (adding the membership) or declines an invitation of user's
// name. Another name's invitation, or an expired one, is not found.
func (s *Service) AnswerInvitation(ctx context.Context, id uuid.UUID, user *User, accept bool) (*Invitation, error) {
	inv, ok := s.model.Invitation(id)
	if !ok || !strings.EqualFold(inv.Username, user.Username) || !inv.ExpiresAt.After(s.now()) {
		return nil, fmt.Errorf("%w: invitation %s", ErrNotFound, id)
	}
	err := s.retry(ctx, func() (uint64, error) {
		st, err := s.loadOrg(ctx, inv.OrgID)
		if err != nil {
			return 0, err
		}
		if _, open := s.model.Invitation(id); !open {
			return 0, fmt.Errorf("%w: invitation %s", ErrNotFound, id)
		}
		closed := InvitationClosed{ID: id, OrgID: inv.OrgID}
		if !accept {
			return s.append(ctx, orgStream(inv.OrgID), es.Exact(st.version), newEvent(EvInvitationDeclined, closed))
		}
		events := []es.NewEvent{newEvent(EvInvitationAccepted, closed)}
		if _, member := st.members[user.ID]; !member {
			events = append(events, newEvent(EvMemberAdded, MemberAdded{OrgID: inv.OrgID, UserID: user.ID, Role: inv.Role}))
		}
		return s.append(ctx, orgStream(inv.OrgID), es.Exact(st.version), events...)
	})
	return inv, err
}

// RevokeInvitation withdraws a pending invitation of an organization.
func (s *Service) RevokeInvitation(ctx context.Context, org, id uuid.UUID) error {
	if inv, ok := s.model.Invitation(id); !ok || inv.OrgID != org {
		return fmt.Errorf("%w: invitation %s", ErrNotFound, id)
	}
	return s.retry(ctx, func() (uint64, error) {
		st, err := s.loadOrg(ctx, org)
		if err != nil {
			return 0, err
		}
		return s.append(ctx, orgStream(org), es.Exact(st.version), newEvent(EvInvitationRevoked, InvitationClosed{ID: id, OrgID: org}))
	})
}

// HomeOrganization is the organization a user joined first, which their requests that
// name no organization act in: joining another one by invitation does not change it.
func (m *Model) HomeOrganization(user uuid.UUID) (*Organization, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var home *Organization
	var first uint64
	for org, ms := range m.members {
		if mb, ok := ms[user]; ok && m.orgs[org] != nil && (home == nil || mb.Joined < first) {
			home, first = m.orgs[org], mb.Joined
		}
	}
	return home, home != nil
}
