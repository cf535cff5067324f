package tables

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/sqlquote"
)

// Retention is how long a table keeps a row: until the time at Path in the row plus
// Seconds has passed. The engine enforces it as the TTL of every generation (TTL); a row
// whose Path is missing or not a time is kept.
type Retention struct {
	Path    string
	Seconds int64
}

// DefaultTimePath is the path a duration alone ("30d") is measured on: the time of a
// row as the OTLP transforms write it. The log-search app's table measures on _time.
const DefaultTimePath = "timestamp"

// Bounds of a retention: a minute to a hundred years (the TTL's date arithmetic stays
// far inside DateTime64(3)'s range, see noTime).
const (
	minRetentionSeconds = 60
	maxRetentionSeconds = 36500 * 86400
)

// timePath is the path a duration alone is measured on in a table of columnType.
func timePath(columnType string) string {
	if columnType == LogSearchColumnType {
		return "_time"
	}
	return DefaultTimePath
}

var units = []struct {
	short, long string
	seconds     int64
}{
	{"w", "WEEK", 7 * 86400}, {"d", "DAY", 86400}, {"h", "HOUR", 3600}, {"m", "MINUTE", 60}, {"s", "SECOND", 1},
}

// ParseRetention reads a retention as the API takes it: a duration ("30d", "12h"; units
// s, m, h, d, w), measured on the table's time path (timePath), or a TTL expression
// over a time path ("ts + INTERVAL 30 DAY", or "ts + 30d"). It returns the retention and
// its canonical text. The empty string is no retention (rows are kept forever).
func ParseRetention(s, columnType string) (*Retention, string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, "", nil
	}
	left, right, isExpr := strings.Cut(s, "+")
	if !isExpr {
		secs, err := parseDuration(s)
		if err != nil {
			return nil, "", err
		}
		return &Retention{Path: timePath(columnType), Seconds: secs}, s, nil
	}
	path := strings.TrimSpace(left)
	if err := checkTimePath(path); err != nil {
		return nil, "", err
	}
	words := strings.Fields(right)
	var secs int64
	var err error
	switch {
	case len(words) == 1:
		secs, err = parseDuration(words[0])
		if err == nil {
			words = []string{"INTERVAL", words[0][:len(words[0])-1], words[0][len(words[0])-1:]}
		}
	case len(words) == 3 && strings.EqualFold(words[0], "INTERVAL"):
		secs, err = parseInterval(words[1], words[2])
	default:
		err = fmt.Errorf("retention %q: write a duration (30d) or <time path> + INTERVAL <n> <DAY|HOUR|...>", s)
	}
	if err != nil {
		return nil, "", err
	}
	// Canonical: the amount and unit as written, the unit's SQL name in the singular.
	n, _ := strconv.ParseInt(words[1], 10, 64)
	unit := unitOf(words[2])
	return &Retention{Path: path, Seconds: secs}, fmt.Sprintf("%s + INTERVAL %d %s", path, n, unit.long), nil
}

// unitOf finds a unit by its short or SQL name (singular or plural, any case).
func unitOf(s string) (u struct {
	short, long string
	seconds     int64
}) {
	long := strings.TrimSuffix(strings.ToUpper(s), "S")
	for _, x := range units {
		if x.short == s || x.long == long {
			return x
		}
	}
	return u
}

// expression is the TTL-expression text of r in its largest whole unit.
func (r *Retention) expression() string {
	for _, u := range units {
		if r.Seconds%u.seconds == 0 {
			return fmt.Sprintf("%s + INTERVAL %d %s", r.Path, r.Seconds/u.seconds, u.long)
		}
	}
	return "" // unreachable: every whole number of seconds has a unit
}

// Text is how the API shows r in a table of columnType: a duration when measured on the
// table's time path, else the TTL expression.
func (r *Retention) Text(columnType string) string {
	if r == nil {
		return ""
	}
	if r.Path == timePath(columnType) {
		for _, u := range units {
			if r.Seconds%u.seconds == 0 {
				return strconv.FormatInt(r.Seconds/u.seconds, 10) + u.short
			}
		}
	}
	return r.expression()
}

func parseDuration(s string) (int64, error) {
	if len(s) < 2 {
		return 0, fmt.Errorf("retention %q: write a duration such as 30d or 12h (units s, m, h, d, w)", s)
	}
	for _, u := range units {
		if strings.HasSuffix(s, u.short) {
			return bounded(s, s[:len(s)-1], u.seconds)
		}
	}
	return 0, fmt.Errorf("retention %q: unknown unit; use s, m, h, d or w (30d, 12h)", s)
}

func parseInterval(n, unit string) (int64, error) {
	u := strings.TrimSuffix(strings.ToUpper(unit), "S")
	for _, x := range units {
		if x.long == u {
			return bounded(n+" "+unit, n, x.seconds)
		}
	}
	return 0, fmt.Errorf("retention: unknown INTERVAL unit %q; use SECOND, MINUTE, HOUR, DAY or WEEK", unit)
}

func bounded(text, digits string, unit int64) (int64, error) {
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 0 || digits[0] == '+' {
		return 0, fmt.Errorf("retention %q: the amount must be a positive whole number", text)
	}
	if n > maxRetentionSeconds/unit || n*unit < minRetentionSeconds {
		return 0, fmt.Errorf("retention %q: must be between 1 minute and 36500 days", text)
	}
	return n * unit, nil
}

// checkTimePath accepts a dotted path of plain names (ts, event.time), the form a TTL
// reads with getSubcolumn.
func checkTimePath(p string) error {
	segs := strings.Split(p, ".")
	if p == "" || len(segs) > 16 {
		return fmt.Errorf("retention: the time path %q must be a dotted path of names (ts, event.time)", p)
	}
	for _, s := range segs {
		if !plainName(s) {
			return fmt.Errorf("retention: the time path %q must be a dotted path of names (ts, event.time)", p)
		}
	}
	return nil
}

func plainName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i, c := range s {
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// noTime is the time of a row whose time path is missing or not a time: far enough
// ahead that such rows are never deleted, near enough that adding the longest retention
// stays inside DateTime64(3)'s range (2299).
const noTime = "toDateTime64('2190-01-01 00:00:00', 3, 'UTC')"

// TTL is the engine's TTL expression for r, written exactly as the engine prints it
// back in system.tables' engine_full, so DecodeTTL can read it. The path is read with
// getSubcolumn (a TTL cannot name a JSON subcolumn as doc.ts), as text, parsed as a time
// the way the engine reads times in JSON (ISO 8601, "2026-11-28 01:00:00", Unix seconds).
func (r *Retention) TTL() string {
	return "ifNull(parseDateTime64BestEffortOrNull(toString(getSubcolumn(doc, " + sqlquote.String(r.Path) + ")), 3, 'UTC'), " +
		noTime + ") + toIntervalSecond(" + strconv.FormatInt(r.Seconds, 10) + ")"
}

// EngineTTL is the TTL clause of a MergeTree table's engine_full (system.tables), ""
// when it has none. The clause sits between " TTL " and " SETTINGS " (a generation
// always has settings); only display and comparison read it.
func EngineTTL(engineFull string) string {
	end := strings.LastIndex(engineFull, " SETTINGS ")
	if end < 0 {
		end = len(engineFull)
	}
	start := strings.LastIndex(engineFull[:end], " TTL ")
	if start < 0 {
		return ""
	}
	return engineFull[start+len(" TTL ") : end]
}

// DecodeTTL reads a TTL clause the service wrote (TTL) back into its retention; false
// for a clause of any other form, which the service did not write.
func DecodeTTL(ttl string) (*Retention, bool) {
	prefix := "ifNull(parseDateTime64BestEffortOrNull(toString(getSubcolumn(doc, '"
	rest, ok := strings.CutPrefix(ttl, prefix)
	if !ok {
		return nil, false
	}
	path, rest, ok := strings.Cut(rest, "'")
	if !ok || checkTimePath(path) != nil {
		return nil, false
	}
	i := strings.LastIndex(rest, "toIntervalSecond(")
	if i < 0 || !strings.HasSuffix(rest, ")") {
		return nil, false
	}
	secs, err := strconv.ParseInt(rest[i+len("toIntervalSecond("):len(rest)-1], 10, 64)
	if err != nil {
		return nil, false
	}
	r := &Retention{Path: path, Seconds: secs}
	if r.TTL() != ttl { // anything else in the clause: not ours
		return nil, false
	}
	return r, true
}

// CheckRetention validates a retention as the API takes it for a table of columnType
// and returns its canonical text; a bad one is a FieldError naming the field.
func CheckRetention(s, columnType string) (string, error) {
	_, canonical, err := ParseRetention(s, columnType)
	if err != nil {
		return "", &catalog.FieldError{Field: "retention", Message: err.Error()}
	}
	return canonical, nil
}

// retentionOf is t's retention, nil when it keeps rows forever. The catalog holds only
// canonical text ParseRetention accepted.
func retentionOf(t *catalog.Table) *Retention {
	r, _, err := ParseRetention(t.Retention, t.ColumnType)
	if err != nil {
		return nil
	}
	return r
}

// RetentionTTL is t's retention as a TTL expression in user names, the time path plus an
// interval ("timestamp + INTERVAL 30 DAY"), "" when it keeps rows forever: what SHOW
// CREATE TABLE shows, and a text ParseRetention reads back.
func RetentionTTL(t *catalog.Table) string {
	if r := retentionOf(t); r != nil {
		return r.expression()
	}
	return ""
}

// ttlClause is the TTL clause of t's generations, "" without a retention.
func ttlClause(t *catalog.Table) string {
	if r := retentionOf(t); r != nil {
		return " TTL " + r.TTL()
	}
	return ""
}

// ChangeRetention records a table's retention, then sets the TTL of each of its
// generations in the engine; the engine applies a changed TTL to the rows it already
// holds (MODIFY TTL materializes it, in the background). An empty retention removes the
// TTL: rows are kept from then on.
func (m *Manager) ChangeRetention(ctx context.Context, cluster uuid.UUID, database, name, retention string) (*catalog.Table, error) {
	t, ok := m.cat.Model().Table(cluster, database, name)
	if !ok {
		return nil, fmt.Errorf("%w: table %q in database %q", catalog.ErrNotFound, name, database)
	}
	canonical, err := CheckRetention(retention, t.ColumnType)
	if err != nil {
		return nil, err
	}
	if t, err = m.cat.ChangeRetention(ctx, cluster, database, name, canonical); err != nil {
		return nil, err
	}
	e, err := m.engines.Engine(cluster)
	if err != nil {
		return nil, err
	}
	for _, g := range t.Generations {
		if err := m.applyTTL(ctx, e, t, g.N); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// SetDatabaseRetention records the retention tables created in a database from now on
// get when their creation names none; "" keeps their rows forever.
func (m *Manager) SetDatabaseRetention(ctx context.Context, cluster uuid.UUID, database, retention string) (*catalog.Database, error) {
	canonical, err := CheckRetention(retention, "JSON")
	if err != nil {
		return nil, err
	}
	return m.cat.SetDatabaseRetention(ctx, cluster, database, canonical)
}

// applyTTL makes generation n of t have t's retention as its engine TTL, unless the
// engine already has exactly that.
func (m *Manager) applyTTL(ctx context.Context, e Engine, t *catalog.Table, n int) error {
	name := catalog.GenerationTable(t.Name, n)
	have, err := engineTables(ctx, e, t.Engine)
	if err != nil {
		return err
	}
	full, exists := have[name]
	if !exists {
		return fmt.Errorf("generation %d of %s is missing in the engine", n, t.Name)
	}
	gen := sqlquote.Ident(t.Engine) + "." + sqlquote.Ident(name)
	r, current := retentionOf(t), EngineTTL(full)
	switch {
	case r == nil && current == "":
		return nil
	case r == nil:
		err = e.Exec(ctx, "ALTER TABLE "+gen+" REMOVE TTL")
	case current == r.TTL():
		return nil
	default:
		// materialize_ttl_after_modify (on by default) applies it to existing rows.
		err = e.Exec(ctx, "ALTER TABLE "+gen+" MODIFY TTL "+r.TTL())
	}
	if err != nil {
		return fmt.Errorf("set the retention of %s generation %d: %w", t.Name, n, err)
	}
	return nil
}

// reconcileTTL gives the generations of t the engine has t's retention, where a change
// did not reach them (the engine was stopped or failed meanwhile). It is best effort: a
// generation it cannot change stays as it is, and the read-back shows the mismatch.
func (m *Manager) reconcileTTL(ctx context.Context, t *catalog.Table) {
	e, err := m.engines.Engine(t.ClusterID)
	if err != nil || len(t.Generations) == 0 {
		return
	}
	have, err := engineTables(ctx, e, t.Engine)
	if err != nil {
		return
	}
	for _, g := range t.Generations {
		if _, ok := have[catalog.GenerationTable(t.Name, g.N)]; ok {
			_ = m.applyTTL(ctx, e, t, g.N)
		}
	}
}

// engineTables maps the names of the tables of engine database db to their engine_full.
func engineTables(ctx context.Context, e Engine, db string) (map[string]string, error) {
	rows, err := e.QueryStrings(ctx, "SELECT concat(name, '\\t', engine_full) FROM system.tables WHERE database = "+sqlquote.String(db))
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		name, full, _ := strings.Cut(r, "\t")
		out[name] = full
	}
	return out, nil
}

// Retention states of a table as read back from the engine (RetentionState.Status).
const (
	RetentionInSync   = "in_sync"  // every generation's TTL is the setting
	RetentionPending  = "pending"  // no rows yet: the first generation gets the setting
	RetentionMismatch = "mismatch" // the engine enforces something else (Problem says what)
	RetentionUnknown  = "unknown"  // the engine did not answer
)

// RetentionState is a table's retention as the engine enforces it, beside its setting.
type RetentionState struct {
	// Setting is the retention the table was given (the catalog's), "" for none.
	Setting string
	// Engine is what the current generation's TTL enforces, in the API's text, "" when
	// it keeps rows forever; the raw TTL when the service did not write it.
	Engine string
	// TTL is the current generation's TTL clause as the engine prints it.
	TTL     string
	Status  string
	Problem string
}

// ReadRetention reads the TTL of every generation of tables (of one cluster) from the
// engine (system.tables' engine_full) and compares it with each table's setting: the
// API shows what the engine keeps, never only what was asked.
func (m *Manager) ReadRetention(ctx context.Context, cluster uuid.UUID, tables []*catalog.Table) map[uuid.UUID]RetentionState {
	out := make(map[uuid.UUID]RetentionState, len(tables))
	byDB := map[string]map[string]string{}
	var engineErr error
	e, err := m.engines.Engine(cluster)
	if err != nil {
		engineErr = err
	}
	for _, t := range tables {
		st := RetentionState{Setting: t.Retention}
		if len(t.Generations) == 0 {
			st.Status, st.Problem = RetentionPending, "the table has no rows yet; its first rows create the engine table with this retention"
			out[t.ID] = st
			continue
		}
		have, ok := byDB[t.Engine]
		if !ok && engineErr == nil {
			if have, err = engineTables(ctx, e, t.Engine); err != nil {
				engineErr = err
			}
			byDB[t.Engine] = have
		}
		if engineErr != nil {
			st.Status, st.Problem = RetentionUnknown, "the engine did not answer, so what it enforces is not known"
			out[t.ID] = st
			continue
		}
		out[t.ID] = compareRetention(t, have, st)
	}
	return out
}

// compareRetention fills st from the engine_full of t's generations in have.
func compareRetention(t *catalog.Table, have map[string]string, st RetentionState) RetentionState {
	want := retentionOf(t)
	wantText := "rows kept forever"
	if want != nil {
		wantText = want.Text(t.ColumnType)
	}
	var problems []string
	for i, g := range t.Generations {
		full, ok := have[catalog.GenerationTable(t.Name, g.N)]
		if !ok {
			problems = append(problems, fmt.Sprintf("generation %d is missing in the engine", g.N))
			continue
		}
		ttl := EngineTTL(full)
		got, ours := DecodeTTL(ttl)
		text := ""
		switch {
		case ttl == "":
		case ours && want != nil && *got == *want:
			text = t.Retention // the same retention, as it was written
		case ours:
			text = got.Text(t.ColumnType)
		default:
			text = ttl
		}
		if i == len(t.Generations)-1 {
			st.TTL, st.Engine = ttl, text
		}
		switch {
		case ttl == "" && want == nil:
		case ours && want != nil && *got == *want:
		case ttl == "":
			problems = append(problems, fmt.Sprintf("generation %d has no TTL in the engine (rows kept forever); the setting is %s", g.N, wantText))
		case !ours:
			problems = append(problems, fmt.Sprintf("generation %d has a TTL the service did not write (%s); the setting is %s", g.N, ttl, wantText))
		default:
			problems = append(problems, fmt.Sprintf("generation %d keeps rows %s in the engine; the setting is %s", g.N, text, wantText))
		}
	}
	st.Status = RetentionInSync
	if len(problems) > 0 {
		st.Status, st.Problem = RetentionMismatch, strings.Join(problems, "; ")
	}
	return st
}
