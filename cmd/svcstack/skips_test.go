package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The samples under testdata/skips are real `go test -json` streams of three small
// packages: one with a failing subtest and two skips, one passing with a skip, one that
// does not build.

func summarizeFile(t *testing.T, name, allowList string) (out string, res *result) {
	t.Helper()
	allow, err := parseAllowList([]byte(allowList))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "skips", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	res, err = summarize(f, &b, allow)
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), res
}

func verdictOf(res *result) (string, error) {
	var b strings.Builder
	err := res.verdict(&b)
	return b.String(), err
}

func TestSkipsUnexpectedSkipFails(t *testing.T) {
	out, res := summarizeFile(t, "allowed.json", "")
	if want := "ok  \texample.com/s/q\t"; !strings.Contains(out, want) {
		t.Errorf("output lacks the package's ok line %q:\n%s", want, out)
	}
	if strings.Contains(out, "=== RUN") || strings.Contains("\n"+out, "\nPASS\n") {
		t.Errorf("output is verbose; want plain go test's:\n%s", out)
	}
	v, err := verdictOf(res)
	if err == nil {
		t.Fatalf("a skip not on the allow-list passed:\n%s", v)
	}
	if !strings.Contains(v, "example.com/s/q TestBench: q_test.go:4: a benchmark: set SVC_BENCH_X=1") {
		t.Errorf("verdict does not name the test and its skip message:\n%s", v)
	}
}

func TestSkipsAllowedSkipPasses(t *testing.T) {
	_, res := summarizeFile(t, "allowed.json", "# comment\nexample.com/s/q TestBench  a benchmark, run by its own task\n")
	v, err := verdictOf(res)
	if err != nil {
		t.Fatalf("an allowed skip failed: %v\n%s", err, v)
	}
	if !strings.Contains(v, "example.com/s/q TestBench: a benchmark, run by its own task") {
		t.Errorf("verdict does not list the allowed skip with its reason:\n%s", v)
	}
}

func TestSkipsAllowListIsPerPackageAndPattern(t *testing.T) {
	// The same test name in another package is not allowed.
	_, res := summarizeFile(t, "allowed.json", "example.com/s/other TestBench reason\n")
	if _, err := verdictOf(res); err == nil {
		t.Error("an entry for another package allowed the skip")
	}
	// TestSub/* allows TestSub's subtests; the failing subtest still fails the run.
	out, res := summarizeFile(t, "fail.json", "example.com/s/p TestSkipped env\nexample.com/s/p TestSub/* slow\n")
	if len(res.skips) != 2 {
		t.Fatalf("skips = %+v, want TestSkipped and TestSub/a", res.skips)
	}
	for _, s := range res.skips {
		if s.allowedBy == nil {
			t.Errorf("%s not allowed", s.test)
		}
	}
	if _, err := verdictOf(res); err == nil || !res.failed {
		t.Error("a failing test passed the run")
	}
	for _, want := range []string{"p_test.go:5: why", "p_test.go:5: broken", "--- FAIL: TestSub/b", "--- FAIL: TestSub ", "FAIL\texample.com/s/p\t"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "KAFKA_SEEDS is unset") || strings.Contains(out, "TestOK") {
		t.Errorf("output shows tests that did not fail:\n%s", out)
	}
}

func TestSkipsBuildFailureIsShownAndFails(t *testing.T) {
	out, res := summarizeFile(t, "buildfail.json", "")
	for _, want := range []string{"b/b_test.go:3:28: undefined: undefined", "FAIL\texample.com/s/b [build failed]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := verdictOf(res); err == nil {
		t.Error("a build failure passed the run")
	}
}

func TestSkipsAllowListNeedsAReason(t *testing.T) {
	f := func(list string) {
		t.Helper()
		if _, err := parseAllowList([]byte(list)); err == nil {
			t.Errorf("parseAllowList(%q) accepted it", list)
		}
	}
	f("example.com/s/q TestBench\n")
	f("example.com/s/q\n")
	f("example.com/s/q Test[ reason\n")
}

// TestSkipsAllowListsOfTheRepository keeps the allow-lists the test task passes readable
// by the checker.
func TestSkipsAllowListsOfTheRepository(t *testing.T) {
	for _, f := range []string{"../../.ci/skips.txt", "../../.ci/skips-no-browser.txt"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		list, err := parseAllowList(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, a := range list {
			if !strings.HasPrefix(a.pkg, "github.com/svc-data/svc/") {
				t.Errorf("%s: %s %s: not a package of this module", f, a.pkg, a.test)
			}
		}
	}
}
