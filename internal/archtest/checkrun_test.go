package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// checksAPI are the GitHub client's check run methods.
var checksAPI = map[string]bool{"CreateCheckRun": true, "UpdateCheckRun": true, "FindCheckRun": true}

// Only bot/checkrun writes check runs (issue 13 item 5): no other product code names a check run method
// of the GitHub client, whether it calls it, takes it as a method value or wraps it in an interface of its
// own. The client (bot/ghclient) defines them; test kits and tests fake them.
func TestOnlyCheckrunCallsTheChecksAPI(t *testing.T) {
	root := "../.."
	var offenders []string
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || rel == "bot/checkrun" || rel == "bot/ghclient" || strings.HasPrefix(rel, "internal/") || rel == "hack" || rel == "testdata" || strings.HasSuffix(rel, "/testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if checksAPI[n.Sel.Name] {
					offenders = append(offenders, rel+": ."+n.Sel.Name)
				}
			case *ast.Field: // a method of an interface declared elsewhere
				for _, name := range n.Names {
					if checksAPI[name.Name] {
						offenders = append(offenders, rel+": declares "+name.Name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d Go files looked at: the walk is broken", files)
	}
	for _, o := range offenders {
		t.Errorf("%s: only bot/checkrun may call the Checks API", o)
	}
}
