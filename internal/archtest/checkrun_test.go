package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// checkRunCalls are the bot's check run calls (bot/checkrun/internal/checksapi's API): only bot/checkrun
// names them.
var checkRunCalls = []string{"CreateCheckRun", "UpdateCheckRun", "FindCheckRun"}

// checksService are go-github's Checks service methods (x.Checks.M).
var checksService = []string{"CreateCheckRun", "UpdateCheckRun", "GetCheckRun", "ReRequestCheckRun", "ListCheckRunAnnotations",
	"ListCheckRunAnnotationsIter", "ListCheckRunsForRef", "ListCheckRunsForRefIter", "ListCheckRunsCheckSuite",
	"ListCheckRunsCheckSuiteIter", "CreateCheckSuite", "GetCheckSuite", "ReRequestCheckSuite", "ListCheckSuitesForRef",
	"ListCheckSuitesForRefIter", "SetCheckSuitePreferences"}

const (
	checkrunDir = "bot/checkrun"
	// checksAPIDir is the one package that calls GitHub's Checks API; Go's internal rule lets only
	// bot/checkrun import it.
	checksAPIDir = "bot/checkrun/internal/checksapi"
)

// Only bot/checkrun writes check runs (issue 13 item 5, issue 36 item 3). The compiler holds most of it:
// ghclient.GitHub has no check run calls, and the calls live in bot/checkrun/internal/checksapi. This
// test holds the rest: no product code but checksapi calls the Checks API directly (go-github's Checks
// service, the raw client that reaches it through ghclient.RESTOf, a check-runs or check-suites URL), and
// no product code outside bot/checkrun names a check run call, whether it calls it, takes it as a method
// value or declares it in an interface of its own. The fake GitHub (internal/githubtest) answers the
// Checks API; tests call it.
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
			if rel == ".git" || rel == "internal/githubtest" || rel == "hack" || rel == "testdata" || strings.HasSuffix(rel, "/testdata") {
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
		for _, o := range checksAPIUses(filepath.ToSlash(filepath.Dir(rel)), f) {
			offenders = append(offenders, rel+": "+o)
		}
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

// checksAPIUses are the uses of the Checks API and of the check run calls in f, a file of the package in
// directory dir, that the package may not make.
func checksAPIUses(dir string, f *ast.File) []string {
	if dir == checksAPIDir {
		return nil
	}
	inCheckrun := dir == checkrunDir || strings.HasPrefix(dir, checkrunDir+"/")
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.SelectorExpr); ok && x.Sel.Name == "Checks" && slices.Contains(checksService, n.Sel.Name) {
				out = append(out, "calls go-github's Checks."+n.Sel.Name)
			}
			if n.Sel.Name == "RESTOf" {
				out = append(out, "takes ghclient's REST client (RESTOf)")
			}
			if !inCheckrun && slices.Contains(checkRunCalls, n.Sel.Name) {
				out = append(out, "."+n.Sel.Name)
			}
		case *ast.Field: // a method of an interface declared elsewhere
			for _, name := range n.Names {
				if !inCheckrun && slices.Contains(checkRunCalls, name.Name) {
					out = append(out, "declares "+name.Name)
				}
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil &&
				(strings.Contains(s, "/check-runs") || strings.Contains(s, "/check-suites")) {
				out = append(out, "requests "+strconv.Quote(s))
			}
		}
		return true
	})
	return out
}

// The test's own check: it finds every way around bot/checkrun it knows of, and none in checksapi.
func TestChecksAPIUsesAreFound(t *testing.T) {
	const src = `package p

type writer interface{ UpdateCheckRun() }

func f(gh, rest, c any) {
	gh.FindCheckRun()
	_ = gh.CreateCheckRun
	r, _ := ghclient.RESTOf(gh)
	r.Client.Checks.ListCheckRunsForRef()
	c.Checks.ReRequestCheckSuite()
	http.Post("https://api.github.com/repos/o/r/check-runs", "", nil)
	cfg.Checks.Name = "catalogbot"
}
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := checksAPIUses("bot", f)
	want := []string{"declares UpdateCheckRun", ".FindCheckRun", ".CreateCheckRun", "takes ghclient's REST client (RESTOf)",
		"calls go-github's Checks.ListCheckRunsForRef", "calls go-github's Checks.ReRequestCheckSuite",
		`requests "https://api.github.com/repos/o/r/check-runs"`}
	if !slices.Equal(got, want) {
		t.Errorf("in bot:\n got %q\nwant %q", got, want)
	}
	if got := checksAPIUses(checkrunDir, f); len(got) != 4 || slices.Contains(got, ".FindCheckRun") {
		t.Errorf("in bot/checkrun: %q, want only the Checks API's four (its own calls are its to make)", got)
	}
	if got := checksAPIUses(checksAPIDir, f); got != nil {
		t.Errorf("in checksapi: %q, want none", got)
	}
}
