package statement

import (
	"slices"
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

// Roles and grants (CREATE ROLE, DROP ROLE, GRANT; POST /v1/query in the served
// OpenAPI document, edge/openapi.json). These
// statements are parsed by the parser library and returned as commands; the
// control plane stores them and Analyze reads them back through Access.

const (
	roleHint  = "CREATE ROLE analyst; DROP ROLE [IF EXISTS] analyst; GRANT SELECT[(col, ...)][, INSERT] ON db.table|db.*|*.* TO analyst"
	grantHint = "GRANT SELECT(user, ts), INSERT ON db.events TO analyst"
)

// isRoleName accepts role names usable everywhere they appear (key
// database_roles, policy and profile targets): plain identifiers.
func isRoleName(name string) bool { return isPlain(name) && len(name) <= 64 }

// onClusterDefault accepts ON CLUSTER 'default' (or the identifier
// default); other clusters are refused.
func onClusterDefault(c *ch.ClusterClause) *Error {
	if c == nil {
		return nil
	}
	name := ""
	switch v := c.Expr.(type) {
	case *ch.StringLiteral:
		s, ok := plainString(v.Literal)
		if ok {
			name = s
		}
	case *ch.Ident:
		name = v.Name
	}
	if name != "default" {
		return badRequest(CodeCluster, int(c.Pos()), "omit ON CLUSTER or write ON CLUSTER 'default'", "only the cluster 'default' is accepted")
	}
	return nil
}

func (a *analyzer) parseAccess(hint string) (ch.Expr, *Error) {
	stmts, err := parseStatements(a.sql, 0)
	if err != nil {
		err.Hint = hint
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, badRequest(CodeMultipleStatements, 0, hint, "one statement per request")
	}
	return stmts[0], nil
}

func (a *analyzer) checkRoleName(name string, pos int) *Error {
	if !isRoleName(name) {
		return badRequest(CodeRole, pos, "role names are letters, digits and underscores", "invalid role name %q", name)
	}
	if a.access.DatabaseUserExists(name) {
		return badRequest(CodeRole, pos, "choose another role name", "%q is the name of a database user", name)
	}
	return nil
}

func (a *analyzer) createRole() (*Statement, *Error) {
	e, err := a.parseAccess(roleHint)
	if err != nil {
		return nil, err
	}
	cr, ok := e.(*ch.CreateRole)
	if !ok {
		return nil, badRequest(CodeUnsupportedStatement, 0, roleHint, "unsupported CREATE ROLE statement")
	}
	if err := a.requireAdmin("CREATE ROLE"); err != nil {
		return nil, err
	}
	switch {
	case cr.OrReplace:
		return nil, badRequest(CodeRole, 0, roleHint, "CREATE ROLE never replaces a role")
	case len(cr.RoleNames) != 1:
		return nil, badRequest(CodeRole, 0, roleHint, "create one role per statement")
	case cr.AccessStorageType != nil:
		return nil, badRequest(CodeRole, int(cr.AccessStorageType.Pos()), roleHint, "access storage selectors are not supported")
	case len(cr.Settings) > 0:
		return nil, badRequest(CodeRole, 0, "use a settings profile: CREATE SETTINGS PROFILE p SETTINGS workload = 'w' TO role",
			"role settings are not supported")
	}
	rn := cr.RoleNames[0]
	name, pos, err := roleNameOf(rn)
	if err != nil {
		return nil, err
	}
	if err := onClusterDefault(rn.OnCluster); err != nil {
		return nil, err
	}
	if err := a.checkRoleName(name, pos); err != nil {
		return nil, err
	}
	if a.access.RoleExists(name) && !cr.IfNotExists {
		return nil, conflict(CodeRoleExists, pos, "use CREATE ROLE IF NOT EXISTS", "role %s already exists", name)
	}
	return &Statement{Kind: KindCreateRole, EmptyResult: true,
		Command: &CreateRole{Name: name, IfNotExists: cr.IfNotExists, OnCluster: rn.OnCluster != nil}}, nil
}

func roleNameOf(rn *ch.RoleName) (string, int, *Error) {
	if rn == nil {
		return "", -1, badRequest(CodeRole, -1, roleHint, "missing role name")
	}
	id, ok := rn.Name.(*ch.Ident)
	if !ok {
		return "", int(rn.Pos()), badRequest(CodeRole, int(rn.Pos()), roleHint, "invalid role name")
	}
	if rn.Scope != nil {
		return "", int(rn.Pos()), badRequest(CodeRole, int(rn.Pos()), roleHint, "role names have no host scope")
	}
	if err := checkName(id.Name, int(id.Pos())); err != nil {
		return "", 0, err
	}
	return id.Name, int(id.Pos()), nil
}

func (a *analyzer) dropRole() (*Statement, *Error) {
	e, err := a.parseAccess(roleHint)
	if err != nil {
		return nil, err
	}
	dr, ok := e.(*ch.DropUserOrRole)
	if !ok || !strings.EqualFold(dr.Target, "ROLE") {
		return nil, badRequest(CodeUnsupportedStatement, 0, roleHint, "unsupported DROP ROLE statement")
	}
	if err := a.requireAdmin("DROP ROLE"); err != nil {
		return nil, err
	}
	if len(dr.Names) != 1 {
		return nil, badRequest(CodeRole, 0, "DROP ROLE analyst", "drop one role per statement")
	}
	if dr.Modifier != "" || dr.From != nil {
		return nil, badRequest(CodeRole, 0, "DROP ROLE [IF EXISTS] analyst", "access storage selectors are not supported")
	}
	rn := dr.Names[0]
	name, pos, err := roleNameOf(rn)
	if err != nil {
		return nil, err
	}
	if err := onClusterDefault(rn.OnCluster); err != nil {
		return nil, err
	}
	if rn.OnCluster != nil && !dr.IfExists {
		return nil, badRequest(CodeRole, int(rn.OnCluster.Pos()), "DROP ROLE IF EXISTS "+name+" ON CLUSTER 'default'",
			"with ON CLUSTER use DROP ROLE IF EXISTS")
	}
	if !a.access.RoleExists(name) && !dr.IfExists {
		return nil, notFound(CodeUnknownRole, pos, "use DROP ROLE IF EXISTS", "role %s does not exist", name)
	}
	return &Statement{Kind: KindDropRole, EmptyResult: true,
		Command: &DropRole{Name: name, IfExists: dr.IfExists, OnCluster: rn.OnCluster != nil}}, nil
}

func (a *analyzer) grant() (*Statement, *Error) {
	e, err := a.parseAccess(grantHint)
	if err != nil {
		if err.Code == CodeSyntax {
			err.Message += " (role inheritance and privileges other than SELECT and INSERT are not supported)"
		}
		return nil, err
	}
	g, ok := e.(*ch.GrantPrivilegeStmt)
	if !ok {
		return nil, badRequest(CodeUnsupportedStatement, 0, grantHint, "unsupported GRANT statement")
	}
	if err := a.requireAdmin("GRANT"); err != nil {
		return nil, err
	}
	if err := onClusterDefault(g.OnCluster); err != nil {
		return nil, err
	}
	if len(g.WithOptions) > 0 {
		return nil, badRequest(CodeGrant, 0, grantHint, "WITH %s OPTION is not supported", strings.Join(g.WithOptions, ", "))
	}
	db, table, err := a.grantTarget(g.On)
	if err != nil {
		return nil, err
	}
	type priv struct {
		p    Privilege
		cols []string
	}
	var privs []priv
	for _, pc := range g.Privileges {
		var p Privilege
		switch strings.ToUpper(strings.Join(pc.Keywords, " ")) {
		case "SELECT":
			p = PrivSelect
		case "INSERT":
			p = PrivInsert
		default:
			return nil, badRequest(CodeGrant, int(pc.Pos()), grantHint, "privilege %s is not supported; grant SELECT or INSERT",
				strings.Join(pc.Keywords, " "))
		}
		var cols []string
		if pc.Params != nil && pc.Params.Items != nil {
			for _, it := range unwrapColumnExprs(pc.Params.Items.Items) {
				id, ok := it.(*ch.Ident)
				if !ok {
					return nil, badRequest(CodeGrant, int(it.Pos()), grantHint,
						"grant columns are top-level keys of the document, written as names")
				}
				if err := checkName(id.Name, int(id.Pos())); err != nil {
					return nil, err
				}
				if !slices.Contains(cols, id.Name) {
					cols = append(cols, id.Name)
				}
			}
			if len(cols) == 0 {
				return nil, badRequest(CodeGrant, int(pc.Pos()), grantHint, "empty column list")
			}
		}
		privs = append(privs, priv{p, cols})
	}
	if len(privs) == 0 {
		return nil, badRequest(CodeGrant, 0, grantHint, "no privilege to grant")
	}
	var roles []string
	for _, id := range g.To {
		if err := checkName(id.Name, int(id.Pos())); err != nil {
			return nil, err
		}
		if a.access.DatabaseUserExists(id.Name) && !a.access.RoleExists(id.Name) {
			return nil, badRequest(CodeGrant, int(id.Pos()), grantHint, "grants to database users are not supported; grant to a role")
		}
		if !a.access.RoleExists(id.Name) {
			return nil, notFound(CodeUnknownRole, int(id.Pos()), "create it first: CREATE ROLE "+quoteName(id.Name, false),
				"role %s does not exist", id.Name)
		}
		if slices.Contains(roles, id.Name) {
			return nil, badRequest(CodeGrant, int(id.Pos()), grantHint, "role %s is listed twice", id.Name)
		}
		roles = append(roles, id.Name)
	}
	if len(roles) == 0 {
		return nil, badRequest(CodeGrant, 0, grantHint, "no role to grant to")
	}
	cmd := &GrantPrivileges{OnCluster: g.OnCluster != nil}
	for _, r := range roles {
		for _, p := range privs {
			cmd.Grants = append(cmd.Grants, Grant{Role: r, Privileges: p.p, Database: db, Table: table, Columns: p.cols})
		}
	}
	return &Statement{Kind: KindGrant, Command: cmd, EmptyResult: true}, nil
}

// grantTarget resolves ON db.table, db.*, *.*, table or *.
func (a *analyzer) grantTarget(on *ch.TableIdentifier) (string, string, *Error) {
	if on == nil || on.Table == nil {
		return "", "", badRequest(CodeGrant, -1, grantHint, "missing ON target")
	}
	db := a.env.Database
	pos := int(on.Pos())
	if on.Database != nil {
		db = on.Database.Name
	}
	table := on.Table.Name
	if db == "*" {
		if table != "*" {
			return "", "", badRequest(CodeGrant, pos, grantHint, "write *.* for every database")
		}
		return "*", "*", nil
	}
	if err := checkName(db, pos); err != nil {
		return "", "", err
	}
	if db == systemDatabase {
		return "", "", badRequest(CodeGrant, pos, grantHint, "the system database does not support grants")
	}
	if _, err := a.engineDatabase(db, pos); err != nil {
		return "", "", err
	}
	if table == "*" {
		return db, "*", nil
	}
	if !isLogicalName(table) {
		return "", "", badRequest(CodeInvalidName, pos, "", "invalid table name %q", table)
	}
	return db, table, nil
}
