package statement

import (
	"sort"
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

// maxDepth bounds the nesting of subqueries and expressions the analysis
// follows, so that hostile input cannot exhaust the stack.
const maxDepth = 200

// analyzer carries the state of one Analyze call across the tree walk.
type analyzer struct {
	env    *Env
	access Access
	sql    string

	reads    []*tableRead
	readIdx  map[string]*tableRead
	policies []string
	// settings collects every SETTINGS item of the statement (any level).
	settings []settingUse
	depth    int
	// noPolicies disables row policy injection (analysis of a policy
	// filter itself).
	noPolicies bool
	// noAccounting disables column-usage recording (policy filters).
	noAccounting bool
	// pathRewrites counts document paths rewritten so far; a select item
	// whose walk rewrote one is given its original text as name.
	pathRewrites int
	// dynamic are the paths read as Dynamic although the table has a schema.
	dynamic []DynamicPath
	typed   []TypedPath
	// elemMaps are the arrayMap calls whose lambda takes the elements of an array of
	// objects (arrayLambda): an array aggregate over one aggregates what it returns.
	elemMaps map[*ch.FunctionExpr]bool
	// hints are notes for the answer (a lowered max_threads).
	hints []string
}

// tableRead records one table the statement reads and what of it.
type tableRead struct {
	ref     TableRef
	system  bool
	whole   bool           // the whole document (*, t.*, f(*))
	cols    map[string]int // top-level document keys used, with the first position
	pos     int
	wholeAt int
}

type settingUse struct {
	name  string
	value string // plain value
	pos   int
	str   bool // written as a string literal
}

func newAnalyzer(sql string, env *Env) *analyzer {
	acc := env.Access
	if acc == nil {
		acc = noAccess{}
	}
	return &analyzer{env: env, access: acc, sql: sql, readIdx: map[string]*tableRead{}}
}

// read returns the usage record of a table, creating it on first use.
func (a *analyzer) read(ref TableRef, system bool, pos int) *tableRead {
	key := ref.Database + "\x00" + ref.Table
	if r, ok := a.readIdx[key]; ok {
		return r
	}
	r := &tableRead{ref: ref, system: system, cols: map[string]int{}, pos: pos, wholeAt: -1}
	a.readIdx[key] = r
	a.reads = append(a.reads, r)
	return r
}

func (a *analyzer) useColumn(r *tableRead, col string, pos int) {
	if r == nil || a.noAccounting {
		return
	}
	if _, seen := r.cols[col]; !seen {
		r.cols[col] = pos
	}
}

func (a *analyzer) useWhole(r *tableRead, pos int) {
	if r != nil && !a.noAccounting && !r.whole {
		r.whole, r.wholeAt = true, pos
	}
}

func (a *analyzer) enter(pos int) *Error {
	a.depth++
	if a.depth > maxDepth {
		return badRequest(CodeUnsupportedSyntax, pos, "", "the statement is nested too deeply")
	}
	return nil
}

func (a *analyzer) leave() { a.depth-- }

// readRefs lists the tables read, in order of first reference.
func (a *analyzer) readRefs() []TableRef {
	out := make([]TableRef, 0, len(a.reads))
	for _, r := range a.reads {
		out = append(out, r.ref)
	}
	return out
}

// authorizeReads checks the grants of a custom-role key against every table
// and column the statement reads (see DESIGN decision in grants.go).
func (a *analyzer) authorizeReads() *Error {
	p := a.env.Principal
	if !p.canRead() {
		return forbidden(CodeForbidden, -1, "use a key with read permission", "%s cannot read", p)
	}
	if !p.byGrants() {
		return nil
	}
	for _, r := range a.reads {
		if r.system {
			continue // system views are filtered to what the roles may see
		}
		if err := a.checkSelectGrant(r); err != nil {
			return err
		}
	}
	return nil
}

func (a *analyzer) checkSelectGrant(r *tableRead) *Error {
	db, table := r.ref.Database, r.ref.Table
	var grants []Grant
	for _, role := range a.env.Principal.Roles {
		for _, g := range a.access.Grants(role) {
			if g.covers(PrivSelect, db, table) {
				grants = append(grants, g)
			}
		}
	}
	if len(grants) == 0 {
		return forbidden(CodeForbidden, r.pos, "ask an administrator to GRANT SELECT ON "+db+"."+table+" to one of your roles",
			"no role of this key may read %s.%s", db, table)
	}
	allowed := map[string]bool{}
	for _, g := range grants {
		if len(g.Columns) == 0 {
			return nil // a grant on the whole table covers everything
		}
		for _, c := range g.Columns {
			allowed[c] = true
		}
	}
	if r.whole {
		return forbidden(CodeForbidden, r.wholeAt, "name the granted paths instead of * (granted: "+strings.Join(sortedKeys(allowed), ", ")+")",
			"the roles of this key may read only some columns of %s.%s, and the statement reads whole documents", db, table)
	}
	var denied []string
	at := -1
	for c, pos := range r.cols {
		if !allowed[c] {
			denied = append(denied, c)
			if at < 0 || pos < at {
				at = pos
			}
		}
	}
	if len(denied) > 0 {
		sort.Strings(denied)
		return forbidden(CodeForbidden, at, "granted columns: "+strings.Join(sortedKeys(allowed), ", "),
			"the roles of this key may not read %s of %s.%s", strings.Join(denied, ", "), db, table)
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
