package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEngineCodesAreReadOnlyByTheClassifier: raw engine error codes are read in one place,
// the engine adapter's classifier (infra/clickhouse/chclient Classify), and the domain asks
// query/engineerr's classes and named predicates. Outside infra/ and cmd/, no non-test
// file compares an error's Code with a number or a named constant, or looks a Code up in a
// table (the API's own codes are strings and pass).
func TestEngineCodesAreReadOnlyByTheClassifier(t *testing.T) {
	var found []string
	fset := token.NewFileSet()
	isCode := func(e ast.Expr) bool {
		s, ok := e.(*ast.SelectorExpr)
		return ok && s.Sel.Name == "Code"
	}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		switch topFolder(filepath.ToSlash(rel)) {
		case "infra", "cmd", ".git", ".bin":
			return filepath.SkipDir
		}
		pkgs, err := parser.ParseDir(fset, path, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			return err
		}
		for _, pkg := range pkgs {
			// numbers are the package's constants of an integer literal (codeX = 1002).
			numbers := map[string]bool{}
			for _, f := range pkg.Files {
				for _, decl := range f.Decls {
					g, ok := decl.(*ast.GenDecl)
					if !ok || g.Tok != token.CONST {
						continue
					}
					for _, spec := range g.Specs {
						vs := spec.(*ast.ValueSpec)
						for i, name := range vs.Names {
							if i < len(vs.Values) {
								if b, ok := vs.Values[i].(*ast.BasicLit); ok && b.Kind == token.INT {
									numbers[name.Name] = true
								}
							}
						}
					}
				}
			}
			isNumber := func(e ast.Expr) bool {
				switch e := e.(type) {
				case *ast.BasicLit:
					return e.Kind == token.INT
				case *ast.Ident:
					return numbers[e.Name]
				}
				return false
			}
			for _, f := range pkg.Files {
				ast.Inspect(f, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.BinaryExpr:
						if (n.Op == token.EQL || n.Op == token.NEQ) && (isCode(n.X) && isNumber(n.Y) || isCode(n.Y) && isNumber(n.X)) {
							found = append(found, fset.Position(n.Pos()).String()+": compares a Code with a number")
						}
					case *ast.IndexExpr:
						if isCode(n.Index) {
							found = append(found, fset.Position(n.Pos()).String()+": looks a Code up in a table")
						}
					}
					return true
				})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: read the engine's code in chclient.Classify and ask an engineerr predicate", f)
	}
}
