package statement

import (
	"slices"
	"strconv"
	"strings"

	"github.com/svc-data/svc/query/sqlquote"
)

// INSERT INTO target SELECT ... (POST /v1/query). The header (target,
// settings) is read here, since the parser library knows neither SETTINGS
// before the query nor WITH after INSERT; the query by the parser.
//
// The target is the table's current generation t__g<n>, whose one column is
// doc JSON. Each row of the query becomes one document: SELECT * FROM t
// copies documents; any other query becomes objects keyed by its output
// column names (formatRowNoNewline('JSONEachRow', *)).

const insertHint = "INSERT INTO target SELECT ... FROM source"

func (a *analyzer) insert(t *tokens) (*Statement, *Error) {
	t.next() // INSERT
	if err := t.expect(insertHint, "INTO"); err != nil {
		return nil, err
	}
	t.accept("TABLE")
	if t.peek().is("FUNCTION") {
		return nil, badRequest(CodeInsert, t.peek().pos, insertHint, "INSERT INTO FUNCTION (url, urlCluster, file, s3, ...) is not supported")
	}
	db, table, pos, err := a.tableName(t, insertHint)
	if err != nil {
		return nil, err
	}
	if t.peek().isOp("(") {
		return nil, badRequest(CodeInsert, t.peek().pos, "name the output columns of the SELECT instead: SELECT x AS a, y AS b",
			"column lists are not supported: rows are documents keyed by the SELECT's column names")
	}
	var header []settingUse
	if t.accept("SETTINGS") {
		for {
			name, npos, err := plainName(t, "a setting name", insertHint)
			if err != nil {
				return nil, err
			}
			if err := t.expectOp(insertHint, "="); err != nil {
				return nil, err
			}
			v := t.next()
			if err := refuseSetting(name, npos); err != nil {
				return nil, err
			}
			kind := settingKinds[name]
			value, str, ok := headerValue(v, kind)
			if !ok {
				return nil, badRequest(CodeSetting, v.pos, "", "invalid value for setting %s", name)
			}
			if name == "workload" {
				if err := checkWorkloadName(value, v.pos); err != nil {
					return nil, err
				}
			}
			if name == "max_threads" {
				value = a.threadsLimit(value)
			}
			header = append(header, settingUse{name: name, value: value, pos: npos, str: str})
			if !t.acceptOp(",") {
				break
			}
		}
	}
	switch w := t.peek(); {
	case w.is("VALUES"):
		return nil, badRequest(CodeInsert, w.pos, "insert rows with POST /v1/tables/{table}", "INSERT ... VALUES is not supported")
	case w.is("FORMAT"):
		return nil, badRequest(CodeInsert, w.pos, "insert rows with POST /v1/tables/{table}", "INSERT ... FORMAT is not supported")
	case w.is("FROM"):
		return nil, badRequest(CodeInsert, w.pos, "insert rows with POST /v1/tables/{table}", "INSERT ... FROM INFILE is not supported")
	case !(w.is("SELECT") || w.is("WITH") || w.isOp("(")):
		return nil, badRequest(CodeInsert, w.pos, insertHint, "expected SELECT, got %s", w.describe())
	}
	start := t.peek().pos
	p := a.env.Principal
	if !p.byGrants() && !(p.canRead() && p.canWrite()) {
		return nil, forbidden(CodeForbidden, -1, "use a key with read_write or admin permission",
			"INSERT ... SELECT needs read and write permission (%s)", p)
	}
	if db != a.env.Database {
		return nil, badRequest(CodeInsert, pos, "select the target's database with the database parameter",
			"the target must be in the selected database %s", a.env.Database)
	}
	if db == systemDatabase {
		return nil, badRequest(CodeInsert, pos, "", "the system database is read-only")
	}
	engineDB, err := a.engineDatabase(db, pos)
	if err != nil {
		return nil, err
	}
	info, ok := a.env.Catalog.Table(db, table)
	if !ok || !isLogicalName(table) {
		return nil, notFound(CodeUnknownTable, pos, "create it first: CREATE TABLE "+quoteName(table, false)+" ENGINE = ReplicatedRawMergeTree",
			"table %s.%s does not exist", db, table)
	}
	if p.byGrants() && !a.holds(PrivInsert, db, table) {
		return nil, forbidden(CodeForbidden, pos, "ask an administrator to GRANT INSERT ON "+db+"."+table+" to one of your roles",
			"no role of this key may insert into %s.%s", db, table)
	}
	q, err := parseOneQuery(a.sql, start, len(a.sql), "")
	if err != nil {
		return nil, withParseHint(err, a.sql)
	}
	sel, outs, err := a.query(q, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	if err := a.authorizeReads(); err != nil {
		return nil, err
	}
	// The query's trailing SETTINGS belong to the whole INSERT: hoist them
	// into the INSERT's SETTINGS, ahead of the SELECT that wraps the query.
	last := sel
	for last.next != nil {
		last = last.next
	}
	if s := last.q.Settings; s != nil {
		last.q.Settings = nil
		for _, it := range s.Items {
			for _, u := range a.settings {
				if u.pos == int(it.Pos()) {
					header = append(header, u)
				}
			}
		}
	}
	for _, h := range header {
		if !slices.ContainsFunc(a.settings, func(s settingUse) bool { return s.pos == h.pos }) {
			a.settings = append(a.settings, h)
		}
	}
	target := TableRef{Database: db, Table: table, EngineDatabase: engineDB, EngineTable: table + "__g" + strconv.Itoa(info.Generation)}
	project := "formatRowNoNewline('JSONEachRow', *) AS doc"
	if len(outs) == 1 && outs[0].doc {
		project = docColumn
	}
	query := "SELECT " + project + " FROM (" + render(sel) + ")"
	if err := a.verify(query); err != nil {
		return nil, err
	}
	if info.Generation <= 0 {
		// The table has no storage yet: its first generation's key is typed from the
		// rows this query produces. The caller creates it from Source and analyzes again.
		return &Statement{Kind: KindInsertSelect, Source: query, NeedsGeneration: true, Reads: a.readRefs(),
			Writes: []TableRef{target}, EmptyResult: true, RowPolicies: a.policies}, nil
	}
	var b strings.Builder
	b.WriteString("INSERT INTO " + quoteTable(target.EngineDatabase, target.EngineTable) + " (doc)")
	if len(header) > 0 {
		b.WriteString(" SETTINGS ")
		for i, h := range header {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(h.name + " = " + settingLiteral(h))
		}
	}
	b.WriteString(" " + query)
	settings, err := a.requestSettings(true)
	if err != nil {
		return nil, err
	}
	return &Statement{
		Kind:        KindInsertSelect,
		SQL:         b.String(),
		Reads:       a.readRefs(),
		Writes:      []TableRef{target},
		Settings:    settings,
		EmptyResult: true,
		RowPolicies: a.policies,
		Hints:       a.hints,
	}, nil
}

// holds reports whether one of the caller's roles has priv on db.table.
func (a *analyzer) holds(priv Privilege, db, table string) bool {
	return holds(a.env.Principal, a.access, priv, db, table)
}

func headerValue(v token, kind settingKind) (string, bool, bool) {
	switch {
	case v.kind == tokNumber && kind != settingString:
		return v.text, false, true
	case v.kind == tokString && kind != settingNumber:
		s, ok := plainString(v.text)
		return s, true, ok
	case v.kind == tokIdent && !v.quoted && kind != settingString && (v.is("true") || v.is("false")):
		if v.is("true") {
			return "1", false, true
		}
		return "0", false, true
	}
	return "", false, false
}

// settingLiteral renders a setting value for the SQL text.
func settingLiteral(s settingUse) string {
	if s.str {
		return sqlquote.String(s.value)
	}
	return s.value
}
