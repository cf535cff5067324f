package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/evanw/esbuild/pkg/api"
)

// Bundle compiles src/main.ts under dir into one minified script. The output depends only
// on the sources and the pinned esbuild version, so a rebuild is byte-identical.
func Bundle(dir string) ([]byte, error) {
	res := api.Build(api.BuildOptions{
		EntryPoints:       []string{filepath.Join(dir, "src", "main.ts")},
		Bundle:            true,
		Write:             false,
		Outfile:           "app.js",
		Format:            api.FormatIIFE,
		Target:            api.ES2020,
		MinifySyntax:      true,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		LegalComments:     api.LegalCommentsNone,
		Charset:           api.CharsetUTF8,
		LogLevel:          api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		var errs []error
		for _, m := range res.Errors {
			loc := ""
			if m.Location != nil {
				loc = fmt.Sprintf("%s:%d:%d: ", m.Location.File, m.Location.Line, m.Location.Column)
			}
			errs = append(errs, errors.New(loc+m.Text))
		}
		return nil, fmt.Errorf("bundle the console: %w", errors.Join(errs...))
	}
	if len(res.OutputFiles) != 1 {
		return nil, fmt.Errorf("bundle the console: %d output files, want 1", len(res.OutputFiles))
	}
	return res.OutputFiles[0].Contents, nil
}
