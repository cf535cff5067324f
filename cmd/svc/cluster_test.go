package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestClusterCLI drives a cluster's lifecycle, its metrics and its connector through svc
// against a real svcd, parsing every JSON answer: stop, resume, update (and a bad value's
// 400 naming the field), cluster metrics by id and by name, GET /v1/metrics with its
// parameters, and delete (asked on a terminal, not asked with --yes or when piped).
func TestClusterCLI(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	c := newCLI(t, s)
	c.saveLogin(t, config{Token: userToken(t, s), TokenType: tokenOAuth, Org: "default"})
	cl := names(c.ok("cluster", "list"), "clusters")
	if len(cl) != 1 {
		t.Fatalf("clusters: %v", cl)
	}
	phase := func(v map[string]any) any { return field(v["status"], "phase") }

	// stop by name: the answer is the cluster after it stopped.
	if v := c.ok("cluster", "stop", cl[0]); v["name"] != cl[0] || phase(v) != "stopped" || v["can_resume"] != true {
		t.Fatalf("cluster stop: %v", v)
	}
	if v := c.ok("connector", "get"); v["state"] != "stopped" {
		t.Fatalf("connector of a stopped cluster: %v", v)
	}
	if e := c.fails(1, "cluster", "metrics", cl[0]); e["status"] != 503.0 || field(e["error"], "code") != "cluster_stopped" {
		t.Fatalf("metrics of a stopped cluster: %v", e)
	}
	all := c.ok("cluster", "metrics", "--all")
	if cs, _ := all["clusters"].([]any); len(cs) != 1 || field(cs[0], "name") != cl[0] || field(cs[0], "status") != 503.0 ||
		field(field(cs[0], "error"), "code") != "cluster_stopped" || field(cs[0], "metrics") != nil {
		t.Fatalf("--all with the cluster stopped: %v", all)
	}
	// resume the selected cluster (the organization's only one): no name needed.
	if v := c.ok("cluster", "resume"); v["name"] != cl[0] || (phase(v) != "ready" && phase(v) != "resuming") {
		t.Fatalf("cluster resume: %v", v)
	}
	waitUntil(t, "the cluster to be ready", 2*time.Minute, func() bool { return phase(c.ok("cluster", "get", cl[0])) == "ready" })

	// update: name and idle timeout; a bad value is the API's 400 naming the field.
	v := c.ok("cluster", "update", cl[0], "--name", "renamed", "--idle-timeout-minutes", "30")
	if v["name"] != "renamed" || v["idle_timeout_minutes"] != 30.0 {
		t.Fatalf("cluster update: %v", v)
	}
	e := c.fails(1, "cluster", "update", "renamed", "--idle-timeout-minutes", "5")
	if e["status"] != 400.0 || !strings.Contains(field(e["error"], "message").(string), "idle_timeout_minutes") {
		t.Fatalf("bad idle timeout: %v", e)
	}
	if v := c.ok("cluster", "get", "renamed"); v["idle_timeout_minutes"] != 30.0 {
		t.Fatalf("the bad update changed the cluster: %v", v)
	}
	if v := c.ok("cluster", "update", "renamed", "--idle-timeout-minutes", "0"); v["idle_timeout_minutes"] != 0.0 || v["name"] != "renamed" {
		t.Fatalf("update of the idle timeout only: %v", v)
	}
	c.fails(2, "cluster", "update", "renamed")

	// cluster metrics: by id (the default four series) and the selected cluster by name.
	seriesNames := func(v map[string]any) []string { return names(v, "metrics") }
	if got := seriesNames(c.ok("cluster", "metrics", "renamed")); strings.Join(got, ",") != "total_read_queries,total_write_queries,max_cpu_cores,max_memory_bytes" {
		t.Fatalf("cluster metrics: %v", got)
	}
	all = c.ok("cluster", "metrics", "--all", "--metrics", "max_memory_bytes")
	if cs, _ := all["clusters"].([]any); len(cs) != 1 || field(cs[0], "name") != "renamed" || field(cs[0], "error") != nil ||
		len(names(cs[0], "metrics")) != 1 {
		t.Fatalf("--all: %v", all)
	}
	c.fails(2, "cluster", "metrics", "--all", "renamed")
	end := time.Now().UTC().Add(time.Minute)
	got := seriesNames(c.ok("cluster", "metrics", "--metrics", "max_cpu_cores",
		"--start-time", end.Add(-2*time.Hour).Format(time.RFC3339), "--end-time", end.Format(time.RFC3339)))
	if strings.Join(got, ",") != "max_cpu_cores" {
		t.Fatalf("cluster metrics by name: %v", got)
	}
	if e := c.fails(1, "cluster", "metrics", "--metrics", "nope"); e["status"] != 400.0 {
		t.Fatalf("unknown cluster metric: %v", e)
	}
	c.fails(2, "cluster", "metrics", "--start-time", "yesterday")

	// GET /v1/metrics: the window, an explicit range, filters and the baseline.
	for _, args := range [][]string{
		{"metrics"},
		{"metrics", "--window-seconds", "600", "--metric", "max_cpu_cores,service.table.rows"},
		{"metrics", "--start-time", end.Add(-time.Hour).Format(time.RFC3339), "--end-time", end.Format(time.RFC3339),
			"--metric", "service.table.rows", "--filter", "database=default", "--include-baseline"},
		{"metrics", "--cluster", "renamed", "--filter", `{"database": "default"}`},
	} {
		v := c.ok(args...)
		if _, ok := v["resources"].([]any); !ok || v["start_time"] == nil || v["partial_errors"] == nil {
			t.Fatalf("svc %v: %v", args, v)
		}
	}
	if e := c.fails(1, "metrics", "--window-seconds", "0"); e["status"] != 400.0 || !strings.Contains(e["error"].(map[string]any)["message"].(string)+field(e["error"], "code").(string), "window_seconds") {
		t.Fatalf("bad window: %v", e)
	}
	c.fails(2, "metrics", "--filter", "no-equals-sign")

	// connector get by cluster name, once the consumer is back.
	waitUntil(t, "the connector to run", time.Minute, func() bool { return c.ok("connector", "get", "renamed")["state"] == "running" })

	// delete on a terminal asks; "no" keeps the cluster, "yes" deletes it.
	if out, term, code := answerOnTerminal(t, c, "no\n", "cluster", "delete", "renamed"); code != 1 || !strings.Contains(term, "Type yes") || !strings.Contains(term, "aborted") || out != "" {
		t.Fatalf("delete answered no: exit %d stdout %q terminal %q", code, out, term)
	}
	c.ok("cluster", "get", "renamed")
	out, term, code := answerOnTerminal(t, c, "yes\n", "cluster", "delete", "renamed")
	var del map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &del) != nil || del["deleted"] != true {
		t.Fatalf("delete answered yes: exit %d stdout %q terminal %q", code, out, term)
	}
	if got := names(c.ok("cluster", "list"), "clusters"); len(got) != 0 {
		t.Fatalf("clusters after delete: %v", got)
	}
	// piped (a script): no question.
	c.ok("cluster", "create", "second")
	waitUntil(t, "cluster second to be ready", 2*time.Minute, func() bool { return phase(c.ok("cluster", "get", "second")) == "ready" })
	if v := c.ok("cluster", "delete", "second"); v["deleted"] != true {
		t.Fatalf("piped delete: %v", v)
	}
}

// answerOnTerminal runs svc with stdin and stderr on a new pty, types answer, and returns
// stdout (piped), what the terminal showed and the exit code.
func answerOnTerminal(t *testing.T, c *cli, answer string, args ...string) (string, string, int) {
	t.Helper()
	cmd := c.command(args...)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var stdout bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	if _, err := io.WriteString(ptmx, answer); err != nil {
		t.Fatal(err)
	}
	term, _ := io.ReadAll(ptmx) // EIO once the process exits
	code := 0
	if err := cmd.Wait(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return stdout.String(), string(term), code
}
