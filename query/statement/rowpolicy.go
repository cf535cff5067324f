package statement

import (
	"slices"
	"strings"
)

// CREATE/DROP ROW POLICY (POST /v1/query), which the parser library
// does not know. The statement is read here on tokens; the filter
// expression by the parser. Policies are stored by the control plane and
// injected into reads by Analyze (policy.go).

const rowPolicyHint = "CREATE ROW POLICY [IF NOT EXISTS | OR REPLACE] p ON events [AS RESTRICTIVE] FOR SELECT USING team = 'a' TO analyst"

// maxTargetRoles bounds the roles of a policy or profile (TO role, ...; more is a
// 400), as a key's database_roles are bounded.
const maxTargetRoles = 32

// onCluster reads ON CLUSTER 'default' when it comes next; present reports
// whether it did.
func onCluster(t *tokens, hint string) (present bool, err *Error) {
	if !(t.peek().is("ON") && t.peekN(1).is("CLUSTER")) {
		return false, nil
	}
	t.next()
	t.next()
	c := t.next()
	name := ""
	switch c.kind {
	case tokString:
		if s, ok := plainString(c.text); ok {
			name = s
		}
	case tokIdent:
		if !strings.ContainsRune(c.text, '\\') {
			name = c.text
		}
	}
	if name != "default" {
		return false, badRequest(CodeCluster, c.pos, hint, "only the cluster 'default' is accepted")
	}
	return true, nil
}

// plainName reads a name token: a plain identifier, quoted or not.
func plainName(t *tokens, what, hint string) (string, int, *Error) {
	tok := t.next()
	if tok.kind != tokIdent {
		return "", tok.pos, badRequest(CodeSyntax, tok.pos, hint, "expected %s, got %s", what, tok.describe())
	}
	if err := checkName(tok.text, tok.pos); err != nil {
		return "", tok.pos, err
	}
	if !isPlain(tok.text) || len(tok.text) > 128 {
		return "", tok.pos, badRequest(CodeInvalidName, tok.pos, hint, "%s must be letters, digits and underscores", what)
	}
	return tok.text, tok.pos, nil
}

// roleList reads TO role [, role ...]: 1 to 32 distinct existing roles whose
// names no database user has.
func (a *analyzer) roleList(t *tokens, hint string) ([]string, *Error) {
	var roles []string
	for {
		tok := t.peek()
		if tok.kind == tokIdent && !tok.quoted && (tok.is("ALL") || tok.is("NONE") || tok.is("CURRENT_USER")) {
			return nil, badRequest(CodeUnsupportedSyntax, tok.pos, hint, "%s is not supported; name the roles", strings.ToUpper(tok.text))
		}
		name, pos, err := plainName(t, "a role name", hint)
		if err != nil {
			return nil, err
		}
		if a.access.DatabaseUserExists(name) {
			return nil, badRequest(CodeRole, pos, hint, "%q is the name of a database user; user targets are not supported", name)
		}
		if !a.access.RoleExists(name) {
			return nil, notFound(CodeUnknownRole, pos, "create it first: CREATE ROLE "+name, "role %s does not exist", name)
		}
		if slices.Contains(roles, name) {
			return nil, badRequest(CodeRole, pos, hint, "role %s is listed twice", name)
		}
		roles = append(roles, name)
		if len(roles) > maxTargetRoles {
			return nil, badRequest(CodeRole, pos, hint, "at most %d roles", maxTargetRoles)
		}
		if !t.acceptOp(",") {
			return roles, nil
		}
	}
}

// existsClause reads [IF NOT EXISTS | OR REPLACE].
func existsClause(t *tokens) (ifNotExists, orReplace bool) {
	switch {
	case t.accept("IF", "NOT", "EXISTS"):
		return true, false
	case t.accept("OR", "REPLACE"):
		return false, true
	}
	return false, false
}

// requireAccessDDL admits row-policy and settings-profile statements: an administrator's,
// outside the internal organization. Unlike workloads and resources they are allowed on a
// shared engine: both are control-plane records of the organization (catalog events, never
// engine objects), a policy names a table of the organization's own databases, and a
// profile only presets workload and use_concurrency_control, which the organization's
// statements may set themselves.
func (a *analyzer) requireAccessDDL(what string) *Error {
	if err := a.requireAdmin(what); err != nil {
		return err
	}
	if a.env.Cluster.InternalOrganization {
		return forbidden(CodeForbidden, -1, "", "the internal organization does not support %s", what)
	}
	return nil
}

// requireScheduling admits workload and resource statements: as requireAccessDDL, and
// not on a shared engine, where workload scheduling is server-wide.
func (a *analyzer) requireScheduling(what string) *Error {
	if err := a.requireAccessDDL(what); err != nil {
		return err
	}
	if a.env.Cluster.SharedEngine {
		return forbidden(CodeForbidden, -1, "select a workload the operator defined: SELECT name FROM system.workloads, then SETTINGS workload = 'name'",
			"this cluster shares its ClickHouse server with other organizations, where workload scheduling is server-wide; %s is up to the operator", what)
	}
	return nil
}

func (a *analyzer) createRowPolicy(t *tokens) (*Statement, *Error) {
	h := rowPolicyHint
	_, orReplace := existsClause(t)
	t.accept("ROW")
	if err := t.expect(h, "POLICY"); err != nil {
		return nil, err
	}
	ifNot, orRepl := existsClause(t)
	if orReplace && (ifNot || orRepl) {
		return nil, badRequest(CodeSyntax, t.peek().pos, h, "IF NOT EXISTS and OR REPLACE cannot be combined")
	}
	orReplace = orReplace || orRepl
	if err := a.requireAccessDDL("managing row policies"); err != nil {
		return nil, err
	}
	name, _, err := plainName(t, "a policy name", h)
	if err != nil {
		return nil, err
	}
	db, table, qualified, cluster, pos, err := a.policyTarget(t, h)
	if err != nil {
		return nil, err
	}
	restrictive, kindSeen := false, false
	asKind := func() *Error {
		if !(t.peek().is("AS") && (t.peekN(1).is("PERMISSIVE") || t.peekN(1).is("RESTRICTIVE"))) {
			return nil
		}
		if kindSeen {
			return badRequest(CodeRowPolicy, t.peek().pos, h, "AS PERMISSIVE/RESTRICTIVE is given twice")
		}
		t.next()
		restrictive, kindSeen = t.next().is("RESTRICTIVE"), true
		return nil
	}
	if err := asKind(); err != nil {
		return nil, err
	}
	if t.peek().is("IN") {
		return nil, badRequest(CodeRowPolicy, t.peek().pos, h, "access storage selectors are not supported")
	}
	if t.accept("FOR") {
		if !t.accept("SELECT") {
			return nil, badRequest(CodeRowPolicy, t.peek().pos, h, "policies filter SELECT only: FOR SELECT")
		}
	}
	if err := t.expect(h, "USING"); err != nil {
		return nil, err
	}
	startTok := t.i
	endTok := splitTopLevel(t.toks, startTok, func(i int) bool {
		tok := t.toks[i]
		return tok.is("TO") || tok.isOp(";") ||
			tok.is("AS") && i+1 < len(t.toks) && (t.toks[i+1].is("PERMISSIVE") || t.toks[i+1].is("RESTRICTIVE"))
	})
	if endTok == startTok {
		return nil, badRequest(CodeRowPolicy, t.peek().pos, h, "the USING filter is empty")
	}
	filter, err := a.policyFilterText(t.toks[startTok].pos, t.toks[endTok].pos, table)
	if err != nil {
		return nil, err
	}
	t.i = endTok
	if err := asKind(); err != nil {
		return nil, err
	}
	if err := t.expect(h, "TO"); err != nil {
		return nil, err
	}
	roles, err := a.roleList(t, h)
	if err != nil {
		return nil, err
	}
	if err := t.expectEnd(h); err != nil {
		return nil, err
	}
	if err := a.policyClusterRules(cluster, qualified, ifNot || orReplace, pos, "CREATE ROW POLICY IF NOT EXISTS"); err != nil {
		return nil, err
	}
	for _, r := range roles {
		if !slices.ContainsFunc(a.access.Grants(r), func(g Grant) bool { return g.covers(PrivSelect, db, table) }) {
			return nil, badRequest(CodeRowPolicy, pos, "GRANT SELECT ON "+db+"."+table+" TO "+r,
				"role %s does not hold SELECT on %s.%s", r, db, table)
		}
	}
	exists := slices.ContainsFunc(a.rowPolicies(db, table), func(p RowPolicy) bool { return p.Name == name })
	if exists && !ifNot && !orReplace {
		return nil, conflict(CodeRowPolicyExists, pos, "use CREATE ROW POLICY OR REPLACE", "row policy %s on %s.%s already exists", name, db, table)
	}
	return &Statement{Kind: KindCreateRowPolicy, EmptyResult: true, Command: &CreateRowPolicy{
		Policy:      RowPolicy{Name: name, Database: db, Table: table, Filter: filter, Restrictive: restrictive, Roles: roles},
		IfNotExists: ifNot, OrReplace: orReplace, OnCluster: cluster,
	}}, nil
}

// policyTarget reads [ON CLUSTER 'default'] ON [db.]table [ON CLUSTER
// 'default']: one existing table of the selected database.
func (a *analyzer) policyTarget(t *tokens, h string) (db, table string, qualified, cluster bool, pos int, err *Error) {
	if cluster, err = onCluster(t, h); err != nil {
		return
	}
	if err = t.expect(h, "ON"); err != nil {
		return
	}
	first := t.peek()
	if first.isOp("*") || first.kind == tokIdent && t.peekN(1).isOp(".") && t.peekN(2).isOp("*") {
		err = badRequest(CodeRowPolicy, first.pos, h, "wildcard targets are not supported; name one table")
		return
	}
	qualified = t.peekN(1).isOp(".")
	if db, table, pos, err = a.tableName(t, h); err != nil {
		return
	}
	if t.peek().isOp(",") {
		err = badRequest(CodeRowPolicy, t.peek().pos, h, "one policy on one table per statement")
		return
	}
	if !cluster {
		if cluster, err = onCluster(t, h); err != nil {
			return
		}
	}
	if db == systemDatabase || a.env.Database == systemDatabase {
		err = badRequest(CodeRowPolicy, pos, h, "system databases do not support row policies")
		return
	}
	if db != a.env.Database {
		err = badRequest(CodeRowPolicy, pos, "select the database with the database parameter", "the policy's table must be in the selected database %s", a.env.Database)
		return
	}
	if _, err = a.engineDatabase(db, pos); err != nil {
		return
	}
	if _, ok := a.env.Catalog.Table(db, table); !ok || !isLogicalName(table) {
		err = notFound(CodeUnknownTable, pos, "", "table %s.%s does not exist", db, table)
	}
	return
}

// policyClusterRules: with ON CLUSTER the database is explicit; with
// replicated access storage ON CLUSTER needs IF [NOT] EXISTS.
func (a *analyzer) policyClusterRules(cluster, qualified, idempotent bool, pos int, hint string) *Error {
	if !cluster {
		return nil
	}
	if !qualified {
		return badRequest(CodeRowPolicy, pos, "write ON "+a.env.Database+".table ON CLUSTER 'default'",
			"with ON CLUSTER the table must be qualified with its database")
	}
	if a.env.Cluster.ReplicatedAccessStorage && !idempotent {
		return badRequest(CodeRowPolicy, pos, hint, "with replicated access storage and ON CLUSTER use IF NOT EXISTS or IF EXISTS")
	}
	return nil
}

// policyFilterText validates the filter sql[start:end] and returns its
// canonical text in logical names.
func (a *analyzer) policyFilterText(start, end int, table string) (string, *Error) {
	exprs, err := parseExprList(a.sql, start, end)
	if err != nil {
		err.Hint = rowPolicyHint
		return "", err
	}
	if len(exprs) != 1 {
		return "", badRequest(CodeRowPolicy, start, rowPolicyHint, "the filter must be one expression")
	}
	if err := checkScalar(exprs[0]); err != nil {
		err.Code = CodeRowPolicy
		return "", err
	}
	text := render(exprs[0])
	if _, err := a.rewriteForTable(exprs[0], table); err != nil {
		return "", err
	}
	return text, nil
}

func (a *analyzer) dropRowPolicy(t *tokens) (*Statement, *Error) {
	const h = "DROP ROW POLICY [IF EXISTS] p ON events"
	t.accept("ROW")
	if err := t.expect(h, "POLICY"); err != nil {
		return nil, err
	}
	ifExists := t.accept("IF", "EXISTS")
	if err := a.requireAccessDDL("managing row policies"); err != nil {
		return nil, err
	}
	name, _, err := plainName(t, "a policy name", h)
	if err != nil {
		return nil, err
	}
	if t.peek().isOp(",") {
		return nil, badRequest(CodeRowPolicy, t.peek().pos, h, "drop one policy per statement")
	}
	db, table, qualified, cluster, pos, err := a.policyTarget(t, h)
	if err != nil {
		return nil, err
	}
	if t.peek().is("FROM") {
		return nil, badRequest(CodeRowPolicy, t.peek().pos, h, "access storage selectors are not supported")
	}
	if err := t.expectEnd(h); err != nil {
		return nil, err
	}
	if err := a.policyClusterRules(cluster, qualified, ifExists, pos, "DROP ROW POLICY IF EXISTS"); err != nil {
		return nil, err
	}
	exists := slices.ContainsFunc(a.rowPolicies(db, table), func(p RowPolicy) bool { return p.Name == name })
	if !exists && !ifExists {
		return nil, notFound(CodeUnknownRowPolicy, pos, "use DROP ROW POLICY IF EXISTS", "row policy %s on %s.%s does not exist", name, db, table)
	}
	return &Statement{Kind: KindDropRowPolicy, EmptyResult: true,
		Command: &DropRowPolicy{Name: name, Database: db, Table: table, IfExists: ifExists, OnCluster: cluster}}, nil
}
