package main

import (
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/infra/testenv"
)

// TestChaosShort is the short chaos run of the test suite: one kill -9 each of svcd,
// the engine and the broker under load, a short overload the edge must shed, and every
// acknowledged row counted. It runs its own broker (it kills it), never the shared one.
func TestChaosShort(t *testing.T) {
	testenv.KafkaLibs(t)
	testenv.Engine(t)
	if testing.Short() {
		t.Skip("the chaos run takes minutes")
	}
	bin := os.Getenv("SVC_BIN_DIR")
	if _, err := os.Stat(filepath.Join(bin, "svcd")); bin == "" || err != nil {
		bin = t.TempDir()
		out, err := exec.Command("go", "build", "-o", bin+"/", "github.com/svc-data/svc/cmd/svcd", "github.com/svc-data/svc/cmd/chengine").CombinedOutput()
		if err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
	}
	cfg := defaultConfig()
	cfg.BinDir, cfg.Dir = bin, t.TempDir()
	cfg.Calibrate, cfg.Chaos, cfg.Kills, cfg.Overload, cfg.Recover = 8*time.Second, 60*time.Second, 1, 15*time.Second, 15*time.Second
	cfg.Workers = 32
	// Real overload: the edge's in-flight budget is small, and the overload a large
	// multiple of the end-to-end saturation, so the edge must shed (429/503 with
	// Retry-After) while every row it acknowledged still lands exactly once.
	cfg.EdgeInflight, cfg.EdgeWait, cfg.OverloadFactor, cfg.RequireShedding = 4, 50*time.Millisecond, 8, true
	// The suite runs other packages beside this one, so the rate after the overload is
	// compared loosely; a race-enabled svcd (go tool task test builds one) uses several
	// times the memory of a normal build.
	cfg.RecoverRatio = 0.5
	if raceBuilt(filepath.Join(bin, "svcd")) {
		cfg.RSSBoundMiB *= 4
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var out strings.Builder
	rep, err := Run(ctx, cfg, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatalf("%v\nsvcd log tail:\n%s", err, tail(filepath.Join(cfg.Dir, "svcd.log")))
	}
	if f := rep.Failures(); len(f) > 0 {
		t.Fatalf("%s\nsvcd log tail:\n%s", strings.Join(f, "\n"), tail(filepath.Join(cfg.Dir, "svcd.log")))
	}
	if rep.Restarts["svcd"] != 1 || rep.Restarts["engine"] != 1 || rep.Restarts["broker"] != 1 {
		t.Fatalf("restarts survived %v, want one of each", rep.Restarts)
	}
}

func raceBuilt(path string) bool {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	return string(b[max(0, len(b)-6000):])
}

// TestAnOverloadThatShedsNothingFailsWhenSheddingIsRequired: all 202 under overload
// (the log absorbed it) is a failure of a run that must reach real overload.
func TestAnOverloadThatShedsNothingFailsWhenSheddingIsRequired(t *testing.T) {
	r := &Report{AckedRows: 1, RSSBoundMiB: 1, OverloadAnswers: map[int]int64{202: 100}}
	if f := r.Failures(); len(f) != 0 {
		t.Fatalf("not required: %v", f)
	}
	r.RequireShedding = true
	if f := r.Failures(); len(f) != 1 || !strings.Contains(f[0], "no 429/503") {
		t.Fatalf("required, none drawn: %v", f)
	}
	r.OverloadAnswers[503] = 1
	if f := r.Failures(); len(f) != 0 {
		t.Fatalf("required, one drawn: %v", f)
	}
}
