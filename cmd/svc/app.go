package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

// Exit codes, documented in README.md.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2 // a selection is needed, or the command line is wrong
	exitAuth        = 4
	exitInterrupted = 130
)

// scope is how much selection a request needs: the organization, its cluster, and a
// database in that cluster.
type scope int

const (
	scopeNone scope = iota
	scopeOrg
	scopeCluster
	scopeDatabase
)

// app is what every command shares: the global flags, the saved configuration, the
// resolved credentials and selection, and the output streams.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	// Global flags.
	url, apiKey, org, cluster, database string
	json                                bool

	cfg     config
	cfgPath string

	// Resolved lazily by selection.
	token   string
	isKey   bool
	sel     selection
	started bool // a command's RunE began: errors after it are not usage errors
}

type selection struct{ org, cluster, database string }

// commands are the constructors of the top-level commands, one per resource file.
var commands []func(a *app) *cobra.Command

func register(f func(a *app) *cobra.Command) { commands = append(commands, f) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "svc",
		Short:         "The command-line client of the svc analytics data service",
		SilenceErrors: true,
		SilenceUsage:  true,
		Long: `svc talks to the service's API. Log in once with "svc login" (a browser approval),
or pass an API key (--api-key or SERVICE_API_KEY) in scripts and CI.

Results are JSON on stdout, errors JSON on stderr. Exit codes: 0 ok, 1 error,
2 a selection is needed ({"needs": ...} on stdout) or bad usage, 4 authentication,
130 interrupted.`,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			a.started = true
			return a.loadConfig()
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.url, "url", "", "service base address (else SERVICE_URL, then the saved login, then http://127.0.0.1:8080)")
	pf.StringVar(&a.apiKey, "api-key", "", "API key (else SERVICE_API_KEY, then the saved login)")
	pf.StringVar(&a.org, "org", "", "organization (else SERVICE_ORG, then the saved selection)")
	pf.StringVar(&a.cluster, "cluster", "", "cluster (else SERVICE_CLUSTER, then the saved selection)")
	pf.StringVar(&a.database, "database", "", "database (else SERVICE_DATABASE, then the saved selection)")
	pf.BoolVar(&a.json, "json", false, "machine output only: JSON events on stderr instead of progress bars and prompts")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%s", err.Error()) })
	for _, f := range commands {
		root.AddCommand(f(a))
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	return a.exit(err)
}

// exit prints err the way scripts read it and returns the exit code.
func (a *app) exit(err error) int {
	if err == nil {
		return exitOK
	}
	var n *needsError
	if errors.As(err, &n) {
		a.printJSON(a.stdout, n.body)
		return exitUsage
	}
	code, status, body := exitError, 0, map[string]any{"code": "error", "message": err.Error()}
	var ae *apiError
	var ue *usageError
	switch {
	case errors.As(err, &ae):
		status, body = ae.status, ae.body
		if ae.status == 401 {
			code = exitAuth
		}
	case errors.As(err, &ue):
		code, body["code"] = exitUsage, "usage"
	case errors.Is(err, errInterrupted):
		code, body["code"] = exitInterrupted, "interrupted"
	case errors.Is(err, errNoCredentials):
		code, body["code"] = exitAuth, "not_logged_in"
		body["hint"] = "run svc login, or pass --api-key / SERVICE_API_KEY"
	case !a.started:
		code, body["code"] = exitUsage, "usage" // unknown command, wrong arguments
	}
	out := map[string]any{"error": body}
	if status != 0 {
		out["status"] = status
	}
	a.printJSON(a.stderr, out)
	return code
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErr(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// args checks the number of positional arguments, as a usage error.
func args(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) < min || (max >= 0 && len(a) > max) {
			return usageErr("usage: %s", cmd.UseLine())
		}
		return nil
	}
}

// needsError is a missing selection with several options: {"needs": ..., "choices"}.
type needsError struct{ body map[string]any }

func (e *needsError) Error() string { return fmt.Sprintf("needs %v", e.body["needs"]) }

// apiError is an answer of the service with an error status; body is its error object.
type apiError struct {
	status int
	body   map[string]any
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %v", e.status, e.body["message"]) }

var (
	errInterrupted   = errors.New("interrupted")
	errNoCredentials = errors.New("not logged in")
)

func (a *app) printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// emit prints a command's result on stdout.
func (a *app) emit(v any, err error) error {
	if err != nil {
		return err
	}
	a.printJSON(a.stdout, v)
	return nil
}

// baseURL resolves --url, SERVICE_URL, the saved login, then the local default.
func (a *app) baseURL() string {
	for _, u := range []string{a.url, os.Getenv("SERVICE_URL"), a.cfg.URL} {
		if u != "" {
			return strings.TrimSuffix(u, "/")
		}
	}
	return "http://127.0.0.1:8080"
}

// credentials resolves the API key or token: --api-key, SERVICE_API_KEY, saved login.
func (a *app) credentials() error {
	switch {
	case a.apiKey != "":
		a.token, a.isKey = a.apiKey, true
	case os.Getenv("SERVICE_API_KEY") != "":
		a.token, a.isKey = os.Getenv("SERVICE_API_KEY"), true
	case a.cfg.Token != "":
		a.token, a.isKey = a.cfg.Token, a.cfg.TokenType == tokenAPIKey
	default:
		return errNoCredentials
	}
	return nil
}

// client is the generated SDK client with the credentials and, for scope, the
// selection applied to every request.
func (a *app) client(s scope) (*client.Client, error) {
	editor := func(_ context.Context, r *http.Request) error {
		if a.token != "" {
			r.Header.Set("Authorization", "Bearer "+a.token)
		}
		q := r.URL.Query()
		set := func(name, v string) {
			if v != "" && !q.Has(name) {
				q.Set(name, v)
			}
		}
		if s >= scopeOrg {
			set("organization", a.sel.org)
		}
		if s >= scopeCluster {
			set("cluster", a.sel.cluster)
		}
		if s >= scopeDatabase && a.sel.database != "" && r.Header.Get("X-Service-Database") == "" && !q.Has("database") {
			r.Header.Set("X-Service-Database", a.sel.database)
		}
		r.URL.RawQuery = q.Encode()
		r.Header.Set("User-Agent", userAgent)
		return nil
	}
	return client.NewClient(a.baseURL(), client.WithRequestEditorFn(editor))
}

// call resolves credentials and the selection s needs, runs one request through the
// SDK, and returns its JSON answer (nil for an empty one) or the service's error.
func (a *app) call(ctx context.Context, s scope, f func(ctx context.Context, c *client.Client) (*http.Response, error)) (any, error) {
	if err := a.resolve(ctx, s); err != nil {
		return nil, err
	}
	c, err := a.client(s)
	if err != nil {
		return nil, err
	}
	resp, err := f(ctx, c)
	if err != nil {
		return nil, transportErr(ctx, err)
	}
	return decodeAnswer(resp)
}

func transportErr(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), errInterrupted) {
		return errInterrupted
	}
	return fmt.Errorf("request failed: %w", err)
}

// readAnswer reads a response's body, or returns the service's error for an error status.
func readAnswer(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 400 {
		return nil, answerError(resp.StatusCode, b)
	}
	return b, nil
}

// decodeAnswer reads a response: its JSON on success, an apiError otherwise.
func decodeAnswer(resp *http.Response) (any, error) {
	b, err := readAnswer(resp)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{"ok": true}, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("the service answered %d with non-JSON: %.200s", resp.StatusCode, b)
	}
	return v, nil
}

// answerError turns an error answer (the service's envelope or OAuth's) into apiError.
func answerError(status int, b []byte) error {
	var env struct {
		Error any `json:"error"`
	}
	body := map[string]any{"code": http.StatusText(status), "message": strings.TrimSpace(string(b))}
	if json.Unmarshal(b, &env) == nil {
		switch e := env.Error.(type) {
		case map[string]any:
			body = e
		case string:
			var o map[string]any
			_ = json.Unmarshal(b, &o)
			body = map[string]any{"code": e, "message": o["error_description"]}
		}
	}
	return &apiError{status: status, body: body}
}

// resolve fills the credentials and the selection up to s. For user credentials a
// missing organization, cluster or database is looked up: one option is taken, several
// answer needsError. API keys are bound to their organization and cluster, so nothing
// is looked up for them.
func (a *app) resolve(ctx context.Context, s scope) error {
	if a.token == "" {
		if err := a.credentials(); err != nil {
			return err
		}
	}
	a.sel = selection{
		org:      first(a.org, os.Getenv("SERVICE_ORG"), a.cfg.Org),
		cluster:  first(a.cluster, os.Getenv("SERVICE_CLUSTER"), a.cfg.Cluster),
		database: first(a.database, os.Getenv("SERVICE_DATABASE"), a.cfg.Database),
	}
	if a.isKey {
		return nil
	}
	steps := []struct {
		level       scope
		v           *string
		needs, flag string
		list        func(ctx context.Context, c *client.Client) (*http.Response, error)
		field       string
	}{
		{scopeOrg, &a.sel.org, "org", "--org", func(ctx context.Context, c *client.Client) (*http.Response, error) {
			return c.ListOrganizations(ctx, &client.ListOrganizationsParams{})
		}, "organizations"},
		{scopeCluster, &a.sel.cluster, "cluster", "--cluster", func(ctx context.Context, c *client.Client) (*http.Response, error) {
			return c.ListClusters(ctx, &client.ListClustersParams{})
		}, "clusters"},
		{scopeDatabase, &a.sel.database, "database", "--database", func(ctx context.Context, c *client.Client) (*http.Response, error) {
			return c.ListDatabases(ctx, &client.ListDatabasesParams{})
		}, "databases"},
	}
	for _, st := range steps {
		if s < st.level || *st.v != "" {
			continue
		}
		c, err := a.client(st.level - 1)
		if err != nil {
			return err
		}
		resp, err := st.list(ctx, c)
		if err != nil {
			return transportErr(ctx, err)
		}
		v, err := decodeAnswer(resp)
		if err != nil {
			return err
		}
		var names []string
		items, _ := field(v, st.field).([]any)
		for _, it := range items {
			// The read-only system database is never a choice.
			if n, ok := field(it, "name").(string); ok && !(st.level == scopeDatabase && n == "system") {
				names = append(names, n)
			}
		}
		switch len(names) {
		case 0:
			return &apiError{status: 404, body: map[string]any{"code": "no_" + st.needs,
				"message": "there is no " + st.needs + " to use", "hint": "create one with svc " + cmdName(st.needs) + " create NAME"}}
		case 1:
			*st.v = names[0]
		default:
			return &needsError{body: map[string]any{"needs": st.needs, "choices": names,
				"hint": fmt.Sprintf("pass %s NAME, or save one with svc %s select NAME", st.flag, cmdName(st.needs))}}
		}
	}
	return nil
}

func cmdName(needs string) string {
	if needs == "database" {
		return "db"
	}
	return needs
}

func first(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// field reads a key of a decoded JSON object, nil when absent.
func field(v any, key string) any {
	if m, ok := v.(map[string]any); ok {
		return m[key]
	}
	return nil
}

// signalContext is cancelled with errInterrupted on SIGINT or SIGTERM.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			cancel(errInterrupted)
		case <-done:
		}
	}()
	return ctx, func() { signal.Stop(ch); close(done); cancel(nil) }
}

// runE adapts a command body to cobra: it gets a context cancelled on Ctrl-C.
func runE(f func(ctx context.Context, args []string) error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		ctx, stop := signalContext()
		defer stop()
		err := f(ctx, args)
		if err != nil && ctx.Err() != nil && errors.Is(context.Cause(ctx), errInterrupted) {
			return errInterrupted
		}
		return err
	}
}

// isTerminal tells whether f is a terminal (a file the terminal ioctl accepts; /dev/null
// is a character device but not a terminal), with the standard library only.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && isatty(file.Fd())
}

// group is a command that only holds subcommands.
func group(use, short string, sub ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return usageErr("usage: %s", cmd.UseLine()+" COMMAND") }}
	c.AddCommand(sub...)
	return c
}

// ptr returns a pointer to v, for optional fields of the SDK's request types.
func ptr[T any](v T) *T { return &v }
