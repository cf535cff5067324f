package main

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(invitationCommand) }

// orgCall runs a request on a route with the organization in its path: the organization
// is resolved by the usual rules (--org, SERVICE_ORG, the saved selection, the only one).
func (a *app) orgCall(ctx context.Context, f func(ctx context.Context, c *client.Client, org string) (*http.Response, error)) (any, error) {
	if err := a.resolve(ctx, scopeOrg); err != nil {
		return nil, err
	}
	org := a.sel.org
	if org == "" { // an API key with no organization named
		return nil, usageErr("name the organization with --org or SERVICE_ORG")
	}
	return a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) { return f(ctx, c, org) })
}

// parseID reads an invitation id; a malformed one is a usage error.
func parseID(s string) (client.UUID, error) {
	id, err := client.ParseUUID(s)
	if err != nil {
		return id, usageErr("%q is not an invitation id (a UUID, as the invitation lists show)", s)
	}
	return id, nil
}

// memberCommands are org's members, invite and invitations: the administrators' side of
// membership. Members join only by accepting an invitation (svc invitation accept).
func memberCommands(a *app) []*cobra.Command {
	var inviteRole, updateRole string
	invite := &cobra.Command{Use: "invite USER", Short: "Invite a user name to the organization (administrators; the user accepts with svc invitation accept)", Args: args(1, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			return a.emit(a.orgCall(ctx, func(ctx context.Context, c *client.Client, org string) (*http.Response, error) {
				body := client.InviteMemberJSONRequestBody{Username: arg[0]}
				if inviteRole != "" {
					body.Role = ptr(client.InviteMemberJSONBodyRole(inviteRole))
				}
				return c.InviteMember(ctx, org, &client.InviteMemberParams{}, body)
			}))
		})}
	invite.Flags().StringVar(&inviteRole, "role", "", "admin or member (the service's default: member)")
	update := &cobra.Command{Use: "update USER --role ROLE", Short: "Change a member's role (administrators)", Args: args(1, 1),
		RunE: runE(func(ctx context.Context, arg []string) error {
			if updateRole == "" {
				return usageErr("--role admin|member is required")
			}
			return a.emit(a.orgCall(ctx, func(ctx context.Context, c *client.Client, org string) (*http.Response, error) {
				return c.SetMemberRole(ctx, org, arg[0], &client.SetMemberRoleParams{},
					client.SetMemberRoleJSONRequestBody{Role: ptr(client.SetMemberRoleJSONBodyRole(updateRole))})
			}))
		})}
	update.Flags().StringVar(&updateRole, "role", "", "admin or member")
	listInvitations := func(ctx context.Context, _ []string) error {
		return a.emit(a.orgCall(ctx, func(ctx context.Context, c *client.Client, org string) (*http.Response, error) {
			return c.ListOrganizationInvitations(ctx, org, &client.ListOrganizationInvitationsParams{})
		}))
	}
	invitations := &cobra.Command{Use: "invitations", Short: "The organization's pending invitations: list (the default), revoke ID", Args: args(0, 0),
		RunE: runE(listInvitations)}
	invitations.AddCommand(
		&cobra.Command{Use: "list", Short: "List the pending invitations (administrators)", Args: args(0, 0), RunE: runE(listInvitations)},
		&cobra.Command{Use: "revoke ID", Short: "Revoke a pending invitation (administrators)", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				id, err := parseID(arg[0])
				if err != nil {
					return err
				}
				return a.emit(a.orgCall(ctx, func(ctx context.Context, c *client.Client, org string) (*http.Response, error) {
					return c.RevokeInvitation(ctx, org, id, &client.RevokeInvitationParams{})
				}))
			})})
	members := group("members", "The organization's members: list, update USER --role, remove USER",
		&cobra.Command{Use: "list", Short: "List the members and their roles", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.orgCall(ctx, func(ctx context.Context, c *client.Client, org string) (*http.Response, error) {
					return c.ListMembers(ctx, org, &client.ListMembersParams{})
				}))
			})},
		update,
		&cobra.Command{Use: "remove USER", Short: "Remove a member (administrators)", Args: args(1, 1),
			RunE: runE(func(ctx context.Context, arg []string) error {
				return a.emit(a.orgCall(ctx, func(ctx context.Context, c *client.Client, org string) (*http.Response, error) {
					return c.RemoveMember(ctx, org, arg[0], &client.RemoveMemberParams{})
				}))
			})},
	)
	return []*cobra.Command{members, invite, invitations}
}

// invitationCommand is the invited user's side: their own invitations, across
// organizations, so no organization is selected.
func invitationCommand(a *app) *cobra.Command {
	answer := func(f func(ctx context.Context, c *client.Client, id client.UUID) (*http.Response, error)) func(*cobra.Command, []string) error {
		return runE(func(ctx context.Context, arg []string) error {
			id, err := parseID(arg[0])
			if err != nil {
				return err
			}
			return a.emit(a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) { return f(ctx, c, id) }))
		})
	}
	return group("invitation", "Your invitations to organizations: list, accept ID, decline ID",
		&cobra.Command{Use: "list", Short: "List the invitations addressed to you", Args: args(0, 0),
			RunE: runE(func(ctx context.Context, _ []string) error {
				return a.emit(a.call(ctx, scopeNone, func(ctx context.Context, c *client.Client) (*http.Response, error) {
					return c.ListMyInvitations(ctx)
				}))
			})},
		&cobra.Command{Use: "accept ID", Short: "Accept an invitation: you become a member of its organization", Args: args(1, 1),
			RunE: answer(func(ctx context.Context, c *client.Client, id client.UUID) (*http.Response, error) {
				return c.AcceptInvitation(ctx, id)
			})},
		&cobra.Command{Use: "decline ID", Short: "Decline an invitation", Args: args(1, 1),
			RunE: answer(func(ctx context.Context, c *client.Client, id client.UUID) (*http.Response, error) {
				return c.DeclineInvitation(ctx, id)
			})},
	)
}
