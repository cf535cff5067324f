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
// user of that name accepts or declines. An invitation is recorded, listed and answered
// alike whether or not the name exists, so that no answer tells the inviter which names
// exist; but it is bound to the user who holds the name when it is made (UserID), and
// only that user can see, accept or decline it. An invitation of a name nobody holds is
// bound to no one and can never be redeemed: a user created later under that name does
// not get it, so nobody can claim an invitation by creating its name after the fact.
// The events live on the organization's stream, so an acceptance and the membership it
// grants are appended together, at the stream's version.

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
	ID       uuid.UUID `json:"id"`
	OrgID    uuid.UUID `json:"org_id"`
	Username string    `json:"username"`
	// UserID is the user who held Username when the invitation was made; zero when
	// nobody did, and in events written before invitations were bound (bindInvitation).
	UserID    uuid.UUID `json:"user_id,omitzero"`
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
		m.bindInvitation(&v)
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

// bindInvitation decides, at the invitation's place in the log, which user may redeem
// it: the user the event names, or, when it names none, the user who held the name at
// that point of the log. Events are applied in log order on every node and at every
// replay, so the binding is the same everywhere. An event that names no user comes from
// an invitation of a name nobody held (then nobody held it at this point either, and it
// stays bound to no one) or from before invitations were bound (then only a user created
// before it can redeem it, never one who claimed the name afterwards).
func (m *Model) bindInvitation(inv *Invitation) {
	if inv.UserID != uuid.Nil {
		return
	}
	if u, ok := m.usernames[strings.ToLower(inv.Username)]; ok {
		inv.UserID = u.ID
	}
}

// Redeemable reports whether user may see, accept or decline the invitation: only the
// user it is bound to, never a name's later holder.
func (inv *InvitationCreated) Redeemable(user uuid.UUID) bool {
	return inv.UserID != uuid.Nil && inv.UserID == user
}

// Invitation returns a pending invitation.
func (m *Model) Invitation(id uuid.UUID) (*Invitation, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	inv, ok := m.invitations[id]
	return inv, ok
}

// Invitations returns the pending invitations of an organization (org set) to a user
// name (username set, else every name), oldest first. It lists invitations whether or
// not anyone can redeem them: it is the inviter's view.
func (m *Model) Invitations(org uuid.UUID, username string) []*Invitation {
	return m.invitationsWhere(func(inv *Invitation) bool {
		return inv.OrgID == org && (username == "" || strings.EqualFold(inv.Username, username))
	})
}

// UserInvitations returns the pending invitations user may redeem, oldest first.
func (m *Model) UserInvitations(user uuid.UUID) []*Invitation {
	return m.invitationsWhere(func(inv *Invitation) bool { return inv.Redeemable(user) })
}

func (m *Model) invitationsWhere(keep func(*Invitation) bool) []*Invitation {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*Invitation
	for _, inv := range m.invitations {
		if keep(inv) {
			out = append(out, inv)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// Invite invites a user name to an organization with a role, bound to the user who
// holds the name now, if any. Inviting a member, or a name with a pending invitation,
// records nothing and returns nil: the caller answers the same either way.
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
		inv.UserID = uuid.Nil
		if u, ok := s.model.UserByName(username); ok {
			if _, member := st.members[u.ID]; member {
				skip = true
				return st.position, nil
			}
			inv.UserID = u.ID
		}
		// A pending invitation of the name counts only when it is bound to the same user:
		// one made before the name had a user does not hold back one its user can redeem.
		for _, p := range s.model.Invitations(org, username) {
			if p.ExpiresAt.After(now) && p.UserID == inv.UserID {
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

// AnswerInvitation accepts (adding the membership) or declines an invitation bound to
// user. Another user's invitation, one bound to no one, or an expired one, is not found.
func (s *Service) AnswerInvitation(ctx context.Context, id uuid.UUID, user *User, accept bool) (*Invitation, error) {
	inv, ok := s.model.Invitation(id)
	if !ok || !inv.Redeemable(user.ID) || !inv.ExpiresAt.After(s.now()) {
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
