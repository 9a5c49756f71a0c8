// Command callwalk counts the files a call path crosses: the distinct non-test .go files of the module
// holding a function that is reachable from one of the source functions and reaches one of the target
// methods in the call graph (VTA over CHA, from golang.org/x/tools). It measures issue 13's "files a
// pull_request delivery's walk to its check run update touches". A separate module, so the project does
// not depend on x/tools.
//
//	cd hack/callwalk && go run . -repo ../.. -walk '(*bot.Bot).handleWebhook>(*bot/queue.Queue).Enqueue;(*bot.jobCtx).check>checks-api'
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

func main() {
	repo := flag.String("repo", "../..", "the module's directory")
	pattern := flag.String("packages", "./...", "packages to analyse (their dependencies are read as export data: calls into them end there)")
	walk := flag.String("walk", "", "segments separated by ';', each 'sources>ends': comma-separated functions as go/ssa names them without the module path ((*bot.Bot).handleWebhook); the end 'checks-api' is every CreateCheckRun, UpdateCheckRun and FindCheckRun method of package bot/checkrun/internal/checksapi")
	verbose := flag.Bool("v", false, "list the functions too")
	flag.Parse()
	const module = "github.com/catalogbot/catalogbot/"
	cfg := &packages.Config{Mode: packages.LoadSyntax, Dir: *repo}
	pkgs, err := packages.Load(cfg, *pattern)
	if err != nil || packages.PrintErrors(pkgs) > 0 {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	prog, _ := ssautil.Packages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	all := ssautil.AllFunctions(prog)
	cg := vta.CallGraph(all, cha.CallGraph(prog))
	cg.DeleteSyntheticNodes()

	files := map[string]bool{}   // files of the functions on a path
	touched := map[string]bool{} // and of the module functions those call directly
	var fns []string
	fileOf := func(n *callgraph.Node) string {
		if n.Func.Pkg == nil || !strings.HasPrefix(n.Func.Pkg.Pkg.Path(), module) {
			return ""
		}
		pos := prog.Fset.Position(n.Func.Pos())
		if pos.Filename == "" {
			if p := n.Func.Parent(); p != nil {
				pos = prog.Fset.Position(p.Pos())
			}
		}
		if pos.Filename == "" || strings.HasSuffix(pos.Filename, "_test.go") {
			return ""
		}
		rel, _ := filepath.Rel(mustAbs(*repo), pos.Filename)
		return rel
	}
	for _, seg := range strings.Split(*walk, ";") {
		srcs, ends, ok := strings.Cut(seg, ">")
		if !ok {
			fmt.Fprintf(os.Stderr, "segment %q: want sources>ends\n", seg)
			os.Exit(2)
		}
		from := nodes(cg, srcs, module)
		to := nodes(cg, ends, module)
		fwd := reach(from, func(n *callgraph.Node) []*callgraph.Edge { return n.Out }, func(e *callgraph.Edge) *callgraph.Node { return e.Callee })
		back := reach(to, func(n *callgraph.Node) []*callgraph.Edge { return n.In }, func(e *callgraph.Edge) *callgraph.Node { return e.Caller })
		for n := range fwd {
			rel := fileOf(n)
			if !back[n] || rel == "" {
				continue
			}
			files[rel] = true
			touched[rel] = true
			fns = append(fns, strings.ReplaceAll(n.Func.String(), module, ""))
			for _, e := range n.Out {
				if f := fileOf(e.Callee); f != "" {
					touched[f] = true
				}
			}
		}
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	fmt.Printf("%d files hold a function on a path\n", len(names))
	for _, f := range names {
		fmt.Println(" ", f)
	}
	var more []string
	for f := range touched {
		if !files[f] {
			more = append(more, f)
		}
	}
	sort.Strings(more)
	fmt.Printf("%d files touched (those and the files of the module functions they call directly); also:\n", len(touched))
	for _, f := range more {
		fmt.Println(" ", f)
	}
	if *verbose {
		sort.Strings(fns)
		fmt.Printf("%d functions\n", len(fns))
		for _, f := range fns {
			fmt.Println(" ", strings.TrimPrefix(f, module))
		}
	}
}

func reach(start []*callgraph.Node, edges func(*callgraph.Node) []*callgraph.Edge, next func(*callgraph.Edge) *callgraph.Node) map[*callgraph.Node]bool {
	seen := map[*callgraph.Node]bool{}
	stack := append([]*callgraph.Node(nil), start...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		for _, e := range edges(n) {
			stack = append(stack, next(e))
		}
	}
	return seen
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return a
}

// nodes finds the call graph nodes of comma-separated function names (see -walk); it exits when one is
// missing, so a renamed function cannot shrink a count.
func nodes(cg *callgraph.Graph, names, module string) []*callgraph.Node {
	want := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		want[strings.TrimSpace(n)] = true
	}
	api := want["checks-api"]
	delete(want, "checks-api")
	var out []*callgraph.Node
	apis := 0
	for fn, n := range cg.Nodes {
		if fn == nil || fn.Pkg == nil {
			continue
		}
		if name := strings.ReplaceAll(fn.String(), module, ""); want[name] {
			out = append(out, n)
			delete(want, name)
		}
		if api && fn.Pkg.Pkg.Path() == module+"bot/checkrun/internal/checksapi" && fn.Signature.Recv() != nil &&
			(fn.Name() == "CreateCheckRun" || fn.Name() == "UpdateCheckRun" || fn.Name() == "FindCheckRun") {
			out = append(out, n)
			apis++
		}
	}
	if len(want) > 0 || api && apis == 0 {
		fmt.Fprintf(os.Stderr, "not in the call graph: %v (checks API methods: %d)\n", want, apis)
		os.Exit(1)
	}
	return out
}
