package edge

import (
	"sort"
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// staticRoutesFirst makes a path registered without parameters name that resource for
// every method. The router matches a static path only in the trees of the methods that
// register it, so `PATCH /v1/clusters/sizes` reached `PATCH /v1/clusters/{cluster_id}`
// (and OPTIONS advertised PATCH and DELETE there), although `sizes` is no cluster id.
// Such a request now answers 405 with the static path's own methods in `Allow`, and
// OPTIONS lists only those.
func staticRoutesFirst(r *router.Router) fasthttp.RequestHandler {
	allow := map[string]string{}
	methods := map[string][]string{}
	for method, paths := range r.List() {
		for _, p := range paths {
			if !strings.Contains(p, "{") {
				methods[p] = append(methods[p], method)
			}
		}
	}
	for p, ms := range methods {
		ms = append(ms, fasthttp.MethodOptions)
		sort.Strings(ms)
		allow[p] = strings.Join(ms, ", ")
	}
	next := r.Handler
	return func(ctx *fasthttp.RequestCtx) {
		a, ok := allow[string(ctx.Path())]
		if !ok || strings.Contains(", "+a+", ", ", "+string(ctx.Method())+", ") && !ctx.IsOptions() {
			next(ctx)
			return
		}
		ctx.Response.Header.Set("Allow", a)
		if ctx.IsOptions() {
			return
		}
		r.MethodNotAllowed(ctx)
	}
}
