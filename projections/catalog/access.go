package catalog

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// Access-control events beyond role creation. The embedded engine has no writable
// access storage, so grants, row policies and settings profiles are control-plane state
// the query layer enforces on parsed statements.
const (
	EvRoleGranted            = "role.granted"
	EvRowPolicyCreated       = "row_policy.created"
	EvRowPolicyDropped       = "row_policy.dropped"
	EvSettingsProfileCreated = "settings_profile.created"
	EvSettingsProfileDropped = "settings_profile.dropped"
)

func rowPolicyStream(cluster uuid.UUID, db, table, name string) string {
	return fmt.Sprintf("row_policy-%s-%s.%s.%s", cluster, db, table, name)
}

func profileStream(cluster uuid.UUID, name string) string {
	return "settings_profile-" + cluster.String() + "-" + name
}

// Grant is one privilege grant of a role; Database and Table may be "*"; Columns, when
// set, limits it to those top-level document keys.
type Grant struct {
	Privileges []string `json:"privileges"` // "SELECT", "INSERT"
	Database   string   `json:"database"`
	Table      string   `json:"table"`
	Columns    []string `json:"columns,omitempty"`
}

// RoleGranted records a grant to a role.
type RoleGranted struct {
	ClusterID uuid.UUID `json:"cluster_id"`
	Role      string    `json:"role"`
	Grant     Grant     `json:"grant"`
}

// RowPolicy filters reads of a table by keys holding one of its roles.
type RowPolicy struct {
	Name        string   `json:"name"`
	Database    string   `json:"database"`
	Table       string   `json:"table"`
	Filter      string   `json:"filter"`
	Restrictive bool     `json:"restrictive"`
	Roles       []string `json:"roles"`
}

// RowPolicyCreated records a policy, or its complete replacement.
type RowPolicyCreated struct {
	ClusterID uuid.UUID `json:"cluster_id"`
	Policy    RowPolicy `json:"policy"`
}

// RowPolicyDropped records that a policy is gone.
type RowPolicyDropped struct {
	ClusterID uuid.UUID `json:"cluster_id"`
	Database  string    `json:"database"`
	Table     string    `json:"table"`
	Name      string    `json:"name"`
}

// ProfileSetting is one setting of a settings profile with its constraint ("",
// "READONLY" or "CONST").
type ProfileSetting struct {
	Name       string `json:"name"`
	Value      string `json:"value"`
	Constraint string `json:"constraint,omitempty"`
}

// SettingsProfile applies settings to queries of keys holding one of its roles.
type SettingsProfile struct {
	Name     string           `json:"name"`
	Settings []ProfileSetting `json:"settings"`
	Roles    []string         `json:"roles"`
}

// SettingsProfileCreated records a profile, or its complete replacement.
type SettingsProfileCreated struct {
	ClusterID uuid.UUID       `json:"cluster_id"`
	Profile   SettingsProfile `json:"profile"`
}

// SettingsProfileDropped records that a profile is gone.
type SettingsProfileDropped struct {
	ClusterID uuid.UUID `json:"cluster_id"`
	Name      string    `json:"name"`
}

type accessModel struct {
	grants   map[uuid.UUID]map[string][]Grant          // cluster → role → grants
	policies map[uuid.UUID]map[string]*RowPolicy       // cluster → db.table.name
	profiles map[uuid.UUID]map[string]*SettingsProfile // cluster → name
}

func newAccessModel() accessModel {
	return accessModel{grants: map[uuid.UUID]map[string][]Grant{}, policies: map[uuid.UUID]map[string]*RowPolicy{},
		profiles: map[uuid.UUID]map[string]*SettingsProfile{}}
}

func policyKey(db, table, name string) string { return db + "." + table + "." + name }

// applyAccess folds access-control events; it reports whether it knew the type.
func (m *Model) applyAccess(e es.Event) (bool, error) {
	switch e.Type {
	case EvRoleGranted:
		v, err := decode[RoleGranted](e)
		if err != nil {
			return true, err
		}
		if m.grants[v.ClusterID] == nil {
			m.grants[v.ClusterID] = map[string][]Grant{}
		}
		m.grants[v.ClusterID][v.Role] = append(slices.Clip(m.grants[v.ClusterID][v.Role]), v.Grant)
	case EvRoleCreated:
		// A new role starts without grants, also when a dropped role of the name had some.
		v, err := decode[RoleCreated](e)
		if err != nil {
			return true, err
		}
		if m.grants[v.ClusterID] != nil {
			delete(m.grants[v.ClusterID], v.Name)
		}
		return false, nil // identity also applies it
	case EvRoleDropped:
		v, err := decode[RoleDropped](e)
		if err != nil {
			return true, err
		}
		if m.grants[v.ClusterID] != nil {
			delete(m.grants[v.ClusterID], v.Name)
		}
		m.forgetRole(v.ClusterID, v.Name)
		return false, nil
	case EvRowPolicyCreated:
		v, err := decode[RowPolicyCreated](e)
		if err != nil {
			return true, err
		}
		if m.policies[v.ClusterID] == nil {
			m.policies[v.ClusterID] = map[string]*RowPolicy{}
		}
		p := v.Policy
		m.policies[v.ClusterID][policyKey(p.Database, p.Table, p.Name)] = &p
	case EvRowPolicyDropped:
		v, err := decode[RowPolicyDropped](e)
		if err != nil {
			return true, err
		}
		delete(m.policies[v.ClusterID], policyKey(v.Database, v.Table, v.Name))
	case EvSettingsProfileCreated:
		v, err := decode[SettingsProfileCreated](e)
		if err != nil {
			return true, err
		}
		if m.profiles[v.ClusterID] == nil {
			m.profiles[v.ClusterID] = map[string]*SettingsProfile{}
		}
		p := v.Profile
		m.profiles[v.ClusterID][p.Name] = &p
	case EvSettingsProfileDropped:
		v, err := decode[SettingsProfileDropped](e)
		if err != nil {
			return true, err
		}
		delete(m.profiles[v.ClusterID], v.Name)
	default:
		return false, nil
	}
	return true, nil
}

// Grants returns a role's grants.
func (m *Model) Grants(cluster uuid.UUID, role string) []Grant {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.grants[cluster][role]
}

// RowPolicies returns every row policy of a cluster, by table and name.
func (m *Model) RowPolicies(cluster uuid.UUID) []*RowPolicy {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*RowPolicy, 0, len(m.policies[cluster]))
	for _, p := range m.policies[cluster] {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Database != b.Database {
			return a.Database < b.Database
		}
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		return a.Name < b.Name
	})
	return out
}

// SettingsProfiles returns a cluster's settings profiles, by name.
func (m *Model) SettingsProfiles(cluster uuid.UUID) []*SettingsProfile {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*SettingsProfile
	for _, p := range m.profiles[cluster] {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// GrantToRole appends grants to an existing role, one event per grant, so a failure
// leaves the role and earlier grants in place.
func (s *Service) GrantToRole(ctx context.Context, cluster uuid.UUID, role string, grants ...Grant) error {
	for _, g := range grants {
		err := s.retry(ctx, func() (uint64, error) {
			events, err := es.Collect(ctx, s.store.ReadStream(ctx, roleStream(cluster, role), 0))
			if err != nil {
				return 0, err
			}
			if len(events) == 0 || events[len(events)-1].Type == EvRoleDropped {
				return 0, fmt.Errorf("%w: role %q", ErrNotFound, role)
			}
			return s.append(ctx, roleStream(cluster, role), es.Exact(events[len(events)-1].Version),
				newEvent(EvRoleGranted, RoleGranted{ClusterID: cluster, Role: role, Grant: g}))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// CreateRowPolicy creates a policy; with orReplace it replaces the whole definition,
// with ifNotExists an existing one is kept.
func (s *Service) CreateRowPolicy(ctx context.Context, cluster uuid.UUID, p RowPolicy, ifNotExists, orReplace bool) error {
	d := definition{rowPolicyStream(cluster, p.Database, p.Table, p.Name), EvRowPolicyDropped,
		fmt.Sprintf("row policy %q on %s.%s", p.Name, p.Database, p.Table)}
	return s.createDefinition(ctx, d, ifNotExists, orReplace, func() es.NewEvent {
		return newEvent(EvRowPolicyCreated, RowPolicyCreated{ClusterID: cluster, Policy: p})
	})
}

// DropRowPolicy drops a policy.
func (s *Service) DropRowPolicy(ctx context.Context, cluster uuid.UUID, db, table, name string, ifExists bool) error {
	d := definition{rowPolicyStream(cluster, db, table, name), EvRowPolicyDropped,
		fmt.Sprintf("row policy %q on %s.%s", name, db, table)}
	return s.dropDefinition(ctx, d, ifExists, func() es.NewEvent {
		return newEvent(EvRowPolicyDropped, RowPolicyDropped{ClusterID: cluster, Database: db, Table: table, Name: name})
	})
}

// CreateSettingsProfile creates a profile; orReplace replaces the whole definition.
func (s *Service) CreateSettingsProfile(ctx context.Context, cluster uuid.UUID, p SettingsProfile, ifNotExists, orReplace bool) error {
	d := definition{profileStream(cluster, p.Name), EvSettingsProfileDropped, fmt.Sprintf("settings profile %q", p.Name)}
	return s.createDefinition(ctx, d, ifNotExists, orReplace, func() es.NewEvent {
		return newEvent(EvSettingsProfileCreated, SettingsProfileCreated{ClusterID: cluster, Profile: p})
	})
}

// DropSettingsProfile drops a profile.
func (s *Service) DropSettingsProfile(ctx context.Context, cluster uuid.UUID, name string, ifExists bool) error {
	d := definition{profileStream(cluster, name), EvSettingsProfileDropped, fmt.Sprintf("settings profile %q", name)}
	return s.dropDefinition(ctx, d, ifExists, func() es.NewEvent {
		return newEvent(EvSettingsProfileDropped, SettingsProfileDropped{ClusterID: cluster, Name: name})
	})
}

// definition is a cluster object whose stream alternates created and dropped events: a
// role, a row policy, a settings profile.
type definition struct {
	stream  string
	dropped string // the event type that ends the object
	what    string // the object in errors: role "r"
}

// createDefinition appends the event created returns unless the object exists; an
// existing one is kept with ifNotExists, replaced with orReplace, else ErrExists.
func (s *Service) createDefinition(ctx context.Context, d definition, ifNotExists, orReplace bool, created func() es.NewEvent) error {
	return s.retry(ctx, func() (uint64, error) {
		events, err := es.Collect(ctx, s.store.ReadStream(ctx, d.stream, 0))
		if err != nil {
			return 0, err
		}
		exp := es.NoStream()
		if len(events) > 0 {
			last := events[len(events)-1]
			exp = es.Exact(last.Version)
			if last.Type != d.dropped {
				switch {
				case ifNotExists:
					return last.Position, nil
				case !orReplace:
					return 0, fmt.Errorf("%w: %s", ErrExists, d.what)
				}
			}
		}
		return s.append(ctx, d.stream, exp, created())
	})
}

// dropDefinition appends the event dropped returns if the object exists; a missing one is
// fine with ifExists, else ErrNotFound.
func (s *Service) dropDefinition(ctx context.Context, d definition, ifExists bool, dropped func() es.NewEvent) error {
	return s.retry(ctx, func() (uint64, error) {
		events, err := es.Collect(ctx, s.store.ReadStream(ctx, d.stream, 0))
		if err != nil {
			return 0, err
		}
		if len(events) == 0 || events[len(events)-1].Type == d.dropped {
			if ifExists {
				return s.model.Position(), nil
			}
			return 0, fmt.Errorf("%w: %s", ErrNotFound, d.what)
		}
		return s.append(ctx, d.stream, es.Exact(events[len(events)-1].Version), dropped())
	})
}

// forgetRole removes a dropped role's name from the keys, row policies and settings
// profiles of its cluster, so that a role created later under the name grants them
// nothing (SPEC: dropping a role removes its grants from users of it). Entries are
// replaced, never changed in place: readers may hold the old ones.
func (m *Model) forgetRole(cluster uuid.UUID, role string) {
	without := func(roles []string) ([]string, bool) {
		if !slices.Contains(roles, role) {
			return roles, false
		}
		return slices.DeleteFunc(slices.Clone(roles), func(r string) bool { return r == role }), true
	}
	for id, k := range m.keys {
		if k.ClusterID != cluster {
			continue
		}
		if roles, changed := without(k.Roles); changed {
			cp := *k
			cp.Roles = roles
			m.keys[id], m.keyHashes[cp.TokenHash] = &cp, &cp
		}
	}
	for name, p := range m.policies[cluster] {
		if roles, changed := without(p.Roles); changed {
			cp := *p
			cp.Roles = roles
			m.policies[cluster][name] = &cp
		}
	}
	for name, p := range m.profiles[cluster] {
		if roles, changed := without(p.Roles); changed {
			cp := *p
			cp.Roles = roles
			m.profiles[cluster][name] = &cp
		}
	}
}
