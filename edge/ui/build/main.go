// Command build bundles the console's TypeScript into static/app.js with esbuild.
// Run it from edge/ui (go generate does).
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	out, err := Bundle(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(filepath.Join("static", "app.js"), out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
