package query

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/format"
	"github.com/svc-data/svc/query/statement"
	"github.com/svc-data/svc/query/tables"
)

// Request is one SQL request on behalf of a principal.
type Request struct {
	OrgID     uuid.UUID
	ClusterID uuid.UUID
	Principal statement.Principal
	// KeyID is the custom-role key's id (its database user), zero otherwise.
	KeyID    uuid.UUID
	Database string // selected logical database
	SQL      string
	Format   string
	QueryID  string
}

// Response streams a result.
type Response interface {
	QueryID() string
	ContentType() string
	// WriteTo writes the whole result, streaming rows as the engine produces them.
	WriteTo(w *bufio.Writer) error
}

// WholeResponse is a Response that may say its result is already at hand: the engine sent
// it whole and small (wholeLimit), so writing it takes no longer than copying it, and the
// HTTP layer may answer it as one body with its length rather than as a chunked stream.
type WholeResponse interface {
	Response
	Whole() bool
}

// wholeLimit bounds the engine's answer of a result served whole.
const wholeLimit = 256 << 10

// Error is a refusal the HTTP layer answers with its status and envelope.
type Error struct {
	Status     int
	Code       string
	Message    string
	Hint       string
	EngineCode int32
	// Field names the request field that was wrong, when one was.
	Field string
}

func (e *Error) Error() string { return e.Message }

// engineUnavailable is the answer when a cluster has no engine to run on; an *Error from
// Engines (a stopped cluster's, naming how to resume it) passes as it is.
func engineUnavailable(err error) *Error {
	var qe *Error
	if errors.As(err, &qe) {
		return qe
	}
	return &Error{Status: 503, Code: "engine_unavailable", Message: err.Error(), Hint: "retry shortly"}
}

// QueryCounter, when Engines implements it, counts every statement sent to a cluster's
// engine: reads, and writes (statements that write a table).
type QueryCounter interface {
	CountQuery(cluster uuid.UUID, write bool)
}

// Engines gives the engine of a cluster.
type Engines interface {
	QueryEngine(cluster uuid.UUID) (Engine, error)
	// SharedEngine reports whether the cluster's engine also serves other clusters,
	// and so possibly other organizations (one ClickHouse server for all).
	SharedEngine(cluster uuid.UUID) bool
}

// Runner runs the query API: analyze and authorize on the parsed statement, apply
// control-plane commands, run engine SQL and stream the result.
type Runner struct {
	model   *catalog.Model
	cmds    *catalog.Service
	tables  *tables.Manager
	engines Engines
	running running
}

// NewRunner returns a runner.
func NewRunner(model *catalog.Model, cmds *catalog.Service, tbl *tables.Manager, engines Engines) *Runner {
	return &Runner{model: model, cmds: cmds, tables: tbl, engines: engines}
}

// DefaultSettings apply to every user statement: paths of JSON documents are Dynamic,
// and ordering or grouping by them is what users of a document store expect to do.
var DefaultSettings = []statement.Setting{
	{Name: "allow_suspicious_types_in_order_by", Value: "1"},
	{Name: "allow_suspicious_types_in_group_by", Value: "1"},
}

// Env builds the analysis environment of a request.
func (r *Runner) Env(req Request) statement.Env {
	return statement.Env{
		Principal: req.Principal,
		Database:  req.Database,
		Catalog:   catalogView{m: r.model, cluster: req.ClusterID},
		Access:    accessView{m: r.model, cluster: req.ClusterID},
		Cluster:   statement.Cluster{SharedEngine: r.engines.SharedEngine(req.ClusterID), MaxThreads: r.sizeCores(req.ClusterID)},
	}
}

// sizeCores is the cores of the cluster's current size, 0 for a cluster without one
// (the bootstrap cluster): statements' max_threads is capped to it.
func (r *Runner) sizeCores(cluster uuid.UUID) int {
	if c, ok := r.model.Cluster(cluster); ok && c.Size.CPUCores > 0 {
		return int(math.Ceil(c.Size.CPUCores))
	}
	return 0
}

// Run analyzes and runs one request. Errors before the first row come back here with
// their status; later ones end the stream in-band.
func (r *Runner) Run(ctx context.Context, req Request) (Response, error) {
	if req.Format == "" {
		req.Format = format.Default
	}
	if !isFormat(req.Format) {
		return nil, &Error{Status: 400, Code: "unsupported_format", Message: (&format.UnknownError{Name: req.Format}).Error()}
	}
	if err := CheckQueryID(req.QueryID); err != nil {
		return nil, err
	}
	if req.QueryID == "" {
		req.QueryID = uuid.NewString()
	}
	env := r.Env(req)
	start := time.Now()
	st, err := statement.Analyze(req.SQL, env)
	if err != nil {
		var se *statement.Error
		if errors.As(err, &se) {
			return nil, &Error{Status: se.Status, Code: se.Code, Message: se.Message, Hint: se.Hint}
		}
		return nil, err
	}
	if st.NeedsGeneration {
		if err := r.firstGeneration(ctx, req, st, env); err != nil {
			return nil, err
		}
		if st, err = statement.Analyze(req.SQL, env); err != nil {
			var se *statement.Error
			if errors.As(err, &se) {
				return nil, &Error{Status: se.Status, Code: se.Code, Message: se.Message, Hint: se.Hint}
			}
			return nil, err
		}
		if st.NeedsGeneration {
			return nil, &Error{Status: 409, Code: "table_not_ready", Message: "the table's first generation could not be made; retry"}
		}
	}
	if st.Command != nil {
		if err := r.apply(ctx, req, st.Command); err != nil {
			return nil, err
		}
		return &result{queryID: req.QueryID, format: req.Format, start: start, empty: true}, nil
	}
	eng, err := r.engines.QueryEngine(req.ClusterID)
	if err != nil {
		return nil, engineUnavailable(err)
	}
	if c, ok := r.engines.(QueryCounter); ok {
		c.CountQuery(req.ClusterID, len(st.Writes) > 0)
	}
	settings := map[string]string{}
	for _, s := range DefaultSettings {
		settings[s.Name] = s.Value
	}
	for _, s := range st.Settings {
		settings[s.Name] = s.Value
	}
	// The query outlives this call (the rows stream after it returns), so it runs on its
	// own context, ended by the stream's end or by POST /v1/query/cancel.
	qctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	key := runKey(req.ClusterID, req.OrgID, req.Database, req.QueryID)
	if err := r.running.start(key, req.QueryID, cancel); err != nil {
		cancel()
		return nil, err
	}
	finish := func() { cancel(); r.running.done(key) }
	failed := func(err error) error {
		canceled := qctx.Err() != nil
		finish()
		if canceled {
			return &Error{Status: 499, Code: "canceled", Message: "the query was canceled"}
		}
		return explainPathType(st, err, env)
	}
	opts := Options{QueryID: EngineQueryID(req.OrgID, req.Database, req.QueryID), Settings: settings}
	// EXPLAIN's output is engine text naming engine databases and generations: its rows
	// are translated (explainRows), so they take the row-by-row path.
	if le, ok := eng.(LineEngine); ok && linesServed(req, st) && st.Kind != statement.KindExplain {
		// lines.go: served from the engine's own encoding when the result's types allow.
		ls, sp, first, err := runLines(qctx, le, req, st, opts)
		if err != nil {
			return nil, failed(err)
		}
		if ls != nil {
			return &lineResult{queryID: req.QueryID, format: req.Format, start: start, lines: ls, sp: sp, first: first, env: env,
				finish: finish, canceled: qctx.Err, hideCounts: st.CountsHidden, hints: st.Hints}, nil
		}
	}
	rows, err := eng.Stream(qctx, st.SQL, opts)
	if err != nil {
		return nil, failed(err)
	}
	if st.Kind == statement.KindExplain {
		rows = explainRows{Rows: rows, env: env}
	}
	res := &result{queryID: req.QueryID, format: req.Format, start: start, rows: rows, env: env, empty: st.EmptyResult,
		finish: finish, canceled: qctx.Err, hideCounts: st.CountsHidden, hints: st.Hints}
	// Peek the first row so that errors the engine raises at once (unknown columns,
	// type errors, memory limits at start) get a proper status rather than an in-band
	// error after a 200.
	res.more = rows.Next()
	if !res.more {
		if err := rows.Err(); err != nil {
			rows.Close()
			finish()
			if qctx.Err() != nil {
				return nil, &Error{Status: 499, Code: "canceled", Message: "the query was canceled"}
			}
			return nil, explainPathType(st, err, env)
		}
		r.afterInsertSelect(qctx, eng, req, st)
	}
	return res, nil
}

func isFormat(name string) bool {
	for _, n := range format.Names {
		if n == name {
			return true
		}
	}
	return false
}

// engineError turns an engine failure into the API's error, keeping the engine's code
// and text with engine names translated back to logical ones.
func engineError(err error, env statement.Env) error {
	if ex, ok := engineerr.As(err); ok {
		return &Error{Status: 400, Code: "engine_error", EngineCode: ex.Code,
			Message: statement.TranslateError(fmt.Sprintf("Code: %d. DB::Exception: %s", ex.Code, ex.Message), env)}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Status: 499, Code: "canceled", Message: "the query was canceled"}
	}
	return &Error{Status: 503, Code: "engine_unavailable", Message: statement.TranslateError(err.Error(), env),
		Hint: "the engine did not answer; retry shortly"}
}

// result is a response being streamed.
type result struct {
	queryID  string
	format   string
	start    time.Time
	rows     Rows
	more     bool
	env      statement.Env
	empty    bool
	finish   func()
	canceled func() error
	// hideCounts: report the rows returned as rows_read and no bytes, since the
	// engine's counts include rows the caller may not see (Statement.CountsHidden).
	hideCounts bool
	returned   uint64
	hints      []string // Statement.Hints
}

// readCounts is what the response reports as read.
func (r *result) readCounts() (rows, bytes uint64) {
	if r.hideCounts {
		return r.returned, 0
	}
	sum := r.rows.Summary()
	return sum.RowsRead, sum.BytesRead
}

func (r *result) QueryID() string { return r.queryID }

func (r *result) ContentType() string {
	w, _ := format.New(r.format, nil, nil)
	return w.ContentType()
}

func (r *result) WriteTo(bw *bufio.Writer) error {
	defer bw.Flush()
	w, err := format.New(r.format, bw, r.hints)
	if err != nil {
		return err
	}
	if r.rows == nil {
		if err := w.Begin([]format.Column{}); err != nil {
			return err
		}
		return w.End(format.Stats{Elapsed: time.Since(r.start)})
	}
	defer r.finish()
	defer r.rows.Close()
	cols := r.rows.Columns()
	if r.empty {
		// DDL and INSERT ... SELECT answer an empty result set.
		cols = []format.Column{}
	}
	if err := w.Begin(cols); err != nil {
		return err
	}
	progress := newTick(time.Second)
	defer progress.Stop()
	for more := r.more; more; more = r.rows.Next() {
		if r.empty {
			continue
		}
		if err := w.Row(r.rows.Values()); err != nil {
			return err // the client went away
		}
		r.returned++
		if progress.Due() {
			progress.Reset()
			read, bytes := r.readCounts()
			if err := w.Progress(read, bytes, time.Since(r.start)); err != nil {
				return err
			}
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
	if err := r.rows.Err(); err != nil {
		e := engineError(err, r.env)
		if r.canceled() != nil {
			e = &Error{Status: 499, Code: "canceled", Message: "the query was canceled"}
		}
		_ = w.Fail(e)
		return e
	}
	sum := r.rows.Summary()
	stats := format.Stats{Elapsed: time.Since(r.start)}
	stats.RowsRead, stats.BytesRead = r.readCounts()
	if r.empty && sum.Known {
		written := sum.WrittenRows
		stats.WrittenRows = &written
	}
	return w.End(stats)
}

// apply carries out a control-plane statement.
func (r *Runner) apply(ctx context.Context, req Request, cmd statement.Command) error {
	switch c := cmd.(type) {
	case *statement.CreateTable:
		if _, exists := r.model.Table(req.ClusterID, c.Database, c.Table); exists {
			if c.IfNotExists {
				return nil
			}
			return &Error{Status: 409, Code: "table_exists", Message: fmt.Sprintf("table %q already exists in database %q", c.Table, c.Database),
				Hint: "use CREATE TABLE IF NOT EXISTS"}
		}
		_, err := r.tables.CreateTable(ctx, req.OrgID, req.ClusterID, c.Database, c.Table, c.SortingKey, "", nil)
		return err
	case *statement.AlterSortingKey:
		_, err := r.tables.ChangeSortingKey(ctx, req.ClusterID, c.Database, c.Table, c.SortingKey)
		return err
	case *statement.CreateRole:
		return r.cmds.CreateRole(ctx, req.ClusterID, c.Name, c.IfNotExists)
	case *statement.DropRole:
		return r.cmds.DropRole(ctx, req.ClusterID, c.Name, c.IfExists)
	case *statement.GrantPrivileges:
		// One event per grant, in order: a failing grant leaves earlier ones in place.
		for _, g := range c.Grants {
			cg := catalog.Grant{Database: g.Database, Table: g.Table, Columns: g.Columns}
			if g.Privileges&statement.PrivSelect != 0 {
				cg.Privileges = append(cg.Privileges, "SELECT")
			}
			if g.Privileges&statement.PrivInsert != 0 {
				cg.Privileges = append(cg.Privileges, "INSERT")
			}
			if err := r.cmds.GrantToRole(ctx, req.ClusterID, g.Role, cg); err != nil {
				return err
			}
		}
		return nil
	case *statement.CreateRowPolicy:
		p := c.Policy
		return r.cmds.CreateRowPolicy(ctx, req.ClusterID, catalog.RowPolicy{Name: p.Name, Database: p.Database, Table: p.Table,
			Filter: p.Filter, Restrictive: p.Restrictive, Roles: p.Roles}, c.IfNotExists, c.OrReplace)
	case *statement.DropRowPolicy:
		return r.cmds.DropRowPolicy(ctx, req.ClusterID, c.Database, c.Table, c.Name, c.IfExists)
	case *statement.CreateSettingsProfile:
		p := catalog.SettingsProfile{Name: c.Profile.Name, Roles: c.Profile.Roles}
		for _, ps := range c.Profile.Settings {
			p.Settings = append(p.Settings, catalog.ProfileSetting{Name: ps.Name, Value: ps.Value, Constraint: ps.Constraint.String()})
		}
		return r.cmds.CreateSettingsProfile(ctx, req.ClusterID, p, c.IfNotExists, c.OrReplace)
	case *statement.DropSettingsProfile:
		return r.cmds.DropSettingsProfile(ctx, req.ClusterID, c.Name, c.IfExists)
	}
	return &Error{Status: 400, Code: "unsupported_statement", Message: fmt.Sprintf("%T is not supported yet", cmd)}
}

// catalogView is the organization's catalog on one cluster, as analysis sees it.
type catalogView struct {
	m       *catalog.Model
	cluster uuid.UUID
}

func (c catalogView) Database(name string) (string, bool) {
	d, ok := c.m.Database(c.cluster, name)
	if !ok {
		return "", false
	}
	return d.Engine, true
}

func (c catalogView) Databases() []statement.Database {
	var out []statement.Database
	for _, d := range c.m.Databases(c.cluster) {
		out = append(out, statement.Database{Name: d.Name, Engine: d.Engine})
	}
	return out
}

func (c catalogView) Table(db, table string) (statement.Table, bool) {
	t, ok := c.m.Table(c.cluster, db, table)
	if !ok {
		return statement.Table{}, false
	}
	g, _ := t.Current()
	return statement.Table{Generation: g.N, Paths: TypedPaths(c.m, t), SortingKey: t.SortingKey, TTL: tables.RetentionTTL(t)}, true
}

// accessView is the cluster's roles, grants, policies and profiles.
type accessView struct {
	m       *catalog.Model
	cluster uuid.UUID
}

func (a accessView) RoleExists(name string) bool {
	_, ok := a.m.Role(a.cluster, name)
	return ok
}

func (a accessView) Grants(role string) []statement.Grant {
	var out []statement.Grant
	for _, g := range a.m.Grants(a.cluster, role) {
		sg := statement.Grant{Role: role, Database: g.Database, Table: g.Table, Columns: g.Columns}
		for _, p := range g.Privileges {
			switch p {
			case "SELECT":
				sg.Privileges |= statement.PrivSelect
			case "INSERT":
				sg.Privileges |= statement.PrivInsert
			}
		}
		out = append(out, sg)
	}
	return out
}

// DatabaseUserExists: every custom-role key has a database user named after it.
func (a accessView) DatabaseUserExists(name string) bool {
	return strings.HasPrefix(name, catalog.KeyUserPrefix)
}

func (a accessView) RowPolicies() []statement.RowPolicy {
	var out []statement.RowPolicy
	for _, p := range a.m.RowPolicies(a.cluster) {
		out = append(out, statement.RowPolicy{Name: p.Name, Database: p.Database, Table: p.Table, Filter: p.Filter,
			Restrictive: p.Restrictive, Roles: p.Roles})
	}
	return out
}

func (a accessView) SettingsProfiles() []statement.SettingsProfile {
	var out []statement.SettingsProfile
	for _, p := range a.m.SettingsProfiles(a.cluster) {
		sp := statement.SettingsProfile{Name: p.Name, Roles: p.Roles}
		for _, ps := range p.Settings {
			var c statement.Constraint
			_ = c.UnmarshalText([]byte(ps.Constraint))
			sp.Settings = append(sp.Settings, statement.ProfileSetting{Name: ps.Name, Value: ps.Value, Constraint: c})
		}
		out = append(out, sp)
	}
	return out
}

// firstGeneration creates the first generation of an INSERT ... SELECT's target, typing
// its key from the first rows the SELECT produces.
func (r *Runner) firstGeneration(ctx context.Context, req Request, st *statement.Statement, env statement.Env) error {
	w := st.Writes[0]
	t, ok := r.model.Table(req.ClusterID, w.Database, w.Table)
	if !ok {
		return &Error{Status: 404, Code: "table_not_found", Message: fmt.Sprintf("table %s.%s does not exist", w.Database, w.Table)}
	}
	eng, err := r.engines.QueryEngine(req.ClusterID)
	if err != nil {
		return engineUnavailable(err)
	}
	sample, err := sampleDocs(ctx, eng, "SELECT toString(doc) FROM ("+st.Source+") LIMIT 1000", EngineQueryID(req.OrgID, req.Database, req.QueryID))
	if err != nil {
		return engineError(err, env)
	}
	_, _, err = r.tables.Target(ctx, t.ID, sample)
	return err
}

// sampleDocs runs stmt, which selects documents as JSON text, for the rows a table's
// first generation is typed from.
func sampleDocs(ctx context.Context, eng Engine, stmt, queryID string) ([][]byte, error) {
	rows, err := eng.Stream(ctx, stmt, Options{QueryID: queryID + "-sample"})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var sample [][]byte
	for rows.Next() {
		if s, ok := rows.Values()[0].(string); ok {
			sample = append(sample, []byte(s))
		}
	}
	return sample, rows.Err()
}

// explainRows translates EXPLAIN's output into the caller's names, as engine errors are
// (statement.TranslateError): every kind (plain, PLAN with indexes or actions, SYNTAX,
// AST, QUERY TREE, PIPELINE, ESTIMATE's database and table columns) names the engine
// database o_<org>__<name> and the generations t__g<n> where the caller wrote name and t.
type explainRows struct {
	Rows
	env statement.Env
}

func (r explainRows) Values() []any {
	vals := r.Rows.Values()
	for i, v := range vals {
		switch x := v.(type) {
		case string:
			vals[i] = statement.TranslateError(x, r.env)
		case *string:
			if x != nil {
				t := statement.TranslateError(*x, r.env)
				vals[i] = &t
			}
		}
	}
	return vals
}
