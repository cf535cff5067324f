package edge

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // gzip-compressed messages
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/svc-data/svc/edge/ingest"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform/otlplogs"
	"github.com/svc-data/svc/pipeline/transform/otlpmetrics"
	"github.com/svc-data/svc/pipeline/transform/otlptraces"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/requestlog"
)

// Native OTLP/gRPC is served on the HTTP API's own address. fasthttp speaks HTTP/1.x
// only, so the listener is split by the first bytes of each connection: the HTTP/2
// client preface goes to a grpc.Server, everything else to fasthttp.

// http2Preface is what every HTTP/2 (and so gRPC) connection sends first.
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// prefaceTimeout bounds how long a new connection may take to send its first bytes
// before it is handed to HTTP (a variable for tests).
var prefaceTimeout = 10 * time.Second

// splitListener sorts accepted connections onto two listeners.
type splitListener struct {
	net.Listener
	http, grpc *subListener
	done       chan struct{}
	closeOnce  sync.Once
}

func newSplitListener(ln net.Listener) *splitListener {
	sl := &splitListener{Listener: ln, done: make(chan struct{})}
	sl.http = &subListener{parent: sl, conns: make(chan net.Conn), closed: make(chan struct{})}
	sl.grpc = &subListener{parent: sl, conns: make(chan net.Conn), closed: make(chan struct{})}
	go sl.serve()
	return sl
}

func (sl *splitListener) serve() {
	for {
		c, err := sl.Listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			sl.close()
			return
		}
		go sl.route(c)
	}
}

// route peeks at a connection's first bytes without consuming them. Bytes are compared
// as they arrive, so an HTTP/1.x request is routed at its first byte that differs from
// the preface (at the latest its second) and never waits for 24 bytes.
func (sl *splitListener) route(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(prefaceTimeout))
	br := bufio.NewReaderSize(c, len(http2Preface))
	to := sl.grpc
	for n := 1; n <= len(http2Preface); n++ {
		head, err := br.Peek(n)
		if err != nil {
			var ne net.Error
			if n == 1 && !(errors.As(err, &ne) && ne.Timeout()) {
				c.Close() // closed before sending anything
				return
			}
			to = sl.http // fasthttp answers or times out what is not HTTP/2
			break
		}
		if head[n-1] != http2Preface[n-1] {
			to = sl.http
			break
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	select {
	case to.conns <- &peekedConn{Conn: c, r: br}:
	case <-to.closed:
		c.Close()
	case <-sl.done:
		c.Close()
	}
}

func (sl *splitListener) close() {
	sl.closeOnce.Do(func() {
		close(sl.done)
		sl.Listener.Close()
	})
}

// subListener is one side of a splitListener. Closing it stops that side only, so one
// server's shutdown does not cut the other's listener; the splitListener itself closes
// when the Server shuts down.
type subListener struct {
	parent    *splitListener
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func (l *subListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-l.parent.done:
		return nil, net.ErrClosed
	}
}

func (l *subListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *subListener) Addr() net.Addr { return l.parent.Addr() }

// peekedConn reads first what was peeked.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// syscallConn is a connection whose socket can be reached (TCP's; cork uses it).
type syscallConn interface {
	SyscallConn() (syscall.RawConn, error)
}

// SyscallConn reaches the TCP connection under the peek (for cork).
func (c *peekedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscallConn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}

// MaxOTLPMessage bounds an OTLP/gRPC message after decompression, as MaxOTLPBody bounds
// an OTLP/HTTP body. grpc-go enforces it while decompressing (it reads at most this
// many bytes plus one from the decompressor), so a compressed bomb stops there.
const MaxOTLPMessage = ingest.MaxOTLPBody

// An OTLP/gRPC export is authenticated from its headers before its message is read:
// grpc-go decompresses and unmarshals a message before any interceptor or handler runs,
// and a 95 KiB gzip message costs a 100 MiB buffer and its decoded form. The tap handle
// (grpcTap) runs when a stream's headers arrive, before its first DATA frame is
// accepted, and refuses a stream without a valid key there; what a refused stream sends
// is discarded undecoded. Accepted streams are bounded per connection (HTTP/2
// SETTINGS_MAX_CONCURRENT_STREAMS, which clients honour by queueing) and per key
// (keyStreams, refused with RESOURCE_EXHAUSTED and a retry delay), so that one key holds
// at most that many messages in memory at once.

func (s *Server) newGRPCServer() *grpc.Server {
	g := grpc.NewServer(grpc.MaxRecvMsgSize(MaxOTLPMessage), grpc.MaxSendMsgSize(4<<20),
		grpc.InTapHandle(s.grpcTap), grpc.MaxConcurrentStreams(uint32(s.cfg.GRPCStreams)),
		grpc.StatsHandler(grpcMessageCounter{&s.grpcMessages}))
	coltracepb.RegisterTraceServiceServer(g, otlpTraces{s: s})
	collogspb.RegisterLogsServiceServer(g, otlpLogs{s: s})
	colmetricspb.RegisterMetricsServiceServer(g, otlpMetrics{s: s})
	return g
}

// grpcPrincipalKey holds the principal grpcTap authenticated in a stream's context.
type grpcPrincipalKey struct{}

// grpcTap authenticates a new stream from its headers, before its message is received
// (see above). It runs in the connection's reader goroutine under the transport's lock,
// so it does only in-memory lookups: the key, the app and the insert right.
func (s *Server) grpcTap(ctx context.Context, info *tap.Info) (context.Context, error) {
	start := time.Now()
	md := info.Header
	get := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	p, err := s.grpcPrincipal(md)
	if err != nil {
		if p != nil {
			s.recordGRPC(p, get, info.FullMethodName, start, 0, err)
		}
		return nil, grpcError(err)
	}
	release, ok := s.grpcKeys.acquire(principalID(p))
	if !ok {
		err := &APIError{Status: 429, Code: "too_many_streams", RetryAfter: 1,
			Message: fmt.Sprintf("this key already has %d OTLP/gRPC exports in flight", s.cfg.GRPCStreams),
			Hint:    "retry after the delay, or send fewer, larger exports"}
		s.recordGRPC(p, get, info.FullMethodName, start, 0, err)
		return nil, grpcError(err)
	}
	// The stream's context ends when the stream does, however it ends.
	context.AfterFunc(ctx, release)
	return context.WithValue(ctx, grpcPrincipalKey{}, p), nil
}

// grpcPrincipal checks a stream's credentials; the principal is returned with an error
// when the key was valid but may not export.
func (s *Server) grpcPrincipal(md metadata.MD) (*Principal, error) {
	if err := repeatedHeader(func(h string) int { return len(md.Get(h)) }); err != nil {
		return nil, err
	}
	auth := md.Get("authorization")
	var token []byte
	if len(auth) == 1 {
		token = bearer([]byte(auth[0]))
	}
	if len(token) == 0 {
		return nil, errUnauthenticated
	}
	p, err := s.principalForToken(string(token))
	if err != nil {
		return nil, err
	}
	if err := s.requireApp(p, catalog.AppOpenTelemetry); err != nil {
		return p, err
	}
	if !p.can(actInsert) {
		return p, forbidden("insert rows")
	}
	return p, nil
}

// principalID is what keyStreams counts by: the key, or the user's session.
func principalID(p *Principal) uuid.UUID {
	switch {
	case p.Key != nil:
		return p.Key.ID
	case p.Session != nil:
		return p.Session.ID
	}
	return uuid.Nil
}

// keyStreams counts the streams each key has open, up to max.
type keyStreams struct {
	mu    sync.Mutex
	max   int
	open  map[uuid.UUID]int
	total int
}

// Open is how many streams are open, over all keys (for /metrics).
func (k *keyStreams) Open() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.total
}

// acquire takes one of id's stream slots; release gives it back (once).
func (k *keyStreams) acquire(id uuid.UUID) (release func(), ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.open[id] >= k.max {
		return nil, false
	}
	if k.open == nil {
		k.open = map[uuid.UUID]int{}
	}
	k.open[id]++
	k.total++
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.total--
			if k.open[id]--; k.open[id] <= 0 {
				delete(k.open, id)
			}
		})
	}, true
}

// grpcMessageCounter counts the OTLP/gRPC messages the server received (read and
// decompressed), for /metrics: a refused stream's message is never counted.
type grpcMessageCounter struct{ n *atomic.Int64 }

func (grpcMessageCounter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}
func (c grpcMessageCounter) HandleRPC(_ context.Context, st stats.RPCStats) {
	if _, ok := st.(*stats.InPayload); ok {
		c.n.Add(1)
	}
}
func (grpcMessageCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (grpcMessageCounter) HandleConn(context.Context, stats.ConnStats) {}

type otlpTraces struct {
	s *Server
	coltracepb.UnimplementedTraceServiceServer
}
type otlpLogs struct {
	s *Server
	collogspb.UnimplementedLogsServiceServer
}
type otlpMetrics struct {
	s *Server
	colmetricspb.UnimplementedMetricsServiceServer
}

func (o otlpTraces) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	buf := ingest.NewRows()
	defer ingest.RecycleRows(buf)
	if err := o.s.grpcExport(ctx, "traces", proto.Size(req), buf, func(b *rows.Buffer) error { return otlptraces.Append(req, b) }); err != nil {
		return nil, err
	}
	r := &coltracepb.ExportTraceServiceResponse{}
	if buf.Rejected > 0 {
		r.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: int64(buf.Rejected), ErrorMessage: buf.RejectedReason}
	}
	return r, nil
}

func (o otlpLogs) Export(ctx context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	buf := ingest.NewRows()
	defer ingest.RecycleRows(buf)
	if err := o.s.grpcExport(ctx, "logs", proto.Size(req), buf, func(b *rows.Buffer) error { return otlplogs.Append(req, b) }); err != nil {
		return nil, err
	}
	r := &collogspb.ExportLogsServiceResponse{}
	if buf.Rejected > 0 {
		r.PartialSuccess = &collogspb.ExportLogsPartialSuccess{RejectedLogRecords: int64(buf.Rejected), ErrorMessage: buf.RejectedReason}
	}
	return r, nil
}

func (o otlpMetrics) Export(ctx context.Context, req *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	buf := ingest.NewRows()
	defer ingest.RecycleRows(buf)
	if err := o.s.grpcExport(ctx, "metrics", proto.Size(req), buf, func(b *rows.Buffer) error { return otlpmetrics.Append(req, b) }); err != nil {
		return nil, err
	}
	r := &colmetricspb.ExportMetricsServiceResponse{}
	if buf.Rejected > 0 {
		r.PartialSuccess = &colmetricspb.ExportMetricsPartialSuccess{RejectedDataPoints: int64(buf.Rejected), ErrorMessage: buf.RejectedReason}
	}
	return r, nil
}

// grpcExport is an OTLP/gRPC export: the same checks, table choice and ingest path as
// OTLP/HTTP, with the key in the `authorization` metadata and the database in
// `x-service-database`.
func (s *Server) grpcExport(ctx context.Context, signal string, size int, buf *rows.Buffer, decode func(*rows.Buffer) error) (err error) {
	start := time.Now()
	md, _ := metadata.FromIncomingContext(ctx)
	get := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	// grpcTap authenticated the stream before its message was read.
	p, _ := ctx.Value(grpcPrincipalKey{}).(*Principal)
	if p == nil {
		return grpcError(errUnauthenticated)
	}
	defer func() {
		method, _ := grpc.Method(ctx)
		s.recordGRPC(p, get, method, start, size, err)
		if err != nil {
			if _, detail := publicError(toAPIError(err)); detail != "" {
				s.cfg.Logger.Warn("OTLP/gRPC export failed", "method", method, "error", redactServerLog(detail))
			}
			err = grpcError(err)
		}
	}()
	db, err := s.databaseNamed(p, get("x-service-database"))
	if err != nil {
		return err
	}
	table, err := ingest.OTLPTable(signal, md.Get)
	if err != nil {
		return err
	}
	t, err := s.ingest.TableNamedForInsert(p, db, table, ingest.OTLPNewTable(signal))
	if err != nil {
		return err
	}
	// Room for the rows at once (about five times the encoded request for the benchmark's
	// spans), as the OTLP/HTTP decoders make it per scope: growing by doubling copied each
	// request's rows about once over.
	grown := func(b *rows.Buffer) error {
		b.Grow(5 * size)
		return decode(b)
	}
	if _, err := s.ingest.IngestInto(p, db, t, get("idempotency-key"), buf, grown); err != nil {
		return err
	}
	return nil
}

// grpcError maps the API's errors to gRPC status codes, once: the codes OTLP exporters
// act on (UNAVAILABLE and RESOURCE_EXHAUSTED with RetryInfo are retried after its delay).
func grpcError(err error) error {
	e, _ := publicError(toAPIError(err))
	var code codes.Code
	switch {
	case e.Status == 400 || e.Status == 415:
		code = codes.InvalidArgument
	case e.Status == 401:
		code = codes.Unauthenticated
	case e.Status == 403:
		code = codes.PermissionDenied
	case e.Status == 404:
		code = codes.NotFound
	case e.Status == 413:
		code = codes.InvalidArgument // too large to store; a retry cannot help
	case e.Status == 429:
		code = codes.ResourceExhausted
	case e.Status == 503:
		code = codes.Unavailable
	default:
		code = codes.Internal
	}
	msg := e.Message
	if e.Hint != "" {
		msg += " (" + strings.TrimSuffix(e.Hint, ".") + ")"
	}
	st := status.New(code, msg)
	if e.RetryAfter > 0 {
		if d, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(e.RetryAfter) * time.Second)}); err == nil {
			st = d
		}
	}
	return st.Err()
}

// recordGRPC adds an OTLP/gRPC call to the request log, as recordRequest does for HTTP:
// method "POST", the full gRPC method as path and route, and the HTTP status its error
// maps from.
func (s *Server) recordGRPC(p *Principal, get func(string) string, method string, start time.Time, size int, err error) {
	if s.deps.RequestLog == nil {
		return
	}
	trace, span := "", ""
	if tp := strings.Split(get("traceparent"), "-"); len(tp) == 4 && len(tp[1]) == 32 {
		trace = tp[1]
	}
	var b [16]byte
	rand.Read(b[:])
	if trace == "" {
		trace = hex.EncodeToString(b[:])
	}
	span = hex.EncodeToString(b[8:])
	ua := get("user-agent")
	src, version := source(ua)
	e := requestlog.Entry{ID: span, CreatedAt: start.UTC(), OrgID: p.OrgID, ClusterID: p.ClusterID, Method: "POST",
		Path: method, Route: method, Status: 200, Source: src, DurationMS: float64(time.Since(start).Microseconds()) / 1000,
		UserAgent: ua, ClientVersion: version, RequestSize: size, TraceID: trace, Database: get("x-service-database")}
	if e.Database == "" && p.Key != nil {
		e.Database = p.Key.DefaultDatabase
	}
	if err != nil {
		ae, _ := publicError(toAPIError(err))
		e.Status, e.Error = ae.Status, &requestlog.Error{Code: ae.Code, Message: ae.Message}
	}
	s.deps.RequestLog.Record(e)
}
