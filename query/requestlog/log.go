// Package requestlog records every API request of an organization in its cluster's
// engine and answers GET /v1/logs. Recording never blocks a request: entries go through a
// bounded buffer that is written in batches, and a full buffer drops entries (counted).
package requestlog

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/query/sqlquote"
)

// Entry is one API request.
type Entry struct {
	ID            string    `json:"id"` // the request's span id
	CreatedAt     time.Time `json:"created_at"`
	OrgID         uuid.UUID `json:"-"`
	ClusterID     uuid.UUID `json:"-"`
	Method        string    `json:"method"`
	Path          string    `json:"path"`
	Route         string    `json:"route"`
	Status        int       `json:"status"`
	Source        string    `json:"source"` // ui, cli or api
	DurationMS    float64   `json:"duration_ms"`
	UserAgent     string    `json:"user_agent"`
	ClientVersion string    `json:"client_version"`
	RequestSize   int       `json:"request_size"`
	TraceID       string    `json:"trace_id"`
	Database      string    `json:"database"`
	Error         *Error    `json:"error"`
	// Body is the request body for supported requests, at most MaxBody bytes.
	Body *string `json:"body"`
}

// Error is the structured error of a failed request.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// MaxBody is how much of a request body an entry keeps.
const MaxBody = 8 << 10

// Engine is what the log needs of a cluster's engine.
type Engine interface {
	Exec(ctx context.Context, sql string) error
	QueryStrings(ctx context.Context, sql string) ([]string, error)
}

// Engines gives a cluster's engine.
type Engines interface {
	Engine(cluster uuid.UUID) (Engine, error)
}

// Log is the request log.
type Log struct {
	engines Engines
	in      chan Entry
	log     *slog.Logger
}

// New returns a log buffering up to capacity entries.
func New(engines Engines, capacity int, log *slog.Logger) *Log {
	return &Log{engines: engines, in: make(chan Entry, capacity), log: log}
}

// Schema creates the log's table in an engine, keeping entries days days (SVC_REQUEST_LOG_DAYS,
// 30 by default); a table made with another retention gets this one.
func Schema(ctx context.Context, e Engine, days int) error {
	ttl := fmt.Sprintf("toDateTime(created_at) + toIntervalDay(%d)", days)
	if err := e.Exec(ctx, `CREATE TABLE IF NOT EXISTS _svc.request_log (
		id String, created_at DateTime64(3, 'UTC'), org_id String, cluster_id String,
		method LowCardinality(String), path String, route LowCardinality(String), status UInt16,
		source LowCardinality(String), duration_ms Float64, user_agent String, client_version String,
		request_size UInt64, trace_id String, database String, error_code String, error_message String,
		body Nullable(String)
	) ENGINE = MergeTree ORDER BY (org_id, cluster_id, created_at)
	TTL `+ttl); err != nil {
		return err
	}
	return EnsureTTL(ctx, e, "_svc", "request_log", ttl)
}

// EnsureTTL sets the TTL of db.table to ttl (written as the engine prints it) unless its
// engine_full already has it.
func EnsureTTL(ctx context.Context, e Engine, db, table, ttl string) error {
	full, err := e.QueryStrings(ctx, "SELECT engine_full FROM system.tables WHERE database = "+sqlquote.String(db)+
		" AND name = "+sqlquote.String(table))
	if err != nil || len(full) != 1 {
		return fmt.Errorf("read the TTL of %s.%s: %v", db, table, err)
	}
	if strings.Contains(full[0], " TTL "+ttl+" ") || strings.HasSuffix(full[0], " TTL "+ttl) {
		return nil
	}
	return e.Exec(ctx, "ALTER TABLE "+sqlquote.Ident(db)+"."+sqlquote.Ident(table)+" MODIFY TTL "+ttl)
}

// Record queues an entry; it never blocks.
func (l *Log) Record(e Entry) {
	select {
	case l.in <- e:
	default: // full: the entry is dropped rather than slowing the request
	}
}

// Run writes queued entries every interval until ctx ends, then writes what is left.
func (l *Log) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			l.flush(fctx)
			cancel()
			return
		case <-t.C:
			l.flush(ctx)
		}
	}
}

func (l *Log) flush(ctx context.Context) {
	byCluster := map[uuid.UUID][]Entry{}
	for {
		select {
		case e := <-l.in:
			byCluster[e.ClusterID] = append(byCluster[e.ClusterID], e)
			continue
		default:
		}
		break
	}
	for cluster, entries := range byCluster {
		e, err := l.engines.Engine(cluster)
		if err != nil {
			continue // the cluster is gone or stopped: its entries have nowhere to go
		}
		var b strings.Builder
		b.WriteString("INSERT INTO _svc.request_log FORMAT JSONEachRow\n")
		for _, en := range entries {
			row := map[string]any{"id": en.ID, "created_at": en.CreatedAt.UTC().Format("2006-01-02 15:04:05.000"),
				"org_id": en.OrgID.String(), "cluster_id": en.ClusterID.String(), "method": en.Method, "path": en.Path,
				"route": en.Route, "status": en.Status, "source": en.Source, "duration_ms": en.DurationMS,
				"user_agent": en.UserAgent, "client_version": en.ClientVersion, "request_size": en.RequestSize,
				"trace_id": en.TraceID, "database": en.Database, "body": en.Body}
			if en.Error != nil {
				row["error_code"], row["error_message"] = en.Error.Code, en.Error.Message
			}
			raw, _ := json.Marshal(row)
			b.Write(raw)
			b.WriteByte('\n')
		}
		if err := e.Exec(ctx, b.String()); err != nil {
			l.log.Warn("request log entries lost", "cluster", cluster, "entries", len(entries), "err", err)
		}
	}
}

// Filter selects entries (SPEC: Platform request logs).
type Filter struct {
	Start, End  *time.Time // inclusive bounds
	Limit       int        // default 50, at most 200
	Offset      int
	Search      string // free text over id, method, path, status, source, user agent, errors
	Methods     []string
	StatusCodes []int
	Sources     []string
	UserAgent   string // exact
}

// Page is a page of entries, newest first.
type Page struct {
	Logs    []Entry `json:"logs"`
	Limit   int     `json:"limit"`
	Offset  int     `json:"offset"`
	HasMore bool    `json:"has_more"`
}

// Query returns an organization's entries on a cluster.
func (l *Log) Query(ctx context.Context, org, cluster uuid.UUID, f Filter) (Page, error) {
	page := Page{Logs: []Entry{}, Limit: f.Limit, Offset: f.Offset}
	e, err := l.engines.Engine(cluster)
	if err != nil {
		return page, err
	}
	where := []string{"org_id = " + sqlquote.String(org.String()), "cluster_id = " + sqlquote.String(cluster.String())}
	if f.Start != nil {
		where = append(where, "created_at >= "+timeLit(*f.Start))
	}
	if f.End != nil {
		where = append(where, "created_at <= "+timeLit(*f.End))
	}
	if len(f.Methods) > 0 {
		where = append(where, "method IN ("+litList(f.Methods)+")")
	}
	if len(f.Sources) > 0 {
		where = append(where, "source IN ("+litList(f.Sources)+")")
	}
	if len(f.StatusCodes) > 0 {
		var codes []string
		for _, c := range f.StatusCodes {
			codes = append(codes, strconv.Itoa(c))
		}
		where = append(where, "status IN ("+strings.Join(codes, ",")+")")
	}
	if f.UserAgent != "" {
		where = append(where, "user_agent = "+sqlquote.String(f.UserAgent))
	}
	if f.Search != "" {
		s := sqlquote.String(f.Search)
		where = append(where, fmt.Sprintf("(positionCaseInsensitive(id, %[1]s) > 0 OR positionCaseInsensitive(method, %[1]s) > 0 "+
			"OR positionCaseInsensitive(path, %[1]s) > 0 OR positionCaseInsensitive(toString(status), %[1]s) > 0 "+
			"OR positionCaseInsensitive(source, %[1]s) > 0 OR positionCaseInsensitive(user_agent, %[1]s) > 0 "+
			"OR positionCaseInsensitive(error_code, %[1]s) > 0 OR positionCaseInsensitive(error_message, %[1]s) > 0)", s))
	}
	q := fmt.Sprintf("SELECT formatRowNoNewline('JSONEachRow', id, created_at, method, path, route, status, source, duration_ms, "+
		"user_agent, client_version, request_size, trace_id, database, error_code, error_message, body) FROM _svc.request_log "+
		"WHERE %s ORDER BY created_at DESC, id LIMIT %d OFFSET %d", strings.Join(where, " AND "), f.Limit+1, f.Offset)
	lines, err := e.QueryStrings(ctx, q)
	if err != nil {
		return page, err
	}
	if len(lines) > f.Limit {
		page.HasMore, lines = true, lines[:f.Limit]
	}
	for _, line := range lines {
		var r struct {
			Entry
			CreatedAt    string      `json:"created_at"`
			Status       int         `json:"status"`
			RequestSize  json.Number `json:"request_size"`
			ErrorCode    string      `json:"error_code"`
			ErrorMessage string      `json:"error_message"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return page, fmt.Errorf("read request log: %w", err)
		}
		en := r.Entry
		en.CreatedAt, _ = time.Parse("2006-01-02 15:04:05.000", r.CreatedAt)
		size, _ := strconv.Atoi(strings.Trim(r.RequestSize.String(), `"`))
		en.Status, en.RequestSize = r.Status, size
		if r.ErrorCode != "" || r.ErrorMessage != "" {
			en.Error = &Error{Code: r.ErrorCode, Message: r.ErrorMessage}
		}
		page.Logs = append(page.Logs, en)
	}
	return page, nil
}

func litList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = sqlquote.String(s)
	}
	return strings.Join(q, ",")
}

func timeLit(t time.Time) string {
	return "toDateTime64(" + sqlquote.String(t.UTC().Format("2006-01-02 15:04:05.000")) + ", 3, 'UTC')"
}
