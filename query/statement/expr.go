package statement

import (
	"fmt"
	"reflect"
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"

	"github.com/svc-data/svc/query/sqlquote"
)

// expr walks an expression, rewrites paths and subqueries, and returns the
// node to put in its place. The walk is closed: a node type it does not know
// is refused, so nothing the analysis has not looked at reaches the engine.
func (a *analyzer) expr(e ch.Expr, sc *scope) (ch.Expr, *Error) {
	if e == nil {
		return nil, nil
	}
	if err := a.enter(int(e.Pos())); err != nil {
		return nil, err
	}
	defer a.leave()
	switch n := e.(type) {
	case *ch.Ident:
		if n.Name == "*" && n.QuoteType == 0 {
			a.starUse(sc, int(n.Pos()))
			return n, nil
		}
		if isLiteralWord(n) {
			return n, nil
		}
		return a.resolve([]*ch.Ident{n}, sc)
	case *ch.Path:
		return a.resolve(n.Fields, sc)
	case *ch.NestedIdentifier:
		if n.DotIdent != nil && n.DotIdent.Name == "*" {
			return a.qualifiedStar(n, sc)
		}
		segs := []*ch.Ident{n.Ident}
		if n.DotIdent != nil {
			segs = append(segs, n.DotIdent)
		}
		return a.resolve(segs, sc)
	case *ch.NumberLiteral, *ch.StringLiteral, *ch.BoolLiteral, *ch.NullLiteral:
		return n, nil
	case *ch.ColumnExpr:
		if n.Alias != nil {
			if err := a.checkAlias(n.Alias, sc); err != nil {
				return nil, err
			}
			defer sc.mask(n.Alias.Name)()
		}
		var err *Error
		n.Expr, err = a.expr(n.Expr, sc)
		return n, err
	case *ch.ColumnExprList:
		return n, a.exprList(n, sc)
	case *ch.ParamExprList:
		if err := a.exprList(n.Items, sc); err != nil {
			return nil, err
		}
		if n.ColumnArgList != nil {
			if err := a.exprs(n.ColumnArgList.Items, sc); err != nil {
				return nil, err
			}
		}
		return n, nil
	case *ch.ColumnArgList:
		return n, a.exprs(n.Items, sc)
	case *ch.FunctionExpr:
		return a.function(n, sc)
	case *ch.WindowFunctionExpr:
		f, err := a.function(n.Function, sc)
		if err != nil {
			return nil, err
		}
		fe, ok := f.(*ch.FunctionExpr)
		if !ok {
			return nil, badRequest(CodeUnsupportedSyntax, int(n.Pos()), "", "unsupported window function")
		}
		n.Function = fe
		switch over := n.OverExpr.(type) {
		case *ch.Ident:
			if err := checkName(over.Name, int(over.Pos())); err != nil {
				return nil, err
			}
			normalizeIdent(over)
		case *ch.WindowExpr:
			if err := a.windowExpr(over, sc); err != nil {
				return nil, err
			}
		default:
			return nil, unsupportedNode(n.OverExpr)
		}
		return n, nil
	case *ch.BinaryOperation:
		return a.binary(n, sc)
	case *ch.UnaryExpr:
		var err *Error
		n.Expr, err = a.expr(n.Expr, sc)
		return n, err
	case *ch.NotExpr:
		var err *Error
		n.Expr, err = a.expr(n.Expr, sc)
		return n, err
	case *ch.NegateExpr:
		var err *Error
		n.Expr, err = a.expr(n.Expr, sc)
		return n, err
	case *ch.GlobalInOperation:
		var err *Error
		n.Expr, err = a.expr(n.Expr, sc)
		return n, err
	case *ch.TernaryOperation:
		var err *Error
		if n.Condition, err = a.expr(n.Condition, sc); err != nil {
			return nil, err
		}
		if n.TrueExpr, err = a.expr(n.TrueExpr, sc); err != nil {
			return nil, err
		}
		n.FalseExpr, err = a.expr(n.FalseExpr, sc)
		return n, err
	case *ch.IsNullExpr:
		var err *Error
		n.Expr, err = a.expr(n.Expr, sc)
		return n, err
	case *ch.IsNotNullExpr:
		var err *Error
		n.Expr, err = a.expr(n.Expr, sc)
		return n, err
	case *ch.BetweenClause:
		var err *Error
		if n.Expr, err = a.expr(n.Expr, sc); err != nil {
			return nil, err
		}
		if n.Between, err = a.expr(n.Between, sc); err != nil {
			return nil, err
		}
		n.And, err = a.expr(n.And, sc)
		return n, err
	case *ch.CaseExpr:
		var err *Error
		if n.Expr, err = a.expr(n.Expr, sc); err != nil {
			return nil, err
		}
		for _, w := range n.Whens {
			if w.When, err = a.expr(w.When, sc); err != nil {
				return nil, err
			}
			if w.Then, err = a.expr(w.Then, sc); err != nil {
				return nil, err
			}
			if w.Else, err = a.expr(w.Else, sc); err != nil {
				return nil, err
			}
		}
		n.Else, err = a.expr(n.Else, sc)
		return n, err
	case *ch.CastExpr:
		var err *Error
		if n.Expr, err = a.expr(n.Expr, sc); err != nil {
			return nil, err
		}
		a.untyped(n.Expr)
		if n.Separator == "," {
			n.AsType, err = a.expr(n.AsType, sc)
			return n, err
		}
		return n, checkType(n.AsType)
	case *ch.IntervalExpr:
		var err *Error
		if n.Expr, err = a.expr(n.Expr, sc); err != nil {
			return nil, err
		}
		return n, a.unitIdent(n.Unit)
	case *ch.ExtractExpr:
		for i, p := range n.Parameters {
			if f, ok := p.(*ch.IntervalFrom); ok {
				if err := a.unitIdent(f.Interval); err != nil {
					return nil, err
				}
				var err *Error
				if f.FromExpr, err = a.expr(f.FromExpr, sc); err != nil {
					return nil, err
				}
				continue
			}
			var err *Error
			if n.Parameters[i], err = a.expr(p, sc); err != nil {
				return nil, err
			}
		}
		return n, nil
	case *ch.IndexOperation:
		var err *Error
		if n.Object, err = a.expr(n.Object, sc); err != nil {
			return nil, err
		}
		if n.Operation == ch.TokenKindDot {
			if _, ok := n.Index.(*ch.NumberLiteral); !ok {
				return nil, unsupportedNode(n.Index)
			}
			// x.1 is tupleElement(x, 1); written out, since a rewritten x
			// (doc.x) followed by .1 would not read back the same.
			return &ch.FunctionExpr{
				Name:   &ch.Ident{Name: "tupleElement", QuoteType: ch.Unquoted},
				Params: &ch.ParamExprList{Items: &ch.ColumnExprList{Items: []ch.Expr{n.Object, n.Index}}},
			}, nil
		}
		n.Index, err = a.expr(n.Index, sc)
		return n, err
	case *ch.ObjectParams:
		var err *Error
		if n.Object, err = a.expr(n.Object, sc); err != nil {
			return nil, err
		}
		if n.Params == nil {
			return n, nil
		}
		return n, a.exprList(n.Params.Items, sc)
	case *ch.ArrayParamList:
		return n, a.exprList(n.Items, sc)
	case *ch.MapLiteral:
		// The engine reads { as the start of a query parameter.
		return nil, badRequest(CodeUnsupportedSyntax, int(n.Pos()), "write map('key', value, ...)", "{...} map literals are not supported")
	case *ch.SubQuery:
		return a.subquery(n.Select, sc)
	case *ch.SelectQuery:
		return a.subquery(n, sc)
	case *ch.QueryParam, *ch.TypedPlaceholder, *ch.PlaceHolder:
		return nil, badRequest(CodeUnsupportedSyntax, int(e.Pos()), "write the value into the statement",
			"query parameters are not supported")
	}
	return nil, unsupportedNode(e)
}

func unsupportedNode(e ch.Expr) *Error {
	name := strings.TrimPrefix(fmt.Sprintf("%T", e), "*parser.")
	pos := -1
	if e != nil && !reflect.ValueOf(e).IsNil() {
		pos = int(e.Pos())
	}
	return badRequest(CodeUnsupportedSyntax, pos, "", "unsupported syntax (%s)", name)
}

func (a *analyzer) exprs(items []ch.Expr, sc *scope) *Error {
	for i, it := range items {
		var err *Error
		if items[i], err = a.expr(it, sc); err != nil {
			return err
		}
	}
	return nil
}

func (a *analyzer) exprList(l *ch.ColumnExprList, sc *scope) *Error {
	if l == nil {
		return nil
	}
	return a.exprs(l.Items, sc)
}

func (a *analyzer) subquery(q *ch.SelectQuery, sc *scope) (ch.Expr, *Error) {
	if q == nil {
		return nil, badRequest(CodeUnsupportedSyntax, -1, "", "empty subquery")
	}
	node, _, err := a.query(q, sc, sc.ctes, sc.with)
	if err != nil {
		return nil, err
	}
	return &subqueryNode{sel: node}, nil
}

func (a *analyzer) unitIdent(id *ch.Ident) *Error {
	if id == nil {
		return nil
	}
	if err := checkName(id.Name, int(id.Pos())); err != nil {
		return err
	}
	normalizeIdent(id)
	return nil
}

// resolve decides what a (possibly dotted) identifier names and returns its
// rewritten form; see scope.go for the rules.
func (a *analyzer) resolve(segs []*ch.Ident, sc *scope) (ch.Expr, *Error) {
	for _, s := range segs {
		if err := checkName(s.Name, int(s.Pos())); err != nil {
			return nil, err
		}
		if s.Name == "*" {
			return nil, badRequest(CodeUnsupportedSyntax, int(s.Pos()), "", "unexpected *")
		}
	}
	first := segs[0].Name
	if first != docColumn {
		if es, ok := sc.lambdaParam(first); ok {
			if es != nil && len(segs) > 1 {
				return a.elemPath(es, segs[:1], segs[1:]), nil
			}
			return &keptRef{segs: segs}, nil
		}
		if len(segs) > 1 {
			joined := joinNames(segs)
			if sc.aliases[joined] && sc.masked[joined] == 0 {
				return &keptRef{segs: []*ch.Ident{{Name: joined, QuoteType: ch.BackTicks}}}, nil
			}
		}
		if sc.isAlias(first) {
			if es := sc.elems[first]; es != nil && len(segs) > 1 {
				return a.elemPath(es, segs[:1], segs[1:]), nil
			}
			return &keptRef{segs: segs}, nil
		}
	}
	// A qualifier names a source on this level or an enclosing one.
	if len(segs) >= 2 {
		for s := sc; s != nil; s = s.parent {
			src, n := s.sourceNamed(segs)
			if src == nil || len(segs) <= n {
				continue
			}
			rest := segs[n:]
			if src.hasDoc() && !(src.docCarrier && rest[0].Name != docColumn && src.columns[rest[0].Name]) {
				return a.docPath(src, rest, s != sc || len(s.sources) > 1)
			}
			if es := src.elems[rest[0].Name]; es != nil && len(rest) > 1 {
				return a.elemPath(es, column(src, rest[:1], true).segs, rest[1:]), nil
			}
			return column(src, rest, true), nil
		}
	}
	for s := sc; s != nil; s = s.parent {
		if s != sc && first != docColumn && s.isAlias(first) {
			// The engine lets a subquery use the aliases of the levels
			// around it.
			if es := s.elems[first]; es != nil && len(segs) > 1 {
				return a.elemPath(es, segs[:1], segs[1:]), nil
			}
			return &keptRef{segs: segs}, nil
		}
		var known []*source
		if first != docColumn {
			known = s.knownColumn(first)
			if len(known) == 1 {
				if es := known[0].elems[first]; es != nil && len(segs) > 1 {
					return a.elemPath(es, column(known[0], segs[:1], s != sc).segs, segs[1:]), nil
				}
				return column(known[0], segs, s != sc), nil
			}
		}
		docs := s.docSources()
		switch {
		case len(docs) == 1:
			return a.docPath(docs[0], segs, s != sc || len(s.sources) > 1)
		case len(docs) > 1:
			return nil, badRequest(CodeAmbiguous, int(segs[0].Pos()),
				fmt.Sprintf("qualify it with a table name or alias, e.g. %s.%s", docs[0].name, joinNames(segs)),
				"%s could be a path in more than one table", joinNames(segs))
		}
		if first != docColumn && (len(known) > 1 || s.hasUnknownColumns()) {
			return &keptRef{segs: segs}, nil
		}
	}
	if len(segs) > 1 {
		// a.b where a names nothing in reach: the engine would fail to
		// resolve it, so say so in the caller's terms.
		return nil, notFound(CodeUnknownTable, int(segs[0].Pos()), "", "no table, alias or column named %s in this query", first)
	}
	return &keptRef{segs: segs}, nil
}

// docPath renders segs as a path in the document of src (one of our tables
// or a document-carrying subquery) and records the column used.
func (a *analyzer) docPath(src *source, segs []*ch.Ident, qualify bool) (ch.Expr, *Error) {
	if src.kind == srcTable {
		a.useColumn(src.read, segs[0].Name, int(segs[0].Pos()))
	}
	a.pathRewrites++
	q := ""
	if qualify {
		if src.name == "" {
			return nil, badRequest(CodeAmbiguous, int(segs[0].Pos()), "give the subquery an alias",
				"%s needs a qualifier, but its subquery has no alias", joinNames(segs))
		}
		q = src.name
	}
	ref := &pathRef{qualifier: q, segs: segs}
	a.typePath(src, ref)
	return ref, nil
}

// column renders a column of a source that is not a document.
func column(src *source, segs []*ch.Ident, qualify bool) *keptRef {
	out := make([]*ch.Ident, 0, len(segs)+1)
	if qualify && src.name != "" {
		out = append(out, &ch.Ident{Name: src.name, QuoteType: ch.Unquoted})
	}
	return &keptRef{segs: append(out, segs...)}
}

func joinNames(segs []*ch.Ident) string {
	names := make([]string, len(segs))
	for i, s := range segs {
		names[i] = s.Name
	}
	return strings.Join(names, ".")
}

// starUse records that * (in a select list or a function argument) takes
// the whole documents of the level's tables.
func (a *analyzer) starUse(sc *scope, pos int) {
	for _, src := range sc.sources {
		if src.kind == srcTable {
			a.useWhole(src.read, pos)
		}
	}
}

func (a *analyzer) qualifiedStar(n *ch.NestedIdentifier, sc *scope) (ch.Expr, *Error) {
	if err := checkName(n.Ident.Name, int(n.Pos())); err != nil {
		return nil, err
	}
	src, _ := sc.sourceNamed([]*ch.Ident{n.Ident, n.DotIdent})
	if src == nil {
		return nil, notFound(CodeUnknownTable, int(n.Pos()), "", "no table or alias %s in this query", n.Ident.Name)
	}
	if src.kind == srcTable {
		a.useWhole(src.read, int(n.Pos()))
	}
	return &rawSQL{text: quoteName(src.name, isKeyword(src.name)) + ".*"}, nil
}

// checkAlias enforces the invariants of scope.go on a new alias, lambda
// parameter or WITH name.
func (a *analyzer) checkAlias(id *ch.Ident, sc *scope) *Error {
	if err := checkName(id.Name, int(id.Pos())); err != nil {
		return err
	}
	if id.Name == docColumn {
		return badRequest(CodeReservedName, int(id.Pos()), "choose another name",
			"%q is reserved: it is the document column of every table", docColumn)
	}
	if sc.sourceNameTaken(id.Name) {
		return badRequest(CodeReservedName, int(id.Pos()), "choose a name that is not a table name or table alias of the query",
			"alias %q is also the name of a table in the query", id.Name)
	}
	normalizeIdent(id)
	return nil
}

func (a *analyzer) binary(n *ch.BinaryOperation, sc *scope) (ch.Expr, *Error) {
	var err *Error
	switch n.Operation {
	case ch.TokenKindArrow:
		return a.lambda(n, sc)
	case ch.TokenKindDash: // x::Type
		if n.LeftExpr, err = a.expr(n.LeftExpr, sc); err != nil {
			return nil, err
		}
		a.untyped(n.LeftExpr)
		return n, checkType(n.RightExpr)
	}
	if n.LeftExpr, err = a.expr(n.LeftExpr, sc); err != nil {
		return nil, err
	}
	if op := strings.ToUpper(string(n.Operation)); op == "IN" || strings.HasSuffix(op, " IN") {
		n.RightExpr, err = a.inOperand(n.RightExpr, sc)
		return n, err
	}
	n.RightExpr, err = a.expr(n.RightExpr, sc)
	return n, err
}

// inOperand walks the right side of IN. The engine reads a name there as a
// table when it can (x IN db.t, x IN (t)), so a name must become a document
// path or an inlined CTE; anything else is refused.
func (a *analyzer) inOperand(e ch.Expr, sc *scope) (ch.Expr, *Error) {
	if id, ok := e.(*ch.Ident); ok {
		if c := sc.ctes[id.Name]; c != nil {
			return &rawSQL{text: "(" + c.text + ")"}, nil
		}
	}
	out, err := a.expr(e, sc)
	if err != nil {
		return nil, err
	}
	inner := out
	for {
		switch n := inner.(type) {
		case *ch.ParamExprList:
			if n.Items != nil && len(n.Items.Items) == 1 && n.ColumnArgList == nil {
				inner = n.Items.Items[0]
				continue
			}
		case *ch.ColumnExpr:
			if n.Alias == nil {
				inner = n.Expr
				continue
			}
		case *keptRef:
			return nil, badRequest(CodeUnsupportedSyntax, int(e.Pos()), "write IN (SELECT ...) or IN (value, ...)",
				"IN with a name is not supported: the engine could read it as a table")
		}
		return out, nil
	}
}

// lambda walks a lambda; binds[i], when set, is the element schema of the array its
// i-th parameter takes the elements of.
func (a *analyzer) lambda(n *ch.BinaryOperation, sc *scope, binds ...*elemSchema) (ch.Expr, *Error) {
	var params []*ch.Ident
	switch l := n.LeftExpr.(type) {
	case *ch.Ident:
		params = append(params, l)
	case *ch.ParamExprList:
		if l.Items == nil || l.ColumnArgList != nil {
			return nil, unsupportedNode(l)
		}
		for _, it := range l.Items.Items {
			ce, ok := it.(*ch.ColumnExpr)
			var id *ch.Ident
			if ok && ce.Alias == nil {
				id, ok = ce.Expr.(*ch.Ident)
			} else if !ok {
				id, ok = it.(*ch.Ident)
			}
			if !ok || id == nil {
				return nil, badRequest(CodeUnsupportedSyntax, int(it.Pos()), "", "lambda parameters must be names")
			}
			params = append(params, id)
		}
	default:
		return nil, badRequest(CodeUnsupportedSyntax, int(n.Pos()), "", "lambda parameters must be names")
	}
	frame := map[string]*elemSchema{}
	for i, p := range params {
		if err := a.checkAlias(p, sc); err != nil {
			return nil, err
		}
		frame[p.Name] = nil
		if i < len(binds) {
			frame[p.Name] = binds[i]
		}
	}
	sc.lambdas = append(sc.lambdas, frame)
	body, err := a.expr(n.RightExpr, sc)
	sc.lambdas = sc.lambdas[:len(sc.lambdas)-1]
	if err != nil {
		return nil, err
	}
	n.RightExpr = body
	return n, nil
}

func (a *analyzer) function(f *ch.FunctionExpr, sc *scope) (ch.Expr, *Error) {
	if f.Name == nil {
		return nil, unsupportedNode(f)
	}
	name := f.Name.Name
	pos := int(f.Pos())
	if err := checkName(name, pos); err != nil {
		return nil, err
	}
	if why := deniedFunction(name); why != "" {
		return nil, badRequest(CodeFunction, pos, "", "function %s is not allowed (%s)", name, why)
	}
	lname := strings.ToLower(name)
	var items []ch.Expr
	if f.Params != nil && f.Params.Items != nil {
		items = f.Params.Items.Items
	}
	if isCurrentDatabaseFunction(name) && len(items) == 0 && (f.Params == nil || f.Params.ColumnArgList == nil) {
		a.pathRewrites++ // name the column after what the user wrote
		return &rawSQL{text: sqlquote.String(a.env.Database)}, nil
	}
	switch lname {
	case "columns":
		for _, src := range sc.sources {
			if src.hasDoc() {
				return nil, badRequest(CodeUnsupportedSyntax, pos, "select the paths you need by name",
					"COLUMNS() matches engine columns; the paths of a document are not columns")
			}
		}
	}
	normalizeIdent(f.Name)
	if f.Params == nil {
		return f, nil
	}
	if lam := lambdaArg(items); lam != nil && strings.HasPrefix(lname, "array") && lname != "arrayfold" && f.Params.ColumnArgList == nil {
		return a.arrayLambda(f, lname, lam, items, sc)
	}
	for i, it := range items {
		if i == 1 && inFunctions[lname] {
			var err *Error
			if items[i], err = a.inOperand(it, sc); err != nil {
				return nil, err
			}
			continue
		}
		if i == 0 && dateUnitFunctions[lname] {
			if id := unitArg(it); id != nil {
				if err := a.unitIdent(id); err != nil {
					return nil, err
				}
				continue
			}
		}
		if isStar(it) {
			if lname != "count" {
				a.starUse(sc, int(it.Pos()))
			}
			continue
		}
		var err *Error
		if items[i], err = a.expr(it, sc); err != nil {
			return nil, err
		}
	}
	if lname == "arrayjoin" && len(items) == 1 {
		a.objectArray(items[0]) // arrayJoin(items): the elements of an array of objects
	}
	if out := a.elementAggregate(f, lname, items); out != nil && f.Params.ColumnArgList == nil {
		return out, nil
	}
	if f.Params.ColumnArgList != nil {
		for i, it := range f.Params.ColumnArgList.Items {
			if isStar(it) {
				a.starUse(sc, int(it.Pos()))
				continue
			}
			var err *Error
			if f.Params.ColumnArgList.Items[i], err = a.expr(it, sc); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// lambdaArg returns the lambda a higher-order function takes first, nil if none.
func lambdaArg(items []ch.Expr) *ch.BinaryOperation {
	if len(items) < 2 {
		return nil
	}
	e := items[0]
	if ce, ok := e.(*ch.ColumnExpr); ok && ce.Alias == nil {
		e = ce.Expr
	}
	if b, ok := e.(*ch.BinaryOperation); ok && b.Operation == ch.TokenKindArrow {
		return b
	}
	return nil
}

// arrayAggregates are the array functions that aggregate what their lambda returns,
// with the aggregate function that does the same over rows.
var arrayAggregates = map[string]string{"arraysum": "sum", "arrayavg": "avg", "arraymin": "min", "arraymax": "max"}

// arrayLambda walks an array function with a lambda (arrayMap(x -> x.qty, items)): the
// arrays first, then the lambda, whose parameters bound to arrays of objects type their
// paths by the elements' schema (typing.go). The engine's array aggregates refuse the
// Nullable values typed element paths read as, so over arrays of objects they are
// written as the aggregate of the mapped values, which skips the elements without one:
// arraySum(x -> x.qty, items) is ifNull(arrayReduce('sum', arrayMap(x -> x.qty, items)), 0),
// and so is arraySum(arrayMap(x -> x.qty, items)) (elementAggregate).
func (a *analyzer) arrayLambda(f *ch.FunctionExpr, lname string, lam *ch.BinaryOperation, items []ch.Expr, sc *scope) (ch.Expr, *Error) {
	binds := make([]*elemSchema, len(items)-1)
	bound := false
	for i := 1; i < len(items); i++ {
		var err *Error
		if items[i], err = a.expr(items[i], sc); err != nil {
			return nil, err
		}
		binds[i-1] = a.objectArray(items[i])
		bound = bound || binds[i-1] != nil
	}
	l, err := a.lambda(lam, sc, binds...)
	if err != nil {
		return nil, err
	}
	items[0] = l
	if !bound {
		return f, nil
	}
	if agg := arrayAggregates[lname]; agg != "" {
		return aggregateOver(agg, funcCall("arrayMap", items...)), nil
	}
	if lname == "arraymap" {
		if a.elemMaps == nil {
			a.elemMaps = map[*ch.FunctionExpr]bool{}
		}
		a.elemMaps[f] = true
	}
	return f, nil
}

// elementAggregate rewrites arraySum(arrayMap(x -> x.qty, items)) as arraySum(x ->
// x.qty, items) is (arrayLambda); nil when f is not such a call.
func (a *analyzer) elementAggregate(f *ch.FunctionExpr, lname string, items []ch.Expr) ch.Expr {
	agg := arrayAggregates[lname]
	if agg == "" || len(items) != 1 {
		return nil
	}
	arg := items[0]
	if ce, ok := arg.(*ch.ColumnExpr); ok && ce.Alias == nil {
		arg = ce.Expr
	}
	if m, ok := arg.(*ch.FunctionExpr); ok && a.elemMaps[m] {
		return aggregateOver(agg, m)
	}
	return nil
}

// aggregateOver is the aggregate agg of the values of an array, skipping NULLs as the
// aggregate over rows does; a sum of none is 0, as arraySum's.
func aggregateOver(agg string, arr ch.Expr) ch.Expr {
	out := funcCall("arrayReduce", &rawSQL{text: sqlquote.String(agg)}, arr)
	if agg == "sum" {
		out = funcCall("ifNull", out, &rawSQL{text: "0"})
	}
	return out
}

// funcCall is a call of name with args.
func funcCall(name string, args ...ch.Expr) *ch.FunctionExpr {
	return &ch.FunctionExpr{Name: &ch.Ident{Name: name, QuoteType: ch.Unquoted},
		Params: &ch.ParamExprList{Items: &ch.ColumnExprList{Items: args}}}
}

// unitArg returns the identifier of an unquoted interval unit argument.
func unitArg(e ch.Expr) *ch.Ident {
	if ce, ok := e.(*ch.ColumnExpr); ok && ce.Alias == nil {
		e = ce.Expr
	}
	if id, ok := e.(*ch.Ident); ok && id.QuoteType == ch.Unquoted && intervalUnits[strings.ToLower(id.Name)] {
		return id
	}
	return nil
}

func isStar(e ch.Expr) bool {
	if ce, ok := e.(*ch.ColumnExpr); ok && ce.Alias == nil {
		e = ce.Expr
	}
	id, ok := e.(*ch.Ident)
	return ok && id.Name == "*" && id.QuoteType == 0
}

func (a *analyzer) windowExpr(w *ch.WindowExpr, sc *scope) *Error {
	if w.WindowName != nil {
		if err := checkName(w.WindowName.Name, int(w.WindowName.Pos())); err != nil {
			return err
		}
		normalizeIdent(w.WindowName)
	}
	if w.PartitionBy != nil {
		var err *Error
		if w.PartitionBy.Expr, err = a.expr(w.PartitionBy.Expr, sc); err != nil {
			return err
		}
	}
	if w.OrderBy != nil {
		if err := a.orderBy(w.OrderBy, sc); err != nil {
			return err
		}
	}
	if w.Frame != nil {
		return a.frameBound(w.Frame.Extend, sc)
	}
	return nil
}

func (a *analyzer) frameBound(e ch.Expr, sc *scope) *Error {
	switch n := e.(type) {
	case nil, *ch.WindowFrameCurrentRow, *ch.WindowFrameUnbounded, *ch.WindowFrameNumber:
		return nil
	case *ch.BetweenClause:
		if err := a.frameBound(n.Between, sc); err != nil {
			return err
		}
		return a.frameBound(n.And, sc)
	case *ch.WindowFrameExtendExpr:
		var err *Error
		n.Expr, err = a.expr(n.Expr, sc)
		return err
	}
	return unsupportedNode(e)
}

func (a *analyzer) orderBy(o *ch.OrderByClause, sc *scope) *Error {
	for _, it := range o.Items {
		oe, ok := it.(*ch.OrderExpr)
		if !ok {
			return unsupportedNode(it)
		}
		if oe.Alias != nil {
			return badRequest(CodeUnsupportedSyntax, int(oe.Alias.Pos()), "", "aliases are not allowed in ORDER BY")
		}
		var err *Error
		if oe.Expr, err = a.expr(oe.Expr, sc); err != nil {
			return err
		}
		if f := oe.Fill; f != nil {
			if f.From, err = a.expr(f.From, sc); err != nil {
				return err
			}
			if f.To, err = a.expr(f.To, sc); err != nil {
				return err
			}
			if f.Step, err = a.expr(f.Step, sc); err != nil {
				return err
			}
			if f.Staleness, err = a.expr(f.Staleness, sc); err != nil {
				return err
			}
		}
	}
	if ip := o.Interpolate; ip != nil {
		for _, it := range ip.Items {
			if it.Column == nil || !sc.aliases[it.Column.Name] {
				return badRequest(CodeUnsupportedSyntax, int(ip.Pos()), "INTERPOLATE a column by its alias: SELECT ... AS v ... INTERPOLATE (v AS v + 1)",
					"INTERPOLATE names a column that is not an alias of the query")
			}
			normalizeIdent(it.Column)
			var err *Error
			if it.Expr, err = a.expr(it.Expr, sc); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkType accepts a data type (CAST(x AS T), x::T): names, parameters and
// literals only, with checked identifiers.
func checkType(t ch.Expr) *Error {
	var bad *Error
	ch.Walk(t, func(node ch.Expr) bool {
		if bad != nil {
			return false
		}
		switch n := node.(type) {
		case *ch.Ident:
			if err := checkName(n.Name, int(n.Pos())); err != nil {
				bad = err
				return false
			}
			normalizeIdent(n)
		case *ch.ColumnExpr:
			if n.Alias != nil {
				bad = unsupportedNode(n)
			}
		case *ch.ScalarType, *ch.TypeWithParams, *ch.ComplexType, *ch.NestedType, *ch.JSONType, *ch.PropertyType,
			*ch.EnumType, *ch.ColumnTypeExpr, *ch.NumberLiteral, *ch.StringLiteral, *ch.FunctionExpr,
			*ch.ParamExprList, *ch.ColumnExprList, *ch.ColumnArgList, *ch.ColumnDef, *ch.NestedIdentifier:
		default:
			bad = unsupportedNode(node)
		}
		return bad == nil
	})
	return bad
}
