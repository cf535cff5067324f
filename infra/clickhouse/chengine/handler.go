package chengine

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/clickhouse/chdb"
	"github.com/svc-data/svc/query/sqlquote"
)

// request is one HTTP request, decoded.
type request struct {
	id            string
	database      string
	format        string // default_format, or TabSeparated
	settings      [][2]string
	params        []chdb.Param
	protocol      int  // client_protocol_version
	waitEnd       bool // wait_end_of_query
	framedRows    bool // output_format_json_array_of_rows: JSONEachRow gains a prefix and suffix
	maxQuerySize  int64
	sessionTZ     string
	body          io.Reader // the rest of the request after the analysed head
	head          string    // the statement, and for an INSERT the start of its data
	headComplete  bool
	statementText string // the statement as the client sent it, for logs
}

// helloQuery is what clickhouse-go sends, with client_protocol_version, when it opens an HTTP
// connection; see helloBlock.
const helloQuery = "SELECT displayName(), version(), revision(), timezone()"

// reservedParams are URL parameters of the HTTP interface that are not settings.
var reservedParams = map[string]bool{
	"query": true, "database": true, "default_format": true, "query_id": true,
	"client_protocol_version": true, "compress": true, "decompress": true, "user": true,
	"password": true, "quota_key": true, "buffer_size": true, "wait_end_of_query": true,
	"session_id": true, "session_timeout": true, "session_check": true, "close_session": true,
	"stacktrace": true, "role": true, "with_stacktrace": true,
}

var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// authorized reports whether a request carries the engine's password (Config.Password),
// by basic authentication or X-ClickHouse-Key; any request is when none is set.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.Password == "" {
		return true
	}
	got := r.Header.Get("X-ClickHouse-Key")
	if _, pw, ok := r.BasicAuth(); ok {
		got = pw
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Password)) == 1
}

// ServeHTTP serves ClickHouse's HTTP interface: /ping, and statements on every other path.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/ping":
		_, _ = io.WriteString(w, "Ok.\n")
		return
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		if !r.URL.Query().Has("query") {
			_, _ = io.WriteString(w, "Ok.\n")
			return
		}
	case r.Method == http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, POST")
		writeException(w, &exception{code: codeNotImplemented, status: http.StatusMethodNotAllowed,
			text: fmt.Sprintf("Code: %d. DB::Exception: method %s is not served; use GET or POST. (NOT_IMPLEMENTED)", codeNotImplemented, r.Method)})
		return
	}
	if !s.authorized(r) {
		writeException(w, &exception{code: codeAuthenticationFailed, status: http.StatusForbidden,
			text: fmt.Sprintf("Code: %d. DB::Exception: default: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED)", codeAuthenticationFailed)})
		return
	}
	req, err := s.decode(r)
	if err != nil {
		writeException(w, asException(err))
		return
	}
	h := w.Header()
	h.Set("X-ClickHouse-Query-Id", req.id)
	h.Set("X-ClickHouse-Timezone", req.timezone(s.info))
	h.Set("X-ClickHouse-Server-Display-Name", s.info.displayName)
	log := s.log.With(slog.String("query_id", req.id))

	st, err := analyze(req.head, req.headComplete)
	if err != nil {
		log.Debug("refused", slog.Any("error", err))
		writeException(w, asException(err))
		return
	}
	switch {
	case st.Insert != nil:
		req.format = st.Insert.Format
	case st.Format != "":
		req.format = st.Format
	}
	h.Set("X-ClickHouse-Format", req.format)

	if st.KillQueryID != "" {
		s.serveKill(w, r, req, st)
		return
	}
	// clickhouse-go opens an HTTP connection with its hello, under the query id of the
	// statement that needed the connection. The hello is not that statement: it is neither
	// registered under the id nor marked with it, so that what runs under an id (in
	// system.processes, and for KILL QUERY) is the statement only. A KILL that found the
	// hello cancelled nothing, and the statement then ran to its end
	// (TestKillRightAfterStart).
	hello := req.protocol > 0 && strings.EqualFold(req.format, "Native") &&
		strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(req.head), ";")) == helloQuery
	var run *running
	if !hello {
		run, err = s.reg.add(req.id, req.statementText)
		if err != nil {
			writeException(w, asException(err))
			return
		}
		defer s.reg.remove(run)
	}

	var sess *session
	defer func() {
		// Returned in the background: a dirty connection is replaced first, and the response
		// need not wait for that.
		if sess != nil {
			go s.pool.put(sess)
		}
	}()
	acquire := func() error {
		var err error
		if sess, err = s.acquire(r.Context(), req, st, r.Method == http.MethodGet); err != nil {
			writeException(w, asException(err))
		}
		return err
	}
	if acquire() != nil {
		return
	}

	t0 := time.Now()
	switch {
	case st.Insert != nil:
		err = s.serveInsert(w, r, sess, req, st, run)
	case hello:
		err = s.serveHello(w, sess, req)
	case streamingKinds[st.Kind] && streamableFormat(req.format) && !req.waitEnd && !req.framedRows:
		// (wait_end_of_query=1 asks for the whole result before the status: buffered.)
		err = s.serveStream(w, r, sess, req, run)
		if errors.Is(err, errStreamCutShort) {
			// libchdb ended the stream before the statement ended, and nothing went out yet:
			// stop the stray statement and run it again buffered, on a fresh connection.
			log.Warn("engine ended a result stream early; running the statement again buffered")
			s.killByMarker(req.id)
			sess.dirty = true
			go s.pool.put(sess)
			sess = nil
			if acquire() != nil {
				return
			}
			err = s.serveBuffered(w, r, sess, req, run)
		}
	default:
		err = s.serveBuffered(w, r, sess, req, run)
	}
	if err != nil {
		// A failed or cancelled statement stays in the engine's process list, with what it
		// holds, until its connection runs another statement or closes.
		sess.dirty = true
		log.Debug("statement failed", slog.String("kind", st.Kind), slog.Duration("took", time.Since(t0)), slog.Any("error", err))
		return
	}
	log.Debug("statement done", slog.String("kind", st.Kind), slog.Duration("took", time.Since(t0)))
}

// acquire takes a connection for the request and applies its database and settings, unless
// the connection has exactly those from an earlier request (session.state).
func (s *Server) acquire(ctx context.Context, req *request, st *statement, readOnly bool) (*session, error) {
	settings := req.prologueSettings(readOnly)
	key := prologueKey(req.database, settings)
	sess, err := s.pool.get(ctx, key)
	if err != nil {
		return nil, err
	}
	if sess.state != key {
		err = nil
		if sess.state != "" {
			err = s.pool.reset(sess)
		}
		if err == nil {
			err = s.prologue(sess, req.database, settings)
		}
		if err != nil {
			sess.dirty = true
			go s.pool.put(sess)
			return nil, err
		}
		sess.state = key
	}
	if !statelessKinds[st.Kind] || st.Temporary {
		sess.dirty = true
	}
	return sess, nil
}

// statelessKinds leave a connection's session as they found it. Any other statement (SET,
// USE, transactions, CREATE TEMPORARY TABLE, or a kind this list does not know) makes the
// connection dirty, and it is replaced before the next request.
var statelessKinds = map[string]bool{
	"SELECT": true, "WITH": true, "INSERT": true, "SHOW": true, "DESCRIBE": true, "DESC": true,
	"EXPLAIN": true, "EXISTS": true, "CHECK": true, "CREATE": true, "ALTER": true, "DROP": true,
	"TRUNCATE": true, "RENAME": true, "OPTIMIZE": true, "KILL": true, "DELETE": true, "UPDATE": true,
	"ATTACH": true, "DETACH": true, "SYSTEM": true, "EXCHANGE": true, "UNDROP": true,
}

// streamingKinds produce result sets of any size; their output is streamed. chdb streams
// SELECT only; SHOW, DESCRIBE and the like answer small results and run buffered.
var streamingKinds = map[string]bool{
	"SELECT": true, "WITH": true, "": true, // "" is a statement opening with a parenthesis
}

// streamableFormat reports whether format's output may be streamed. chdb finalizes the output
// format at every chunk it hands out, so each chunk is a whole document; only formats without
// a prefix or suffix (a stream of blocks, or of rows) concatenate into one valid output.
// Other formats (JSON, CSVWithNames, Parquet...) run buffered.
func streamableFormat(format string) bool {
	switch strings.ToLower(format) {
	case "native", "tabseparated", "tsv", "tabseparatedraw", "tsvraw", "raw", "csv",
		"jsoneachrow", "ndjson", "jsonlines", "jsoncompacteachrow", "jsonstringseachrow",
		"jsoncompactstringseachrow", "rowbinary", "tskv", "lineasstring", "rawblob", "null":
		return true
	}
	return headerLines(format) > 0
}

// headerLines is the number of header lines a streamable format with a header opens with.
// chdb repeats them at the top of every chunk; serveStream sends them once. Their names and
// types are JSON strings, so each header is one line.
func headerLines(format string) int {
	switch strings.ToLower(format) {
	case "jsoncompacteachrowwithnames", "jsoncompactstringseachrowwithnames":
		return 1
	case "jsoncompacteachrowwithnamesandtypes", "jsoncompactstringseachrowwithnamesandtypes":
		return 2
	}
	return 0
}

// dropLines returns chunk without its first n lines.
func dropLines(chunk []byte, n int) []byte {
	for ; n > 0; n-- {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			return nil
		}
		chunk = chunk[i+1:]
	}
	return chunk
}

func (r *request) timezone(info serverInfo) string {
	if r.sessionTZ != "" {
		return r.sessionTZ
	}
	return info.timezone
}

// decode reads the URL parameters and the head of the body.
func (s *Server) decode(r *http.Request) (*request, error) {
	q := r.URL.Query()
	req := &request{
		id:           q.Get("query_id"),
		database:     q.Get("database"),
		format:       q.Get("default_format"),
		maxQuerySize: s.cfg.MaxQuerySize,
	}
	if req.id == "" {
		req.id = uuid.NewString()
	}
	if req.format == "" {
		req.format = "TabSeparated"
	}
	if v := q.Get("client_protocol_version"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, newException(codeBadArguments, "client_protocol_version %q is not a number", v)
		}
		req.protocol = n
	}
	if isTrue(q.Get("compress")) || isTrue(q.Get("decompress")) {
		return nil, newException(codeNotImplemented, "native block compression (compress=1, decompress=1; clickhouse-go Compression LZ4 or ZSTD) is not served; use HTTP compression (gzip) or none")
	}
	if q.Get("session_id") != "" {
		return nil, newException(codeNotImplemented, "HTTP sessions (session_id) are not served: every request runs in a fresh session; send settings with each request")
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		return nil, newException(codeNotImplemented, "external tables (multipart/form-data) are not served")
	}
	req.waitEnd = isTrue(q.Get("wait_end_of_query"))
	for name, vs := range q {
		if len(vs) == 0 {
			continue
		}
		v := vs[len(vs)-1]
		switch {
		case reservedParams[name]:
		case strings.HasPrefix(name, "param_"):
			req.params = append(req.params, chdb.Param{Name: strings.TrimPrefix(name, "param_"), Value: v})
		default:
			if !settingName.MatchString(name) {
				return nil, newException(codeUnknownSetting, "Unknown setting '%s'", name)
			}
			req.settings = append(req.settings, [2]string{name, v})
			switch name {
			case "max_query_size":
				if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
					req.maxQuerySize = n
				}
			case "session_timezone":
				req.sessionTZ = v
			case "output_format_json_array_of_rows":
				req.framedRows = isTrue(v)
			}
		}
	}

	// Names are unique (a map's keys), so their order changes nothing but prologueKey.
	slices.SortFunc(req.settings, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })

	body, err := decodeBody(r)
	if err != nil {
		return nil, err
	}
	// ClickHouse reads the statement from the query parameter followed by a newline and the
	// body: with both, the body is the inline data of the statement in the URL.
	var src io.Reader = body
	if qs := q.Get("query"); qs != "" {
		src = io.MultiReader(strings.NewReader(qs+"\n"), body)
	}
	// The head: the statement, and for an INSERT the first bytes of its data. It is bounded
	// by max_query_size like a statement; the data after it streams. Reading stops as soon as
	// an INSERT's data begins, so that a slow body does not hold the statement back.
	var head []byte
	buf := make([]byte, 64<<10)
	for int64(len(head)) <= req.maxQuerySize {
		n, err := src.Read(buf[:min(int64(len(buf)), req.maxQuerySize+1-int64(len(head)))])
		head = append(head, buf[:n]...)
		if errors.Is(err, io.EOF) {
			req.headComplete = true
			break
		}
		if err != nil {
			return nil, newException(codeCannotReadAllData, "read request body: %v", err)
		}
		if insertDataBegins(string(head)) {
			break
		}
	}
	req.head = string(head)
	req.body = src
	req.statementText = req.head
	if len(req.statementText) > 4096 {
		req.statementText = req.statementText[:4096]
	}
	return req, nil
}

func isTrue(v string) bool { return v == "1" || strings.EqualFold(v, "true") }

// decodeBody undoes the request's Content-Encoding. Responses are never compressed.
func decodeBody(r *http.Request) (io.Reader, error) {
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return r.Body, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return strings.NewReader(""), nil
			}
			return nil, newException(codeCannotDecompress, "gzip request body: %v", err)
		}
		return zr, nil
	case "deflate":
		zr, err := zlib.NewReader(r.Body)
		if err != nil {
			return nil, newException(codeCannotDecompress, "deflate request body: %v", err)
		}
		return zr, nil
	default:
		return nil, newException(codeNotImplemented, "Content-Encoding %q is not served; use gzip, deflate or none", enc)
	}
}

// prologueSettings are the settings a request applies to its connection.
func (r *request) prologueSettings(readOnly bool) [][2]string {
	settings := r.settings
	if readOnly && !slices.ContainsFunc(settings, func(kv [2]string) bool { return kv[0] == "readonly" }) {
		// As ClickHouse: a GET cannot modify data.
		settings = append(slices.Clone(settings), [2]string{"readonly", "2"})
	}
	return settings
}

// prologueKey identifies the session state a database and settings leave on a fresh
// connection: "" for none. Settings apply in order, so the key keeps it.
func prologueKey(database string, settings [][2]string) string {
	if database == "" && len(settings) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(strconv.Quote(database))
	for _, kv := range settings {
		b.WriteByte('\n')
		b.WriteString(strconv.Quote(kv[0]))
		b.WriteByte('=')
		b.WriteString(strconv.Quote(kv[1]))
	}
	return b.String()
}

// prologue applies a database and settings to a fresh connection. They stay until the
// connection is replaced (pool.reset), which happens before a request that needs another
// state runs on it.
func (s *Server) prologue(sess *session, database string, settings [][2]string) error {
	if database != "" {
		if _, err := sess.conn.Query("USE "+sqlquote.Ident(database), "TabSeparated"); err != nil {
			return err
		}
	}
	if len(settings) > 0 {
		var b strings.Builder
		b.WriteString("SET ")
		for i, kv := range settings {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(kv[0])
			b.WriteString(" = ")
			b.WriteString(sqlquote.String(kv[1]))
		}
		if _, err := sess.conn.Query(b.String(), "TabSeparated"); err != nil {
			return err
		}
	}
	return nil
}
