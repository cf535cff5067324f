// Package ui holds the web console's assets, embedded into svcd and served by edge at /ui/.
//
// The TypeScript under src/ is bundled into static/app.js by esbuild's Go module
// (`go generate ./edge/ui`, or `go tool task ui`), so building svcd needs neither Node nor
// a network; the bundle is committed and build's TestBundleIsCurrent fails when it is
// stale. static/uPlot.* are uPlot 1.6.32 from npm, vendored with its license by
// `go tool task ui:vendor`.
package ui

import "embed"

//go:generate go run ./build

// Static holds index.html, the bundle, the stylesheet and the vendored uPlot.
//
//go:embed static
var Static embed.FS
