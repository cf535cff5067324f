package statement

import (
	"maps"
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

// query analyzes a SELECT chain (UNION ALL/DISTINCT, EXCEPT, INTERSECT).
// parent is the level correlated references may reach; ctes and with are
// the table CTEs and WITH names visible from outside.
func (a *analyzer) query(q *ch.SelectQuery, parent *scope, ctes map[string]*cte, with map[string]bool) (*selectNode, []output, *Error) {
	if err := a.enter(int(q.Pos())); err != nil {
		return nil, nil, err
	}
	defer a.leave()
	var head, tail *selectNode
	var outs []output
	for cur := q; cur != nil; {
		next, op, err := chainNext(cur)
		if err != nil {
			return nil, nil, err
		}
		node, o, err := a.selectLevel(cur, parent, &ctes, &with)
		if err != nil {
			return nil, nil, err
		}
		if head == nil {
			head, outs = node, o
		} else {
			tail.next = node
		}
		tail = node
		tail.op = op
		cur = next
	}
	return head, outs, nil
}

// chainNext unlinks the next SELECT of a set operation chain.
func chainNext(q *ch.SelectQuery) (*ch.SelectQuery, string, *Error) {
	var next *ch.SelectQuery
	op := ""
	n := 0
	if q.UnionAll != nil {
		next, op, n = q.UnionAll, "UNION ALL", n+1
	}
	if q.UnionDistinct != nil {
		next, op, n = q.UnionDistinct, "UNION DISTINCT", n+1
	}
	if q.Except != nil {
		next, op, n = q.Except, "EXCEPT", n+1
	}
	if q.Intersect != nil {
		next, op, n = q.Intersect, "INTERSECT", n+1
	}
	if n > 1 {
		return nil, "", unsupportedNode(q)
	}
	q.UnionAll, q.UnionDistinct, q.Except, q.Intersect = nil, nil, nil, nil
	return next, op, nil
}

// selectLevel analyzes one SELECT: its WITH, FROM, expressions and settings.
// Table CTEs it defines are added to *ctes for the rest of the chain.
func (a *analyzer) selectLevel(q *ch.SelectQuery, parent *scope, ctes *map[string]*cte, with *map[string]bool) (*selectNode, []output, *Error) {
	node := &selectNode{q: q}
	if len(q.SelectItems) == 0 {
		return nil, nil, badRequest(CodeSyntax, int(q.Pos()), "", "the select list is empty")
	}
	var withNames []*ch.Ident
	if q.With != nil {
		for _, c := range q.With.CTEs {
			switch body := c.Alias.(type) {
			case *ch.SelectQuery: // name AS (SELECT ...): a table CTE, inlined where used
				id, ok := c.Expr.(*ch.Ident)
				if !ok {
					return nil, nil, unsupportedNode(c.Expr)
				}
				if err := checkName(id.Name, int(id.Pos())); err != nil {
					return nil, nil, err
				}
				if id.Name == docColumn {
					return nil, nil, badRequest(CodeReservedName, int(id.Pos()), "choose another name", "%q is reserved", docColumn)
				}
				sel, outs, err := a.query(body, parent, *ctes, *with)
				if err != nil {
					return nil, nil, err
				}
				m := maps.Clone(*ctes)
				if m == nil {
					m = map[string]*cte{}
				}
				m[id.Name] = &cte{name: id.Name, text: render(sel), outputs: outs}
				*ctes = m
			case *ch.Ident: // expr AS name
				withNames = append(withNames, body)
				w := maps.Clone(*with)
				if w == nil {
					w = map[string]bool{}
				}
				w[body.Name] = true
				*with = w
				node.with = append(node.with, c)
			default:
				return nil, nil, unsupportedNode(c.Alias)
			}
		}
		q.With = nil
	}
	sc := newScope(parent, *ctes, *with)
	fw, err := a.from(q.From, sc)
	if err != nil {
		return nil, nil, err
	}
	for _, id := range withNames {
		if err := a.checkAlias(id, sc); err != nil {
			return nil, nil, err
		}
	}
	if err := a.collectAliases(q, fw, sc); err != nil {
		return nil, nil, err
	}
	for _, c := range node.with {
		unmask := sc.mask(c.Alias.(*ch.Ident).Name)
		c.Expr, err = a.expr(c.Expr, sc)
		unmask()
		if err != nil {
			return nil, nil, err
		}
	}
	if err := a.fromExprs(fw, sc); err != nil {
		return nil, nil, err
	}
	outs, err := a.selectItems(q, sc)
	if err != nil {
		return nil, nil, err
	}
	if q.DistinctOn != nil {
		return nil, nil, badRequest(CodeUnsupportedSyntax, int(q.DistinctOn.Pos()), "keep the first row per key with LIMIT 1 BY: SELECT ... ORDER BY ... LIMIT 1 BY user.id",
			"DISTINCT ON is not supported")
	}
	if q.Prewhere != nil {
		if q.Prewhere.Expr, err = a.expr(q.Prewhere.Expr, sc); err != nil {
			return nil, nil, err
		}
	}
	if q.Where != nil {
		if q.Where.Expr, err = a.expr(q.Where.Expr, sc); err != nil {
			return nil, nil, err
		}
	}
	if q.Prewhere != nil && fw.hasDoc {
		// Our tables are Merge views, which do not support PREWHERE on
		// document paths, and row-policy wrappers are subqueries, which have
		// no PREWHERE at all. PREWHERE is an optimization of WHERE (the
		// engine moves conditions to PREWHERE itself), so fold it in.
		if q.Where == nil {
			q.Where = &ch.WhereClause{Expr: q.Prewhere.Expr}
		} else {
			q.Where.Expr = &ch.BinaryOperation{
				LeftExpr:  parenthesize(q.Prewhere.Expr),
				Operation: ch.TokenKind(ch.KeywordAnd),
				RightExpr: parenthesize(q.Where.Expr),
			}
		}
		q.Prewhere = nil
	}
	if q.GroupBy != nil && q.GroupBy.Expr != nil {
		if q.GroupBy.Expr, err = a.expr(q.GroupBy.Expr, sc); err != nil {
			return nil, nil, err
		}
	}
	if q.Having != nil {
		if q.Having.Expr, err = a.expr(q.Having.Expr, sc); err != nil {
			return nil, nil, err
		}
	}
	if q.Window != nil {
		for _, w := range q.Window.Windows {
			if w == nil || w.Name == nil || w.Expr == nil {
				return nil, nil, unsupportedNode(q.Window)
			}
			if err := checkName(w.Name.Name, int(w.Name.Pos())); err != nil {
				return nil, nil, err
			}
			normalizeIdent(w.Name)
			if err := a.windowExpr(w.Expr, sc); err != nil {
				return nil, nil, err
			}
		}
	}
	if q.OrderBy != nil {
		if err := a.orderBy(q.OrderBy, sc); err != nil {
			return nil, nil, err
		}
	}
	if q.LimitBy != nil {
		if err := a.limit(q.LimitBy.Limit, sc); err != nil {
			return nil, nil, err
		}
		if err := a.exprList(q.LimitBy.ByExpr, sc); err != nil {
			return nil, nil, err
		}
	}
	if err := a.limit(q.Limit, sc); err != nil {
		return nil, nil, err
	}
	if q.Settings != nil {
		if err := a.settingsClause(q.Settings); err != nil {
			return nil, nil, err
		}
	}
	if q.Format != nil {
		return nil, nil, badRequest(CodeFormat, int(q.Format.Pos()), "choose the output format with the request's format field",
			"FORMAT clauses are not allowed")
	}
	return node, outs, nil
}

func (a *analyzer) limit(l *ch.LimitClause, sc *scope) *Error {
	if l == nil {
		return nil
	}
	var err *Error
	if l.Limit, err = a.expr(l.Limit, sc); err != nil {
		return err
	}
	l.Offset, err = a.expr(l.Offset, sc)
	return err
}

// selectItems walks the select list, names rewritten paths after what the
// user wrote (SELECT user.id returns a column "user.id", not "doc.user.id"),
// and returns the output columns.
func (a *analyzer) selectItems(q *ch.SelectQuery, sc *scope) ([]output, *Error) {
	var outs []output
	hasDoc := false
	for _, src := range sc.sources {
		hasDoc = hasDoc || src.hasDoc()
	}
	// Items that take the elements of an array of objects (arrayJoin(items) AS it)
	// go first, so that it.sku is typed wherever it is used on the level.
	per := make([][]output, len(q.SelectItems))
	for pass := 0; pass < 2; pass++ {
		for i, it := range q.SelectItems {
			if isElementItem(it) != (pass == 0) {
				continue
			}
			o, err := a.selectItem(it, sc, hasDoc)
			if err != nil {
				return nil, err
			}
			per[i] = o
		}
	}
	for _, o := range per {
		outs = append(outs, o...)
	}
	return outs, nil
}

// isElementItem reports a select item arrayJoin(...) AS name.
func isElementItem(it *ch.SelectItem) bool {
	f, ok := it.Expr.(*ch.FunctionExpr)
	return ok && it.Alias != nil && f.Name != nil && strings.EqualFold(f.Name.Name, "arrayJoin")
}

// selectItem walks one item of a select list and returns its output columns.
func (a *analyzer) selectItem(it *ch.SelectItem, sc *scope, hasDoc bool) ([]output, *Error) {
	if it.Alias != nil {
		if err := a.checkAlias(it.Alias, sc); err != nil {
			return nil, err
		}
	}
	if len(it.Modifiers) > 0 {
		if hasDoc {
			return nil, badRequest(CodeUnsupportedSyntax, int(it.Pos()), "select the paths you need by name",
				"EXCEPT, REPLACE and APPLY work on engine columns; the paths of a document are not columns")
		}
		for _, m := range it.Modifiers {
			if _, err := a.modifier(m, sc); err != nil {
				return nil, err
			}
		}
	}
	switch e := it.Expr.(type) {
	case *ch.Ident:
		if e.Name == "*" && e.QuoteType == 0 {
			a.starUse(sc, int(e.Pos()))
			return starOutputs(sc.sources), nil
		}
	case *ch.NestedIdentifier:
		if e.DotIdent != nil && e.DotIdent.Name == "*" {
			ne, err := a.qualifiedStar(e, sc)
			if err != nil {
				return nil, err
			}
			it.Expr = ne
			if src, _ := sc.sourceNamed([]*ch.Ident{e.Ident, e.DotIdent}); src != nil {
				return starOutputs([]*source{src}), nil
			}
			return nil, nil
		}
	}
	orig := render(it.Expr)
	switch e := it.Expr.(type) {
	case *ch.Path:
		orig = joinNames(e.Fields)
	case *ch.Ident:
		orig = e.Name
	}
	before := a.pathRewrites
	unmask := func() {}
	if it.Alias != nil {
		unmask = sc.mask(it.Alias.Name)
	}
	ne, err := a.expr(it.Expr, sc)
	unmask()
	if err != nil {
		return nil, err
	}
	it.Expr = ne
	name := orig
	if it.Alias != nil {
		name = it.Alias.Name
	} else if a.pathRewrites != before && orig != docColumn && len(orig) <= 256 &&
		checkName(orig, 0) == nil && !sc.sourceNameTaken(orig) && !sc.aliases[orig] {
		it.Alias = &ch.Ident{Name: orig, QuoteType: ch.BackTicks}
	}
	out := output{name: name, elem: a.elementOf(ne, sc)}
	if out.elem != nil && it.Alias != nil {
		sc.elems[it.Alias.Name] = out.elem // SELECT arrayJoin(items) AS it: it.sku is typed
	}
	return []output{out}, nil
}

// modifier checks * EXCEPT/REPLACE/APPLY on sources that are not documents.
func (a *analyzer) modifier(m *ch.FunctionExpr, sc *scope) (ch.Expr, *Error) {
	if m.Name == nil || m.Params == nil || m.Params.Items == nil {
		return nil, unsupportedNode(m)
	}
	switch m.Name.Name {
	case "EXCEPT":
		for _, it := range m.Params.Items.Items {
			if ce, ok := it.(*ch.ColumnExpr); ok {
				it = ce.Expr
			}
			switch v := it.(type) {
			case *ch.Ident:
				if err := checkName(v.Name, int(v.Pos())); err != nil {
					return nil, err
				}
				normalizeIdent(v)
			case *ch.StringLiteral:
			default:
				return nil, unsupportedNode(it)
			}
		}
		return m, nil
	case "REPLACE":
		return m, a.exprList(m.Params.Items, sc)
	case "APPLY":
		for _, it := range m.Params.Items.Items {
			if ce, ok := it.(*ch.ColumnExpr); ok {
				it = ce.Expr
			}
			id, ok := it.(*ch.Ident)
			if !ok {
				return nil, unsupportedNode(it)
			}
			if err := checkName(id.Name, int(id.Pos())); err != nil {
				return nil, err
			}
			if why := deniedFunction(id.Name); why != "" {
				return nil, badRequest(CodeFunction, int(id.Pos()), "", "function %s is not allowed (%s)", id.Name, why)
			}
			normalizeIdent(id)
		}
		return m, nil
	}
	return nil, unsupportedNode(m)
}

func starOutputs(srcs []*source) []output {
	var outs []output
	for _, src := range srcs {
		if src.hasDoc() {
			outs = append(outs, output{name: docColumn, doc: true, paths: src.paths})
			continue
		}
		for _, c := range sortedKeys(src.columns) {
			outs = append(outs, output{name: c})
		}
	}
	return outs
}

// collectAliases registers the expression aliases of a level before its
// expressions are walked: the engine lets an alias be used anywhere on its
// level, even before it is defined.
func (a *analyzer) collectAliases(q *ch.SelectQuery, fw *fromWork, sc *scope) *Error {
	var bad *Error
	visit := func(root ch.Expr) {
		if root == nil || bad != nil {
			return
		}
		ch.Walk(root, func(node ch.Expr) bool {
			if bad != nil {
				return false
			}
			switch n := node.(type) {
			case *ch.SubQuery, *ch.SelectQuery:
				return false // another level
			case *ch.SelectItem:
				if n.Alias != nil {
					bad = a.addAlias(n.Alias, sc)
				}
			case *ch.ColumnExpr:
				if n.Alias != nil {
					bad = a.addAlias(n.Alias, sc)
				}
			}
			return bad == nil
		})
	}
	for _, it := range q.SelectItems {
		visit(it)
	}
	for _, l := range fw.arrayJoins {
		visit(l)
	}
	for _, c := range fw.constraints {
		visit(c)
	}
	if q.Prewhere != nil {
		visit(q.Prewhere.Expr)
	}
	if q.Where != nil {
		visit(q.Where.Expr)
	}
	if q.GroupBy != nil {
		visit(q.GroupBy.Expr)
	}
	if q.Having != nil {
		visit(q.Having.Expr)
	}
	return bad
}

func (a *analyzer) addAlias(id *ch.Ident, sc *scope) *Error {
	if err := a.checkAlias(id, sc); err != nil {
		return err
	}
	sc.aliases[id.Name] = true
	return nil
}

func parenthesize(e ch.Expr) ch.Expr {
	return &ch.ParamExprList{Items: &ch.ColumnExprList{Items: []ch.Expr{e}}}
}
