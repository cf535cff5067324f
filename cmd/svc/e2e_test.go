package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/testenv"
)

// The end-to-end tests run the real svc binary against a real svcd (svcdtest: the
// shared broker and the embedded engine); they skip without the harness.

const adminPassword = "correct horse battery staple"

var svcBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "svc-bin-*")
	if err != nil {
		panic(err)
	}
	svcBin = filepath.Join(dir, "svc")
	if out, err := exec.Command("go", "build", "-o", svcBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build svc: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs svc with a private configuration directory and a clean SERVICE_* environment.
type cli struct {
	t      *testing.T
	url    string
	cfgDir string
	env    []string // extra NAME=value
}

func newCLI(t *testing.T, s *svcdtest.Service) *cli {
	return &cli{t: t, url: s.URL, cfgDir: t.TempDir()}
}

func (c *cli) with(env ...string) *cli {
	d := *c
	d.env = append(append([]string{}, c.env...), env...)
	return &d
}

func (c *cli) command(args ...string) *exec.Cmd {
	cmd := exec.Command(svcBin, args...)
	env := []string{"XDG_CONFIG_HOME=" + c.cfgDir, "HOME=" + c.cfgDir, "SERVICE_URL=" + c.url}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "SERVICE_") && !strings.HasPrefix(e, "XDG_CONFIG_HOME=") && !strings.HasPrefix(e, "HOME=") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, c.env...)
	return cmd
}

// run returns stdout, stderr and the exit code.
func (c *cli) run(args ...string) (string, string, int) {
	c.t.Helper()
	cmd := c.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("svc %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// ok runs a command that must succeed and returns its JSON result.
func (c *cli) ok(args ...string) map[string]any {
	c.t.Helper()
	out, errs, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("svc %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		c.t.Fatalf("svc %s: stdout is not a JSON object: %v\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

// fails runs a command that must exit with code and returns its JSON error (stderr).
func (c *cli) fails(code int, args ...string) map[string]any {
	c.t.Helper()
	out, errs, got := c.run(args...)
	if got != code {
		c.t.Fatalf("svc %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, code, out, errs)
	}
	// stderr may hold JSON events before the error: the error is the last value.
	var v map[string]any
	dec := json.NewDecoder(strings.NewReader(errs))
	for {
		var x map[string]any
		if err := dec.Decode(&x); err != nil {
			break
		}
		v = x
	}
	if v["error"] == nil {
		c.t.Fatalf("svc %s: stderr does not end with a JSON error:\n%s", strings.Join(args, " "), errs)
	}
	return v
}

// saveLogin writes a saved login as svc login would.
func (c *cli) saveLogin(t *testing.T, cfg config) {
	t.Helper()
	dir := filepath.Join(c.cfgDir, "svc")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// userToken signs in as the bootstrap administrator with a password (a user session).
func userToken(t *testing.T, s *svcdtest.Service) string {
	t.Helper()
	var login struct{ Token string }
	s.Must(200, "POST", "/v1/auth/login", map[string]string{"username": "admin", "password": adminPassword}).JSON(t, &login)
	return login.Token
}

func names(v any, key string) []string {
	var out []string
	items, _ := field(v, key).([]any)
	for _, it := range items {
		n, _ := field(it, "name").(string)
		out = append(out, n)
	}
	return out
}

// readEvents scans JSON lines of r into ch until EOF.
func readEvents(r *bufio.Scanner, ch chan<- map[string]any) {
	defer close(ch)
	for r.Scan() {
		var ev map[string]any
		if json.Unmarshal(r.Bytes(), &ev) == nil {
			ch <- ev
		}
	}
}

func waitUntil(t *testing.T, what string, timeout time.Duration, f func() bool) {
	t.Helper()
	testenv.Eventually(t, timeout, func() (bool, string) { return f(), "waiting for " + what })
}
