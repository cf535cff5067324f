package client

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedClientIsCurrent regenerates the SDK from ../openapi.json into a temporary
// directory and fails when a committed file differs: the document changed and
// `go generate ./edge/client` was not run.
func TestGeneratedClientIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	dir := t.TempDir()
	// Each configuration's output, and the file the split moves part of it to (generate.go).
	for _, g := range []struct{ cfg, out, client, rest string }{
		{"types.yaml", "types.gen.go", "", ""},
		{"client.yaml", "client.gen.go", "Client", "client_requests.gen.go"},
		{"responses.yaml", "responses.gen.go", "ClientWithResponses", "responses_parse.gen.go"},
	} {
		cfg, out := g.cfg, g.out
		// The generator prefers the configuration's output to -o, so the copy names the
		// temporary file.
		conf, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		fresh := filepath.Join(dir, out)
		conf = bytes.Replace(conf, []byte("\noutput: "+out+"\n"), []byte("\noutput: "+fresh+"\n"), 1)
		tmpCfg := filepath.Join(dir, cfg)
		if err := os.WriteFile(tmpCfg, conf, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "tool", "oapi-codegen", "-config", tmpCfg, "../openapi.json")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("oapi-codegen -config %s: %v\n%s", cfg, err, b)
		}
		files := map[string]string{out: fresh}
		if g.client != "" {
			files[g.rest] = filepath.Join(dir, g.rest)
			cmd := exec.Command("go", "run", "./internal/split", g.client, fresh, files[g.rest])
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("split %s: %v\n%s", out, err, b)
			}
		}
		for out, fresh := range files {
			want, err := os.ReadFile(fresh)
			if err != nil {
				t.Fatal(err)
			}
			have, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(have, want) {
				t.Errorf("edge/client/%s is stale: edge/openapi.json changed since it was generated; run\n\n\tgo generate ./edge/client\n", out)
			}
		}
	}
}
