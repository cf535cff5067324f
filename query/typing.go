package query

import (
	"context"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/sqlquote"
	"github.com/svc-data/svc/query/statement"
	"github.com/svc-data/svc/query/tables"
)

// PathSource is where TypedPaths reads a table's recorded paths (catalog.Model).
type PathSource interface {
	Paths(table uuid.UUID) map[string][]string
}

// TypedPaths returns the path schema a statement types a table's paths by
// (docs/typing.md): the paths recorded in the catalog, without the paths the column
// type declares (JSON(_time DateTime64(3, 'UTC'), ...)), which are typed already.
func TypedPaths(m PathSource, t *catalog.Table) map[string][]string {
	all := m.Paths(t.ID)
	if all == nil {
		return map[string][]string{} // known to be empty: every path reads NULL
	}
	declared := DeclaredPaths(t.ColumnType)
	if len(declared) == 0 {
		return all
	}
	out := make(map[string][]string, len(all))
	for p, types := range all {
		if !declared[p] {
			out[p] = types
		}
	}
	return out
}

// DeclaredPaths returns the paths a JSON column type declares with a type:
// JSON(a String, `b.c` Int64, max_dynamic_paths=10) declares a and b.c.
func DeclaredPaths(columnType string) map[string]bool {
	open := strings.IndexByte(columnType, '(')
	if open < 0 || !strings.HasSuffix(columnType, ")") {
		return nil
	}
	body := columnType[open+1 : len(columnType)-1]
	out := map[string]bool{}
	depth, start := 0, 0
	inQuote := byte(0)
	item := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" || strings.Contains(strings.SplitN(s, " ", 2)[0], "=") || strings.HasPrefix(strings.ToUpper(s), "SKIP ") {
			return
		}
		name := s
		if s[0] == '`' {
			if end := strings.IndexByte(s[1:], '`'); end >= 0 {
				name = s[1 : end+1]
			}
		} else if sp := strings.IndexByte(s, ' '); sp > 0 {
			name = s[:sp]
		}
		out[name] = true
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
		case c == '\'' || c == '`':
			inQuote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			item(body[start:i])
			start = i + 1
		}
	}
	item(body[start:])
	return out
}

// explainPathType turns an engine failure into the API's error (engineError), and an
// engine type error about a Dynamic path of st into the statement's 400 path_type (naming
// the path, the types seen and the cast to write).
func explainPathType(st *statement.Statement, err error, env statement.Env) error {
	apiErr := engineError(err, env)
	e, ok := apiErr.(*Error)
	if !ok || e.Code != "engine_error" || !engineerr.IsTypeRefused(err) {
		return apiErr
	}
	if pe := st.PathTypeError(e.Message); pe != nil {
		return &Error{Status: pe.Status, Code: pe.Code, Message: pe.Message, Hint: pe.Hint, EngineCode: e.EngineCode}
	}
	return apiErr
}

// TableNames implements statement.TableLister, so system.columns lists paths.
func (c catalogView) TableNames(db string) []string {
	var out []string
	for _, t := range c.m.Tables(c.cluster, db) {
		out = append(out, t.Name)
	}
	return out
}

// recordStoredPaths records in a table's path schema the paths and types of every
// document stored in one of its generations. INSERT ... SELECT and URL imports write
// without the consumer, so they record their paths this way once their rows are in; it
// reads the generation's documents once.
func (r *Runner) recordStoredPaths(ctx context.Context, eng Engine, tableID uuid.UUID, engineDB, engineTable, queryID string) error {
	src := sqlquote.Ident(engineDB) + "." + sqlquote.Ident(engineTable)
	n := 0
	query := func(sql string) ([]string, error) {
		id := queryID + "-paths"
		if n++; n > 1 {
			id += strconv.Itoa(n)
		}
		rows, err := eng.Stream(ctx, sql, Options{QueryID: id})
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			line, _ := rows.Values()[0].(string)
			lines = append(lines, line)
		}
		return lines, rows.Err()
	}
	lines, err := query(tables.PathsSQL(src))
	if err != nil {
		return err
	}
	seen := map[string][]string{}
	tables.AddPathLines(seen, lines)
	if err := tables.AddElementPaths(seen, src, query); err != nil {
		return err
	}
	return r.cmds.RecordPaths(ctx, tableID, seen)
}

// afterInsertSelect records the paths of an INSERT ... SELECT that completed. The rows
// are in, so a failure here cannot fail the statement (a retry would insert them
// again); new paths then read as Dynamic until recorded by a later import or a
// consumer batch of the same shape (docs/typing.md, "Limits").
func (r *Runner) afterInsertSelect(ctx context.Context, eng Engine, req Request, st *statement.Statement) {
	if st.Kind != statement.KindInsertSelect || len(st.Writes) != 1 {
		return
	}
	w := st.Writes[0]
	t, ok := r.model.Table(req.ClusterID, w.Database, w.Table)
	if !ok {
		return
	}
	_ = r.recordStoredPaths(ctx, eng, t.ID, w.EngineDatabase, w.EngineTable, req.QueryID)
}
