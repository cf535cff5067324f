package chclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/svc-data/svc/query"
)

var _ query.LineEngine = (*Client)(nil)

// rawHTTP posts statements to the engine's HTTP interface and hands the answer over as it
// is: no decoding, for formats the query API serves (almost) byte for byte.
type rawHTTP struct {
	base           string
	user, password string
	client         *http.Client
}

// StreamLines implements query.LineEngine. The format must encode one row per line (the
// JSON*EachRow family, TSV, CSV) so that the engine's in-band error block, which opens
// with a line of its own starting with "\r", is told from data.
func (c *Client) StreamLines(ctx context.Context, sql, format string, opt query.Options) (query.Lines, error) {
	resp, err := c.stream(ctx, sql, format, opt)
	if err != nil {
		return nil, err
	}
	r, _ := readers.Get().(*bufio.Reader)
	if r == nil {
		r = bufio.NewReaderSize(nil, 64<<10)
	}
	r.Reset(resp.Body)
	l := &lines{resp: resp, r: r, tag: resp.Header.Get("X-ClickHouse-Exception-Tag")}
	l.sum.set(resp.Header.Get(summaryHeader))
	return l, nil
}

// stream sends sql for an answer in format and returns the answer once it began: an
// engine that refused the statement outright is its exception, and a FORMAT clause in
// the statement that won over format is query.ErrNotLines.
func (c *Client) stream(ctx context.Context, sql, format string, opt query.Options) (*http.Response, error) {
	params := url.Values{"default_format": {format}}
	if opt.QueryID != "" {
		params.Set("query_id", opt.QueryID)
	}
	for k, v := range opt.Settings {
		params.Set(k, v)
	}
	req, err := c.raw.request(ctx, params, strings.NewReader(sql))
	if err != nil {
		return nil, err
	}
	resp, err := c.raw.client.Do(req)
	if err != nil {
		return nil, Classify(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, httpException(string(body), resp.Header.Get("X-ClickHouse-Exception-Code"), resp.StatusCode)
	}
	if got := resp.Header.Get("X-ClickHouse-Format"); got != "" && !strings.EqualFold(got, format) {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s, not %s", query.ErrNotLines, got, format)
	}
	return resp, nil
}

// request is a POST of body to the engine with params in its URL, authenticated.
func (h rawHTTP) request(ctx context.Context, params url.Values, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+"?"+params.Encode(), body)
	if err != nil {
		return nil, err
	}
	if h.user != "" || h.password != "" {
		req.SetBasicAuth(h.user, h.password)
	}
	return req, nil
}

// insert posts stmt (an INSERT ... FORMAT) with its data as the request body, and returns
// the engine's error classified as Exec's are.
func (h rawHTTP) insert(ctx context.Context, stmt string, body *nativeBody) error {
	req, err := h.request(ctx, url.Values{"query": {stmt}}, body)
	if err != nil {
		return err
	}
	req.ContentLength = body.size
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.again()), nil }
	return h.send(req)
}

// insertBlock is insert of a block built whole.
func (h rawHTTP) insertBlock(ctx context.Context, stmt string, block []byte) error {
	req, err := h.request(ctx, url.Values{"query": {stmt}}, bytes.NewReader(block))
	if err != nil {
		return err
	}
	return h.send(req)
}

func (h rawHTTP) send(req *http.Request) error {
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return httpException(string(text), resp.Header.Get("X-ClickHouse-Exception-Code"), resp.StatusCode)
	}
	return err
}

type lines struct {
	resp *http.Response
	r    *bufio.Reader
	tag  string
	long []byte
	err  error
	sum  summary
}

func (l *lines) Summary() query.Summary { return l.sum.get() }

// Size is the length of the engine's answer, or -1 when it streams (chengine sends a length
// only with a result it holds whole).
func (l *lines) Size() int64 { return l.resp.ContentLength }

func (l *lines) Next() ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	line, err := l.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = l.r.ReadSlice('\n')
			l.long = append(l.long, line...)
		}
		line = l.long
	}
	switch {
	case err == nil:
		if len(line) > 0 && line[0] == '\r' {
			// The engine's in-band error block: "\r\n__exception__\r\n<tag>\r\n<text>\n<len>
			// <tag>\r\n__exception__\r\n".
			rest, _ := io.ReadAll(io.LimitReader(l.r, 1<<20))
			l.err = inBandException(append(bytes.Clone(line), rest...), l.tag)
			return nil, l.err
		}
		return line[:len(line)-1], nil
	case errors.Is(err, io.EOF):
		if len(line) > 0 {
			l.err = errors.New("engine result ended within a line")
		} else {
			l.err = io.EOF
			// A streamed answer's summary follows its body.
			l.sum.set(l.resp.Trailer.Get(summaryHeader))
		}
	default:
		l.err = Classify(err)
	}
	return nil, l.err
}

func (l *lines) Close() error {
	if l.r == nil {
		return nil
	}
	l.r.Reset(nil)
	readers.Put(l.r)
	l.r = nil
	if l.err == nil {
		l.err = errors.New("lines closed")
	}
	return l.resp.Body.Close()
}

// readers are the line readers' buffers, reused: a statement's answer is often a few bytes.
var readers sync.Pool

var exceptionCode = regexp.MustCompile(`^Code:\s*(\d+)\.\s*`)

// httpException turns the engine's error text ("Code: 60. DB::Exception: ...") into the
// classified error the rest of the client returns.
func httpException(text, headerCode string, status int) error {
	msg := strings.TrimSpace(text)
	code, _ := strconv.Atoi(headerCode)
	if m := exceptionCode.FindStringSubmatch(msg); m != nil {
		if code == 0 {
			code, _ = strconv.Atoi(m[1])
		}
		msg = msg[len(m[0]):]
	}
	if code <= 0 {
		return fmt.Errorf("engine answered %d: %s", status, msg)
	}
	if i := strings.Index(msg, ": "); i > 0 && !strings.ContainsAny(msg[:i], " \t\r\n") && strings.Contains(strings.ToLower(msg[:i]), "exception") {
		msg = strings.TrimSpace(msg[i+1:])
	}
	return Classify(&clickhouse.Exception{Code: int32(code), Message: msg})
}

// inBandException reads the error block a streamed answer ends with.
func inBandException(block []byte, tag string) error {
	s := string(block)
	if i := strings.Index(s, "__exception__\r\n"+tag+"\r\n"); i >= 0 && tag != "" {
		s = s[i+len("__exception__\r\n"+tag+"\r\n"):]
		if j := strings.LastIndex(s, " "+tag+"\r\n__exception__"); j >= 0 {
			s = s[:j]
			if k := strings.LastIndexByte(s, '\n'); k >= 0 {
				s = s[:k]
			}
		}
	}
	return httpException(s, "", http.StatusOK)
}
