package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// runSkips reads `go test -json` from stdin, prints what plain `go test` would (each
// package's ok/FAIL line, the output of failed tests, build errors), and fails when a test
// skipped that the allow-list does not name with a reason: in CI every external service
// is there, so a skip there is a test that silently stopped running.
//
//	go test -json ./... | svcstack skips -allow .ci/skips.txt
func runSkips(args []string) error {
	fs := flag.NewFlagSet("svcstack skips", flag.ContinueOnError)
	var files []string
	fs.Func("allow", "allow-list file, `<package> <test> <reason>` per line (repeatable)", func(f string) error {
		files = append(files, f)
		return nil
	})
	raw := fs.String("json", "", "also write the raw JSON stream to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(files) == 0 {
		files = []string{".ci/skips.txt"}
	}
	var allow []allowed
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		list, err := parseAllowList(b)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		allow = append(allow, list...)
	}
	in := io.Reader(os.Stdin)
	if *raw != "" {
		f, err := os.Create(*raw)
		if err != nil {
			return err
		}
		defer f.Close()
		in = io.TeeReader(os.Stdin, f)
	}
	res, err := summarize(in, os.Stdout, allow)
	if err != nil {
		return err
	}
	return res.verdict(os.Stdout)
}

// allowed is one line of the allow-list: a package's import path, a test name (a
// path.Match pattern, so `TestX/*` names TestX's subtests) and why it may skip in CI.
type allowed struct {
	pkg, test, reason string
}

// parseAllowList reads `<package> <test> <reason>` lines; # starts a comment. A line
// without a reason is an error: the list says why each skip is expected, or it is not one.
func parseAllowList(b []byte) ([]allowed, error) {
	var out []allowed
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("line %d: want `<package> <test> <reason>`, got %q", i+1, line)
		}
		if _, err := path.Match(f[1], ""); err != nil {
			return nil, fmt.Errorf("line %d: test pattern %q: %w", i+1, f[1], err)
		}
		reason := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(line, f[0])), f[1]))
		out = append(out, allowed{pkg: f[0], test: f[1], reason: reason})
	}
	return out, nil
}

func (a allowed) matches(pkg, test string) bool {
	ok, _ := path.Match(a.test, test)
	return a.pkg == pkg && ok
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output, build-fail
}

// skip is a test that skipped, with what it printed (its t.Skip message).
type skip struct {
	pkg, test, message string
	allowedBy          *allowed
}

type result struct {
	skips  []skip
	failed bool // a test, a package or a build failed
}

// summarize renders the stream as plain `go test` would and collects the skips.
func summarize(r io.Reader, w io.Writer, allow []allowed) (*result, error) {
	res := &result{}
	pending := map[string][]string{} // package\x00test -> output lines not yet shown
	key := func(e event) string { return e.Package + "\x00" + e.Test }
	flush := func(prefix string) {
		var keys []string
		for k := range pending {
			if strings.HasPrefix(k, prefix) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprint(w, strings.Join(pending[k], ""))
			delete(pending, k)
		}
	}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var e event
			if !bytes.HasPrefix(line, []byte("{")) || json.Unmarshal(line, &e) != nil {
				// Not an event (a line go test wrote itself): show it as it is.
				_, _ = w.Write(line)
			} else {
				res.handle(e, w, pending, key(e), flush, allow)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	// A stream cut short (a killed go test) leaves output of tests that never ended.
	flush("")
	return res, nil
}

func (res *result) handle(e event, w io.Writer, pending map[string][]string, k string, flush func(string), allow []allowed) {
	switch {
	case e.Action == "build-output":
		fmt.Fprint(w, e.Output)
	case e.Action == "build-fail":
		res.failed = true
	case e.Test == "":
		switch e.Action {
		case "output":
			// Plain go test prints a package's ok/FAIL line but not the bare PASS before it.
			if e.Output != "PASS\n" {
				fmt.Fprint(w, e.Output)
			}
		case "fail":
			res.failed = true
			// Output of tests that never ended (a panic, a timeout) explains the failure.
			flush(e.Package + "\x00")
		}
	case e.Action == "output":
		pending[k] = append(pending[k], e.Output)
	case e.Action == "fail":
		res.failed = true
		fmt.Fprint(w, strings.Join(pending[k], ""))
		delete(pending, k)
	case e.Action == "skip":
		s := skip{pkg: e.Package, test: e.Test, message: skipMessage(pending[k])}
		for i := range allow {
			if allow[i].matches(e.Package, e.Test) {
				s.allowedBy = &allow[i]
				break
			}
		}
		res.skips = append(res.skips, s)
		delete(pending, k)
	case e.Action == "pass":
		delete(pending, k)
	}
}

// skipMessage is what a skipped test printed, without the framework's own lines.
func skipMessage(lines []string) string {
	var msg []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		msg = append(msg, t)
	}
	return strings.Join(msg, " ")
}

// verdict lists the skips and fails on any the allow-list does not name, or on a failure.
func (res *result) verdict(w io.Writer) error {
	var unexpected []skip
	for _, s := range res.skips {
		if s.allowedBy == nil {
			unexpected = append(unexpected, s)
		}
	}
	if n := len(res.skips) - len(unexpected); n > 0 {
		fmt.Fprintf(w, "\n%d skipped test(s) on the allow-list:\n", n)
		for _, s := range res.skips {
			if s.allowedBy != nil {
				fmt.Fprintf(w, "  %s %s: %s\n", s.pkg, s.test, s.allowedBy.reason)
			}
		}
	}
	if len(unexpected) > 0 {
		fmt.Fprintf(w, "\nFAIL: %d test(s) skipped that must run (add a line `<package> <test> <reason>` to the allow-list only if the skip is meant):\n", len(unexpected))
		for _, s := range unexpected {
			fmt.Fprintf(w, "  %s %s: %s\n", s.pkg, s.test, s.message)
		}
		return fmt.Errorf("%d unexpected skip(s)", len(unexpected))
	}
	if res.failed {
		return errors.New("tests failed")
	}
	return nil
}
