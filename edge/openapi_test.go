package edge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/snappy"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	vErrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/prometheus/prometheus/prompb"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/ingest"
	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/pipeline/transform"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/es/memstore"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/format"
	"github.com/svc-data/svc/query/metrics"
	"github.com/svc-data/svc/query/requestlog"
	"github.com/svc-data/svc/query/statement"
	"github.com/svc-data/svc/query/tables"
)

// The OpenAPI document (openapi.json) is kept honest in three ways:
//
//  1. it parses and validates as OpenAPI 3.1 (libopenapi and its validator, which checks
//     the document against the OpenAPI 3.1 JSON Schema);
//  2. its operations are exactly the routes NewServer registers, read from server.go's
//     source and confirmed by sending each documented operation through the router;
//  3. answers of the real handlers (over a real catalog, without engines) validate against
//     the documented responses, and the documented access rules (x-svc-access) are the
//     ones the handlers enforce.
//
// Operations marked x-svc-pending are documented ahead of their route (GET
// /v1/openapi.json, registered by the lead at merge, and the log-search routes of branch
// spl); they may be absent from the router.

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// apiDoc is the part of the document the tests read directly.
type apiDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

type apiOp struct {
	Method, Path string
	OperationID  string                     `json:"operationId"`
	Pending      string                     `json:"x-svc-pending"`
	Access       *apiAccess                 `json:"x-svc-access"`
	Parameters   []json.RawMessage          `json:"parameters"`
	Responses    map[string]json.RawMessage `json:"responses"`
}

type apiAccess struct {
	APIKeys           []string `json:"api_keys"`
	CustomRoleKeys    bool     `json:"custom_role_keys"`
	OrganizationRoles []string `json:"organization_roles"`
	// Operator narrows the users among OrganizationRoles to the service's operator.
	Operator bool `json:"operator"`
}

func loadDoc(t *testing.T) (*apiDoc, []apiOp) {
	t.Helper()
	var d apiDoc
	if err := json.Unmarshal(openAPIDocument, &d); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	var ops []apiOp
	for path, item := range d.Paths {
		for method, raw := range item {
			if !slices.Contains(httpMethods, method) {
				continue
			}
			op := apiOp{Method: strings.ToUpper(method), Path: path}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			ops = append(ops, op)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Path+ops[i].Method < ops[j].Path+ops[j].Method })
	return &d, ops
}

func TestOpenAPIDocumentIsValidOpenAPI31(t *testing.T) {
	doc, err := libopenapi.NewDocument(openAPIDocument)
	if err != nil {
		t.Fatalf("libopenapi cannot read the document: %v", err)
	}
	if v := doc.GetVersion(); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("OpenAPI version %q, want 3.1.x", v)
	}
	if _, err := doc.BuildV3Model(); err != nil {
		t.Fatalf("building the model: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Error(describe(e))
		}
		t.Fatal("openapi.json does not validate against the OpenAPI 3.1 schema")
	}

	// What the schema cannot say: unique operation ids, and a description for every
	// operation and response.
	_, ops := loadDoc(t)
	seen := map[string]string{}
	for _, op := range ops {
		where := op.Method + " " + op.Path
		if op.OperationID == "" {
			t.Errorf("%s has no operationId", where)
		} else if other, dup := seen[op.OperationID]; dup {
			t.Errorf("operationId %s is used by %s and %s", op.OperationID, other, where)
		}
		seen[op.OperationID] = where
		if len(op.Responses) == 0 {
			t.Errorf("%s documents no responses", where)
		}
	}
}

func describe(e *vErrors.ValidationError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Message, e.Reason)
	for _, f := range e.SchemaValidationErrors {
		fmt.Fprintf(&b, "\n    at %s (%s): %s", f.FieldPath, f.KeywordLocation, f.Reason)
	}
	if e.SpecLine > 0 {
		fmt.Fprintf(&b, " [openapi.json line %d]", e.SpecLine)
	}
	return b.String()
}

// registeredRoutes reads the routes NewServer registers from server.go's source: every
// call r.<METHOD>("<path>", ...).
func registeredRoutes(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "server.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) < 2 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		recv, ok := sel.X.(*ast.Ident)
		if !ok || recv.Name != "r" || !slices.Contains(httpMethods, strings.ToLower(sel.Sel.Name)) && sel.Sel.Name != "ANY" {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Errorf("%s: route path is not a string literal; the drift test cannot read it", fset.Position(call.Pos()))
			return true
		}
		path, _ := strconv.Unquote(lit.Value)
		routes[sel.Sel.Name+" "+path] = true
		return true
	})
	if len(routes) < 40 {
		t.Fatalf("found only %d route registrations in server.go; has the registration style changed?", len(routes))
	}
	return routes
}

// TestOpenAPIMatchesRouter fails when a route is registered but not documented, or
// documented but not registered.
func TestOpenAPIMatchesRouter(t *testing.T) {
	routes := registeredRoutes(t)
	_, ops := loadDoc(t)
	documented := map[string]apiOp{}
	for _, op := range ops {
		documented[op.Method+" "+op.Path] = op
	}
	// The web console's routes are pages, assets and the /ui/api gateway in front of the
	// documented API, not API operations: pinned here instead of documented.
	consoleRoutes := []string{"GET /ui/", "GET /ui/assets/{file}", "POST /ui/login", "GET /ui/session",
		"POST /ui/logout", "ANY /ui/api/{path:*}"}
	var console []string
	for r := range routes {
		if strings.Contains(r, " /ui") {
			console = append(console, r)
			delete(routes, r)
		}
	}
	slices.Sort(console)
	slices.Sort(consoleRoutes)
	if !slices.Equal(console, consoleRoutes) {
		t.Errorf("console routes in server.go %v, pinned %v: update the pinned list and DESIGN.md's console section", console, consoleRoutes)
	}
	for r := range routes {
		if _, ok := documented[r]; !ok {
			t.Errorf("route %s is registered in server.go but not documented in openapi.json", r)
		}
	}
	for key, op := range documented {
		switch {
		case routes[key] && op.Pending != "":
			t.Logf("%s is registered now: remove its x-svc-pending marker from openapi.json", key)
		case !routes[key] && op.Pending == "":
			t.Errorf("%s is documented in openapi.json but not registered in server.go", key)
		}
	}

	// The source reading above must agree with the router itself: every documented,
	// registered operation is routed (not answered 404 route_not_found or 405).
	s, err := NewServer(Config{}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	for key, op := range documented {
		if !routes[key] {
			continue
		}
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(op.Method)
		ctx.Request.SetRequestURI(samplePath(op.Path))
		s.srv.Handler(&ctx)
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(ctx.Response.Body(), &body)
		if c := body.Error.Code; c == "route_not_found" || c == "method_not_allowed" {
			t.Errorf("%s: the router answers %d %s", key, ctx.Response.StatusCode(), c)
		}
	}
}

// samplePath fills a documented path's parameters with placeholder values.
func samplePath(p string) string {
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			return p
		}
		j := strings.IndexByte(p[i:], '}')
		p = p[:i] + "x" + p[i+j+1:]
	}
}

func TestOpenAPIServed(t *testing.T) {
	s, err := NewServer(Config{}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod("GET")
	ctx.Request.SetRequestURI("/v1/openapi.json")
	s.openAPI(&ctx)
	if ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.ContentType()) != "application/json" {
		t.Fatalf("status %d, content type %q", ctx.Response.StatusCode(), ctx.Response.Header.ContentType())
	}
	if string(ctx.Response.Body()) != string(openAPIDocument) {
		t.Fatal("the handler does not serve the embedded document")
	}
}

// schemaProps returns the property names of a JSON schema object.
func schemaProps(t *testing.T, raw json.RawMessage) (props map[string]json.RawMessage, required []string) {
	t.Helper()
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s.Properties, s.Required
}

// jsonFields returns the JSON member names of a struct type, and which are omitted when
// empty.
func jsonFields(typ reflect.Type) (names []string, omitempty map[string]bool) {
	omitempty = map[string]bool{}
	for i := range typ.NumField() {
		tag := typ.Field(i).Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || name == "" {
			continue
		}
		names = append(names, name)
		omitempty[name] = strings.Contains(opts, "omitempty")
	}
	return names, omitempty
}

// TestOpenAPIErrorEnvelope: the documented envelope is exactly what writeError marshals.
func TestOpenAPIErrorEnvelope(t *testing.T) {
	d, _ := loadDoc(t)
	outer, req := schemaProps(t, d.Components.Schemas["Error"])
	if !slices.Equal(req, []string{"error"}) || len(outer) != 1 {
		t.Fatalf("Error schema: properties %v, required %v", outer, req)
	}
	inner, innerReq := schemaProps(t, outer["error"])
	names, omit := jsonFields(reflect.TypeFor[APIError]())
	var documented []string
	for n := range inner {
		documented = append(documented, n)
	}
	sort.Strings(names)
	sort.Strings(documented)
	if !slices.Equal(names, documented) {
		t.Errorf("APIError marshals %v, the document describes %v", names, documented)
	}
	for _, n := range names {
		if got, want := slices.Contains(innerReq, n), !omit[n]; got != want {
			t.Errorf("error.%s: required in the document %v, always present in the answer %v", n, got, want)
		}
	}
}

// TestOpenAPIEnums: enums the document lists are the ones the code accepts.
func TestOpenAPIEnums(t *testing.T) {
	_, ops := loadDoc(t)
	find := func(method, path string) apiOp {
		for _, op := range ops {
			if op.Method == method && op.Path == path {
				return op
			}
		}
		t.Fatalf("%s %s not documented", method, path)
		return apiOp{}
	}
	var ins struct {
		Parameters []struct {
			Name   string `json:"name"`
			Schema struct {
				Enum []string `json:"enum"`
			} `json:"schema"`
		} `json:"parameters"`
	}
	raw, _ := json.Marshal(find("POST", "/v1/tables/{table}"))
	_ = json.Unmarshal(raw, &ins)
	var transforms []string
	for _, p := range ins.Parameters {
		if p.Name == "transform" {
			transforms = p.Schema.Enum
		}
	}
	if !slices.Equal(transforms, transform.Names()) {
		t.Errorf("documented transforms %v, the service has %v", transforms, transform.Names())
	}

	var q struct {
		RequestBody struct {
			Content map[string]struct {
				Schema struct {
					Properties struct {
						Format struct {
							Enum    []string `json:"enum"`
							Default string   `json:"default"`
						} `json:"format"`
					} `json:"properties"`
				} `json:"schema"`
			} `json:"content"`
		} `json:"requestBody"`
	}
	var all map[string]map[string]json.RawMessage
	_ = json.Unmarshal(openAPIDocument, &struct {
		Paths *map[string]map[string]json.RawMessage `json:"paths"`
	}{&all})
	_ = json.Unmarshal(all["/v1/query"]["post"], &q)
	f := q.RequestBody.Content["application/json"].Schema.Properties.Format
	if !slices.Equal(f.Enum, format.Names) || f.Default != format.Default {
		t.Errorf("documented formats %v (default %q), the service has %v (default %q)", f.Enum, f.Default, format.Names, format.Default)
	}
}

// TestOpenAPIRequestLogBodies: the routes whose bodies the request log keeps are the
// ones the document lists.
func TestOpenAPIRequestLogBodies(t *testing.T) {
	d, _ := loadDoc(t)
	props, _ := schemaProps(t, d.Components.Schemas["RequestLogEntry"])
	var body struct {
		Description string `json:"description"`
	}
	_ = json.Unmarshal(props["body"], &body)
	for r := range bodyRoutes {
		if !strings.Contains(body.Description, "`"+r+"`") {
			t.Errorf("request log keeps bodies of %s, RequestLogEntry.body does not say so", r)
		}
	}
	listed := strings.Count(body.Description, "`POST ") + strings.Count(body.Description, "`PATCH ") +
		strings.Count(body.Description, "`PUT ") + strings.Count(body.Description, "`DELETE ")
	if listed != len(bodyRoutes) {
		t.Errorf("RequestLogEntry.body lists %d routes, the request log keeps bodies of %d", listed, len(bodyRoutes))
	}
}

// ---------------------------------------------------------------------------------------
// Answers of the real handlers against the documented responses.
//
// The harness runs the server's handler in memory over a real catalog (an embedded event
// store in a temporary directory) with the engines replaced by fakes: table management
// and the request log see an engine that accepts every statement, inserts go to a
// producer that acknowledges everything, and the query runner streams a fixed result
// through the real result formats. Every answer is validated against openapi.json.

type fakeEngine struct{ logLines []string }

func (e *fakeEngine) Exec(context.Context, string) error { return nil }
func (e *fakeEngine) QueryStrings(_ context.Context, sql string) ([]string, error) {
	if strings.Contains(sql, "_svc.request_log") {
		return e.logLines, nil
	}
	return nil, nil
}

type tableEngines struct{ e *fakeEngine }

func (t tableEngines) Engine(uuid.UUID) (tables.Engine, error) { return t.e, nil }

type logEngines struct{ e *fakeEngine }

func (t logEngines) Engine(uuid.UUID) (requestlog.Engine, error) { return t.e, nil }

type fakeProducer struct{}

func (fakeProducer) Produce(context.Context, ...*pipeline.Record) error { return nil }

type fakeQuery struct{}

func (fakeQuery) Run(_ context.Context, req query.Request) (query.Response, error) {
	if req.Format != "" && !slices.Contains(format.Names, req.Format) {
		return nil, &query.Error{Status: 400, Code: "unsupported_format", Message: (&format.UnknownError{Name: req.Format}).Error()}
	}
	if req.Format == "" {
		req.Format = format.Default
	}
	return fakeResult{format: req.Format}, nil
}

func (fakeQuery) ImportURL(context.Context, query.Import) (query.ImportResult, error) {
	n := uint64(3)
	return query.ImportResult{QueryID: "import-1", Inserted: &n}, nil
}

func (fakeQuery) MayInsert(_ uuid.UUID, p statement.Principal, _, _ string) bool {
	return p.Allows(statement.ActInsert)
}

func (fakeQuery) MayReadWhole(_ uuid.UUID, p statement.Principal, _, _ string) bool {
	return p.Allows(statement.ActQuery)
}

func (fakeQuery) Cancel(_ context.Context, _, _ uuid.UUID, database, id string) error {
	switch id {
	case "":
		return &query.Error{Status: 400, Code: "invalid_query_id", Message: "query_id is required"}
	case "q-running":
		return nil
	}
	return &query.Error{Status: 404, Code: "query_not_found", Message: "no running query " + id + " in database " + database}
}

type fakeResult struct{ format string }

func (r fakeResult) QueryID() string { return "q-1" }
func (r fakeResult) ContentType() string {
	w, _ := format.New(r.format, nil, nil)
	return w.ContentType()
}
func (r fakeResult) WriteTo(bw *bufio.Writer) error {
	w, err := format.New(r.format, bw, []string{"a hint"})
	if err != nil {
		return err
	}
	written := uint64(0)
	steps := []error{
		w.Begin([]format.Column{{Name: "n", Type: "UInt64"}, {Name: "s", Type: "String"}, {Name: "x", Type: "Nullable(Int64)"}}),
		w.Row([]any{uint64(1), "one", nil}),
		w.Progress(1, 8, time.Millisecond),
		w.Row([]any{uint64(2), "two", int64(-2)}),
		w.End(format.Stats{Elapsed: 2 * time.Millisecond, RowsRead: 2, BytesRead: 16, WrittenRows: &written}),
	}
	return errors.Join(steps...)
}

type fakeOps struct{}

func (fakeOps) Stats(uuid.UUID) (*pipeline.Stats, bool) { return nil, false }
func (fakeOps) Lag(context.Context, uuid.UUID) ([]pipeline.PartitionLag, error) {
	return []pipeline.PartitionLag{{Partition: 0, Committed: 5, End: 7, Lag: 2}}, nil
}
func (fakeOps) DeadLetters(_ context.Context, _ uuid.UUID, q pipeline.DeadLetterQuery) (pipeline.DeadLetterPage, error) {
	if q.Cursor == "bad" {
		return pipeline.DeadLetterPage{}, pipeline.ErrBadCursor
	}
	next := "1/8"
	return pipeline.DeadLetterPage{NextCursor: &next, DeadLetters: []pipeline.DeadLetter{{ID: "1/7", TableID: q.TableID.String(),
		Table: "events", Reason: "Code: 117. duplicate path", Row: `{"a":1,"a":2}`, Source: "svc.x.ingest/0/3", Received: time.Now().UTC()}}}, nil
}

// fakeStorage is configured object storage whose verification fails on bucket "missing"
// (infra/s3store tests the real checks against an S3-compatible server).
type fakeStorage struct{}

func (fakeStorage) Configured() bool                        { return true }
func (fakeStorage) ServiceCredentialsAllowed() bool         { return false }
func (fakeStorage) DiskSetting(b, p string) (string, error) { return "", nil }
func (fakeStorage) VerifyStorage(_ context.Context, s catalog.S3Storage, _ string) catalog.StorageVerification {
	if s.Data.Bucket == "missing" {
		return catalog.StorageVerification{Message: "data_bucket: bucket missing is not reachable: NotFound",
			Checks: []catalog.StorageCheck{{Name: "data_bucket", Message: "bucket missing is not reachable: NotFound"}}}
	}
	return catalog.StorageVerification{Verified: true, Message: "verified: the service can use the storage",
		Checks: []catalog.StorageCheck{{Name: "data_bucket", OK: true, Message: "bucket " + s.Data.Bucket + " is reachable"}}}
}

type fakeClusters struct{}

func (fakeClusters) ReconcileCluster(context.Context, uuid.UUID) error { return nil }
func (fakeClusters) Resources(uuid.UUID) (float64, int64, bool)        { return 0, 0, false }
func (fakeClusters) ReadMetrics(context.Context, uuid.UUID, metrics.Query) ([]metrics.Point, error) {
	return nil, nil
}

type harness struct {
	t        *testing.T
	s        *Server
	svc      *catalog.Service
	m        *catalog.Model
	v        validator.Validator
	org      *catalog.Organization
	cluster  *catalog.Cluster
	tokens   map[string]string // principal -> bearer token
	alice    *catalog.User
	password string
	search   uuid.UUID
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	m := catalog.NewModel()
	proj := catalog.NewProjector(st, m, 0, nil)
	if _, err := proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	svc := catalog.NewService(st, m, proj)
	h := &harness{t: t, svc: svc, m: m, password: "correct horse battery", tokens: map[string]string{}}
	b, err := svc.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme", AdminUser: "alice", AdminPassword: h.password})
	if err != nil {
		t.Fatal(err)
	}
	h.org, h.cluster, h.alice = b.Organization, b.Cluster, b.AdminUser
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	h.tokens["admin"] = b.Token
	for _, perm := range []string{catalog.PermReadWrite, catalog.PermWriteOnly, catalog.PermReadOnly} {
		_, tok, err := svc.CreateAPIKey(ctx, catalog.NewAPIKey{OrgID: h.org.ID, ClusterID: h.cluster.ID, Name: perm, Permission: perm})
		must(err)
		h.tokens[perm] = tok
	}
	must(svc.CreateRole(ctx, h.cluster.ID, "analyst", false))
	must(svc.GrantToRole(ctx, h.cluster.ID, "analyst", catalog.Grant{Privileges: []string{"SELECT", "INSERT"}, Database: "*", Table: "*"}))
	_, tok, err := svc.CreateAPIKey(ctx, catalog.NewAPIKey{OrgID: h.org.ID, ClusterID: h.cluster.ID, Name: "custom", Roles: []string{"analyst"}})
	must(err)
	h.tokens["custom"] = tok
	_, tok, err = svc.CreateSession(ctx, h.alice.ID, catalog.KindSession, "full_access", catalog.SessionTTL)
	must(err)
	h.tokens["org_admin"] = tok
	_, tok, err = svc.CreateSession(ctx, h.alice.ID, catalog.KindOAuth, "full_access", catalog.OAuthTokenTTL)
	must(err)
	h.tokens["org_admin_oauth"] = tok
	bob, err := svc.CreateUser(ctx, "bob", "Bob", "bob's password")
	must(err)
	must(svc.SetMember(ctx, h.org.ID, bob.ID, catalog.RoleMember))
	_, tok, err = svc.CreateSession(ctx, bob.ID, catalog.KindSession, "full_access", catalog.SessionTTL)
	must(err)
	h.tokens["org_member"] = tok
	// dan administers an organization of his own, but is not the operator (alice, the
	// first user, is).
	dan, err := svc.CreateUser(ctx, "dan", "Dan", "dan's password")
	must(err)
	_, err = svc.CreateOrganizationBy(ctx, "dans", dan.ID)
	must(err)
	_, tok, err = svc.CreateSession(ctx, dan.ID, catalog.KindSession, "full_access", catalog.SessionTTL)
	must(err)
	h.tokens["other_org_admin"] = tok

	// Tables: one with a generation, one automatic, and the log-search table.
	tbl, err := svc.CreateTable(ctx, catalog.NewTable{Cluster: h.cluster.ID, Database: "default", Name: "events", SortingKey: "user.id"})
	must(err)
	_, err = svc.CreateGeneration(ctx, tbl.ID, 1, "user.id", "doc.user.id.:Int64", "")
	must(err)
	auto, err := svc.CreateTable(ctx, catalog.NewTable{Cluster: h.cluster.ID, Database: "default", Name: "auto"})
	must(err)
	_, err = svc.CreateGeneration(ctx, auto.ID, 1, "", "doc.ts.:DateTime64(9)", "ts")
	must(err)
	_, err = svc.CreateTable(ctx, catalog.NewTable{Cluster: h.cluster.ID, Database: "default", Name: ingest.LogsearchTable, SortingKey: "_time", ColumnType: ingest.LogsearchColumnType})
	must(err)
	ss, err := svc.SaveSearch(ctx, catalog.SavedSearch{OrgID: h.org.ID, ClusterID: h.cluster.ID, CreatedBy: h.alice.ID, Name: "errors",
		SPL: "error | stats count by host", Earliest: "-24h", Latest: "now", Database: "default", Visualization: "table", Visibility: "private"})
	must(err)
	h.search = ss.ID
	// The log-search app's routes answer only with the app installed.
	must(svc.SetApp(ctx, h.cluster.ID, catalog.AppLogsearch, true))
	must(svc.SetApp(ctx, h.cluster.ID, catalog.AppOpenTelemetry, true))
	must(svc.SetApp(ctx, h.cluster.ID, catalog.AppPrometheus, true))

	eng := &fakeEngine{logLines: []string{
		`{"id":"5f2b1c0d9e8a7b6c","created_at":"2025-06-01 12:00:00.250","method":"POST","path":"/v1/query","route":"/v1/query","status":400,"source":"cli","duration_ms":1.25,"user_agent":"svc-cli/1.2.3","client_version":"1.2.3","request_size":"23","trace_id":"5b8efff798038103d269b633813fc60c","database":"default","error_code":"invalid_sql","error_message":"field \"sql\" is required","body":"{\"sql\": \"\"}"}`,
		`{"id":"5f2b1c0d9e8a7b6d","created_at":"2025-06-01 12:00:01.000","method":"GET","path":"/v1/tables","route":"/v1/tables","status":200,"source":"api","duration_ms":0.5,"user_agent":"curl/8.5.0","client_version":"","request_size":"0","trace_id":"5b8efff798038103d269b633813fc60d","database":"default","error_code":"","error_message":"","body":null}`,
	}}
	mgr := tables.NewManager(svc, tableEngines{eng})
	mgr.SetStorage(fakeStorage{})
	h.s, err = NewServer(Config{URLImportAllow: []string{"files.test"}}, Deps{
		Catalog: m, Commands: svc, Tables: mgr, Ingest: pipeline.NewIngestor(fakeProducer{}),
		Query: fakeQuery{}, Ops: fakeOps{}, RequestLog: requestlog.New(logEngines{eng}, 16, slog.New(slog.DiscardHandler)), Clusters: fakeClusters{},
		Prometheus: promReference(t),
	})
	must(err)

	doc, err := libopenapi.NewDocument(openAPIDocument)
	must(err)
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	h.v = v
	return h
}

// request is one request to the server.
type request struct {
	method, target string
	header         map[string]string
	body           string
	// as is the principal whose bearer token is sent ("" for none).
	as string
	// noScope leaves out the organization and cluster parameters otherwise added for
	// principals.
	noScope bool
}

type answer struct {
	status int
	header *fasthttp.ResponseHeader
	body   []byte
	code   string // the error envelope's code, if any
}

// do sends r through the server's handler and validates the answer against the document.
func (h *harness) do(r request) answer {
	h.t.Helper()
	target := r.target
	if r.as != "" && !r.noScope {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + "organization=" + h.org.Name + "&cluster=" + h.cluster.Name
	}
	var freq fasthttp.Request
	freq.Header.SetMethod(r.method)
	freq.SetRequestURI(target)
	freq.SetBodyString(r.body)
	hreq := httptest.NewRequest(r.method, "http://svc.test"+target, strings.NewReader(r.body))
	if r.as != "" {
		tok, ok := h.tokens[r.as]
		if !ok {
			h.t.Fatalf("no principal %q", r.as)
		}
		freq.Header.Set("Authorization", "Bearer "+tok)
		hreq.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range r.header {
		freq.Header.Set(k, v)
		hreq.Header.Set(k, v)
	}
	if r.body != "" && len(freq.Header.ContentType()) == 0 {
		freq.Header.SetContentType("application/json")
		hreq.Header.Set("Content-Type", "application/json")
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&freq, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 4242}, nil)
	h.s.srv.Handler(&ctx)

	a := answer{status: ctx.Response.StatusCode(), body: append([]byte(nil), ctx.Response.Body()...)}
	a.header = &fasthttp.ResponseHeader{}
	ctx.Response.Header.CopyTo(a.header)
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(a.body, &env) == nil {
		var e struct{ Code string }
		if json.Unmarshal(env.Error, &e) == nil {
			a.code = e.Code
		}
	}

	hresp := &http.Response{StatusCode: a.status, Header: http.Header{}, Request: hreq,
		Body: io.NopCloser(bytes.NewReader(a.body))}
	ctx.Response.Header.VisitAll(func(k, v []byte) { hresp.Header.Add(string(k), string(v)) })
	ct := string(ctx.Response.Header.ContentType())
	hresp.Header.Set("Content-Type", ct)
	bodies := [][]byte{a.body}
	if strings.Contains(ct, "ndjson") {
		// The document describes one record of a newline-delimited stream.
		bodies = bytes.Split(bytes.TrimSuffix(a.body, []byte("\n")), []byte("\n"))
	}
	for _, b := range bodies {
		hresp.Body = io.NopCloser(bytes.NewReader(b))
		if ok, errs := h.v.ValidateHttpResponse(hreq, hresp); !ok {
			for _, e := range errs {
				h.t.Errorf("%s %s as %q: %d %s\n  answer does not match openapi.json: %s", r.method, r.target, r.as, a.status,
					truncate(b), describe(e))
			}
		}
	}
	return a
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// principals are the kinds of credentials x-svc-access speaks of.
var principals = []struct {
	name       string
	permission string // permission-based keys
	custom     bool   // key with database_roles
	orgRole    string // users
	operator   bool   // the service's operator (the bootstrap administrator, alice)
}{
	{name: "admin", permission: "admin"},
	{name: "read_write", permission: "read_write"},
	{name: "write_only", permission: "write_only"},
	{name: "read_only", permission: "read_only"},
	{name: "custom", custom: true},
	{name: "org_admin", orgRole: "admin", operator: true},
	{name: "org_admin_oauth", orgRole: "admin", operator: true},
	{name: "org_member", orgRole: "member"},
}

// TestOpenAPIAccessRules sends every documented operation with an access rule as every
// kind of principal, and checks that exactly the principals the rule excludes are refused
// with 403 forbidden. Requests carry no body, so they change nothing; every answer is
// also validated against the document.
func TestOpenAPIAccessRules(t *testing.T) {
	h := newHarness(t)
	routes := registeredRoutes(t)
	_, ops := loadDoc(t)
	checked := 0
	for _, op := range ops {
		if op.Access == nil || !routes[op.Method+" "+op.Path] {
			continue
		}
		checked++
		for _, p := range principals {
			allowed := slices.Contains(op.Access.APIKeys, p.permission) || (p.custom && op.Access.CustomRoleKeys) ||
				slices.Contains(op.Access.OrganizationRoles, p.orgRole) && (p.operator || !op.Access.Operator)
			a := h.do(request{method: op.Method, target: h.probePath(op), as: p.name})
			refused := a.status == 403 && a.code == "forbidden"
			if refused == allowed {
				t.Errorf("%s %s as %s: answered %d %s, but x-svc-access says allowed=%v", op.Method, op.Path, p.name,
					a.status, truncate(a.body), allowed)
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d operations carry x-svc-access", checked)
	}
}

// probePath fills path parameters so that requests reach their handler's permission
// check and change nothing: deletions name things that do not exist.
func (h *harness) probePath(op apiOp) string {
	r := strings.NewReplacer("{org}", h.org.Name, "{user}", "nobody", "{cluster_id}", h.cluster.ID.String(),
		"{key}", uuid.NewString(), "{database}", "nonexistent")
	p := r.Replace(op.Path)
	if op.Method == "DELETE" {
		return strings.NewReplacer("{table}", "nonexistent", "{id}", uuid.NewString()).Replace(p)
	}
	return strings.NewReplacer("{table}", "events", "{id}", h.search.String()).Replace(p)
}

// expect sends r, validates the answer against the document and checks its status and,
// when code is given, its error code.
func (h *harness) expect(r request, status int, code string) answer {
	h.t.Helper()
	a := h.do(r)
	if a.status != status || (code != "" && a.code != code) {
		h.t.Errorf("%s %s as %q: got %d %s, want %d %s", r.method, r.target, r.as, a.status, truncate(a.body), status, code)
	}
	return a
}

// TestOpenAPIAnswers walks the API's operations through their documented answers,
// successes and errors, validating each against the document.
func TestOpenAPIAnswers(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	json200 := func(r request) answer { t.Helper(); return h.expect(r, 200, "") }

	// Health, this document (once registered), catalog, metrics.
	json200(request{method: "GET", target: "/health"})
	json200(request{method: "GET", target: "/v1/spl/capabilities"})
	if registeredRoutes(t)["GET /v1/openapi.json"] {
		json200(request{method: "GET", target: "/v1/openapi.json"})
	}
	h.expect(request{method: "GET", target: "/v1/clusters/sizes"}, 401, "unauthenticated")
	json200(request{method: "GET", target: "/v1/clusters/sizes", as: "org_member"})
	json200(request{method: "GET", target: "/metrics"})

	// Sessions.
	h.expect(request{method: "POST", target: "/v1/auth/login", body: `{"username": "alice", "password": "` + h.password + `"}`}, 200, "")
	h.expect(request{method: "POST", target: "/v1/auth/login", body: `{"username": "alice", "password": "wrong"}`}, 401, "invalid_credentials")
	h.expect(request{method: "POST", target: "/v1/auth/login"}, 400, "invalid_body")
	// Missing credentials and non-object bodies are bad input, answered 400 naming what was
	// wrong before the login limiter counts them (schemathesis finding: null got 429).
	for i := 0; i < 7; i++ {
		h.expect(request{method: "POST", target: "/v1/auth/login", body: `{"username": "", "password": "x"}`}, 400, "invalid_username")
		h.expect(request{method: "POST", target: "/v1/auth/login", body: `{"username": "nobody", "password": ""}`}, 400, "invalid_password")
		h.expect(request{method: "POST", target: "/v1/auth/login", body: `null`}, 400, "invalid_body")
	}
	h.expect(request{method: "POST", target: "/v1/auth/login", body: `0`}, 400, "invalid_body")
	// Empty scope parameters are refused on every route, so every document entry of them says
	// minLength 1 (schemathesis finding: GET /v1/metrics?cluster= was schema-valid).
	h.expect(request{method: "GET", target: "/v1/metrics?cluster=", as: "org_admin"}, 400, "")
	h.expect(request{method: "POST", target: "/v1/oauth/device/code"}, 400, "")
	h.expect(request{method: "POST", target: "/v1/keys", as: "admin", body: `0`}, 400, "invalid_body")
	h.expect(request{method: "POST", target: "/v1/auth/logout", as: "admin"}, 403, "not_a_session")
	_, tok, err := h.svc.CreateSession(ctx, h.alice.ID, catalog.KindSession, "full_access", catalog.SessionTTL)
	if err != nil {
		t.Fatal(err)
	}
	h.tokens["short"] = tok
	h.expect(request{method: "POST", target: "/v1/auth/logout", as: "short"}, 204, "")
	h.expect(request{method: "GET", target: "/v1/me", as: "short"}, 401, "unauthenticated")
	h.expect(request{method: "GET", target: "/v1/me"}, 401, "unauthenticated")
	json200(request{method: "GET", target: "/v1/me", as: "org_admin_oauth"})

	// Users, organizations, members.
	h.expect(request{method: "POST", target: "/v1/users", as: "org_admin", body: `{"username": "carol", "password": "carol's password", "name": "Carol"}`}, 200, "")
	h.expect(request{method: "POST", target: "/v1/users", as: "org_admin", body: `{"username": "carol", "password": "carol's password"}`}, 409, "already_exists")
	h.expect(request{method: "POST", target: "/v1/users", as: "org_admin", body: `{"username": "dave", "password": "short"}`}, 400, "invalid_password")
	h.expect(request{method: "POST", target: "/v1/users", as: "other_org_admin", noScope: true, body: `{"username": "carol", "password": "carol's password"}`}, 403, "forbidden")
	h.expect(request{method: "POST", target: "/v1/users", as: "other_org_admin", noScope: true, body: `{"username": "erin", "password": "erin's password"}`}, 403, "forbidden")
	json200(request{method: "GET", target: "/v1/organizations", as: "admin"})
	h.expect(request{method: "GET", target: "/v1/organizations?organization=other", as: "admin", noScope: true}, 403, "organization_mismatch")
	h.expect(request{method: "GET", target: "/v1/organizations?organization=other", as: "org_admin", noScope: true}, 404, "organization_not_found")
	json200(request{method: "GET", target: "/v1/organizations/acme", as: "org_member"})
	h.expect(request{method: "GET", target: "/v1/organizations/acme", as: "read_only"}, 403, "forbidden")
	json200(request{method: "GET", target: "/v1/organizations/" + h.org.ID.String(), as: "org_member"})
	json200(request{method: "GET", target: "/v1/organizations/acme/members", as: "org_member"})
	// Membership with consent: invitations answer alike for known and unknown names.
	h.expect(request{method: "POST", target: "/v1/organizations/acme/invitations", as: "org_admin", body: `{"username": "carol"}`}, 202, "")
	h.expect(request{method: "POST", target: "/v1/organizations/acme/invitations", as: "org_admin", body: `{"username": "zed"}`}, 202, "")
	h.expect(request{method: "POST", target: "/v1/organizations/acme/invitations", as: "org_admin", body: `{"username": "carol", "role": "owner"}`}, 400, "invalid_role")
	h.expect(request{method: "POST", target: "/v1/organizations/acme/invitations", as: "org_member", body: `{"username": "carol"}`}, 403, "forbidden")
	json200(request{method: "GET", target: "/v1/organizations/acme/invitations", as: "org_admin"})
	json200(request{method: "GET", target: "/v1/invitations", as: "org_member"})
	h.expect(request{method: "POST", target: "/v1/invitations/" + uuid.NewString() + "/accept", as: "org_member"}, 404, "invitation_not_found")
	h.expect(request{method: "POST", target: "/v1/invitations/" + uuid.NewString() + "/decline", as: "org_member"}, 404, "invitation_not_found")
	h.expect(request{method: "DELETE", target: "/v1/organizations/acme/invitations/" + uuid.NewString(), as: "org_admin"}, 404, "invitation_not_found")
	h.expect(request{method: "PATCH", target: "/v1/organizations/acme/members/carol", as: "org_admin", body: `{"role": "admin"}`}, 404, "member_not_found")
	h.expect(request{method: "PATCH", target: "/v1/organizations/acme/members/zed", as: "org_admin", body: `{"role": "admin"}`}, 404, "member_not_found")
	json200(request{method: "PATCH", target: "/v1/organizations/acme/members/bob", as: "org_admin", body: `{"role": "member"}`})
	h.expect(request{method: "PATCH", target: "/v1/organizations/acme/members/bob", as: "org_admin", body: `{"role": "owner"}`}, 400, "invalid_role")
	h.expect(request{method: "DELETE", target: "/v1/organizations/acme/members/carol", as: "org_admin"}, 404, "member_not_found")
	h.expect(request{method: "DELETE", target: "/v1/organizations/acme/members/alice", as: "org_admin"}, 409, "conflict")
	h.expect(request{method: "POST", target: "/v1/organizations", as: "org_member", noScope: true, body: `{"name": "acme"}`}, 409, "already_exists")
	h.expect(request{method: "POST", target: "/v1/organizations", as: "org_member", noScope: true, body: `{"name": "bad name"}`}, 400, "invalid_name")
	json200(request{method: "POST", target: "/v1/organizations", as: "org_member", noScope: true, body: `{"name": "bobs"}`})
	json200(request{method: "PATCH", target: "/v1/organizations/bobs", as: "org_member", noScope: true, body: `{"name": "bobs2"}`})
	json200(request{method: "DELETE", target: "/v1/organizations/bobs2", as: "org_member", noScope: true})
	h.expect(request{method: "DELETE", target: "/v1/organizations/acme", as: "org_admin"}, 409, "conflict")
	h.expect(request{method: "PATCH", target: "/v1/organizations/acme", as: "org_member", body: `{"name": "x"}`}, 403, "forbidden")

	// Clusters.
	json200(request{method: "GET", target: "/v1/clusters", as: "admin"})
	json200(request{method: "GET", target: "/v1/clusters/" + h.cluster.ID.String(), as: "org_member"})
	h.expect(request{method: "GET", target: "/v1/clusters/" + uuid.NewString(), as: "org_member"}, 404, "cluster_not_found")
	h.expect(request{method: "GET", target: "/v1/clusters?cluster=nope", as: "admin", noScope: true}, 403, "cluster_mismatch")
	h.expect(request{method: "POST", target: "/v1/clusters", as: "org_admin", body: `{"name": "big", "replicas": 1, "size": {"cpu_cores": 3, "memory_gib": 8}}`}, 400, "invalid_size")
	h.expect(request{method: "POST", target: "/v1/clusters", as: "org_admin", body: `{"name": "big", "replicas": 1, "size": {"cpu_cores": 2, "memory_gib": 8}, "idle_timeout_minutes": 5}`}, 400, "invalid_idle_timeout_minutes")
	h.expect(request{method: "POST", target: "/v1/clusters", as: "org_admin", body: `{"name": "default", "replicas": 1, "size": {"cpu_cores": 2, "memory_gib": 8}}`}, 409, "already_exists")
	// Cluster lifecycle (the fake runner leaves clusters provisioning).
	cpath := "/v1/clusters/" + h.cluster.ID.String()
	json200(request{method: "PATCH", target: cpath, as: "org_admin", body: `{"idle_timeout_minutes": 30}`})
	h.expect(request{method: "PATCH", target: cpath, as: "org_admin", body: `{"idle_timeout_minutes": 5}`}, 400, "invalid_idle_timeout_minutes")
	h.expect(request{method: "PATCH", target: cpath, as: "org_member", body: `{"name": "x"}`}, 403, "forbidden")
	h.expect(request{method: "POST", target: cpath + "/stop", as: "org_admin"}, 409, "conflict")
	h.expect(request{method: "POST", target: cpath + "/resume", as: "org_admin"}, 409, "conflict")
	h.expect(request{method: "POST", target: cpath + "/stop", as: "org_member"}, 403, "forbidden")
	tmp := json200(request{method: "POST", target: "/v1/clusters", as: "org_admin", body: `{"name": "tmp", "replicas": 1, "size": {"cpu_cores": 1, "memory_gib": 4}}`})
	var tmpc struct{ ID string }
	_ = json.Unmarshal(tmp.body, &tmpc)
	json200(request{method: "DELETE", target: "/v1/clusters/" + tmpc.ID, as: "org_admin"})
	h.expect(request{method: "DELETE", target: "/v1/clusters/" + tmpc.ID, as: "org_member"}, 403, "forbidden")

	// API keys.
	json200(request{method: "GET", target: "/v1/keys", as: "org_member"})
	created := json200(request{method: "POST", target: "/v1/keys", as: "admin", body: `{"name": "reader", "permission": "read_only"}`})
	var key struct{ ID, Token string }
	_ = json.Unmarshal(created.body, &key)
	json200(request{method: "POST", target: "/v1/keys?database=default", as: "org_admin",
		body: `{"name": "analyst", "database_roles": ["analyst"], "expires_at": "2099-01-02T03:04:05+02:00"}`})
	h.expect(request{method: "POST", target: "/v1/keys", as: "admin", body: `{"name": "x", "permission": "owner"}`}, 400, "invalid_permission")
	// Found by schemathesis 4.32.5's full run: the database a new key stores is selected like any other.
	h.expect(request{method: "POST", target: "/v1/keys?database=", as: "admin", body: `{"name": "x", "permission": "read_only"}`}, 400, "invalid_database")
	h.expect(request{method: "POST", target: "/v1/keys", as: "admin", header: map[string]string{"x-service-database": ""}, body: `{"name": "x", "permission": "read_only"}`}, 400, "invalid_database")
	h.expect(request{method: "POST", target: "/v1/keys?database=default", as: "admin", header: map[string]string{"x-service-database": "=o9(2Dw"}, body: `{"name": "x", "permission": "read_only"}`}, 400, "invalid_database")
	h.expect(request{method: "POST", target: "/v1/keys", as: "admin", body: `{"name": "x", "permission": "admin", "database_roles": ["analyst"]}`}, 400, "invalid_permission")
	h.expect(request{method: "POST", target: "/v1/keys", as: "admin", body: `{"name": "x", "database_roles": []}`}, 400, "invalid_database_roles")
	h.expect(request{method: "POST", target: "/v1/keys", as: "admin", body: `{"name": "x", "database_roles": ["nobody"]}`}, 400, "invalid_database_roles")
	h.expect(request{method: "POST", target: "/v1/keys", as: "admin", body: `{"name": "x", "permission": "admin", "expires_at": "2001-01-01T00:00:00Z"}`}, 400, "invalid_expires_at")
	h.expect(request{method: "POST", target: "/v1/keys?database=nope", as: "admin", body: `{"name": "x", "permission": "admin"}`}, 404, "database_not_found")
	json200(request{method: "DELETE", target: "/v1/keys/" + key.Token, as: "admin"})
	h.expect(request{method: "DELETE", target: "/v1/keys/" + key.ID, as: "admin"}, 404, "key_not_found")

	// Databases.
	json200(request{method: "GET", target: "/v1/databases", as: "read_only"})
	json200(request{method: "POST", target: "/v1/databases", as: "admin", body: `{"name": "logs", "s3_storage": {"data": {"bucket": "bkt", "path": "d/"},
		"backups": {"bucket": "bkt", "path": "bk/"}, "role_arn": "arn:aws:iam::1:role/r", "external_id": "x"}}`})
	json200(request{method: "GET", target: "/v1/databases", as: "org_member"})
	// Found by schemathesis 4.32.5 with the scope pinned: a nested member's error code is one word.
	h.expect(request{method: "POST", target: "/v1/databases", as: "admin", body: `{"name": "x", "s3_storage": {"external_id": {}}}`}, 400, "invalid_s3_storage_external_id")
	h.expect(request{method: "POST", target: "/v1/databases", as: "admin", body: `{"name": "logs"}`}, 409, "already_exists")
	// s3_storage null is no override, as the answer's null says (schemathesis finding: it was
	// accepted while the document allowed only an object; the document now says null).
	json200(request{method: "POST", target: "/v1/databases", as: "admin", body: `{"name": "inherits", "s3_storage": null}`})
	h.expect(request{method: "POST", target: "/v1/databases", as: "admin", body: `{"name": "system"}`}, 409, "already_exists")
	h.expect(request{method: "POST", target: "/v1/databases", as: "admin", body: `{"name": "a__b"}`}, 400, "invalid_name")
	h.expect(request{method: "POST", target: "/v1/databases", as: "admin", body: `{"name": "c", "s3_storage": {"data": {"bucket": ""}}}`}, 400, "invalid_s3_storage")
	h.expect(request{method: "DELETE", target: "/v1/databases/default", as: "admin"}, 403, "protected")
	json200(request{method: "DELETE", target: "/v1/databases/logs", as: "org_admin"})
	h.expect(request{method: "DELETE", target: "/v1/databases/logs", as: "org_admin"}, 404, "not_found")

	// Tables.
	json200(request{method: "GET", target: "/v1/tables", as: "read_only"})
	json200(request{method: "GET", target: "/v1/tables/auto", as: "org_member"})
	json200(request{method: "POST", target: "/v1/tables", as: "admin", body: `{"name": "t2", "sorting_key": "user.id, toDate(ts)"}`})
	json200(request{method: "POST", target: "/v1/tables", as: "admin", header: map[string]string{"x-service-database": "default"}, body: `{"name": "t3"}`})
	h.expect(request{method: "POST", target: "/v1/tables", as: "admin", body: `{"name": "t2"}`}, 409, "already_exists")
	h.expect(request{method: "POST", target: "/v1/tables", as: "admin", body: `{"name": "t4", "sorting_key": "f("}`}, 400, "invalid_sorting_key")
	h.expect(request{method: "POST", target: "/v1/tables", as: "admin", body: `{"name": "t5", "sorting_key": "file('/etc/passwd')"}`}, 400, "invalid_sorting_key")
	h.expect(request{method: "POST", target: "/v1/tables", as: "admin", body: `{"name": "t6", "sorting_key": "sum(a)"}`}, 400, "invalid_sorting_key")
	h.expect(request{method: "POST", target: "/v1/tables", as: "admin", body: `{"sorting_key": "a"}`}, 400, "invalid_name")
	h.expect(request{method: "POST", target: "/v1/tables?database=nope", as: "admin", body: `{"name": "t4"}`}, 404, "database_not_found")
	h.expect(request{method: "POST", target: "/v1/tables?database=", as: "admin", body: `{"name": "t4"}`}, 400, "invalid_database")
	h.expect(request{method: "POST", target: "/v1/tables", as: "admin", header: map[string]string{"x-service-database": ""}, body: `{"name": "t4"}`}, 400, "invalid_database")
	json200(request{method: "PATCH", target: "/v1/tables/t2", as: "admin", body: `{"sorting_key": "ts"}`})
	h.expect(request{method: "PATCH", target: "/v1/tables/t2", as: "admin", body: `{"sorting_key": ""}`}, 400, "invalid_sorting_key")
	h.expect(request{method: "PATCH", target: "/v1/tables/t2", as: "admin", body: `{"name": "t9"}`}, 400, "invalid_name")
	h.expect(request{method: "PATCH", target: "/v1/tables/t2", as: "admin", body: `{"sorting_key": 7}`}, 400, "invalid_sorting_key")
	h.expect(request{method: "PATCH", target: "/v1/tables/t2", as: "admin", body: `{`}, 400, "invalid_json")
	json200(request{method: "DELETE", target: "/v1/tables/t2", as: "admin"})
	h.expect(request{method: "GET", target: "/v1/tables/t2", as: "admin"}, 404, "table_not_found")

	// Inserts: plain rows, transforms, Firehose, URL imports.
	h.expect(request{method: "POST", target: "/v1/tables/events", as: "write_only", body: `[{"user": {"id": 7}}, {"user": {"id": 8}}]`}, 202, "")
	h.expect(request{method: "POST", target: "/v1/tables/events", as: "custom", body: `{"user": {"id": 9}}`,
		header: map[string]string{"Idempotency-Key": "req-1"}}, 202, "")
	h.expect(request{method: "POST", target: "/v1/tables/events", as: "org_admin", body: `{"a": 1}`,
		header: map[string]string{"Idempotency-Key": "has space"}}, 400, "invalid_idempotency_key")
	// A present but empty key is refused like a malformed one, not read as no key (schemathesis
	// finding with the scope pinned: the OTLP routes accepted it; inserts and OTLP now answer
	// as workflow runs do).
	h.expect(request{method: "POST", target: "/v1/tables/events", as: "org_admin", body: `{"a": 1}`,
		header: map[string]string{"Idempotency-Key": ""}}, 400, "invalid_idempotency_key")
	h.expect(request{method: "POST", target: "/v1/tables/events", as: "admin", body: `[1]`}, 400, "invalid_rows")
	h.expect(request{method: "POST", target: "/v1/tables/events", as: "admin", body: `{"a": 1}`,
		header: map[string]string{"Content-Encoding": "br"}}, 415, "unsupported_media_type")
	h.expect(request{method: "POST", target: "/v1/tables/nope", as: "custom", body: `{"a": 1}`}, 404, "table_not_found")
	h.expect(request{method: "POST", target: "/v1/tables/created_by_insert", as: "admin", body: `{"a": 1}`}, 202, "")
	h.expect(request{method: "POST", target: "/v1/tables/events?transform=nope", as: "admin", body: `{}`}, 400, "unknown_transform")
	h.expect(request{method: "POST", target: "/v1/tables/events?transform=cloudtrail", as: "admin",
		body: `{"Records": [{"eventTime": "2023-07-19T21:33:41Z", "eventName": "StartLogging"}]}`}, 202, "")
	json200(request{method: "POST", target: "/v1/tables/events?transform=otlp-logs", as: "admin",
		body: `{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"timeUnixNano": "1", "body": {"stringValue": "ok"}}]}]}]}`})
	partial := json200(request{method: "POST", target: "/v1/tables/events?transform=otlp-logs", as: "admin",
		body: `{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"traceId": "abcd", "body": {"stringValue": "bad"}}, {"body": {"stringValue": "ok"}}]}]}]}`})
	if !bytes.Contains(partial.body, []byte("rejectedLogRecords")) {
		t.Errorf("an invalid OTLP log record was not reported: %s", partial.body)
	}
	json200(request{method: "POST", target: "/v1/tables/events?url=http%3A%2F%2Ffiles.test%2Frows.ndjson&query_id=imp-1", as: "admin"})
	h.expect(request{method: "POST", target: "/v1/tables/events?url=http%3A%2F%2F169.254.169.254%2Flatest", as: "admin"}, 400, "url_refused")
	h.expect(request{method: "POST", target: "/v1/tables/events?url=file%3A%2F%2F%2Fetc%2Fpasswd", as: "admin"}, 400, "url_refused")
	h.expect(request{method: "POST", target: "/v1/tables/events?url=http%3A%2F%2Ffiles.test%2Fx&transform=cloudtrail", as: "admin"}, 400, "transform_with_url")
	h.expect(request{method: "POST", target: "/v1/tables/events", as: "read_only", body: `{"a": 1}`}, 403, "forbidden")
	firehose := `{"requestId": "r-1", "timestamp": 1578090901599, "records": [{"data": "eyJhIjogMX0="}, {"data": "W3siYiI6IDJ9XQ=="}]}`
	for _, c := range []struct {
		key, body string
		status    int
	}{
		{h.tokens["write_only"], firehose, 200},
		{"", firehose, 401},
		{"svck_unknown", firehose, 401},
		{h.tokens["read_only"], firehose, 403},
		{h.tokens["admin"], `{"requestId": "r-2", "records": [{"data": "AAEC"}]}`, 400},
	} {
		hd := map[string]string{"X-Amz-Firehose-Request-Id": "r-1"}
		if c.key != "" {
			hd["X-Cloud-Firehose-Access-Key"] = c.key
		}
		a := h.expect(request{method: "POST", target: "/v1/tables/events?transform=firehose", header: hd, body: c.body}, c.status, "")
		if !bytes.Contains(a.body, []byte(`"requestId":"r-1"`)) {
			t.Errorf("firehose answer without the request id: %s", a.body)
		}
	}

	// Operations.
	json200(request{method: "GET", target: "/v1/tables/events/freshness", as: "read_only"})
	json200(request{method: "GET", target: "/v1/tables/events/dead_letters?limit=10", as: "org_member"})
	h.expect(request{method: "GET", target: "/v1/tables/events/dead_letters?limit=0", as: "admin"}, 400, "invalid_limit")
	h.expect(request{method: "GET", target: "/v1/tables/events/dead_letters?cursor=bad", as: "admin"}, 400, "invalid_cursor")
	json200(request{method: "GET", target: "/v1/logs?limit=2&sources=cli,api&methods=get,post&status_codes=200,400&start_time=2025-01-01T00:00:00Z", as: "read_only"})
	h.expect(request{method: "GET", target: "/v1/logs?limit=201", as: "admin"}, 400, "invalid_limit")
	h.expect(request{method: "GET", target: "/v1/logs?sources=web", as: "admin"}, 400, "invalid_sources")
	// Found by schemathesis 4.32.5: list items are exactly the documented patterns (ASCII
	// spaces around items only; three-digit codes), and a database header is checked even
	// when the query parameter wins.
	json200(request{method: "GET", target: "/v1/logs?sources=,+cli+,&status_codes=+200,,404+", as: "admin"})
	h.expect(request{method: "GET", target: "/v1/logs?status_codes=%2B200", as: "admin"}, 400, "invalid_status_codes")
	h.expect(request{method: "GET", target: "/v1/logs?status_codes=0200", as: "admin"}, 400, "invalid_status_codes")
	h.expect(request{method: "GET", target: "/v1/logs?sources=%C2%A0cli", as: "admin"}, 400, "invalid_sources")
	h.expect(request{method: "GET", target: "/v1/tables/events/dead_letters?database=default", as: "admin", header: map[string]string{"x-service-database": ""}}, 400, "invalid_database")
	h.expect(request{method: "GET", target: "/v1/tables/events/dead_letters?database=default", as: "admin", header: map[string]string{"x-service-database": "a b"}}, 400, "invalid_database")
	h.expect(request{method: "GET", target: "/v1/tables/events/dead_letters", as: "admin", header: map[string]string{"x-service-database": "a-b"}}, 400, "invalid_database")
	json200(request{method: "GET", target: "/v1/tables/events/dead_letters?database=default", as: "admin", header: map[string]string{"x-service-database": "_other1"}})
	h.expect(request{method: "GET", target: "/v1/logs?end_time=yesterday", as: "admin"}, 400, "invalid_end_time")
	// offset has a documented maximum, 2^53-1, enforced (schemathesis finding: a schema-valid
	// offset past int64 was refused, and one past the maximum must be).
	json200(request{method: "GET", target: "/v1/logs?offset=9007199254740991", as: "admin"})
	h.expect(request{method: "GET", target: "/v1/logs?offset=9007199254740992", as: "admin"}, 400, "invalid_offset")
	h.expect(request{method: "GET", target: "/v1/logs", as: "write_only"}, 403, "forbidden")

	// Queries.
	for _, f := range format.Names {
		a := json200(request{method: "POST", target: "/v1/query?query_id=q-1", as: "read_only", body: `{"sql": "SELECT 1", "format": "` + f + `"}`})
		if string(a.header.Peek("X-Engine-Query-Id")) == "" {
			t.Errorf("format %s: no X-Engine-Query-Id", f)
		}
	}
	json200(request{method: "POST", target: "/v1/query", as: "custom", body: `{"sql": "SELECT 1"}`})
	h.expect(request{method: "POST", target: "/v1/query", as: "admin", body: `{"sql": "SELECT 1", "format": "XML"}`}, 400, "unsupported_format")
	h.expect(request{method: "POST", target: "/v1/query", as: "admin", body: `{"format": "JSON"}`}, 400, "invalid_sql")
	h.expect(request{method: "POST", target: "/v1/query", as: "admin", body: `{"sql": "` + strings.Repeat("x", 1<<20+1) + `"}`}, 413, "statement_too_large")
	h.expect(request{method: "POST", target: "/v1/query", as: "write_only", body: `{"sql": "SELECT 1"}`}, 403, "forbidden")
	json200(request{method: "POST", target: "/v1/query/cancel", as: "custom", body: `{"query_id": "q-running"}`})
	json200(request{method: "POST", target: "/v1/query/cancel?query_id=q-running", as: "read_only"})
	h.expect(request{method: "POST", target: "/v1/query/cancel", as: "admin", body: `{"query_id": "q-gone"}`}, 404, "query_not_found")
	h.expect(request{method: "POST", target: "/v1/query/cancel", as: "admin"}, 400, "invalid_query_id")

	// Splunk HEC.
	hec := func(auth, target, body string, status, code int) {
		t.Helper()
		hd := map[string]string{}
		if auth != "" {
			hd["Authorization"] = auth
		}
		a := h.expect(request{method: map[bool]string{true: "GET", false: "POST"}[strings.Contains(target, "health")],
			target: target, header: hd, body: body}, status, "")
		var r struct{ Code int }
		if json.Unmarshal(a.body, &r) != nil || r.Code != code {
			t.Errorf("%s: HEC code %s, want %d", target, a.body, code)
		}
	}
	splunk := "Splunk " + h.tokens["write_only"]
	events := `{"event": "GET /cart 500", "time": "1700000000.25", "host": "web-1"}
{"event": {"status": 500, "path": "/cart"}, "fields": {"region": "eu"}, "time": 1700000001}`
	hec("", "/services/collector/health", "", 200, 17)
	hec("", "/services/collector/health/1.0", "", 200, 17)
	hec(splunk, "/services/collector/event", events, 200, 0)
	hec("Bearer "+h.tokens["admin"], "/services/collector", events, 200, 0)
	hec(splunk, "/services/collector/event/1.0?index=web&sourcetype=access", events, 200, 0)
	hec(splunk, "/services/collector/raw?host=h1", "line one\nline two\n", 200, 0)
	hec(splunk, "/services/collector/raw/1.0", "line\n", 200, 0)
	hec("", "/services/collector/event", events, 401, 2)
	hec("Splunk svck_nope", "/services/collector/event", events, 403, 4)
	hec("Splunk "+h.tokens["read_only"], "/services/collector/event", events, 403, 4)
	hec(splunk, "/services/collector/event", `{"time": 1}`, 400, 12)
	hec(splunk, "/services/collector/event", `{"event": "  "}`, 400, 13)
	hec(splunk, "/services/collector/event", `{"event": "x"} nope`, 400, 6)
	hec(splunk, "/services/collector/event", ``, 400, 5)
	hec(splunk, "/services/collector/event?database=nope", events, 400, 7)

	// Apps and their gating, then native OTLP/HTTP.
	json200(request{method: "GET", target: "/v1/apps", as: "org_member"})
	h.expect(request{method: "GET", target: "/v1/apps", as: "admin"}, 403, "forbidden")
	h.expect(request{method: "PUT", target: "/v1/apps/prometheus", as: "org_member"}, 403, "forbidden")
	h.expect(request{method: "PUT", target: "/v1/apps/nope", as: "org_admin"}, 404, "app_not_found")
	json200(request{method: "DELETE", target: "/v1/apps/logsearch", as: "org_admin"})
	h.expect(request{method: "POST", target: "/v1/spl/search", as: "admin", body: `{"spl": "error"}`}, 403, "app_not_installed")
	h.expect(request{method: "GET", target: "/v1/apps/logsearch/searches", as: "org_admin"}, 403, "app_not_installed")
	// HEC's own answer names the app to install (schemathesis finding: code 1 and hint were undocumented).
	hec(splunk, "/services/collector/event", events, 403, 1)
	json200(request{method: "PUT", target: "/v1/apps/logsearch", as: "org_admin"})
	otlp := map[string]string{"Content-Type": "application/json"}
	json200(request{method: "POST", target: "/otlp/v1/logs", as: "admin", header: otlp, body: `{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"stringValue": "x"}}]}]}]}`})
	h.expect(request{method: "POST", target: "/otlp/v1/logs", as: "admin", header: map[string]string{"Content-Type": "application/json", "Idempotency-Key": ""},
		body: `{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"stringValue": "x"}}]}]}]}`}, 400, "invalid_idempotency_key")
	json200(request{method: "POST", target: "/otlp/v1/traces", as: "admin", header: otlp,
		body: `{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "00000000000000000000000000000000", "spanId": "0102030405060708"}]}]}]}`})
	h.expect(request{method: "POST", target: "/otlp/v1/metrics", as: "admin", header: otlp, body: `{"resourceMetrics": `}, 400, "invalid_rows")
	h.expect(request{method: "POST", target: "/otlp/v1/metrics?database=nope", as: "admin", header: otlp, body: `{}`}, 404, "database_not_found")
	h.expect(request{method: "POST", target: "/otlp/v1/logs", as: "read_only", header: otlp, body: `{}`}, 403, "forbidden")
	// Found by schemathesis 4.32.5 with the scope pinned: an empty table header is refused, not read as absent.
	h.expect(request{method: "POST", target: "/otlp/v1/logs", as: "admin", header: map[string]string{"Content-Type": "application/json", "x-service-logs-table": ""}, body: `{}`}, 400, "invalid_table")
	custom := map[string]string{"Content-Type": "application/json", "x-service-traces-table": "custom_made"}
	h.expect(request{method: "POST", target: "/otlp/v1/traces", as: "custom", header: custom, body: `{}`}, 404, "table_not_found")
	if _, ok := h.m.Table(h.cluster.ID, "default", "custom_made"); ok {
		t.Fatal("a custom-role key's OTLP export created a table")
	}
	// Prometheus remote write (promwrite.go).
	prom := map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "snappy"}
	up, _ := (&prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{{Name: "__name__", Value: "up"}},
		Samples: []prompb.Sample{{Value: 1, Timestamp: 1}}}}}).Marshal()
	h.expect(request{method: "POST", target: "/prometheus/api/v1/write", as: "admin", header: prom, body: string(snappy.Encode(nil, up))}, 204, "")
	h.expect(request{method: "POST", target: "/prometheus/api/v1/write", as: "admin", header: prom, body: "nope"}, 400, "invalid_remote_write")
	h.expect(request{method: "POST", target: "/prometheus/api/v1/write", as: "admin", header: otlp, body: "{}"}, 415, "unsupported_media_type")
	// Found by schemathesis 4.32.5 once remote write was fuzzed: a Content-Encoding given is exactly `snappy`.
	for _, enc := range []string{"", "SNAPPY", " snappy"} {
		h.expect(request{method: "POST", target: "/prometheus/api/v1/write", as: "admin", header: map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": enc}, body: string(snappy.Encode(nil, up))}, 415, "unsupported_media_type")
	}
	h.expect(request{method: "POST", target: "/prometheus/api/v1/write?database=nope", as: "admin", header: prom, body: string(snappy.Encode(nil, up))}, 404, "database_not_found")
	h.expect(request{method: "POST", target: "/prometheus/api/v1/write", as: "read_only", header: prom, body: string(snappy.Encode(nil, up))}, 403, "forbidden")
	json200(request{method: "DELETE", target: "/v1/apps/opentelemetry", as: "org_admin"})
	h.expect(request{method: "POST", target: "/otlp/v1/logs", as: "admin", header: otlp, body: `{}`}, 403, "app_not_installed")

	// The Prometheus app's query API (answered by the same API code over an in-memory
	// storage here; cmd/svcd tests it over the engine).
	pq := "/prometheus/api/v1"
	pform := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	json200(request{method: "GET", target: pq + "/query?query=1%2B1&time=30", as: "admin"})
	json200(request{method: "POST", target: pq + "/query", as: "read_only", header: pform, body: "query=up&time=30"})
	json200(request{method: "GET", target: pq + "/query_range?query=sum(up)&start=0&end=60&step=15", as: "org_member"})
	json200(request{method: "POST", target: pq + "/query_range", as: "admin", header: pform, body: "query=up&start=0&end=60&step=15s"})
	json200(request{method: "GET", target: pq + "/series?match[]=up&start=0&end=60", as: "admin"})
	json200(request{method: "POST", target: pq + "/series", as: "admin", header: pform, body: "match[]=up"})
	json200(request{method: "GET", target: pq + "/labels", as: "admin"})
	json200(request{method: "POST", target: pq + "/labels", as: "admin", header: pform, body: "match[]=up"})
	json200(request{method: "GET", target: pq + "/label/job/values", as: "admin"})
	json200(request{method: "GET", target: pq + "/metadata", as: "admin"})
	json200(request{method: "GET", target: pq + "/status/buildinfo", as: "admin"})
	json200(request{method: "GET", target: pq + "/query_exemplars?query=up&start=0&end=60", as: "admin"})
	json200(request{method: "POST", target: pq + "/query_exemplars", as: "admin", header: pform, body: "query=up&start=0&end=60"})
	h.expect(request{method: "GET", target: pq + "/query?query=sum(", as: "admin"}, 400, "")
	h.expect(request{method: "GET", target: pq + "/query_range?query=up&start=60&end=0&step=15", as: "admin"}, 400, "")
	h.expect(request{method: "GET", target: pq + "/query?query=up&database=nope", as: "admin"}, 404, "database_not_found")
	h.expect(request{method: "GET", target: pq + "/query?query=up", as: "write_only"}, 403, "forbidden")

	// Saved searches.
	base := "/v1/apps/logsearch/searches"
	saved := h.expect(request{method: "POST", target: base, as: "org_admin",
		body: `{"name": "slow pages", "spl": "status>=500 | stats count by path", "visualization": "chart", "span_minutes": 15}`}, 201, "")
	var ss struct{ ID string }
	_ = json.Unmarshal(saved.body, &ss)
	json200(request{method: "GET", target: base + "?created_by=me&visibility=private&search=slow", as: "org_admin"})
	json200(request{method: "GET", target: base + "/" + ss.ID, as: "org_admin"})
	h.expect(request{method: "GET", target: base + "/" + ss.ID, as: "org_member"}, 404, "saved_search_not_found")
	json200(request{method: "PATCH", target: base + "/" + ss.ID, as: "org_admin", body: `{"visibility": "shared", "span_minutes": null}`})
	json200(request{method: "GET", target: base + "/" + ss.ID, as: "org_member"})
	h.expect(request{method: "PATCH", target: base + "/" + ss.ID, as: "org_member", body: `{"name": "mine"}`}, 403, "forbidden")
	h.expect(request{method: "PATCH", target: base + "/" + ss.ID, as: "org_admin", body: `{"visualization": "pie"}`}, 400, "invalid_visualization")
	h.expect(request{method: "PATCH", target: base + "/" + ss.ID, as: "org_admin", body: `{"span_minutes": 0}`}, 400, "invalid_span_minutes")
	h.expect(request{method: "POST", target: base, as: "org_admin", body: `{"name": "x"}`}, 400, "invalid_spl")
	h.expect(request{method: "POST", target: base, as: "org_admin", body: `{"name": "x", "spl": "a", "database": "nope"}`}, 400, "invalid_database")
	h.expect(request{method: "GET", target: base, as: "org_admin", noScope: true}, 400, "missing_scope")
	h.expect(request{method: "GET", target: base + "?visibility=public", as: "org_admin"}, 400, "invalid_visibility")
	h.expect(request{method: "GET", target: base, as: "admin"}, 403, "forbidden")
	h.expect(request{method: "DELETE", target: base + "/" + ss.ID, as: "org_admin"}, 204, "")
	h.expect(request{method: "GET", target: base + "/" + ss.ID, as: "org_admin"}, 404, "saved_search_not_found")

	// Device login: authorization, polling, the approval page, the token.
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	dc := h.expect(request{method: "POST", target: "/v1/oauth/device/code", header: form, body: "client_id=svc-cli&scope=full_access"}, 200, "")
	var dev struct {
		DeviceCode string `json:"device_code"`
		UserCode   string `json:"user_code"`
	}
	_ = json.Unmarshal(dc.body, &dev)
	h.expect(request{method: "POST", target: "/v1/oauth/device/code", body: `{"client_id": "svc-cli"}`}, 200, "")
	h.expect(request{method: "POST", target: "/v1/oauth/device/code", body: `{"client_id": "svc-cli", "other": {}}`}, 200, "")
	h.expect(request{method: "POST", target: "/v1/oauth/device/code", header: form, body: "scope=full_access"}, 400, "")
	h.expect(request{method: "POST", target: "/v1/oauth/device/code", header: form, body: "client_id=x&scope=admin"}, 400, "")
	// A JSON member of the wrong type is refused naming it, not read as absent (schemathesis
	// finding: {"client_id": "0", "scope": {}} got a device code).
	for body, want := range map[string]string{`{"client_id": "0", "scope": {}}`: "scope must be a string",
		`{"client_id": 7}`: "client_id must be a string", `0`: "the body must be a JSON object"} {
		for _, target := range []string{"/v1/oauth/device/code", "/v1/oauth/token"} {
			a := h.expect(request{method: "POST", target: target, body: body}, 400, "")
			var e struct {
				Error            string `json:"error"`
				ErrorDescription string `json:"error_description"`
			}
			if _ = json.Unmarshal(a.body, &e); e.Error != "invalid_request" || e.ErrorDescription != want {
				t.Errorf("%s %s: %s, want invalid_request %q", target, body, a.body, want)
			}
		}
	}
	poll := "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&client_id=svc-cli&device_code=" + dev.DeviceCode
	oauthErr := func(body, want string) {
		t.Helper()
		a := h.expect(request{method: "POST", target: "/v1/oauth/token", header: form, body: body}, 400, "")
		var e struct{ Error string }
		if _ = json.Unmarshal(a.body, &e); e.Error != want {
			t.Errorf("token: %s, want error %s", a.body, want)
		}
	}
	oauthErr(poll, "authorization_pending")
	oauthErr(poll, "slow_down")
	oauthErr("grant_type=password&username=alice", "unsupported_grant_type")
	oauthErr("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=svcd_nope", "invalid_grant")
	h.expect(request{method: "GET", target: "/device?user_code=" + dev.UserCode}, 200, "")
	h.expect(request{method: "POST", target: "/device/login", header: form, body: "username=alice&password=wrong&user_code=" + dev.UserCode}, 401, "")
	login := h.expect(request{method: "POST", target: "/device/login", header: form,
		body: "username=alice&password=" + strings.ReplaceAll(h.password, " ", "+") + "&user_code=" + dev.UserCode}, 200, "")
	var cookie fasthttp.Cookie
	cookie.SetKey(sessionCookie)
	if !login.header.Cookie(&cookie) {
		t.Fatal("device login set no session cookie")
	}
	withCookie := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Cookie": sessionCookie + "=" + string(cookie.Value())}
	csrf := csrfToken(string(cookie.Value()))
	h.expect(request{method: "POST", target: "/device", header: form, body: "action=approve&user_code=" + dev.UserCode}, 401, "")
	h.expect(request{method: "POST", target: "/device", header: withCookie, body: "csrf=forged&action=approve&user_code=" + dev.UserCode}, 403, "")
	h.expect(request{method: "POST", target: "/device", header: withCookie, body: "csrf=" + csrf + "&action=approve&user_code=BCDF-GHJK"}, 404, "")
	h.expect(request{method: "POST", target: "/device", header: withCookie, body: "csrf=" + csrf + "&action=approve&user_code=" + dev.UserCode}, 200, "")
	h.expect(request{method: "POST", target: "/device", header: withCookie, body: "csrf=" + csrf + "&action=deny&user_code=" + dev.UserCode}, 409, "")
	time.Sleep(10 * time.Millisecond)
	h.s.polls = pollState{} // the poll interval is not what this test is about
	tokenAnswer := h.expect(request{method: "POST", target: "/v1/oauth/token", header: form, body: poll}, 200, "")
	var access struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.Unmarshal(tokenAnswer.body, &access)
	h.tokens["device"] = access.AccessToken
	json200(request{method: "GET", target: "/v1/me", as: "device"})
	h.s.polls = pollState{}
	oauthErr(poll, "invalid_grant")

	// Verifying customer storage.
	verify := func(data, extra string) string {
		return `{"s3_storage": {"data": {"bucket": "` + data + `", "path": "p"}, "backups": {"bucket": "bkt", "path": "p"},
			"role_arn": "arn:aws:iam::123456789012:role/r", "external_id": "e1"}` + extra + `}`
	}
	json200(request{method: "POST", target: "/v1/clusters/verify-s3-access", as: "org_admin", body: verify("dat", `, "database_s3_access": {"external_id": "e1", "database_bucket_tag": "team-a"}`)})
	json200(request{method: "POST", target: "/v1/clusters/verify-s3-access", as: "org_admin", body: verify("missing", "")})
	h.expect(request{method: "POST", target: "/v1/clusters/verify-s3-access", as: "org_admin", body: `{"s3_storage": {"data": {"bucket": "d"}}}`}, 400, "invalid_s3_storage")
	h.expect(request{method: "POST", target: "/v1/clusters/verify-s3-access", as: "org_admin", body: verify("dat", `, "database_s3_access": {"external_id": "e2", "database_bucket_tag": "t"}`)}, 400, "invalid_database_s3_access")
	h.expect(request{method: "POST", target: "/v1/clusters/verify-s3-access", as: "org_member", body: verify("dat", "")}, 403, "forbidden")
	h.expect(request{method: "POST", target: "/v1/clusters/verify-s3-access", as: "admin", body: verify("dat", "")}, 403, "forbidden")

	// Creating a cluster, last: users must name the cluster from now on.
	json200(request{method: "POST", target: "/v1/clusters", as: "org_admin", body: `{"name": "big", "replicas": 1,
		"size": {"cpu_cores": 2, "memory_gib": 8}, "autoscaling": {"min_size": {"cpu_cores": 1, "memory_gib": 4}, "max_size": {"cpu_cores": 4, "memory_gib": 16}},
		"idle_timeout_minutes": 60, "s3_storage": {"data": {"bucket": "dat", "path": "p"}, "backups": {"bucket": "bkt", "path": "p"}, "role_arn": "arn:aws:iam::1:role/r", "external_id": "e1"},
		"database_s3_access": {"external_id": "e1", "database_bucket_tag": "team-a"}}`})
	h.expect(request{method: "GET", target: "/v1/clusters", as: "org_member", noScope: true}, 400, "missing_organization")
	h.expect(request{method: "GET", target: "/v1/tables", as: "org_member", noScope: true}, 400, "missing_cluster")
}
