package chclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/format"
)

var _ query.Engine = (*Client)(nil)

// Stream implements query.Engine.
func (c *Client) Stream(ctx context.Context, sql string, opt query.Options) (query.Rows, error) {
	sum := &summary{}
	ctx = context.WithValue(ctx, summaryKey{}, sum)
	var qopts []clickhouse.QueryOption
	if opt.QueryID != "" {
		qopts = append(qopts, clickhouse.WithQueryID(opt.QueryID))
	}
	if len(opt.Settings) > 0 {
		s := clickhouse.Settings{}
		for k, v := range opt.Settings {
			s[k] = clickhouse.CustomSetting{Value: v}
		}
		qopts = append(qopts, clickhouse.WithSettings(s))
	}
	if len(qopts) > 0 {
		ctx = clickhouse.Context(ctx, qopts...)
	}
	rows, err := c.conn.Query(ctx, sql)
	if err != nil {
		return nil, Classify(err)
	}
	types := rows.ColumnTypes()
	cols := make([]format.Column, len(types))
	dest := make([]any, len(types))
	vals := make([]any, len(types))
	for i, t := range types {
		cols[i] = format.Column{Name: t.Name(), Type: t.DatabaseTypeName()}
		dest[i] = reflect.New(t.ScanType()).Interface()
	}
	return &streamRows{rows: rows, cols: cols, dest: dest, vals: vals, sum: sum}, nil
}

type streamRows struct {
	rows driver.Rows
	cols []format.Column
	dest []any
	vals []any
	sum  *summary
	err  error
}

func (r *streamRows) Columns() []format.Column { return r.cols }

func (r *streamRows) Next() bool {
	if r.err != nil || !r.rows.Next() {
		return false
	}
	if err := r.rows.Scan(r.dest...); err != nil {
		r.err = Classify(err)
		return false
	}
	for i, d := range r.dest {
		r.vals[i] = reflect.ValueOf(d).Elem().Interface()
	}
	return true
}

func (r *streamRows) Values() []any { return r.vals }

func (r *streamRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return Classify(r.rows.Err())
}

func (r *streamRows) Close() error { return r.rows.Close() }

func (r *streamRows) Summary() query.Summary { return r.sum.get() }

// The engine's account of a statement arrives in the X-ClickHouse-Summary header, and
// from chengine also as a trailer once the result is complete (a header cannot carry
// what is only known after streaming). clickhouse-go does not surface either, so the
// transport below reads them for the request's context.
type summaryKey struct{}

type summary struct {
	mu sync.Mutex
	s  query.Summary
}

func (s *summary) get() query.Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s
}

func (s *summary) set(raw string) {
	if raw == "" {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &m) != nil {
		return
	}
	num := func(k string) uint64 {
		v := m[k]
		var str string
		if json.Unmarshal(v, &str) == nil {
			n, _ := strconv.ParseUint(str, 10, 64)
			return n
		}
		var n uint64
		_ = json.Unmarshal(v, &n)
		return n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.s = query.Summary{RowsRead: num("read_rows"), BytesRead: num("read_bytes"), WrittenRows: num("written_rows"),
		WrittenBytes: num("written_bytes"), Known: true}
}

const summaryHeader = "X-ClickHouse-Summary"

type summaryTransport struct{ next http.RoundTripper }

func (t summaryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	sum, _ := req.Context().Value(summaryKey{}).(*summary)
	if sum == nil {
		return resp, nil
	}
	sum.set(resp.Header.Get(summaryHeader))
	resp.Body = &trailerReader{ReadCloser: resp.Body, resp: resp, sum: sum}
	return resp, nil
}

// trailerReader records the summary trailer when the body ends.
type trailerReader struct {
	io.ReadCloser
	resp *http.Response
	sum  *summary
	done bool
}

func (t *trailerReader) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if err == io.EOF && !t.done {
		t.done = true
		t.sum.set(t.resp.Trailer.Get(summaryHeader))
	}
	return n, err
}
