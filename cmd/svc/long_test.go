package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestIngestKilledAndRerunLandsOnce: a 1M-row NDJSON ingest is SIGKILLed part-way, then
// the same command runs again; the chunks' idempotency keys make the table hold exactly
// 1,000,000 rows with 1,000,000 distinct ids.
func TestIngestKilledAndRerunLandsOnce(t *testing.T) {
	const total = 1_000_000
	s := svcdtest.Start(t)
	c := newCLI(t, s).with("SERVICE_API_KEY=" + s.AdminKey)
	file := filepath.Join(t.TempDir(), "rows.ndjson")
	writeRows(t, file, total)
	c.ok("table", "create", "big")

	args := []string{"ingest", "big", file, "--json", "--chunk-rows", "5000", "--parallel", "2"}
	cmd := c.command(args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	events := make(chan map[string]any, 100)
	go readEvents(bufio.NewScanner(stderr), events)
	killedAt := -1.0
	for ev := range events {
		if rows, _ := ev["rows"].(float64); ev["event"] == "progress" && rows >= 200_000 {
			cmd.Process.Signal(syscall.SIGKILL)
			killedAt = rows
			break
		}
	}
	werr := cmd.Wait()
	if killedAt < 0 || killedAt >= total {
		t.Fatalf("the ingest was not killed part-way (acknowledged %v, wait %v)", killedAt, werr)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("svc was not killed: %v", werr)
	}
	t.Logf("killed after %v acknowledged rows", killedAt)

	res := c.ok(args...)
	if res["rows"] != float64(total) {
		t.Fatalf("rerun: %v", res)
	}
	s.WaitCount("big", total, 5*time.Minute)
	got := s.Query("SELECT count() AS n, uniqExact(id::Int64) AS ids FROM big")
	if len(got) != 1 || got[0]["n"] != float64(total) || got[0]["ids"] != float64(total) {
		t.Fatalf("after the rerun: %v", got)
	}
}

func writeRows(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		fmt.Fprintf(w, `{"id":%d,"user":"u%d","amount":%d}`+"\n", i, i%1000, i*7%1000)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestInterruptCancelsTheQueryOnTheService: SIGINT during a long query makes svc cancel
// it with POST /v1/query/cancel and exit 130; the query id is free again at once.
func TestInterruptCancelsTheQueryOnTheService(t *testing.T) {
	s := svcdtest.Start(t)
	c := newCLI(t, s).with("SERVICE_API_KEY=" + s.AdminKey)
	const id = "svc-cli-interrupt-test"
	running := func() bool {
		r, err := s.Do("POST", "/v1/query?query_id="+id, map[string]string{"sql": "SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status == 409
	}
	// One row every half second for 500 s (the default limit ends it after 30 s): the
	// first row on stdout shows the query runs on the service.
	cmd := c.command("query", "--query-id", id, "--format", "JSONEachRow",
		"SELECT number, sleepEachRow(0.5) FROM numbers(1000) SETTINGS max_block_size = 1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	first := make([]byte, 1)
	if _, err := io.ReadFull(stdout, first); err != nil {
		cmd.Wait()
		t.Fatalf("no row from the query: %v\n%s", err, stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	if !running() {
		t.Fatal("the query streams rows but its id is not in use on the service")
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130\nstderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), `"event":"query_canceled"`) || !strings.Contains(stderr.String(), `"interrupted"`) {
		t.Fatalf("stderr: %s", stderr.String())
	}
	// The statement would run for minutes (and 30 s at most by the default limit).
	waitUntil(t, "the query to stop on the service", 15*time.Second, func() bool { return !running() })
	t.Logf("stopped %s after SIGINT", time.Since(start).Round(time.Millisecond))
}

// TestTerminalOutput drives svc through a real pseudo-terminal: on a terminal query
// prints a table and ingest draws a progress bar on stderr; piped, stdout is the raw
// JSON and no bar appears anywhere.
func TestTerminalOutput(t *testing.T) {
	s := svcdtest.Start(t)
	c := newCLI(t, s).with("SERVICE_API_KEY=" + s.AdminKey)

	// query, stdout on a terminal: a table.
	out := onTerminal(t, c, true, false, "query", "SELECT 1 AS one, 'x' AS letter")
	if !strings.Contains(out, "one") || !strings.Contains(out, "letter") || !strings.Contains(out, "(1 rows)") || strings.Contains(out, `"meta"`) {
		t.Fatalf("table on the terminal:\n%s", out)
	}
	// query piped: the raw JSON format.
	piped, errs, code := c.run("query", "SELECT 1 AS one")
	if code != 0 || !strings.HasPrefix(piped, `{"meta"`) || errs != "" {
		t.Fatalf("piped query: %d %q %q", code, piped, errs)
	}

	c.ok("table", "create", "tty")
	file := filepath.Join(t.TempDir(), "rows.ndjson")
	writeRows(t, file, 50_000)
	// ingest with stderr on a terminal and stdout piped: the bar only on the terminal.
	cmd := c.command("ingest", "tty", file, "--chunk-rows", "1000", "--parallel", "1")
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	term, _ := io.ReadAll(ptmx) // EIO once the process exits
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, term)
	}
	if !strings.Contains(string(term), "\r[") || !strings.Contains(string(term), "rows/s") || !strings.Contains(string(term), "100%") {
		t.Fatalf("no progress bar on the terminal's stderr:\n%q", term)
	}
	if strings.Contains(stdout.String(), "\r") || !strings.HasPrefix(strings.TrimSpace(stdout.String()), "{") {
		t.Fatalf("piped stdout holds more than the JSON result: %q", stdout.String())
	}
	// both piped: no bar at all.
	out, errs, code = c.run("ingest", "tty", file, "--chunk-rows", "1000")
	if code != 0 || errs != "" || strings.Contains(out, "\r") {
		t.Fatalf("piped ingest: %d stdout %q stderr %q", code, out, errs)
	}
}

// onTerminal runs svc with stdout (and stderr when both) on a new pty and returns what
// the terminal showed.
func onTerminal(t *testing.T, c *cli, stdout, stderr bool, args ...string) string {
	t.Helper()
	cmd := c.command(args...)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var other bytes.Buffer
	cmd.Stdout, cmd.Stderr = &other, &other
	if stdout {
		cmd.Stdout = tty
	}
	if stderr {
		cmd.Stderr = tty
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	term, _ := io.ReadAll(ptmx)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("svc %v: %v\n%s%s", args, err, term, other.String())
	}
	return string(term)
}
