package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestBundleIsCurrent fails when static/app.js is not what the sources build to, so the
// committed bundle that `go build` embeds never lags the TypeScript.
func TestBundleIsCurrent(t *testing.T) {
	want, err := Bundle("..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "static", "app.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("edge/ui/static/app.js is stale (%d bytes, the sources build %d): run go generate ./edge/ui", len(got), len(want))
	}
}

// TestUPlotIsThePinnedRelease: the vendored uPlot is the release Taskfile.yml pins
// (go tool task ui:vendor fetches it).
func TestUPlotIsThePinnedRelease(t *testing.T) {
	js, err := os.ReadFile(filepath.Join("..", "static", "uPlot.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	task, err := os.ReadFile(filepath.Join("..", "..", "..", "Taskfile.yml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^  UPLOT_VERSION: (\S+)$`).FindSubmatch(task)
	if m == nil {
		t.Fatal("Taskfile.yml pins no UPLOT_VERSION")
	}
	if want := "/*! https://github.com/leeoniya/uPlot (v" + string(m[1]) + ") */"; !bytes.HasPrefix(js, []byte(want)) {
		t.Fatalf("edge/ui/static/uPlot.min.js is not uPlot %s: run go tool task ui:vendor", m[1])
	}
	for _, f := range []string{"uPlot.min.css", "uPlot.LICENSE"} {
		if _, err := os.Stat(filepath.Join("..", "static", f)); err != nil {
			t.Error(err)
		}
	}
}
