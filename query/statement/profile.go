package statement

import (
	"slices"
	"strings"
)

// CREATE/DROP SETTINGS PROFILE (POST /v1/query), which the parser
// library does not know. Profiles are stored by the control plane; Analyze
// applies them to the queries of custom-role keys (settings.go).

const profileHint = "CREATE SETTINGS PROFILE [IF NOT EXISTS | OR REPLACE] p SETTINGS workload = 'analytics' READONLY, use_concurrency_control = 1 TO analyst"

func (a *analyzer) createProfile(t *tokens) (*Statement, *Error) {
	h := profileHint
	_, orReplace := existsClause(t)
	t.accept("SETTINGS")
	if err := t.expect(h, "PROFILE"); err != nil {
		return nil, err
	}
	ifNot, orRepl := existsClause(t)
	if orReplace && (ifNot || orRepl) {
		return nil, badRequest(CodeSyntax, t.peek().pos, h, "IF NOT EXISTS and OR REPLACE cannot be combined")
	}
	orReplace = orReplace || orRepl
	if err := a.requireAccessDDL("managing settings profiles"); err != nil {
		return nil, err
	}
	name, pos, err := plainName(t, "a profile name", h)
	if err != nil {
		return nil, err
	}
	if t.peek().isOp(",") {
		return nil, badRequest(CodeProfile, t.peek().pos, h, "create one profile per statement")
	}
	cluster, err := a.profileCluster(t)
	if err != nil {
		return nil, err
	}
	if t.peek().is("IN") {
		return nil, badRequest(CodeProfile, t.peek().pos, h, "access storage selectors are not supported")
	}
	var settings []ProfileSetting
	if t.accept("SETTINGS") {
		for {
			s, err := profileSetting(t)
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(settings, func(o ProfileSetting) bool { return o.Name == s.Name }) {
				return nil, badRequest(CodeProfile, t.peek().pos, h, "setting %s is given twice", s.Name)
			}
			settings = append(settings, s)
			if !t.acceptOp(",") {
				break
			}
		}
	}
	if !t.accept("TO") {
		return nil, badRequest(CodeProfile, t.peek().pos, h, "a profile needs TO with 1 to %d roles", maxTargetRoles)
	}
	roles, err := a.roleList(t, h)
	if err != nil {
		return nil, err
	}
	if err := t.expectEnd(h); err != nil {
		return nil, err
	}
	exists := slices.ContainsFunc(a.access.SettingsProfiles(), func(p SettingsProfile) bool { return p.Name == name })
	if exists && !ifNot && !orReplace {
		return nil, conflict(CodeProfileExists, pos, "use CREATE SETTINGS PROFILE OR REPLACE", "settings profile %s already exists", name)
	}
	return &Statement{Kind: KindCreateSettingsProfile, EmptyResult: true, Command: &CreateSettingsProfile{
		Profile:     SettingsProfile{Name: name, Settings: settings, Roles: roles},
		IfNotExists: ifNot, OrReplace: orReplace, OnCluster: cluster,
	}}, nil
}

// profileSetting reads workload = 'name' or use_concurrency_control = 0|1,
// optionally READONLY or CONST.
func profileSetting(t *tokens) (ProfileSetting, *Error) {
	h := profileHint
	tok := t.next()
	if tok.kind != tokIdent {
		return ProfileSetting{}, badRequest(CodeProfile, tok.pos, h, "expected a setting name, got %s", tok.describe())
	}
	if tok.is("INHERIT") || tok.is("PROFILE") {
		return ProfileSetting{}, badRequest(CodeProfile, tok.pos, h, "profile inheritance is not supported")
	}
	s := ProfileSetting{Name: tok.text}
	if err := t.expectOp(h, "="); err != nil {
		return s, err
	}
	v := t.next()
	switch s.Name {
	case "workload":
		value, ok := plainString(v.text)
		if v.kind != tokString || !ok || value == "" {
			return s, badRequest(CodeProfile, v.pos, h, "workload takes a nonempty string: workload = 'analytics'")
		}
		if err := checkWorkloadName(value, v.pos); err != nil {
			return s, err
		}
		s.Value = value
	case "use_concurrency_control":
		if v.kind != tokNumber || v.text != "0" && v.text != "1" {
			return s, badRequest(CodeProfile, v.pos, h, "use_concurrency_control takes 0 or 1")
		}
		s.Value = v.text
	default:
		return s, badRequest(CodeProfile, tok.pos, h, "setting %s is not supported in profiles; use workload or use_concurrency_control", s.Name)
	}
	switch c := t.peek(); {
	case c.is("READONLY"):
		t.next()
		s.Constraint = ConstraintReadonly
	case c.is("CONST"):
		t.next()
		s.Constraint = ConstraintConst
	case c.is("MIN"), c.is("MAX"), c.is("WRITABLE"), c.is("CHANGEABLE_IN_READONLY"):
		return s, badRequest(CodeProfile, c.pos, h, "%s is not supported; use READONLY or CONST", strings.ToUpper(c.text))
	}
	return s, nil
}

// profileCluster reads ON CLUSTER 'default' after the profile name; it is
// kept as given (never added), and refused with replicated access storage.
func (a *analyzer) profileCluster(t *tokens) (bool, *Error) {
	pos := t.peek().pos
	cluster, err := onCluster(t, profileHint)
	if err != nil {
		return false, err
	}
	if cluster && a.env.Cluster.ReplicatedAccessStorage {
		return false, badRequest(CodeCluster, pos, "omit ON CLUSTER: access entities are replicated", "ON CLUSTER is not used with replicated access storage")
	}
	return cluster, nil
}

func (a *analyzer) dropProfile(t *tokens) (*Statement, *Error) {
	const h = "DROP SETTINGS PROFILE [IF EXISTS] p"
	t.accept("SETTINGS")
	if err := t.expect(h, "PROFILE"); err != nil {
		return nil, err
	}
	ifExists := t.accept("IF", "EXISTS")
	if err := a.requireAccessDDL("managing settings profiles"); err != nil {
		return nil, err
	}
	name, pos, err := plainName(t, "a profile name", h)
	if err != nil {
		return nil, err
	}
	if t.peek().isOp(",") {
		return nil, badRequest(CodeProfile, t.peek().pos, h, "drop one profile per statement")
	}
	cluster, err := a.profileCluster(t)
	if err != nil {
		return nil, err
	}
	if err := t.expectEnd(h); err != nil {
		return nil, err
	}
	exists := slices.ContainsFunc(a.access.SettingsProfiles(), func(p SettingsProfile) bool { return p.Name == name })
	if !exists && !ifExists {
		return nil, notFound(CodeUnknownProfile, pos, "use DROP SETTINGS PROFILE IF EXISTS", "settings profile %s does not exist", name)
	}
	return &Statement{Kind: KindDropSettingsProfile, EmptyResult: true,
		Command: &DropSettingsProfile{Name: name, IfExists: ifExists, OnCluster: cluster}}, nil
}
