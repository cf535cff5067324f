package chengine

import (
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Inline data after INSERT ... FORMAT is never handed to chdb as query text: the engine cuts
// binary data at the first blank line. The data goes through a pipe the engine reads as a file
// instead (INSERT ... FROM INFILE '/proc/self/fd/N'), so it streams without being held in
// memory.
//
// The pipe carries a gzip stream of stored (uncompressed) blocks. Only a clean end of the
// request body finishes that stream; a body cut short (a client that goes away, a KILL)
// leaves it unfinished, and the engine fails the statement with a decompression error instead
// of inserting rows up to the cut as if they were the whole body.

// pump copies an INSERT's data into the pipe the engine reads.
type pump struct {
	w       *os.File
	once    sync.Once
	done    chan struct{}
	readErr error // a failure reading the request body (not writing the pipe); set before done
}

// errReader records the error of the reader it wraps.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

func startPump(src io.Reader, w *os.File) *pump {
	p := &pump{w: w, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		er := &errReader{r: src}
		zw, _ := gzip.NewWriterLevel(w, gzip.NoCompression)
		if _, err := io.Copy(zw, er); err == nil {
			_ = zw.Close() // the gzip trailer: the data is complete
		}
		p.readErr = er.err
		p.abort()
	}()
	return p
}

// abort closes the engine's input. Before the gzip trailer went out, the engine sees a
// truncated stream and fails the statement.
func (p *pump) abort() { p.once.Do(func() { _ = p.w.Close() }) }

func (s *Server) serveInsert(w http.ResponseWriter, r *http.Request, sess *session, req *request, st *statement, run *running) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		ex := newException(codeUnknownException, "create insert pipe: %v", err)
		writeException(w, ex)
		return ex
	}
	data := io.MultiReader(strings.NewReader(req.head[st.Insert.DataStart:]), req.body)
	p := startPump(data, pw)
	// Cancelling an INSERT cuts its input rather than killing it: a killed INSERT commits
	// what it read so far and reports success.
	run.setAbort(p.abort)
	stop := s.watch(r.Context(), run)
	defer stop()

	query := marker(req.id) + st.Insert.Query("/proc/self/fd/"+strconv.Itoa(int(pr.Fd())), "gzip")
	res, qerr := sess.conn.Query(query, "TabSeparated", req.params...)
	cancelled := run.wasCancelled()
	_ = pr.Close()

	// The engine is done reading. A pump still copying is about to fail writing to the closed
	// pipe, or blocked reading a slow client; stop it before the handler returns, since the
	// request body must not be read after that. Only the latter needs the read deadline,
	// which also ends the connection.
	p.abort()
	select {
	case <-p.done:
	case <-time.After(100 * time.Millisecond):
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		<-p.done
	}

	if qerr == nil && cancelled && res.Stats.RowsWritten == 0 {
		// Cancelled before any row went in: report the cancel, never an empty success. The
		// engine can end a cut statement cleanly with nothing read (whether the pipe held a
		// gzip header yet or not), so this is decided here rather than on the stream.
		qerr = newException(codeQueryWasCancelled, "Query was cancelled")
	}
	if qerr != nil {
		ex := asException(qerr)
		switch {
		case cancelled:
			ex = newException(codeQueryWasCancelled, "Query was cancelled while its data was being received; nothing of the unfinished data was inserted")
		case p.readErr != nil:
			ex = newException(codeCannotReadAllData, "the request body ended early (%v); nothing of the unfinished data was inserted", p.readErr)
		}
		writeException(w, ex)
		return ex
	}
	h := w.Header()
	h.Set("Content-Type", contentType(req.format))
	h.Set("X-ClickHouse-Summary", summary(res.Stats, 0))
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}
