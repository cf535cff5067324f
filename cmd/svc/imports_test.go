package main

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportRule keeps the command-line client a pure user of the SDK: it imports the
// generated client, cobra, Prometheus's rule-file syntax (`svc alert apply -f` reads
// Prometheus rule files: YAML, with Prometheus durations) and the standard library, nothing else of this module or
// outside it (tests may import more).
func TestImportRule(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		first := strings.SplitN(imp, "/", 2)[0]
		switch {
		case imp == "github.com/svc-data/svc/edge/client", imp == "github.com/spf13/cobra", imp == "go.yaml.in/yaml/v3",
			imp == "github.com/prometheus/common/model":
		case !strings.Contains(first, "."):
		default:
			t.Errorf("cmd/svc imports %s; it may import only edge/client, cobra, go.yaml.in/yaml/v3, prometheus/common/model and the standard library", imp)
		}
	}
}
