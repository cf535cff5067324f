// Package chclient implements the domain's engine ports with clickhouse-go/v2 over
// ClickHouse's HTTP interface, so the same code talks to chengine and to real servers.
package chclient

import (
	"context"
	sqldriver "database/sql/driver"
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

// Client is one engine's clickhouse-go connection pool.
type Client struct {
	conn driver.Conn
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
	return &Client{conn: conn}, nil
}

// Conn exposes the driver connection to other adapters of this engine.
func (c *Client) Conn() driver.Conn { return c.conn }

// Close closes the pool.
func (c *Client) Close() error { return c.conn.Close() }

// Ping checks that the engine answers.
func (c *Client) Ping(ctx context.Context) error { return c.conn.Ping(ctx) }

// Exec implements pipeline.Engine.
func (c *Client) Exec(ctx context.Context, sql string) error {
	return Classify(c.conn.Exec(ctx, sql))
}

// QueryStrings implements pipeline.Engine.
func (c *Client) QueryStrings(ctx context.Context, sql string) ([]string, error) {
	rows, err := c.conn.Query(ctx, sql)
	if err != nil {
		return nil, Classify(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, Classify(rows.Err())
}

// InsertRows implements pipeline.Engine: the rows travel inline after FORMAT, as
// ClickHouse's HTTP interface defines, and the engine parses them with its own JSON
// reader.
func (c *Client) InsertRows(ctx context.Context, database, table, token string, rows []byte) error {
	var b strings.Builder
	b.Grow(len(rows) + 256)
	b.WriteString("INSERT INTO ")
	b.WriteString(sqlquote.Ident(database))
	b.WriteByte('.')
	b.WriteString(sqlquote.Ident(table))
	b.WriteString(" SETTINGS insert_deduplication_token = ")
	b.WriteString(sqlquote.String(token))
	// A document naming one path twice ({"a":1,"a":2}, or "a.b" beside {"a":{"b":..}})
	// keeps the first value, as the transforms do, instead of failing a whole batch.
	b.WriteString(", type_json_skip_duplicated_paths = 1 FORMAT JSONAsObject\n")
	b.Write(rows)
	return Classify(c.conn.Exec(ctx, b.String()))
}

// rejectedCodes are engine error codes caused by the data itself: retrying the same rows
// can never succeed.
var rejectedCodes = map[int32]bool{
	6:   true, // CANNOT_PARSE_TEXT
	26:  true, // CANNOT_PARSE_QUOTED_STRING
	27:  true, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
	32:  true, // ATTEMPT_TO_READ_AFTER_EOF
	38:  true, // CANNOT_PARSE_DATE
	41:  true, // CANNOT_PARSE_DATETIME
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
	691: true, // UNKNOWN_ELEMENT_OF_ENUM
}

// Classify marks errors caused by the data with pipeline.ErrRejected; everything else
// (connection refused, engine restarting, timeouts) stays retryable.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) && rejectedCodes[ex.Code] {
		return fmt.Errorf("%w: %w", pipeline.ErrRejected, err)
	}
	return err
}

// Unavailable reports whether err means the engine could not be reached.
func Unavailable(err error) bool {
	var ne net.Error
	var op *net.OpError
	return errors.As(err, &op) || (errors.As(err, &ne) && ne.Timeout()) || errors.Is(err, sqldriver.ErrBadConn)
}
