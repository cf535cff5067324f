package main

import (
	"bytes"
	"os"
	"path/filepath"
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
