// Package chclient implements the domain's engine ports with clickhouse-go/v2 over
// ClickHouse's HTTP interface, so the same code talks to chengine and to real servers.
package chclient

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/sqlquote"
)

// Config locates an engine.
type Config struct {
	// URL is the engine's HTTP address, e.g. http://127.0.0.1:8123 (user and password
	// may be given in it).
	URL string
	// Password, when set, is sent as the password of user "default" (an embedded
	// engine's secret), in place of any user in URL.
	Password string
	// MaxConns bounds concurrent requests to the engine.
	MaxConns int
	// DialTimeout bounds connecting; QueryTimeout bounds a statement that has no deadline
	// of its own.
	DialTimeout time.Duration
}

// Client is one engine's clickhouse-go connection pool, and a plain HTTP client for results
// streamed as the engine encodes them (StreamLines).
type Client struct {
	conn driver.Conn
	raw  rawHTTP
	strs *stringTypes
}

var _ pipeline.Engine = (*Client)(nil)

// Open connects to the engine (no round trip until first use).
func Open(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("engine url %q: want http://host:port", cfg.URL)
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 16
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	opts := &clickhouse.Options{
		Protocol:        clickhouse.HTTP,
		Addr:            []string{u.Host},
		DialTimeout:     cfg.DialTimeout,
		MaxOpenConns:    cfg.MaxConns,
		MaxIdleConns:    cfg.MaxConns,
		ConnMaxLifetime: time.Hour,
		Compression:     &clickhouse.Compression{Method: clickhouse.CompressionNone},
		TransportFunc: func(t *http.Transport) (http.RoundTripper, error) {
			// clickhouse-go sizes its transport for one connection at a time; queries and
			// inserts of a whole node share this pool.
			t.MaxIdleConns, t.MaxIdleConnsPerHost = cfg.MaxConns, cfg.MaxConns
			return summaryTransport{next: t}, nil
		},
	}
	if u.User != nil {
		opts.Auth.Username = u.User.Username()
		opts.Auth.Password, _ = u.User.Password()
	}
	if cfg.Password != "" {
		opts.Auth.Username, opts.Auth.Password = "default", cfg.Password
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open engine %s: %w", u.Host, err)
	}
	raw := rawHTTP{base: u.Scheme + "://" + u.Host + "/", user: opts.Auth.Username, password: opts.Auth.Password,
		client: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConns: cfg.MaxConns, MaxIdleConnsPerHost: cfg.MaxConns,
			// An insert's body goes out in writes of this size (the default, 4 KiB, is a
			// system call per 4 KiB of rows).
			WriteBufferSize: 128 << 10,
			// Answers of many rows (PromQL samples) come in reads of this size.
			ReadBufferSize: 64 << 10,
			DialContext:    (&net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second}).DialContext}}}
	return &Client{conn: conn, raw: raw, strs: &stringTypes{}}, nil
}

// Close closes the pool.
func (c *Client) Close() error {
	c.raw.client.CloseIdleConnections()
	return c.conn.Close()
}

// Ping checks that the engine answers.
func (c *Client) Ping(ctx context.Context) error { return c.conn.Ping(ctx) }

// Exec runs a statement without a result.
func (c *Client) Exec(ctx context.Context, sql string) error {
	return Classify(c.conn.Exec(ctx, sql))
}

// QueryStrings runs a query whose result is one String column.
func (c *Client) QueryStrings(ctx context.Context, sql string) ([]string, error) {
	return c.QueryStringsArgs(ctx, sql)
}

// ExecArgs implements pipeline.Engine: clickhouse-go renders args into the ? placeholders
// as literals of their Go types (strings quoted, slices as arrays).
func (c *Client) ExecArgs(ctx context.Context, sql string, args ...any) error {
	return Classify(c.conn.Exec(ctx, sql, args...))
}

// QueryStringsArgs implements pipeline.Engine.
func (c *Client) QueryStringsArgs(ctx context.Context, sql string, args ...any) ([]string, error) {
	rows, err := c.conn.Query(ctx, sql, args...)
	if err != nil {
		return nil, Classify(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, Classify(err)
		}
		out = append(out, s)
	}
	return out, Classify(rows.Err())
}

// InsertRows implements pipeline.Engine: the statement goes in the URL and the rows in the
// request body, as ClickHouse's HTTP interface defines, as one Native block whose JSON
// column carries each row as text (nativeBody), and the engine parses them with its own
// JSON reader. The body is read straight from the parts: the rows are not copied into a
// statement text first.
//
// The block declares the column as columnType, the table's own type ("" is "JSON"), so
// the engine parses each row straight into the typed paths. Declared as plain JSON, the
// rows of a table with typed paths (logsearch_events) were parsed into dynamic paths and
// then cast to the table's type, which tripled the engine's CPU per row (issue 27).
//
// The consumer inserts its batches with EncodeRows and InsertEncoded, in the JSON type's
// flattened serialization where it can (jsonBlock); InsertRows is the text its fallbacks
// (rows isolated after a rejection) and the other writers send.
func (c *Client) InsertRows(ctx context.Context, database, table, columnType, token string, rows ...[]byte) error {
	return c.InsertEncoded(ctx, database, table, token, pipeline.EncodedRows{ColumnType: columnType, Rows: rows})
}

// writeInsert writes an INSERT into database.table under token, of data in format that
// follows the newline it ends with.
func writeInsert(b *strings.Builder, database, table, token, format string) {
	b.WriteString("INSERT INTO ")
	b.WriteString(sqlquote.Ident(database))
	b.WriteByte('.')
	b.WriteString(sqlquote.Ident(table))
	b.WriteString(" SETTINGS insert_deduplication_token = ")
	b.WriteString(sqlquote.String(token))
	// A document naming one path twice ({"a":1,"a":2}, or "a.b" beside {"a":{"b":..}})
	// keeps the first value, as the transforms do, instead of failing a whole batch.
	b.WriteString(", type_json_skip_duplicated_paths = 1 FORMAT ")
	b.WriteString(format)
	b.WriteByte('\n')
}

var _ pipeline.RawInserter = (*Client)(nil)

// InsertFormat implements pipeline.RawInserter: like InsertRows, the data travels inline
// after FORMAT (binary formats too: the engine reads data from the first byte after the
// newline that ends the statement).
func (c *Client) InsertFormat(ctx context.Context, database, table, columns, format, token string, data []byte) error {
	if format == "RowBinary" && len(data) > 0 && data[0] == ';' && columns != "" {
		// The engine reads a ';' where an INSERT's data begins as an excessive end of
		// statement (SYNTAX_ERROR), so RowBinary data opening with that byte (a series
		// id's, say) goes as RowBinaryWithNames, whose header (the column count, under 59)
		// comes first.
		format, data = "RowBinaryWithNames", append(rowBinaryNames(columns), data...)
	}
	var b strings.Builder
	b.Grow(len(data) + len(columns) + 256)
	b.WriteString("INSERT INTO ")
	b.WriteString(sqlquote.Ident(database))
	b.WriteByte('.')
	b.WriteString(sqlquote.Ident(table))
	b.WriteString(" (")
	b.WriteString(columns)
	b.WriteString(") SETTINGS insert_deduplication_token = ")
	b.WriteString(sqlquote.String(token))
	b.WriteString(" FORMAT ")
	b.WriteString(format)
	b.WriteByte('\n')
	b.Write(data)
	return Classify(c.conn.Exec(ctx, b.String()))
}

// rowBinaryNames is the RowBinaryWithNames header of a column list ("a, b").
func rowBinaryNames(columns string) []byte {
	names := strings.Split(columns, ",")
	h := binary.AppendUvarint(nil, uint64(len(names)))
	for _, n := range names {
		n = strings.Trim(strings.TrimSpace(n), "`\"")
		h = binary.AppendUvarint(h, uint64(len(n)))
		h = append(h, n...)
	}
	return h
}

// permanentCodes are engine error codes caused by the data itself: retrying the same
// rows can never succeed. That includes a generation's CREATE refused for the types its
// sample rows gave the sorting key (query/tables), which would otherwise be retried
// forever and stall the partition.
var permanentCodes = map[int32]bool{
	6:   true, // CANNOT_PARSE_TEXT
	26:  true, // CANNOT_PARSE_QUOTED_STRING
	27:  true, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
	32:  true, // ATTEMPT_TO_READ_AFTER_EOF
	38:  true, // CANNOT_PARSE_DATE
	41:  true, // CANNOT_PARSE_DATETIME
	43:  true, // ILLEGAL_TYPE_OF_ARGUMENT: a key function over a row's value of another type
	44:  true, // ILLEGAL_COLUMN: a generation keyed by a type the rows have (e.g. Nullable) cannot exist
	53:  true, // TYPE_MISMATCH
	69:  true, // ARGUMENT_OUT_OF_BOUND
	70:  true, // CANNOT_CONVERT_TYPE
	72:  true, // CANNOT_PARSE_NUMBER
	117: true, // INCORRECT_DATA
	131: true, // TOO_LARGE_STRING_SIZE
	153: true, // ILLEGAL_DIVISION: a row's own sorting-key expression divides by zero
	306: true, // TOO_DEEP_RECURSION
	321: true, // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
	349: true, // CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN
	549: true, // DATA_TYPE_CANNOT_BE_USED_IN_KEY: likewise
	691: true, // UNKNOWN_ELEMENT_OF_ENUM
}

// fatalCodes are engine error codes no retry of the same statement can fix, whatever
// the data: an object the statement names is gone, or the statement, a setting or
// the credentials are wrong. Every other code (memory, too many parts or queries,
// cancelled, timeouts, the engine's own failures) is retryable.
var fatalCodes = map[int32]bool{
	16:  true, // NO_SUCH_COLUMN_IN_TABLE
	36:  true, // BAD_ARGUMENTS
	47:  true, // UNKNOWN_IDENTIFIER
	60:  true, // UNKNOWN_TABLE
	62:  true, // SYNTAX_ERROR
	81:  true, // UNKNOWN_DATABASE
	115: true, // UNKNOWN_SETTING
	164: true, // READONLY
	192: true, // UNKNOWN_USER
	193: true, // WRONG_PASSWORD
	497: true, // ACCESS_DENIED
	516: true, // AUTHENTICATION_FAILED
}

// kinds are the engine error codes callers branch on by more than their class, named in
// engineerr's vocabulary (engineerr.IsUnknownTable, ...).
var kinds = map[int32]engineerr.Kind{
	60:  engineerr.UnknownTable,                      // UNKNOWN_TABLE
	81:  engineerr.UnknownDatabase,                   // UNKNOWN_DATABASE
	47:  engineerr.UnknownIdentifier,                 // UNKNOWN_IDENTIFIER
	43:  engineerr.WrongType | engineerr.TypeRefused, // ILLEGAL_TYPE_OF_ARGUMENT
	53:  engineerr.WrongType | engineerr.TypeRefused, // TYPE_MISMATCH
	70:  engineerr.WrongType,                         // CANNOT_CONVERT_TYPE
	386: engineerr.WrongType | engineerr.TypeRefused, // NO_COMMON_TYPE
	44:  engineerr.TypeRefused,                       // ILLEGAL_COLUMN
	48:  engineerr.TypeRefused,                       // NOT_IMPLEMENTED
	169: engineerr.TypeRefused,                       // BAD_TYPE_OF_FIELD
}

// codeUnknownException is the code the embedded engine (chengine) answers libchdb's
// errors that carry none.
const codeUnknownException = 1002

// kindOf is the kind of an engine exception. libchdb's "no stream for an empty result"
// has no code of its own (UNKNOWN_EXCEPTION, like any error libchdb raises without one):
// its text tells it apart, here and nowhere else.
func kindOf(ex *clickhouse.Exception) engineerr.Kind {
	if ex.Code == codeUnknownException && strings.Contains(ex.Message, "No active streaming query") {
		return engineerr.NoActiveStream
	}
	return kinds[ex.Code]
}

// Classify turns the driver's engine exceptions into *engineerr.Error with their class
// and kind, once, where they happen: it is the one place raw engine codes are read.
// Callers branch on the class (errors.Is(err, engineerr.Permanent), engineerr.ClassOf)
// and the kind's predicates (engineerr.IsUnknownTable, ...), never on a code or the
// driver's types. A permanent or fatal error's text opens with its class ("rows rejected by the engine: code: 6,
// ..."), as dead letters and logs show it. Errors that are not the engine's answer
// (connection refused or cut, timeouts) stay as they are, which every caller treats as
// retryable.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var ex *clickhouse.Exception
	if !errors.As(err, &ex) {
		return err
	}
	e := &engineerr.Error{Code: ex.Code, Message: ex.Message, Class: engineerr.Retryable, Kinds: kindOf(ex), Err: err}
	switch {
	case permanentCodes[ex.Code]:
		e.Class = engineerr.Permanent
		return fmt.Errorf("%w: %w", e.Class, e)
	case fatalCodes[ex.Code]:
		e.Class = engineerr.Fatal
		return fmt.Errorf("%w: %w", e.Class, e)
	}
	return e
}
