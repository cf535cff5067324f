// Command split moves part of a generated Go file into a second file of the same package,
// so that no generated file of the SDK nears the repository's 1 MiB file limit as the API
// grows: `split T in.gen.go out.gen.go` keeps in in.gen.go the client type T (Client or
// ClientWithResponses): the types named T…, its constructor NewT, the With… options and
// T's methods; every other top-level declaration (request builders; response types, their
// methods and Parse functions) moves with its doc comment to out.gen.go, each file with
// the imports it uses. Both are gofmt'ed. It runs after
// oapi-codegen in `go generate` and in TestGeneratedClientIsCurrent.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: split <client type> <in.gen.go> <out.gen.go>")
		os.Exit(2)
	}
	if err := split(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "split:", err)
		os.Exit(1)
	}
}

// stays reports whether a declaration belongs to the client type itself.
func stays(d ast.Decl, client string) bool {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) == 1 {
			if star, ok := d.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && id.Name == client {
					return true
				}
			}
		}
		return d.Recv == nil && (d.Name.Name == "New"+client || strings.HasPrefix(d.Name.Name, "With"))
	case *ast.GenDecl:
		for _, s := range d.Specs {
			if ts, ok := s.(*ast.TypeSpec); ok && (strings.HasPrefix(ts.Name.Name, client) || ts.Name.Name == "RequestEditorFn" || ts.Name.Name == "HttpRequestDoer") {
				return true
			}
		}
	}
	return false
}

func split(client, in, out string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, in, src, parser.ParseComments)
	if err != nil {
		return err
	}
	// The file's header: everything before the import declaration (its comments and
	// package clause), which both files repeat.
	var imports *ast.GenDecl
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			imports = g
			break
		}
	}
	if imports == nil {
		return fmt.Errorf("%s: no imports", in)
	}
	header := src[:fset.Position(imports.Pos()).Offset]
	var keep, move bytes.Buffer
	keepUses, moveUses := map[string]bool{}, map[string]bool{}
	for _, d := range f.Decls {
		if d == ast.Decl(imports) {
			continue
		}
		start := d.Pos()
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Doc != nil {
				start = d.Doc.Pos()
			}
		case *ast.GenDecl:
			if d.Doc != nil {
				start = d.Doc.Pos()
			}
		}
		text := src[fset.Position(start).Offset:fset.Position(d.End()).Offset]
		buf, uses := &move, moveUses
		if stays(d, client) {
			buf, uses = &keep, keepUses
		}
		buf.Write(text)
		buf.WriteString("\n\n")
		ast.Inspect(d, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil {
					uses[id.Name] = true
				}
			}
			return true
		})
	}
	write := func(name string, body []byte, uses map[string]bool) error {
		var b bytes.Buffer
		b.Write(header)
		var lines []string
		for _, s := range imports.Specs {
			is := s.(*ast.ImportSpec)
			path, _ := strconv.Unquote(is.Path.Value)
			local := path[strings.LastIndex(path, "/")+1:]
			if is.Name != nil {
				local = is.Name.Name
			}
			if uses[local] {
				lines = append(lines, "\t"+string(src[fset.Position(is.Pos()).Offset:fset.Position(is.End()).Offset]))
			}
		}
		sort.Strings(lines)
		b.WriteString("import (\n" + strings.Join(lines, "\n") + "\n)\n\n")
		b.Write(body)
		formatted, err := format.Source(b.Bytes())
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return os.WriteFile(name, formatted, 0o644)
	}
	if err := write(out, move.Bytes(), moveUses); err != nil {
		return err
	}
	return write(in, keep.Bytes(), keepUses)
}
