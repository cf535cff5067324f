package edge

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/svc-data/svc/query/promapi"
	"github.com/svc-data/svc/query/promstore"
)

// PromQuery is the Prometheus app's query API as the edge needs it.
type PromQuery interface {
	Serve(w http.ResponseWriter, r *http.Request, req promapi.Request)
}

// promReadTables are the tables a PromQL query reads, each of which a custom-role key
// needs a whole-table SELECT grant on.
var promReadTables = []string{promstore.TagsTable, promstore.DataTable, promstore.HistogramsTable}

// promQuery serves the Prometheus app's query endpoints (under /prometheus/api/v1) for the selected database: readable keys and organization members;
// custom-role keys only with SELECT on the app's tables. The API's answers and errors are
// Prometheus's own envelope, which Grafana and promtool read; authentication, permission
// and database errors are this service's, as on every route.
func (s *Server) promQuery(ctx *fasthttp.RequestCtx, p *Principal) error {
	if s.deps.Prometheus == nil {
		writePromError(ctx, 503, "unavailable", "the Prometheus query API is not configured on this node")
		return nil
	}
	if !p.can(actQuery) {
		return forbidden("query (a readable key or an organization member is needed)")
	}
	db, err := s.database(ctx, p)
	if err != nil {
		return err
	}
	if p.CustomRole() {
		sp := statementPrincipal(p)
		for _, t := range promReadTables {
			if !s.deps.Query.MayReadWhole(p.ClusterID, sp, db.Name, t) {
				return apiErr(403, "forbidden", "no role of this key may read "+db.Name+"."+t,
					"ask an administrator to GRANT SELECT ON "+db.Name+"."+t+" to one of your roles")
			}
		}
	}
	var r http.Request
	if err := fasthttpadaptor.ConvertRequest(ctx, &r, true); err != nil {
		writePromError(ctx, 400, "bad_data", "request: "+err.Error())
		return nil
	}
	// The request's downstream work runs on the server's life context (see work), ended
	// when the handler returns: the query stops with its request.
	rctx, cancel := context.WithCancel(s.work())
	defer cancel()
	w := &promWriter{ctx: ctx, header: http.Header{}}
	s.deps.Prometheus.Serve(w, r.WithContext(rctx), promapi.Request{
		Org: p.OrgID, Cluster: p.ClusterID, Database: db.Engine, QueryID: p.OrgID.String() + "." + db.Name + ".prom-" + uuid.NewString(),
	})
	w.finish()
	return nil
}

// writePromError answers in Prometheus's error envelope.
func writePromError(ctx *fasthttp.RequestCtx, status int, typ, msg string) {
	writeJSON(ctx, status, map[string]string{"status": "error", "errorType": typ, "error": msg})
}

// promWriter is an http.ResponseWriter onto a fasthttp response.
type promWriter struct {
	ctx     *fasthttp.RequestCtx
	header  http.Header
	status  int
	flushed bool
}

func (w *promWriter) Header() http.Header { return w.header }

func (w *promWriter) WriteHeader(status int) {
	if w.flushed {
		return
	}
	w.flushed = true
	w.status = status
	for k, vs := range w.header {
		for i, v := range vs {
			if i == 0 {
				w.ctx.Response.Header.Set(k, v)
			} else {
				w.ctx.Response.Header.Add(k, v)
			}
		}
	}
	w.ctx.SetStatusCode(status)
}

func (w *promWriter) Write(b []byte) (int, error) {
	if !w.flushed {
		w.WriteHeader(http.StatusOK)
	}
	return w.ctx.Write(b)
}

func (w *promWriter) finish() {
	if !w.flushed {
		w.WriteHeader(http.StatusOK)
	}
}
