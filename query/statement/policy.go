package statement

import (
	"slices"
	"sort"
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

// policyFilter returns the row filter that reads of db.table by the caller
// must pass, or "" when none applies. Row policies filter reads of
// custom-role keys holding one of a policy's roles (CREATE ROW POLICY):
// matching permissive filters are OR-ed, then matching restrictive filters
// AND-ed; restrictive policies without a permissive one allow nothing.
// Permission keys, sessions and workflows are not filtered.
func (a *analyzer) policyFilter(db, table string, pos int) (string, *Error) {
	p := a.env.Principal
	if !p.byGrants() || a.noPolicies {
		return "", nil
	}
	var permissive, restrictive []string
	policies := a.rowPolicies(db, table)
	sort.Slice(policies, func(i, j int) bool { return policies[i].Name < policies[j].Name })
	for _, pol := range policies {
		if !p.holdsAny(pol.Roles) {
			continue
		}
		f, err := a.compileFilter(pol, table)
		if err != nil {
			return "", err
		}
		if pol.Restrictive {
			restrictive = append(restrictive, "("+f+")")
		} else {
			permissive = append(permissive, "("+f+")")
		}
		if name := db + "." + table + "." + pol.Name; !slices.Contains(a.policies, name) {
			a.policies = append(a.policies, name)
		}
	}
	if len(permissive) == 0 && len(restrictive) == 0 {
		return "", nil
	}
	if len(permissive) == 0 {
		return "0", nil
	}
	parts := []string{"(" + strings.Join(permissive, " OR ") + ")"}
	parts = append(parts, restrictive...)
	return strings.Join(parts, " AND "), nil
}

// rowPolicies returns the policies defined on logical table db.table.
func (a *analyzer) rowPolicies(db, table string) []RowPolicy {
	var out []RowPolicy
	for _, p := range a.access.RowPolicies() {
		if p.Database == db && p.Table == table {
			out = append(out, p)
		}
	}
	return out
}

// compileFilter rewrites a stored policy filter for a level whose only
// source is the table's document.
func (a *analyzer) compileFilter(pol RowPolicy, table string) (string, *Error) {
	fail := func() *Error {
		return badRequest(CodeInternal, -1, "ask an administrator to recreate the row policy",
			"row policy %s on %s.%s cannot be applied", pol.Name, pol.Database, pol.Table)
	}
	exprs, err := parseExprList(pol.Filter, 0, len(pol.Filter))
	if err != nil || len(exprs) != 1 {
		return "", fail()
	}
	if err := checkScalar(exprs[0]); err != nil {
		return "", fail()
	}
	e, err := a.rewriteForTableTyped(exprs[0], table, a.tablePaths(pol.Database, pol.Table))
	if err != nil {
		return "", fail()
	}
	return render(e), nil
}

// rewriteForTable walks e as a row-wise expression over the document of one
// table (a policy filter, a sorting key): paths become doc paths, functions
// and names are checked, and no grant or policy applies.
func (a *analyzer) rewriteForTable(e ch.Expr, table string) (ch.Expr, *Error) {
	return a.rewriteForTableTyped(e, table, nil)
}

// rewriteForTableTyped is rewriteForTable with the table's path schema, so that paths
// read typed (policy filters).
func (a *analyzer) rewriteForTableTyped(e ch.Expr, table string, paths map[string][]string) (ch.Expr, *Error) {
	sc := newScope(nil, nil, nil)
	sc.sources = []*source{{kind: srcTable, name: table, table: table, paths: paths}}
	savedAcc, savedPol := a.noAccounting, a.noPolicies
	a.noAccounting, a.noPolicies = true, true
	defer func() { a.noAccounting, a.noPolicies = savedAcc, savedPol }()
	return a.expr(e, sc)
}

// checkScalar accepts a row-wise expression: no subqueries, aggregates,
// window functions or row-multiplying arrayJoin. Used for row policy
// filters and sorting keys, where anything else has no meaning.
func checkScalar(e ch.Expr) *Error {
	var bad *Error
	ch.Walk(e, func(node ch.Expr) bool {
		if bad != nil {
			return false
		}
		switch n := node.(type) {
		case *ch.SubQuery, *ch.SelectQuery:
			bad = badRequest(CodeUnsupportedSyntax, int(node.Pos()), "", "subqueries are not allowed here")
		case *ch.WindowFunctionExpr:
			bad = badRequest(CodeUnsupportedSyntax, int(node.Pos()), "", "window functions are not allowed here")
		case *ch.FunctionExpr:
			if n.Name != nil && (isAggregateFunction(n.Name.Name) || strings.EqualFold(n.Name.Name, "arrayJoin")) {
				bad = badRequest(CodeUnsupportedSyntax, int(node.Pos()), "", "%s is not allowed here", n.Name.Name)
			}
			if n.Name != nil && n.Params != nil && n.Params.ColumnArgList != nil {
				bad = badRequest(CodeUnsupportedSyntax, int(node.Pos()), "", "parametric aggregate functions are not allowed here")
			}
		}
		return bad == nil
	})
	return bad
}
