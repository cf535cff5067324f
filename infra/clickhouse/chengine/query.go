package chengine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-data/svc/infra/clickhouse/chdb"
	"github.com/svc-data/svc/query/sqlquote"
)

// errStreamCutShort reports that libchdb ended a result stream, before any output, while the
// statement nobody cancelled was still running: the caller runs it again buffered.
var errStreamCutShort = errors.New("engine ended the result stream before the statement ended")

// summary is the X-ClickHouse-Summary header. chdb counts the rows of the result as "read"
// and what came from storage as "storage read"; ClickHouse's read_rows is the latter.
func summary(st chdb.Stats, resultBytes int) string {
	return fmt.Sprintf(`{"read_rows":"%d","read_bytes":"%d","written_rows":"%d","written_bytes":"%d","total_rows_to_read":"0","result_rows":"%d","result_bytes":"%d","elapsed_ns":"%d"}`,
		st.StorageRowsRead, st.StorageBytesRead, st.RowsWritten, st.BytesWritten, st.RowsRead, resultBytes, st.Elapsed.Nanoseconds())
}

// contentType is the Content-Type ClickHouse gives a format.
func contentType(format string) string {
	f := strings.ToLower(format)
	switch {
	case strings.HasPrefix(f, "json"), f == "ndjson":
		if strings.Contains(f, "eachrow") || strings.Contains(f, "lines") || f == "ndjson" {
			return "application/x-ndjson; charset=UTF-8"
		}
		return "application/json; charset=UTF-8"
	case strings.HasPrefix(f, "tabseparated"), strings.HasPrefix(f, "tsv"):
		return "text/tab-separated-values; charset=UTF-8"
	case strings.HasPrefix(f, "csv"):
		return "text/csv; charset=UTF-8; header=absent"
	case strings.HasPrefix(f, "native"), strings.HasPrefix(f, "rowbinary"), strings.HasPrefix(f, "arrow"),
		f == "parquet", f == "orc", f == "avro", strings.HasPrefix(f, "protobuf"), f == "msgpack":
		return "application/octet-stream"
	case f == "xml":
		return "application/xml; charset=UTF-8"
	}
	return "text/plain; charset=UTF-8"
}

// watch cancels run when the client goes away; the returned func stops watching.
func (s *Server) watch(ctx context.Context, run *running) func() bool {
	return context.AfterFunc(ctx, run.cancel)
}

// killer returns the abort of a statement that only a KILL from another connection can stop.
func (s *Server) killer(run *running) func() {
	return func() { killLoop(s.bg, run.done, func() { s.killByMarker(run.id) }) }
}

// serveBuffered runs a statement and answers with its whole result and its summary: DDL,
// INSERT ... SELECT, SHOW, and SELECTs in formats that cannot be streamed.
func (s *Server) serveBuffered(w http.ResponseWriter, r *http.Request, sess *session, req *request, run *running) error {
	run.setAbort(s.killer(run))
	stop := s.watch(r.Context(), run)
	defer stop()
	var werr error
	err := sess.conn.QueryFunc(marker(req.id)+req.head, req.format, req.params, func(data []byte, st chdb.Stats) error {
		h := w.Header()
		h.Set("Content-Type", contentType(req.format))
		h.Set("X-ClickHouse-Summary", summary(st, len(data)))
		h.Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusOK)
		_, werr = w.Write(data)
		return nil
	})
	if err != nil {
		writeException(w, asException(err))
		return err
	}
	return werr
}

// serveHello answers clickhouse-go's connection hello (in Native, with a protocol
// version). See helloBlock. It runs without the query id's marker: see ServeHTTP.
func (s *Server) serveHello(w http.ResponseWriter, sess *session, req *request) error {
	res, err := sess.conn.Query("SELECT displayName(), version(), timezone()", "TabSeparated")
	if err != nil {
		writeException(w, asException(err))
		return err
	}
	f := strings.Split(strings.TrimRight(string(res.Data), "\n"), "\t")
	if len(f) != 3 {
		err := fmt.Errorf("hello: unexpected engine answer %q", res.Data)
		writeException(w, asException(err))
		return err
	}
	block := helloBlock(f[0], f[1], f[2], req.protocol)
	h := w.Header()
	h.Set("Content-Type", contentType("Native"))
	h.Set("X-ClickHouse-Summary", summary(res.Stats, len(block)))
	h.Set("Content-Length", strconv.Itoa(len(block)))
	_, err = w.Write(block)
	return err
}

// serveKill translates KILL QUERY WHERE query_id = '<id>': chdb knows its own ids only, so
// the statement carrying the id's marker is cancelled instead.
func (s *Server) serveKill(w http.ResponseWriter, r *http.Request, req *request, st *statement) {
	target := s.reg.get(st.KillQueryID)
	status := "finished"
	if target != nil {
		target.cancel()
		if st.KillSync {
			select {
			case <-target.done:
			case <-r.Context().Done():
				return
			}
		} else {
			status = "waiting"
		}
	}
	// The result set ClickHouse answers a KILL with: one row per statement it matched.
	query := ""
	if target != nil {
		query = target.query
	}
	q := fmt.Sprintf("SELECT %s AS kill_status, %s AS query_id, 'default' AS user, %s AS query",
		sqlquote.String(status), sqlquote.String(st.KillQueryID), sqlquote.String(query))
	if target == nil {
		q += " WHERE 0"
	}
	res, err := s.ctl.Query(q, req.format)
	if err != nil {
		writeException(w, asException(err))
		return
	}
	w.Header().Set("Content-Type", contentType(req.format))
	w.Header().Set("Content-Length", strconv.Itoa(len(res.Data)))
	_, _ = w.Write(res.Data)
}

// statementGone reports whether the statement of query id has left the engine's process list.
// A statement that finished leaves it before its stream ends; one still listed after its
// stream ended was cut off by libchdb, whose fetch loop returns an empty chunk, which means
// the end, whenever a packet advances the row count without output (progress packets). It
// costs about 1 ms; streams that end quickly skip it (quickEnd); the alternative is a
// silently short result and a connection left running a statement.
func (s *Server) statementGone(id string) bool {
	// The texts are searched here rather than by a WHERE: half the engine's time (about 0.9
	// against 1.8 ms; BenchmarkFloor/processes_probe). Skipping the check for every stream
	// that ends early, cancelled or not, was tried: a killed statement's stream then passed
	// for complete (TestKillQuery, about one run in ten).
	const q = "SELECT query FROM system.processes WHERE query_id != queryID()"
	m := []byte(strings.TrimSpace(marker(id)))
	// A statement that finished leaves the list within a millisecond or two: the first
	// waits are short, the whole wait about as long as before (63 ms).
	for attempt := range 7 {
		res, err := s.probe.Query(q, "TSVRaw")
		if err == nil && !bytes.Contains(res.Data, m) {
			return true
		}
		if attempt < 6 {
			time.Sleep(time.Duration(1<<attempt) * time.Millisecond)
		}
	}
	return false
}

// quickEnd bounds the run of a streamed statement whose end is trusted without asking
// system.processes (statementGone, about 1 ms: twice SELECT 1 itself).
//
// libchdb ends a stream (an iteration that added no rows) as if complete when the statement
// was killed, and, by its fetch loop, on any packet that carries no rows, such as a progress
// packet; the engine sends the first of those interactive_delay (default 100 ms) after the
// statement began. A kill only ever comes from chengine itself, through running.cancel, which
// marks the statement before it issues one; and a KILL meant for an earlier statement of the
// same id cannot reach this one (registry.add waits for running.gone). So a stream that ended
// within quickEnd, counted from before the statement was sent, of a statement nobody
// cancelled, with the default interactive_delay, ended because the result was complete.
// TestKillQuery and TestShortStreamsEndWhole check both sides on the engine.
const quickEnd = 50 * time.Millisecond

// quickEndTrusted reports whether req leaves interactive_delay at its default, in the URL's
// settings and in the statement's text (a mention anywhere counts: the cost of a false
// match is only the check).
func quickEndTrusted(req *request) bool {
	for _, kv := range req.settings {
		if strings.EqualFold(kv[0], "interactive_delay") {
			return false
		}
	}
	return !containsFold(req.head, "interactive_delay")
}

// containsFold reports whether s contains the lower-case ASCII word w in any case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// cutShort is the error of a stream libchdb ended before its statement ended. A statement
// someone cancelled answers the cancel: libchdb ends a killed statement's stream so, and
// running it again (errStreamCutShort) would undo the KILL.
func cutShort(run *running) *exception {
	if run.wasCancelled() {
		return newException(codeQueryWasCancelled, "Query was cancelled")
	}
	return newException(codeUnknownException, "the engine ended the result stream before the statement ended; retry the query")
}

// streamBuffer is how much output serveStream holds before it sends the status, as
// ClickHouse's HTTP response buffer: a result that fits goes out whole, with its summary and
// Content-Length, and an error within it still gets a proper status.
const streamBuffer = 1 << 20

// streamHold bounds how long serveStream holds output it already has.
const streamHold = time.Second

// serveStream runs a statement whose output may be of any size and streams it as the engine
// produces it, after the first streamBuffer bytes.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, sess *session, req *request, run *running) error {
	run.setAbort(s.killer(run))
	stop := s.watch(r.Context(), run)
	defer stop()
	began := time.Now()
	quick := quickEndTrusted(req)
	ended := func() bool {
		return quick && !run.wasCancelled() && time.Since(began) < quickEnd || s.statementGone(req.id)
	}
	stream, err := sess.conn.Stream(marker(req.id)+req.head, req.format, req.params...)
	if err != nil {
		writeException(w, asException(err))
		return err
	}
	defer stream.Close()

	// A format with a header sends it once (chdb opens every chunk with it).
	header, chunks := headerLines(req.format), 0
	next := func() ([]byte, error) {
		c, err := stream.Next()
		if err == nil && header > 0 && chunks > 0 {
			c = dropLines(c, header)
		}
		chunks++
		return c, err
	}
	// Output is held until it fills the buffer or, for a statement that produces slowly,
	// until it has been held for a while.
	var held []byte
	var chunk []byte
	t0 := time.Now()
	for len(held) < streamBuffer && (len(held) == 0 || time.Since(t0) < streamHold) {
		chunk, err = next()
		if err != nil {
			break
		}
		held = append(held, chunk...)
		chunk = nil
	}
	h := w.Header()
	h.Set("Content-Type", contentType(req.format))
	switch {
	case errors.Is(err, io.EOF): // the whole result is at hand
		if !ended() {
			if len(held) == 0 && !run.wasCancelled() {
				return errStreamCutShort
			}
			ex := cutShort(run)
			writeException(w, ex)
			return ex
		}
		h.Set("X-ClickHouse-Summary", summary(stream.Stats(), len(held)))
		h.Set("Content-Length", strconv.Itoa(len(held)))
		_, err = w.Write(held)
		return err
	case err != nil:
		writeException(w, asException(err))
		return err
	}
	tag := newExceptionTag()
	h.Set("X-ClickHouse-Exception-Tag", tag)
	// The summary of a streamed result is only known at its end: it follows the body as
	// an HTTP trailer (clients that ignore trailers lose nothing else).
	h.Set("Trailer", "X-ClickHouse-Summary")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if _, err := w.Write(held); err != nil {
		return err
	}
	sent := len(held)
	held = nil
	for {
		chunk, err = next()
		if errors.Is(err, io.EOF) {
			if !ended() {
				ex := cutShort(run)
				_, _ = w.Write(framedException(tag, ex))
				return ex
			}
			h.Set("X-ClickHouse-Summary", summary(stream.Stats(), sent))
			return nil
		}
		if err != nil {
			_, _ = w.Write(framedException(tag, asException(err)))
			return err
		}
		if _, err := w.Write(chunk); err != nil {
			return err // the client went away; Close cancels the statement
		}
		sent += len(chunk)
		_ = rc.Flush()
	}
}
