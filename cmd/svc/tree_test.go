package main

// The tree's structural promises, kept here beside TestImportRule: the import arrows of
// every package run one way (DESIGN.md, "Layers: arrows run one way"), DESIGN.md's file
// map has exactly one row per package, and no tracked file points outside the repository.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

const modulePath = "github.com/svc-data/svc"

// repoRoot is the module's root seen from this package's directory (go test runs a
// package's tests in its directory).
const repoRoot = "../.."

type listedPackage struct {
	ImportPath string
	Imports    []string
}

// rel is the package's path inside the repository ("query/tables").
func (p listedPackage) rel() string { return strings.TrimPrefix(p.ImportPath, modulePath+"/") }

var (
	listOnce sync.Once
	listed   []listedPackage
	listErr  error
)

// modulePackages is `go list -json ./...` of the module: every package, with the imports
// of its non-test files for the platform the test runs on.
func modulePackages(t *testing.T) []listedPackage {
	t.Helper()
	listOnce.Do(func() {
		cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
		cmd.Dir = repoRoot
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			listErr = errors.New("go list ./...: " + err.Error() + ": " + stderr.String())
			return
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p listedPackage
			if err := dec.Decode(&p); err == io.EOF {
				break
			} else if err != nil {
				listErr = err
				return
			}
			listed = append(listed, p)
		}
	})
	if listErr != nil {
		t.Fatal(listErr)
	}
	if len(listed) == 0 {
		t.Fatal("go list ./... listed no package")
	}
	return listed
}

// mayImport is, per top-level folder, the folders of this module whose packages a
// non-test package may import: cmd → edge → workflows, pipeline → query → projections;
// infra implements the ports of the domain packages it serves and is wired in by cmd.
// A folder may always import inside itself.
var mayImport = map[string][]string{
	"cmd":         {"edge", "workflows", "pipeline", "query", "projections", "infra"},
	"edge":        {"workflows", "pipeline", "query", "projections"},
	"workflows":   {"query", "projections"},
	"pipeline":    {"query"},
	"query":       {"projections"},
	"projections": {},
	"infra":       {"workflows", "pipeline", "query", "projections"},
}

// engineModel are the packages of the engine data model: what both ingest and query need of
// the engine (quoting, engine-error classes, path typing, sorting keys, table targets, the
// Prometheus table layout). They live under query/ but below the rest of it: the pipeline
// may import them and no other package of query, and they import nothing of the module but
// each other. A package that joins the engine data model is added here.
var engineModel = []string{
	"query/engineerr",
	"query/pathtype",
	"query/promstore",
	"query/sortkey",
	"query/sqlquote",
	"query/target",
}

// drivers are the modules of external systems' clients. Only infra (the adapters) and cmd
// (wiring) import them; a domain package defines the port it needs instead.
var drivers = []string{
	"github.com/ClickHouse/clickhouse-go",
	"github.com/ClickHouse/ch-go",
	"github.com/twmb/franz-go",
	"go.etcd.io/bbolt",
	"go.temporal.io/",
	"github.com/EventStore/",
	"github.com/jackc/pgx",
	"github.com/aws/aws-sdk-go-v2",
	"github.com/aws/smithy-go",
}

// knownViolations are the arrows that run against the rules today, each with the reason
// and the issue that removes it. The list only shrinks: a new violation fails the test,
// and so does an entry whose arrow is gone (delete it then).
var knownViolations = map[string]string{}

func topFolder(rel string) string { return strings.SplitN(rel, "/", 2)[0] }

// arrowViolations lists "from -> to" for every import of pkgs that breaks the layer or
// driver rule.
func arrowViolations(pkgs []listedPackage) ([]string, error) {
	var out []string
	for _, p := range pkgs {
		from := p.rel()
		top := topFolder(from)
		allowed, ok := mayImport[top]
		if !ok {
			return nil, errors.New("package " + from + " is in a top-level folder the layer rule does not know (" + top + "); the top level is fixed: edge, pipeline, projections, query, workflows, infra, cmd")
		}
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				to := topFolder(rel)
				switch {
				case to != top && !slices.Contains(allowed, to):
					out = append(out, from+" -> "+rel)
				case top == "pipeline" && to == "query" && !slices.Contains(engineModel, rel):
					out = append(out, from+" -> "+rel) // the pipeline reaches only the engine data model of query
				case slices.Contains(engineModel, from) && !slices.Contains(engineModel, rel):
					out = append(out, from+" -> "+rel) // the engine data model imports nothing above it
				}
				continue
			}
			if top == "cmd" || top == "infra" {
				continue
			}
			for _, d := range drivers {
				if strings.HasPrefix(imp, d) {
					out = append(out, from+" -> "+imp)
					break
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// TestImportArrows fails on an import that runs back up the layers (query → pipeline,
// projections → query, ...), on any import of infra by edge, and on a driver imported
// outside infra and cmd, unless knownViolations lists it.
func TestImportArrows(t *testing.T) {
	found, err := arrowViolations(modulePackages(t))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, v := range found {
		seen[v] = true
		if _, ok := knownViolations[v]; !ok {
			t.Errorf("import %s runs against the layers (DESIGN.md, \"Layers: arrows run one way\"): "+
				"give the rule a home the importer may reach, or define a port in the importer "+
				"(a package joining the engine data model goes into engineModel)", v)
		}
	}
	for v := range knownViolations {
		if !seen[v] {
			t.Errorf("known violation %q no longer occurs: delete it from knownViolations", v)
		}
	}
}

// TestArrowRuleCatchesBackArrows checks the rule itself on arrows it must refuse and
// allow, so that a broken rule cannot pass TestImportArrows silently.
func TestArrowRuleCatchesBackArrows(t *testing.T) {
	f := func(from, imp string, bad bool) {
		t.Helper()
		got, err := arrowViolations([]listedPackage{{ImportPath: modulePath + "/" + from, Imports: []string{imp}}})
		if err != nil {
			t.Fatal(err)
		}
		if (len(got) > 0) != bad {
			t.Errorf("%s importing %s: violations %v, want a violation: %v", from, imp, got, bad)
		}
	}
	m := modulePath + "/"
	f("query/tables", m+"pipeline", true)
	f("query", m+"edge", true)
	f("projections/catalog", m+"query/sqlquote", true)
	f("edge", m+"infra/s3store", true)
	f("pipeline", m+"projections/catalog", true)
	f("pipeline", m+"workflows", true)
	f("workflows", m+"pipeline", true)
	f("infra/kafka", m+"edge", true)
	f("query", "github.com/ClickHouse/clickhouse-go/v2", true)
	f("pipeline", "github.com/twmb/franz-go/pkg/kgo", true)
	f("edge", "go.etcd.io/bbolt", true)
	f("workflows", "go.temporal.io/sdk/client", true)
	f("pipeline", m+"query", true)
	f("pipeline", m+"query/statement", true)
	f("query/sqlquote", m+"query/statement", true)
	f("query/promstore", m+"projections/catalog", true)
	f("pipeline/promwrite", m+"query/promstore", false)
	f("query/pathtype", m+"query/sqlquote", false)
	f("edge", m+"query/statement", false)
	f("workflows", m+"query", false)
	f("query", m+"projections/catalog", false)
	f("query/spl", m+"query/sqlquote", false)
	f("infra/clickhouse/chclient", m+"pipeline", false)
	f("infra/kafka", "github.com/twmb/franz-go/pkg/kgo", false)
	f("cmd/svcd", m+"infra/kafka", false)
	f("edge", "github.com/valyala/fasthttp", false)
}

// fileMapRows returns the first cell of each row of DESIGN.md's "## File map" table.
func fileMapRows(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []string
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## File map"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.TrimSpace(strings.SplitN(line[1:], "|", 2)[0])
		rows = append(rows, strings.TrimSuffix(strings.Trim(cell, "`"), "/"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal(`DESIGN.md has no "## File map" table`)
	}
	return rows
}

// edgeTestMayReach are the drivers the edge's tests may still reach, each with why: not
// one of them is a client the edge's own code or tests call.
var edgeTestMayReach = map[string]string{
	"github.com/aws/aws-sdk-go-v2": "Prometheus' config package (under query/promapi) links its AWS service discovery",
	"github.com/aws/smithy-go":     "the same, through the AWS SDK",
}

// TestEdgeTestsNeedNoDriver checks that the edge's tests, with everything they link,
// reach no external system's client: the edge owns an interface for each dependency
// (edge/deps.go) and its tests hand in a real catalog over the in-memory event store
// (projections/es/memstore), not bbolt.
func TestEdgeTestsNeedNoDriver(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-test", "./edge")
	cmd.Dir = repoRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -test ./edge: %v: %s", err, stderr.String())
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, modulePath+"/edge") {
		t.Fatalf("go list -deps -test ./edge did not list the edge itself: %q", out)
	}
	for _, d := range drivers {
		if _, ok := edgeTestMayReach[d]; ok {
			continue
		}
		for _, p := range deps {
			if strings.HasPrefix(p, d) {
				t.Errorf("the edge's tests link %s (driver %s): give the edge an interface for that dependency and hand its tests something that needs no driver", p, d)
				break
			}
		}
	}
}

// TestFileMapListsEveryPackage keeps DESIGN.md's file map true: one row per package of
// `go list ./...`, and no row for a package that does not exist.
func TestFileMapListsEveryPackage(t *testing.T) {
	rows := fileMapRows(t)
	have := map[string]bool{}
	for _, r := range rows {
		if have[r] {
			t.Errorf("DESIGN.md's file map has two rows for %s", r)
		}
		have[r] = true
	}
	pkgs := map[string]bool{}
	for _, p := range modulePackages(t) {
		pkgs[p.rel()] = true
		if !have[p.rel()] {
			t.Errorf("package %s has no row in DESIGN.md's file map: add one saying what lives there", p.rel())
		}
	}
	for _, r := range rows {
		if !pkgs[r] {
			t.Errorf("DESIGN.md's file map has a row for %s, which is no package of go list ./...", r)
		}
	}
}

// outsideReferences are texts that point outside the repository: a fresh clone has
// neither the folder nor the spec file beside it. Split so this file does not match.
var outsideReferences = []string{
	".." + "/shared",
	"/work/" + "shared",
	"SPEC" + ".md",
}

// trackedFiles lists the repository's tracked files; outside a git checkout, every file
// under the root but those in dot-directories (.git, build output, test data).
func trackedFiles(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = repoRoot
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repoRoot && strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestNoReferenceOutsideTheRepository fails when a tracked file cites a document outside
// the repository: name the served OpenAPI document (edge/openapi.json) or state the
// behaviour instead.
func TestNoReferenceOutsideTheRepository(t *testing.T) {
	files := trackedFiles(t)
	if len(files) == 0 {
		t.Fatal("no tracked file found")
	}
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(repoRoot, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, ref := range outsideReferences {
				if strings.Contains(line, ref) {
					t.Errorf("%s:%d cites %s, which is outside the repository: %s", name, i+1, ref, strings.TrimSpace(line))
				}
			}
		}
	}
}
