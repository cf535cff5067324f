package spl

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

// fakeResolver answers resolver queries with fixed data, so that golden
// files show the SQL generated after resolution.
type fakeResolver struct{}

func (fakeResolver) RankSeries(context.Context, string) ([]RankedSeries, error) {
	return []RankedSeries{{Value: "web1", Score: 10}, {Value: "web2", Score: 5}, {Value: "db1", Score: 1}, {Null: true, Score: 3}}, nil
}

func (fakeResolver) EarliestTime(context.Context, string) (time.Time, bool, error) {
	return time.Date(2024, 1, 1, 6, 30, 0, 0, time.UTC), true, nil
}

func (fakeResolver) NewestTimes(context.Context, string) (uint64, time.Time, error) {
	return 1 << 20, time.Date(2024, 1, 1, 23, 59, 30, 0, time.UTC), nil
}

func (fakeResolver) Paths(context.Context, string) ([]string, error) {
	return []string{"_raw", "_time", "bytes", "host", "status", "user.id"}, nil
}

var goldenNow = time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)

// goldenOptions reads `# all-time` from the head of a golden input.
func goldenOptions(src string) CompileOptions {
	w := Window{Earliest: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), HasEarliest: true, Latest: goldenNow}
	if strings.Contains(src, "# all-time") {
		w = Window{Latest: goldenNow}
	}
	opts := CompileOptions{Table: "`db`.`logsearch_events`", Window: w, Now: goldenNow, Resolver: fakeResolver{}}
	// "# paths: status=Int64 duration=Float64,Int64" gives the table's path schema.
	for _, l := range strings.Split(src, "\n") {
		if rest, ok := strings.CutPrefix(l, "# paths:"); ok {
			opts.Paths = map[string][]string{}
			for _, f := range strings.Fields(rest) {
				name, types, _ := strings.Cut(f, "=")
				opts.Paths[name] = strings.Split(types, ",")
			}
		}
	}
	return opts
}

// stripComments drops leading # lines of a golden input.
func stripComments(src string) string {
	var keep []string
	for _, l := range strings.Split(src, "\n") {
		if !strings.HasPrefix(l, "#") {
			keep = append(keep, l)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// describe renders every statement of a plan for a golden file.
func describePlan(plan *Plan) string {
	var b strings.Builder
	b.WriteString("-- result: " + string(plan.Kind) + "\n")
	for _, c := range plan.columns {
		b.WriteString("-- column: " + c.name)
		if c.enc == encDoc {
			b.WriteString("(document fields)")
		}
		b.WriteString("\n")
	}
	for _, s := range plan.Stages {
		b.WriteString("-- stage: " + s.Command + " | " + s.Expression)
		if !s.Measured {
			b.WriteString(" (not measured)")
		}
		b.WriteString("\n")
	}
	for _, r := range plan.Resolved {
		b.WriteString("\n-- resolved before compiling the rest:\n" + r + "\n")
	}
	b.WriteString("\n-- main:\n" + plan.SQL + "\n")
	if plan.StageCountSQL != "" {
		b.WriteString("\n-- stage counts:\n" + plan.StageCountSQL + "\n")
	}
	if plan.Kind == ResultEvents {
		if sql, _, ok := plan.timelineSQL(plan.window.Earliest, plan.window.Latest); ok && plan.window.HasEarliest {
			b.WriteString("\n-- timeline:\n" + sql + "\n")
		}
	}
	return b.String()
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the output (run go test -update and review the diff):\n%s", path, got)
	}
}

// TestGoldenCompile compiles testdata/compile/*.spl and compares every
// generated statement with the .sql file beside it.
func TestGoldenCompile(t *testing.T) {
	files, _ := filepath.Glob("testdata/compile/*.spl")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src := stripComments(string(raw))
			p, err := Parse(src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			plan, err := Compile(context.Background(), p, goldenOptions(string(raw)))
			if err != nil {
				if es, ok := AsErrors(err); ok {
					t.Fatalf("compile:\n%s", es.Render())
				}
				t.Fatalf("compile: %v", err)
			}
			checkGolden(t, strings.TrimSuffix(f, ".spl")+".sql", "-- "+src+"\n"+describePlan(plan))
		})
	}
}

// TestGoldenErrors parses and compiles testdata/errors/*.spl, one search
// per line, and compares the rendered errors with the .err file.
func TestGoldenErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.spl")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			for _, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
				if strings.HasPrefix(line, "#") {
					continue
				}
				src := strings.ReplaceAll(line, `\n`, "\n")
				out.WriteString("== " + line + "\n")
				p, err := Parse(src)
				if err == nil {
					_, err = Compile(context.Background(), p, goldenOptions(""))
				}
				es, ok := AsErrors(err)
				switch {
				case err == nil:
					t.Errorf("%q: no error", line)
				case !ok:
					t.Errorf("%q: not a user error: %v", line, err)
				default:
					for _, e := range es {
						if e.StatusCode() != 400 {
							t.Errorf("%q: status %d", line, e.StatusCode())
						}
					}
					out.WriteString(es.Render())
				}
				out.WriteString("\n")
			}
			checkGolden(t, strings.TrimSuffix(f, ".spl")+".err", out.String())
		})
	}
}
