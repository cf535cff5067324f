// Package chdb binds libchdb (ClickHouse as a library), loaded with dlopen from a path given at
// run time, so that every other package builds and vets without the library present.
//
// It is the only cgo package in the tree. The binding is deliberately thin: connections,
// buffered and streaming queries, and result statistics. Higher layers (cmd/chengine) own
// pooling, per-request state and cancellation.
//
// Properties of libchdb (26.5) that shape this package:
//
//   - chdb_connect installs process-wide signal handlers without SA_ONSTACK, which break Go
//     panics and asynchronous preemption, and gives the calling thread (a Go runtime thread)
//     the engine's own alternate signal stack. Connect saves every signal disposition, the
//     thread's signal stack and its signal mask before the call and restores them afterwards;
//     connects never run concurrently.
//   - A connection runs one statement at a time and keeps session state (SET, USE, query
//     parameters) between statements. Conn serializes its callers; resetting session state
//     is the caller's job (closing the connection and opening another is cheap).
//   - A cancelled or failed statement stays in system.processes until its connection runs
//     another statement or closes.
//   - A stream finalizes its output format at every chunk, so each chunk is a complete
//     document: only formats without prefix or suffix (Native, TSV, JSONEachRow...)
//     concatenate. And it can report its end (an empty chunk) while the statement still
//     runs; callers that must know check system.processes.
package chdb

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"sync"
	"time"
	"unsafe"
)

var (
	// ErrNotLoaded is returned by Connect before Load succeeded.
	ErrNotLoaded = errors.New("chdb: library not loaded")
	// ErrOtherLibrary is returned by Load when a different library file is already loaded; a
	// process holds one libchdb.
	ErrOtherLibrary = errors.New("chdb: a different libchdb is already loaded in this process")
	// ErrClosed is returned by calls on a closed connection or stream.
	ErrClosed = errors.New("chdb: closed")
)

// Error is an error reported by the engine. Text is the engine's message as ClickHouse
// formats it ("Code: 60. DB::Exception: ..."); Code is parsed from it (0 when absent).
type Error struct {
	Code int
	Text string
}

func (e *Error) Error() string { return e.Text }

var codeRe = regexp.MustCompile(`^Code:\s*(\d+)\.`)

func newError(text string) *Error {
	e := &Error{Text: text}
	if m := codeRe.FindStringSubmatch(text); m != nil {
		e.Code, _ = strconv.Atoi(m[1])
	}
	return e
}

var (
	loadMu     sync.Mutex
	loadedPath string

	// connectMu serializes chdb_connect: the signal save/restore around it is process-wide.
	connectMu sync.Mutex
	// handlersOff records that chdb_set_signal_handlers_enabled(0) was called.
	handlersOff bool
)

// Load dlopens libchdb at path. Loading the same path again is a no-op; a different path is
// ErrOtherLibrary.
func Load(path string) error {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loadedPath != "" {
		if loadedPath == path {
			return nil
		}
		return fmt.Errorf("%w: %s is loaded, %s requested", ErrOtherLibrary, loadedPath, path)
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if msg := C.svc_chdb_load(cpath); msg != nil {
		return fmt.Errorf("chdb: load %s: %s", path, C.GoString(msg))
	}
	loadedPath = path
	return nil
}

func loaded() bool {
	loadMu.Lock()
	defer loadMu.Unlock()
	return loadedPath != ""
}

// Stats are the counters the engine reports with a result.
type Stats struct {
	Elapsed          time.Duration
	RowsRead         uint64
	BytesRead        uint64
	StorageRowsRead  uint64
	StorageBytesRead uint64
	RowsWritten      uint64
	BytesWritten     uint64
}

// Add accumulates o into s (elapsed takes the larger value).
func (s *Stats) Add(o Stats) {
	s.Elapsed = max(s.Elapsed, o.Elapsed)
	s.RowsRead += o.RowsRead
	s.BytesRead += o.BytesRead
	s.StorageRowsRead += o.StorageRowsRead
	s.StorageBytesRead += o.StorageBytesRead
	s.RowsWritten += o.RowsWritten
	s.BytesWritten += o.BytesWritten
}

func statsOf(r *C.svc_chdb_result) Stats {
	return Stats{
		Elapsed:          time.Duration(float64(C.svc_chdb_result_elapsed(r)) * float64(time.Second)),
		RowsRead:         uint64(C.svc_chdb_result_rows_read(r)),
		BytesRead:        uint64(C.svc_chdb_result_bytes_read(r)),
		StorageRowsRead:  uint64(C.svc_chdb_result_storage_rows_read(r)),
		StorageBytesRead: uint64(C.svc_chdb_result_storage_bytes_read(r)),
		RowsWritten:      uint64(C.svc_chdb_result_rows_written(r)),
		BytesWritten:     uint64(C.svc_chdb_result_bytes_written(r)),
	}
}

// resultError returns the engine error held by r, or nil.
func resultError(r *C.svc_chdb_result) error {
	if msg := C.svc_chdb_result_error(r); msg != nil {
		if s := C.GoString(msg); s != "" {
			return newError(s)
		}
	}
	return nil
}

// Param is a named query parameter bound server-side to a {name:Type} placeholder.
type Param struct {
	Name, Value string
}

// Conn is one chdb connection. Its methods are safe for concurrent use; they serialize, since
// the engine runs one statement per connection at a time.
type Conn struct {
	mu sync.Mutex // held for a statement's whole duration, including an open Stream
	c  *C.svc_chdb_connection
}

// Connect opens a connection with command-line style arguments ("--path=/data",
// "--max_threads=4"). The first connection of the process boots the engine and consumes the
// server-level arguments; later ones only apply query-level settings to themselves.
func Connect(args ...string) (*Conn, error) {
	if !loaded() {
		return nil, ErrNotLoaded
	}
	argv := append([]string{"clickhouse"}, args...)
	cargv := make([]*C.char, len(argv))
	for i, a := range argv {
		cargv[i] = C.CString(a)
	}
	defer func() {
		for _, p := range cargv {
			C.free(unsafe.Pointer(p))
		}
	}()
	// The argv array lives in C memory: the engine may keep a reference to it.
	carr := (**C.char)(C.malloc(C.size_t(len(cargv)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(carr))
	copy(unsafe.Slice(carr, len(cargv)), cargv)

	connectMu.Lock()
	defer connectMu.Unlock()
	// Before the first connect, ask the engine not to install handlers at all; the
	// save/restore in the shim stays regardless, because not every handler honours the switch.
	disable := C.int(0)
	if !handlersOff {
		disable, handlersOff = 1, true
	}
	c := C.svc_chdb_connect(C.int(len(cargv)), carr, disable)
	if c == nil || *c == nil {
		return nil, fmt.Errorf("chdb: connect %q failed (see the engine log)", args)
	}
	return &Conn{c: c}, nil
}

// Close closes the connection. It waits for a running statement or open stream to finish.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil
	}
	C.svc_chdb_close_conn(c.c)
	c.c = nil
	return nil
}

// cParams holds the C copies of query parameters for one call.
type cParams struct {
	names, values       **C.char
	nameLens, valueLens *C.size_t
	count               C.size_t
	free                []unsafe.Pointer
}

func newCParams(params []Param) *cParams {
	p := &cParams{count: C.size_t(len(params))}
	if len(params) == 0 {
		return p
	}
	ptrSize := C.size_t(unsafe.Sizeof(uintptr(0)))
	n := C.size_t(len(params))
	p.names = (**C.char)(C.malloc(n * ptrSize))
	p.values = (**C.char)(C.malloc(n * ptrSize))
	p.nameLens = (*C.size_t)(C.malloc(n * C.size_t(unsafe.Sizeof(C.size_t(0)))))
	p.valueLens = (*C.size_t)(C.malloc(n * C.size_t(unsafe.Sizeof(C.size_t(0)))))
	p.free = append(p.free, unsafe.Pointer(p.names), unsafe.Pointer(p.values),
		unsafe.Pointer(p.nameLens), unsafe.Pointer(p.valueLens))
	names := unsafe.Slice(p.names, len(params))
	values := unsafe.Slice(p.values, len(params))
	nameLens := unsafe.Slice(p.nameLens, len(params))
	valueLens := unsafe.Slice(p.valueLens, len(params))
	for i, prm := range params {
		names[i] = C.CString(prm.Name)
		values[i] = C.CString(prm.Value)
		nameLens[i] = C.size_t(len(prm.Name))
		valueLens[i] = C.size_t(len(prm.Value))
		p.free = append(p.free, unsafe.Pointer(names[i]), unsafe.Pointer(values[i]))
	}
	return p
}

func (p *cParams) release() {
	for _, ptr := range p.free {
		C.free(ptr)
	}
}

// Result is a complete, buffered result.
type Result struct {
	Data  []byte
	Stats Stats
}

// Query runs query and returns a copy of its whole output, encoded in format. Use QueryFunc
// to read a large output without copying it, and Stream for output of unknown size.
func (c *Conn) Query(query, format string, params ...Param) (*Result, error) {
	var res *Result
	err := c.QueryFunc(query, format, params, func(data []byte, st Stats) error {
		res = &Result{Data: bytes.Clone(data), Stats: st}
		return nil
	})
	return res, err
}

// QueryFunc runs query and calls fn with its whole output, encoded in format, and the
// statement's counters. data points into engine memory and is valid only during fn; fn's
// error is returned.
func (c *Conn) QueryFunc(query, format string, params []Param, fn func(data []byte, st Stats) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return ErrClosed
	}
	cq, cf := C.CString(query), C.CString(format)
	defer C.free(unsafe.Pointer(cq))
	defer C.free(unsafe.Pointer(cf))
	var r *C.svc_chdb_result
	if len(params) == 0 {
		r = C.svc_chdb_query_n(c.c, cq, C.size_t(len(query)), cf, C.size_t(len(format)))
	} else {
		p := newCParams(params)
		defer p.release()
		r = C.svc_chdb_query_with_params_n(c.c, cq, C.size_t(len(query)), cf, C.size_t(len(format)),
			p.names, p.nameLens, p.values, p.valueLens, p.count)
	}
	if r == nil {
		return errors.New("chdb: query returned no result")
	}
	defer C.svc_chdb_destroy_query_result(r)
	if err := resultError(r); err != nil {
		return err
	}
	var data []byte
	if n := C.svc_chdb_result_length(r); n > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(C.svc_chdb_result_buffer(r))), int(n))
	}
	return fn(data, statsOf(r))
}

// Stream is a query whose output is fetched chunk by chunk. It holds its connection until
// Close, which must always be called.
type Stream struct {
	conn  *Conn
	r     *C.svc_chdb_result // the stream handle
	chunk *C.svc_chdb_result // the last fetched chunk, freed by the next Next or Close
	stats Stats
	done  bool
	err   error
}

// Stream starts query and returns a stream of its output encoded in format. An error the
// engine reports while starting (syntax, unknown table) is returned here.
func (c *Conn) Stream(query, format string, params ...Param) (*Stream, error) {
	c.mu.Lock()
	if c.c == nil {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	cq, cf := C.CString(query), C.CString(format)
	defer C.free(unsafe.Pointer(cq))
	defer C.free(unsafe.Pointer(cf))
	var r *C.svc_chdb_result
	if len(params) == 0 {
		r = C.svc_chdb_stream_query_n(c.c, cq, C.size_t(len(query)), cf, C.size_t(len(format)))
	} else {
		p := newCParams(params)
		defer p.release()
		r = C.svc_chdb_stream_query_with_params_n(c.c, cq, C.size_t(len(query)), cf, C.size_t(len(format)),
			p.names, p.nameLens, p.values, p.valueLens, p.count)
	}
	if r == nil {
		c.mu.Unlock()
		return nil, errors.New("chdb: stream query returned no handle")
	}
	if err := resultError(r); err != nil {
		C.svc_chdb_destroy_query_result(r)
		c.mu.Unlock()
		return nil, err
	}
	return &Stream{conn: c, r: r}, nil
}

// Next returns the next chunk of output. The slice points into engine memory and is valid
// only until the next call to Next or Close. At the end of the output it returns io.EOF (see
// the package documentation for when that end is premature).
func (s *Stream) Next() ([]byte, error) {
	if s.r == nil {
		return nil, ErrClosed
	}
	s.freeChunk()
	if s.done {
		return nil, io.EOF
	}
	if s.err != nil {
		return nil, s.err
	}
	r := C.svc_chdb_stream_fetch_result(s.conn.c, s.r)
	if r == nil {
		s.err = errors.New("chdb: fetch returned no result")
		return nil, s.err
	}
	if err := resultError(r); err != nil {
		C.svc_chdb_destroy_query_result(r)
		s.err = err
		return nil, err
	}
	s.stats.Add(statsOf(r))
	n := C.svc_chdb_result_length(r)
	if n == 0 {
		C.svc_chdb_destroy_query_result(r)
		s.done = true
		return nil, io.EOF
	}
	s.chunk = r
	return unsafe.Slice((*byte)(unsafe.Pointer(C.svc_chdb_result_buffer(r))), int(n)), nil
}

// Stats returns the counters accumulated over the chunks fetched so far.
func (s *Stream) Stats() Stats { return s.stats }

func (s *Stream) freeChunk() {
	if s.chunk != nil {
		C.svc_chdb_destroy_query_result(s.chunk)
		s.chunk = nil
	}
}

// Close cancels the query if its output was not read to the end, frees the stream and
// releases the connection. It is safe to call twice.
func (s *Stream) Close() error {
	if s.r == nil {
		return nil
	}
	s.freeChunk()
	if !s.done && s.err == nil {
		C.svc_chdb_stream_cancel_query(s.conn.c, s.r)
	}
	C.svc_chdb_destroy_query_result(s.r)
	s.r = nil
	s.conn.mu.Unlock()
	return nil
}

// snapshotSignals records every signal disposition; changedSignals counts the dispositions
// that differ from the snapshot. Tests use them to check that Connect restores Go's handlers.
func snapshotSignals()    { C.svc_signal_snapshot() }
func changedSignals() int { return int(C.svc_signal_dispositions_differ()) }

// threadAltStack returns the base of the calling thread's alternate signal stack. The caller
// must be locked to its thread for the answer to mean anything.
func threadAltStack() uintptr { return uintptr(C.svc_thread_altstack()) }
