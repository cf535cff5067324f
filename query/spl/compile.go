package spl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svc-data/svc/query/sqlquote"
)

// ResultKind says whether a search returns events or a statistics table.
type ResultKind string

const (
	ResultEvents     ResultKind = "events"
	ResultStatistics ResultKind = "statistics"
)

// Window is the time window [Earliest, Latest) of a search.
type Window struct {
	Earliest time.Time
	// HasEarliest is false when the request gave no earliest: the search
	// reads all time, and timelines and timecharts start at the first
	// matching event.
	HasEarliest bool
	Latest      time.Time
}

// Resolver answers the queries the compiler needs before it can generate
// the rest of the plan: the ranked series of a chart split, the earliest
// event of an unbounded timechart, the document paths behind `table *`.
// The executor implements it on the engine.
type Resolver interface {
	// RankSeries runs a ranking query; each row is (null UInt8, value
	// Nullable(String), score Float64), non-null values in rank order.
	RankSeries(ctx context.Context, sql string) ([]RankedSeries, error)
	// EarliestTime runs a query returning one nullable DateTime64 value.
	EarliestTime(ctx context.Context, sql string) (t time.Time, ok bool, err error)
	// Paths runs a query returning one String column of document paths.
	Paths(ctx context.Context, sql string) ([]string, error)
	// NewestTimes runs a query returning one row: a count (UInt64) and the oldest time
	// (DateTime64) of the newest matching events it read.
	NewestTimes(ctx context.Context, sql string) (n uint64, oldest time.Time, err error)
}

// RankedSeries is one row of a ranking query.
type RankedSeries struct {
	Null  bool // the NULL series: rows without a split value
	Value string
	Score float64
}

// CompileOptions are the inputs of Compile besides the search.
type CompileOptions struct {
	// Table is the fully quoted engine table to read, e.g.
	// "`o_0123__default`.`logsearch_events`". It is trusted text.
	Table    string
	Window   Window
	Now      time.Time
	Resolver Resolver
	// Paths is the table's path schema (docs/typing.md); numeric paths read typed.
	Paths map[string][]string
}

// Plan is a compiled search.
type Plan struct {
	Kind ResultKind
	// SQL returns the result rows, at most MaxOutputRows+1 of them.
	SQL string
	// StageCountSQL returns one row with one column per distinct relation
	// of the measured stages (stages that only rename or reorder share
	// their input's): its rows, counted up to MaxOutputRows+1. The
	// executor leaves out the last stage when the result itself proves its
	// count.
	StageCountSQL string
	Stages        []StagePlan
	// Resolved lists the queries run through the Resolver while compiling.
	Resolved []string

	columns []outColumn
	// mainWith, mainSelect and mainFrom are SQL's parts (SQL = mainWith +
	// "SELECT " + mainSelect + mainFrom), so that the executor can add the
	// stage counts to the result statement as scalar columns.
	mainWith, mainSelect, mainFrom string
	// timeCol is the result column holding the final relation's _time
	// (the timeline's time), or -1.
	timeCol int
	// goPivot builds the result of a split chart ending the search from its
	// ranking statement's rows, instead of running SQL; nil otherwise.
	goPivot *goPivot
	// inputCount, when set, is a column of the final relation whose sum over the
	// result's rows is the row count of relation inputCount.rel: the aggregation
	// ending the search counts its input, so that stage needs no count of its own.
	inputCount *inputCount
	final      state
	ctes       []cte
	window     Window
}

// StagePlan describes one pipeline segment.
type StagePlan struct {
	Command    string
	Expression string
	// Measured is true when StageCountSQL counts this stage's rows.
	Measured bool
	rel      string
}

// encoding says how the executor turns a result value into JSON.
type encoding uint8

const (
	encNative encoding = iota // as returned by the engine
	encJSON                   // a String holding JSON (Dynamic values)
	encTime                   // DateTime64, rendered RFC 3339 UTC
	encDoc                    // toJSONString(doc): flattened into fields
)

type outColumn struct {
	name string
	typ  string // declared type; "" means the engine's
	enc  encoding
	// sparse columns are document fields: left out of the result when no
	// returned row has a value, as fields absent from every event are.
	sparse bool
}

// cte is one relation of the WITH chain; the base relation (reading the
// table) is rendered per statement from its parts.
type cte struct {
	name, sql string
	base      *baseRel
}

// baseRel reads the table: the window and the base search, projecting the
// document paths the plan reads, and the doc column itself for statements
// that need whole documents.
type baseRel struct {
	table, where string
	paths        *pathSet
}

func (b *baseRel) render(withDoc bool) string {
	var cols []string
	if withDoc {
		cols = append(cols, "doc")
	}
	for _, p := range b.paths.names {
		ref := docRef(p)
		if typed, ok := b.paths.numeric[p]; ok {
			ref = typed
		}
		if key, ok := mvKey(p); ok {
			ref = b.paths.multi[key].sql
		}
		cols = append(cols, ref+" AS "+pathCol(p))
	}
	if len(cols) == 0 {
		cols = append(cols, "1 AS `@`")
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + b.table + " WHERE " + b.where
}

// state is the relation holding a stage's rows, its schema and order.
type state struct {
	rel         string
	sch         *schema
	order       []orderTerm
	transformed bool
}

type compiler struct {
	ctx      context.Context
	src      string
	opts     CompileOptions
	errs     errorList
	ctes     []cte
	nrel     int
	ncol     int
	cur      state
	resolved []string
	fatal    error
	// last: the command being compiled ends the search.
	last bool
	// ints are the integer reads of the table's paths (numericReads).
	ints map[string]bool
	// goPivot is the split chart ending the search whose rows its ranking
	// statement already returned.
	goPivot      *goPivot
	pendingPivot *goPivot
	inputCount   *inputCount
	stageRels    []string // the relation of each compiled stage
	// mainParts are the result statement's parts (see Plan.mainWith).
	mainParts struct {
		with, sel, from string
		timeCol         int
	}
}

// Compile compiles a parsed search. User errors are returned as Errors;
// errors of the Resolver are returned as they are; a panic in the compiler
// is returned as an error wrapping ErrInternal.
func Compile(ctx context.Context, p *Pipeline, opts CompileOptions) (plan *Plan, err error) {
	defer func() {
		if r := recover(); r != nil {
			plan, err = nil, fmt.Errorf("%w: compile: %v", ErrInternal, r)
		}
	}()
	if opts.Table == "" {
		return nil, errors.New("spl: compile: no table")
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.Window.Latest.IsZero() {
		opts.Window.Latest = opts.Now
	}
	if len(p.Commands) == 0 {
		p = &Pipeline{Commands: []Command{&SearchCommand{}}, src: p.src}
	}
	c := &compiler{ctx: ctx, src: p.src, opts: opts, errs: errorList{src: p.src}}
	var stages []StagePlan
	for i, cmd := range p.Commands {
		c.last = i == len(p.Commands)-1
		c.command(i, cmd)
		if c.fatal != nil {
			return nil, c.fatal
		}
		stages = append(stages, StagePlan{Command: cmd.Name(), Expression: c.expression(cmd), rel: c.cur.rel})
		c.stageRels = append(c.stageRels, c.cur.rel)
	}
	if err := c.errs.err(); err != nil {
		return nil, err
	}
	plan = &Plan{Stages: stages, Resolved: c.resolved, final: c.cur, ctes: c.ctes, window: opts.Window}
	plan.Kind = ResultEvents
	if c.cur.transformed {
		plan.Kind = ResultStatistics
	}
	plan.SQL, plan.columns = c.mainQuery()
	if c.goPivot != nil && c.goPivot.rel == c.cur.rel {
		plan.goPivot = c.goPivot
	}
	if ic := c.inputCount; ic != nil && ic.of == c.cur.rel {
		plan.inputCount = ic
	}
	plan.mainWith, plan.mainSelect, plan.mainFrom, plan.timeCol = c.mainParts.with, c.mainParts.sel, c.mainParts.from, c.mainParts.timeCol
	if len(plan.SQL) > MaxQueryBytes {
		return nil, Errors{newError(CodeLimit, "simplify the search", "the generated query is %d bytes; the limit is %d", len(plan.SQL), MaxQueryBytes)}
	}
	plan.StageCountSQL = c.stageCountQuery(plan.Stages)
	return plan, nil
}

// expression is the source text of a command's arguments.
func (c *compiler) expression(cmd Command) string {
	seg, args := cmd.segment()
	if c.src != "" && int(seg.End) <= len(c.src) && args <= seg.End {
		return strings.TrimSpace(c.src[args:seg.End])
	}
	s := cmd.String()
	if _, ok := cmd.(*SearchCommand); ok {
		return strings.TrimSpace(strings.TrimPrefix(s, "search"))
	}
	return strings.TrimSpace(strings.TrimPrefix(s, cmd.Name()))
}

func (c *compiler) newCol() string {
	c.ncol++
	return "c" + strconv.Itoa(c.ncol)
}

// addCTE adds a relation and returns its name.
func (c *compiler) addCTE(sql string) string {
	name := "s" + strconv.Itoa(c.nrel)
	c.nrel++
	c.ctes = append(c.ctes, cte{name: name, sql: sql})
	return name
}

// with renders the WITH clause of every relation up to rel.
func (c *compiler) with(rel string, withDoc bool) string { return withClause(c.ctes, rel, withDoc) }

func withClause(ctes []cte, rel string, withDoc bool) string {
	var b strings.Builder
	for i, t := range ctes {
		if i == 0 {
			b.WriteString("WITH\n")
		} else {
			b.WriteString(",\n")
		}
		sql := t.sql
		if t.base != nil {
			sql = t.base.render(withDoc)
		}
		b.WriteString("  " + t.name + " AS (" + sql + ")")
		if t.name == rel {
			break
		}
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

func (c *compiler) setFatal(err error) {
	if c.fatal == nil {
		c.fatal = err
	}
}

// resolver reports whether a resolver is available, recording an error at
// pos when not.
func (c *compiler) resolver(pos Pos, what string) bool {
	if c.opts.Resolver == nil {
		c.errs.add(CodeInvalid, pos, "", "%s needs the engine", what)
		return false
	}
	return true
}

func timeLiteral(t time.Time) string {
	return "toDateTime64(" + sqlquote.String(t.UTC().Format("2006-01-02 15:04:05.000")) + ", 3, 'UTC')"
}

func (c *compiler) command(i int, cmd Command) {
	if i == 0 {
		sc, ok := cmd.(*SearchCommand)
		if !ok {
			c.errs.add(CodeInvalid, cmd.Range().Start, "", "a search starts with a search expression")
			return
		}
		c.baseSearch(sc)
		return
	}
	if spec := commandTable[cmd.Name()]; spec.NeedsTime && c.cur.sch.resolve("_time").k != kTime {
		c.errs.add(CodeInvalid, cmd.Range().Start, "", "%s needs _time, which these rows do not have", cmd.Name())
		return
	}
	switch cmd := cmd.(type) {
	case *SearchCommand:
		cond := c.searchCond(cmd.Expr)
		c.cur.rel = c.addCTE("SELECT * FROM " + c.cur.rel + " WHERE " + cond)
	case *WhereCommand:
		cond := c.cond(cmd.Cond)
		c.cur.rel = c.addCTE("SELECT * FROM " + c.cur.rel + " WHERE " + cond)
	case *EvalCommand:
		c.eval(cmd)
	case *FieldsCommand:
		c.fields(cmd)
	case *TableCommand:
		c.table(cmd)
	case *RenameCommand:
		c.rename(cmd)
	case *StatsCommand:
		c.stats(cmd)
	case *ChartCommand:
		c.chart(cmd)
	case *TimechartCommand:
		c.timechart(cmd)
	case *SortCommand:
		c.sort(cmd)
	case *HeadCommand:
		n := int64(DefaultHead)
		if cmd.Count != nil {
			n = cmd.Count.Value
		}
		c.cur.rel = c.addCTE("SELECT * FROM " + c.cur.rel + c.newestBound(c.cur.rel, c.cur.order, n) + orderBy(c.cur.order) + " LIMIT " + strconv.FormatInt(n, 10))
	case *DedupCommand:
		c.dedup(cmd)
	case *MvexpandCommand:
		c.mvexpand(cmd)
	default:
		panic(fmt.Sprintf("spl: command %T", cmd))
	}
}

func (c *compiler) baseSearch(sc *SearchCommand) {
	w := c.opts.Window
	cond := "doc._time < " + timeLiteral(w.Latest)
	if w.HasEarliest {
		cond = "doc._time >= " + timeLiteral(w.Earliest) + " AND " + cond
	}
	// The search condition reads the table directly; later stages read
	// the path columns of the base relation.
	numeric, ints := numericReads(c.opts.Paths)
	c.ints = ints
	multi := mvReads(c.opts.Paths)
	c.cur = state{sch: &schema{open: true, direct: numeric, multi: multi}}
	if sc.Expr != nil {
		if s := c.searchCond(sc.Expr); s != "1" {
			cond += " AND " + s
		}
	}
	paths := &pathSet{seen: map[string]bool{}, numeric: numeric, multi: multi}
	c.cur.sch = &schema{open: true, paths: paths, multi: multi}
	c.cur.order = []orderTerm{{c.cur.sch.base("_time").s, true}}
	c.cur.rel = c.addCTE("")
	c.ctes[len(c.ctes)-1].base = &baseRel{table: c.opts.Table, where: cond, paths: paths}
}

func (c *compiler) eval(cmd *EvalCommand) {
	var sel []string
	for _, a := range cmd.Assignments {
		x := c.expr(a.X)
		switch {
		case x.k == kBool:
			c.errs.add(CodeInvalid, a.X.Range().Start, "use if(condition, value, value)", "eval cannot assign a condition to a field")
			continue
		case a.Field.Name == "_time" && x.k != kTime && x.k != kNull:
			if x.k != kNum {
				c.errs.add(CodeInvalid, a.X.Range().Start, "", "_time must be a time or epoch seconds, got %s", x.k)
				continue
			}
			x = sqlExpr{asTime(x), kTime}
		case x.k == kNull:
			x = sqlExpr{"CAST(NULL AS Nullable(String))", kNull}
		}
		col := c.newCol()
		sel = append(sel, x.s+" AS "+col)
		c.setField(a.Field.Name, namedCol{name: a.Field.Name, col: col, k: x.k})
	}
	if len(sel) > 0 {
		c.cur.rel = c.addCTE("SELECT *, " + strings.Join(sel, ", ") + " FROM " + c.cur.rel)
	}
}

// setField makes name refer to col: an overlay on events, a new or
// replaced column on a table.
func (c *compiler) setField(name string, col namedCol) {
	s := c.cur.sch.clone()
	if s.open {
		s.layers = append(s.layers, layer{kind: layerOverlay, col: col})
	} else {
		i := slices.IndexFunc(s.cols, func(n namedCol) bool { return n.name == name })
		if i >= 0 {
			s.cols[i] = col
		} else {
			s.cols = append(s.cols, col)
		}
	}
	c.cur.sch = s
}

func patterns(fs []*FieldName) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

func (c *compiler) fields(cmd *FieldsCommand) {
	s := c.cur.sch.clone()
	if s.open {
		s.layers = append(s.layers, layer{kind: layerProject, pats: patterns(cmd.Fields)})
		c.cur.sch = s
		return
	}
	var cols []namedCol
	seen := map[string]bool{}
	for _, f := range cmd.Fields {
		for _, col := range s.cols {
			if _, ok := matchPattern(f.Name, col.name); ok && !seen[col.name] {
				seen[col.name] = true
				cols = append(cols, col)
			}
		}
	}
	s.cols = cols
	c.cur.sch = s
}

func (c *compiler) table(cmd *TableCommand) {
	seen := map[string]bool{}
	var cols []namedCol
	add := func(col namedCol) {
		if !seen[col.name] {
			seen[col.name] = true
			cols = append(cols, col)
		}
	}
	s := c.cur.sch
	if !s.open {
		for _, f := range cmd.Fields {
			if !strings.Contains(f.Name, "*") {
				e := s.resolve(f.Name)
				if e.k == kNull {
					e = sqlExpr{"CAST(NULL AS Nullable(String))", kNull}
				}
				add(namedCol{name: f.Name, col: e.s, k: e.k})
				continue
			}
			for _, col := range s.cols {
				if _, ok := matchPattern(f.Name, col.name); ok {
					add(col)
				}
			}
		}
		c.cur.sch = &schema{cols: cols}
		c.cur.transformed = true
		return
	}
	// Events become a table: materialise the listed fields and the
	// current order.
	var candidates []namedCol
	if slices.ContainsFunc(cmd.Fields, func(f *FieldName) bool { return strings.Contains(f.Name, "*") }) {
		if !c.resolver(cmd.Rng.Start, "table with wildcards") {
			return
		}
		paths := c.paths()
		candidates = append(s.knownOpenFields(), s.docFields(paths)...)
	}
	var sel []string
	for _, f := range cmd.Fields {
		if !strings.Contains(f.Name, "*") {
			e := s.resolve(f.Name)
			if e.k == kNull {
				e = sqlExpr{"CAST(NULL AS Nullable(String))", kNull}
			}
			add(namedCol{name: f.Name, col: e.s, k: e.k})
			continue
		}
		for _, col := range candidates {
			if _, ok := matchPattern(f.Name, col.name); ok {
				add(col)
			}
		}
	}
	for i := range cols {
		col := c.newCol()
		sel = append(sel, cols[i].col+" AS "+col)
		cols[i].col = col
	}
	order := c.materialiseOrder(&sel)
	if len(sel) == 0 {
		sel = append(sel, "1 AS "+c.newCol())
	}
	c.cur = state{rel: c.addCTE("SELECT " + strings.Join(sel, ", ") + " FROM " + c.cur.rel), sch: &schema{cols: cols}, order: order, transformed: true}
}

// materialiseOrder adds the current order terms to a select list and
// returns the order over the new columns.
func (c *compiler) materialiseOrder(sel *[]string) []orderTerm {
	var order []orderTerm
	for _, t := range c.cur.order {
		col := c.newCol()
		*sel = append(*sel, t.s+" AS "+col)
		order = append(order, orderTerm{col, t.desc})
	}
	return order
}

func pathsSQL(ctes []cte, rel string) string {
	return withClause(ctes, rel, true) + "SELECT DISTINCT arrayJoin(JSONAllPaths(doc)) AS path FROM " + rel + " ORDER BY path LIMIT " + itoa(MaxDiscoveredPaths)
}

// paths discovers the document paths of the current rows.
func (c *compiler) paths() []string {
	sql := pathsSQL(c.ctes, c.cur.rel)
	c.resolved = append(c.resolved, sql)
	ps, err := c.opts.Resolver.Paths(c.ctx, sql)
	if err != nil {
		c.setFatal(fmt.Errorf("discover fields: %w", err))
	}
	return ps
}

func (c *compiler) rename(cmd *RenameCommand) {
	s := c.cur.sch.clone()
	for _, p := range cmd.Pairs {
		if s.open {
			s.layers = append(s.layers, layer{kind: layerRename, from: p.From.Name, to: p.To.Name})
			continue
		}
		// Rename matching columns; a renamed column replaces any other
		// column that had its new name.
		renamed := make([]bool, len(s.cols))
		newNames := map[string]bool{}
		for i := range s.cols {
			if caps, ok := matchPattern(p.From.Name, s.cols[i].name); ok {
				s.cols[i].name = substitute(p.To.Name, caps)
				renamed[i] = true
				newNames[s.cols[i].name] = true
			}
		}
		var out []namedCol
		seen := map[string]bool{}
		for i, col := range s.cols {
			if (!renamed[i] && newNames[col.name]) || seen[col.name] {
				continue
			}
			seen[col.name] = true
			out = append(out, col)
		}
		s.cols = out
	}
	c.cur.sch = s
}

// groupKey is how rows are grouped by a field: by its text form, so that
// 200 and "200" are one group, as in Splunk. display is shown for the
// group.
func groupKey(x sqlExpr) (key, display sqlExpr, needsAny bool) {
	switch x.k {
	case kDyn:
		return toStr(x), x, true
	case kBool:
		return toStr(x), toStr(x), false
	}
	return x, x, false
}

func (c *compiler) stats(cmd *StatsCommand) {
	aggs := c.planAggs(cmd.Aggs)
	var sel, group, where []string
	var cols []namedCol
	var order []orderTerm
	names := map[string]Pos{}
	dup := func(name string, pos Pos) {
		if _, ok := names[name]; ok {
			c.errs.add(CodeInvalid, pos, "rename one with AS", "colliding output name %q", name)
		}
		names[name] = pos
	}
	counts := true // the input rows can be counted on the way (no key is always null)
	for _, f := range cmd.By {
		dup(f.Name, f.Rng.Start)
		x := c.cur.sch.resolve(f.Name)
		if isMV(x.k) {
			// A row per distinct value of the event's multivalue field: the event counts
			// once in the group of each (an event without values has no row).
			x = c.expandMV(x)
			counts = false
		}
		if x.k == kNull {
			counts = false
			where = append(where, "0")
			x = sqlExpr{"CAST(NULL AS Nullable(String))", kStr}
		}
		key, disp, needsAny := groupKey(x)
		kc := c.newCol()
		sel = append(sel, key.s+" AS "+kc)
		group = append(group, kc)
		where = append(where, isNotNull(x))
		order = append(order, naturalOrder(sqlExpr{kc, key.k}, false)...)
		if needsAny {
			dc := c.newCol()
			sel = append(sel, "any("+disp.s+") AS "+dc)
			cols = append(cols, namedCol{name: f.Name, col: dc, k: disp.k})
		} else {
			cols = append(cols, namedCol{name: f.Name, col: kc, k: key.k})
		}
	}
	for _, a := range aggs {
		dup(a.name, a.node.Rng.Start)
		col := c.newCol()
		sel = append(sel, a.sql("")+" AS "+col)
		cols = append(cols, namedCol{name: a.name, col: col, k: a.outKind()})
	}
	var counted *inputCount
	var q string
	switch {
	case counts && len(group) == 0:
		// One row, counting every input row.
		counted = &inputCount{rel: c.cur.rel, col: c.newCol()}
		sel = append(sel, "count() AS "+counted.col)
		q = "SELECT " + strings.Join(sel, ", ") + " FROM " + c.cur.rel
	case counts:
		// Rows whose key is null are grouped too and dropped after, so that
		// every row of every group carries the count of all input rows (the
		// groups of non-null keys are the same as when the rows are dropped
		// first).
		counted = &inputCount{rel: c.cur.rel, col: c.newCol(), total: true}
		sel = append(sel, "sum(count()) OVER () AS "+counted.col)
		keys := make([]string, len(group))
		for i, g := range group {
			keys[i] = "(" + g + " IS NOT NULL)"
		}
		all := c.addCTE("SELECT " + strings.Join(sel, ", ") + " FROM " + c.cur.rel + " GROUP BY " + strings.Join(group, ", "))
		q = "SELECT * FROM " + all + " WHERE " + strings.Join(keys, " AND ")
	default:
		q = "SELECT " + strings.Join(sel, ", ") + " FROM " + c.cur.rel
		if len(where) > 0 {
			q += " WHERE " + strings.Join(where, " AND ")
		}
		if len(group) > 0 {
			q += " GROUP BY " + strings.Join(group, ", ")
		}
	}
	c.cur = state{rel: c.addCTE(q), sch: &schema{cols: cols}, order: order, transformed: true}
	if counted != nil {
		counted.of = c.cur.rel
		c.inputCount = counted
	}
}

// expandMV makes the current relation a row per distinct value (by text form) of the
// multivalue expression x in each row, and returns the column holding the value.
func (c *compiler) expandMV(x sqlExpr) sqlExpr {
	e := mvElem(x)
	vals := mvValues(x)
	distinct := "arrayDistinct(" + vals + ")"
	if e.k != kNum {
		texts := "arrayMap(" + mvVar + " -> " + toStr(e).s + ", " + vals + ")"
		distinct = "arrayFilter((" + mvVar + ", __i) -> indexOf(" + texts + ", " + toStr(e).s + ") = __i, " + vals + ", arrayEnumerate(" + vals + "))"
	}
	col := c.newCol()
	c.cur.rel = c.addCTE("SELECT *, arrayJoin(" + distinct + ") AS " + col + " FROM " + c.cur.rel)
	return sqlExpr{col, e.k}
}

func (c *compiler) sortTerms(keys []*SortKey) []orderTerm {
	var terms []orderTerm
	for _, k := range keys {
		x := c.cur.sch.resolve(k.Field.Name)
		switch k.Mode {
		case "num":
			n := toNum(x)
			terms = append(terms, orderTerm{"(" + n.s + " IS NULL)", false}, orderTerm{n.s, k.Desc})
		case "str":
			s := toStr(x)
			terms = append(terms, orderTerm{"(" + s.s + " IS NULL)", false}, orderTerm{s.s, k.Desc})
		default:
			terms = append(terms, naturalOrder(x, k.Desc)...)
		}
	}
	return terms
}

func (c *compiler) sort(cmd *SortCommand) {
	// Earlier order breaks ties, so that sort is stable.
	order := append(c.sortTerms(cmd.Keys), c.cur.order...)
	c.cur.order = order
	if cmd.Limit != nil {
		c.cur.rel = c.addCTE("SELECT * FROM " + c.cur.rel + orderBy(order) + " LIMIT " + strconv.FormatInt(cmd.Limit.Value, 10))
	}
}

func (c *compiler) dedup(cmd *DedupCommand) {
	n := int64(1)
	if cmd.Count != nil {
		n = cmd.Count.Value
	}
	keepEmpty := false
	if cmd.KeepEmpty != nil {
		keepEmpty, _ = parseBool(cmd.KeepEmpty.Value)
	}
	var present, keys []string
	for _, f := range cmd.Fields {
		x := c.cur.sch.resolve(f.Name)
		present = append(present, isNotNull(x))
		keys = append(keys, toStr(x).s)
	}
	all := strings.Join(present, " AND ")
	q := "SELECT * FROM " + c.cur.rel + " WHERE " + all + orderBy(c.cur.order) +
		" LIMIT " + strconv.FormatInt(n, 10) + " BY " + strings.Join(keys, ", ")
	if keepEmpty {
		q = "SELECT * FROM (" + q + ") UNION ALL SELECT * FROM " + c.cur.rel + " WHERE NOT (" + all + ")"
	}
	c.cur.rel = c.addCTE(q)
}

// newestBound is the WHERE clause that lets "the n newest events of the base relation"
// stop at the page: rel is the base relation and order is newest first, so only events at
// or after the n-th newest matching time can be among them, and a bound on the sorting key
// limits the read of whole documents to the granules holding the page.
//
// With a Resolver the bound is a literal, found before the statement by probes of the
// newest 1/64, 1/16 and 1/4 of the window (1 hour, 1 day and 30 days before its end when
// it has no start), then all of it, each reading the time and the filtered paths of that
// slice alone (the sorting key prunes the rest) up to n matches: the first probe that finds
// n gives the n-th newest. The engine cannot stop such a read early itself (it reads the
// Merge view in key order only without a filter). Events added since a probe only raise
// the n-th newest, so the bound stays at or below it. When no probe finds n, every match
// is on the page and no bound is needed. Without a Resolver the bound is the same probe
// over the whole window as a scalar subquery.
//
// Events tied with the n-th newest all pass the bound, so the ORDER BY ... LIMIT n that
// follows chooses among the same events as a sort of every match would. "" when the
// shape does not apply, or the condition is too long to repeat.
func (c *compiler) newestBound(rel string, order []orderTerm, n int64) string {
	if len(order) != 1 || !order[0].desc || n <= 0 {
		return ""
	}
	var base *baseRel
	for _, t := range c.ctes {
		if t.name == rel {
			base = t.base
		}
	}
	if base == nil || order[0].s != pathCol("_time") || len(base.where) > MaxQueryBytes/8 {
		return ""
	}
	probe := func(from string) string {
		where := base.where
		if from != "" {
			where += " AND doc._time >= " + from
		}
		return "SELECT doc._time AS t FROM " + base.table + " WHERE " + where + " ORDER BY t DESC LIMIT " + strconv.FormatInt(n, 10)
	}
	if c.opts.Resolver == nil {
		return " WHERE " + order[0].s + " >= (SELECT min(t) FROM (" + probe("") + "))"
	}
	w := c.opts.Window
	var starts []time.Time
	if w.HasEarliest {
		for _, part := range []time.Duration{64, 16, 4} {
			starts = append(starts, w.Latest.Add(-w.Latest.Sub(w.Earliest)/part))
		}
	} else {
		for _, back := range []time.Duration{time.Hour, 24 * time.Hour, 30 * 24 * time.Hour} {
			starts = append(starts, w.Latest.Add(-back))
		}
	}
	starts = append(starts, time.Time{})
	for _, from := range starts {
		lit := ""
		if !from.IsZero() {
			lit = timeLiteral(from)
		}
		sql := "SELECT count(), min(t) FROM (" + probe(lit) + ")"
		c.resolved = append(c.resolved, sql)
		got, oldest, err := c.opts.Resolver.NewestTimes(c.ctx, sql)
		if err != nil {
			c.setFatal(fmt.Errorf("find the page's oldest event: %w", err))
			return ""
		}
		if int64(got) >= n {
			return " WHERE " + order[0].s + " >= " + timeLiteral(oldest)
		}
	}
	return ""
}

// outputExpr renders a column for the final SELECT.
func outputExpr(col string, k kind) (string, string, encoding) {
	switch k {
	case kDyn:
		return "toJSONString(" + col + ")", "Dynamic", encJSON
	case kMVNum, kMVDyn:
		// the values of a multivalue field; absent (null) when it has none
		return "if(empty(" + mvValues(sqlExpr{col, k}) + "), NULL, toJSONString(" + col + "))", "Array(Dynamic)", encJSON
	case kTime:
		return col, "DateTime64(3, 'UTC')", encTime
	}
	return col, "", encNative
}

// mainQuery renders the statement returning the result rows.
func (c *compiler) mainQuery() (string, []outColumn) {
	withDoc := false
	var sel []string
	var cols []outColumn
	t := c.cur.sch.resolve("_time")
	timeCol := -1
	add := func(name, col string, k kind) {
		if k == kTime && t.k == kTime && col == t.s && timeCol < 0 {
			timeCol = len(cols)
		}
		s, typ, enc := outputExpr(col, k)
		sel = append(sel, s+" AS o"+strconv.Itoa(len(sel)+1))
		cols = append(cols, outColumn{name: name, typ: typ, enc: enc})
	}
	s := c.cur.sch
	if s.open {
		for _, f := range s.knownOpenFields() {
			add(f.name, f.col, f.k)
		}
		if extra, ok := s.projectedDocFields(); ok {
			for _, f := range extra {
				add(f.name, f.col, f.k)
				cols[len(cols)-1].sparse = true
			}
		} else {
			withDoc = true
			sel = append(sel, "toJSONString(doc) AS o"+strconv.Itoa(len(sel)+1))
			cols = append(cols, outColumn{name: "", typ: "Dynamic", enc: encDoc})
		}
	} else {
		for _, f := range s.cols {
			add(f.name, f.col, f.k)
		}
	}
	if len(sel) == 0 {
		sel = append(sel, "1 AS o1")
		cols = append(cols, outColumn{name: "", enc: encNative})
	}
	c.mainParts.with, c.mainParts.sel = c.with(c.cur.rel, withDoc), strings.Join(sel, ", ")
	c.mainParts.from = " FROM " + c.cur.rel + c.newestBound(c.cur.rel, c.cur.order, MaxOutputRows+1) + orderBy(c.cur.order) + " LIMIT " + itoa(MaxOutputRows+1)
	c.mainParts.timeCol = timeCol
	return c.mainParts.with + "SELECT " + c.mainParts.sel + c.mainParts.from, cols
}

// projectedDocFields lists the document fields still visible when a
// projection with exact names bounds them, so that the final query reads
// those paths instead of the whole document.
func (s *schema) projectedDocFields() ([]namedCol, bool) {
	j := -1
	for i := len(s.layers) - 1; i >= 0; i-- {
		if s.layers[i].kind == layerProject {
			if slices.ContainsFunc(s.layers[i].pats, func(p string) bool { return strings.Contains(p, "*") }) {
				return nil, false
			}
			j = i
			break
		}
	}
	if j < 0 {
		return nil, false
	}
	below := &schema{open: true, layers: s.layers[:j], paths: s.paths, multi: s.multi}
	seen := map[string]bool{}
	for _, k := range s.knownOpenFields() {
		seen[k.name] = true
	}
	var out []namedCol
	for _, p := range s.layers[j].pats {
		e := below.resolve(p)
		if !below.isBase(e) {
			continue // a built-in, an overlay or null: already listed
		}
		name, ok := s.forward(p, j)
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, namedCol{name: name, col: e.s, k: e.k})
	}
	slices.SortFunc(out, func(a, b namedCol) int { return strings.Compare(a.name, b.name) })
	return out, true
}

// stageCountQuery marks the stages measured (the first MeasuredStages,
// within the size budget) and returns the statement counting them all.
func (c *compiler) stageCountQuery(stages []StagePlan) string {
	var rels []string
	for i := range stages {
		if i >= MeasuredStages {
			break
		}
		if len(countSQL(c.ctes, append(rels, stages[i].rel))) > MaxStageQueryBytes {
			break
		}
		rels = append(rels, stages[i].rel)
		stages[i].Measured = true
	}
	return countSQL(c.ctes, rels)
}

// countSQL counts the rows of each relation (up to MaxOutputRows+1) in one
// statement, one column per distinct relation in order.
func countSQL(ctes []cte, rels []string) string {
	var distinct []string
	last, lastIdx := "", -1
	for _, rel := range rels {
		if slices.Contains(distinct, rel) {
			continue
		}
		distinct = append(distinct, rel)
		if i := relIndex(ctes, rel); i > lastIdx {
			last, lastIdx = rel, i
		}
	}
	if len(distinct) == 0 {
		return ""
	}
	return withClause(ctes, last, false) + "SELECT " + countColumns(nil, distinct, "n")
}

// countColumns renders one scalar column per relation counting its rows up
// to MaxOutputRows+1, named prefix0, prefix1... With ctes, a base relation
// is counted from the table and its condition: in a statement whose base
// relation carries the doc column (the result statement of events), a count
// of the relation itself read every whole document (36 ms where 13 ms do
// over 200,000 events).
func countColumns(ctes []cte, rels []string, prefix string) string {
	parts := make([]string, len(rels))
	for i, rel := range rels {
		src := rel
		if j := relIndex(ctes, rel); j >= 0 && ctes[j].base != nil {
			b := ctes[j].base
			src = "(SELECT 1 FROM " + b.table + " WHERE " + b.where + ")"
		}
		parts[i] = "(SELECT count() FROM (SELECT 1 FROM " + src + " LIMIT " + itoa(MaxOutputRows+1) + ")) AS " + prefix + strconv.Itoa(i)
	}
	return strings.Join(parts, ", ")
}

func relIndex(ctes []cte, rel string) int {
	for i, t := range ctes {
		if t.name == rel {
			return i
		}
	}
	return -1
}

func itoa(n int) string { return strconv.Itoa(n) }
