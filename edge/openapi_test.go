package edge

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	vErrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/pipeline/transform"
	"github.com/svc-data/svc/query/format"
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
		if !ok || recv.Name != "r" || !slices.Contains(httpMethods, strings.ToLower(sel.Sel.Name)) {
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
