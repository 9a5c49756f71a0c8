package archtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Every run of catalogbot, `validate --staged` in a pre-commit hook as much as `serve`, runs the package
// initialisers of everything the one binary links, whatever the verb. What a verb may not need must not be
// built at init: a typed Kubernetes clientset registers every API type in client-go's scheme (13 ms of
// the 79 ms the former full build took to print its version), discovery and the apply configurations
// bring it back, and a package that compiles or allocates much at init costs every hook run.
var (
	// heavyInit are packages whose initialisers alone cost milliseconds; catalogbot must not link them.
	heavyInit = []string{
		"k8s.io/client-go/kubernetes",
		"k8s.io/client-go/kubernetes/scheme",
		"k8s.io/client-go/discovery",
		"k8s.io/client-go/restmapper",
		"k8s.io/client-go/applyconfigurations/",
		"k8s.io/client-go/informers",
		"sigs.k8s.io/controller-runtime",
	}
	// Budgets of what the initialisers allocate (GODEBUG=inittrace=1, `catalogbot version`), with room
	// for a little growth: 2.31 MB in all when this test was written (the lean build of the time: 1.10 MB,
	// the full one 3.35 MB, of which the clientset's scheme 0.66 MB); the largest single package then,
	// github.com/distribution/reference's regexps, 0.41 MB. operator-framework's validators (the policy
	// stage's policy-of-* rules, docs/architecture.md, operator-framework/api) raised it to 4.19 MB on purpose: their package
	// links all of them, and with them 139 more initialisers (apiserver, component-base, cel-go,
	// OpenTelemetry, go.podman.io/image); `catalogbot version` went from 12 to 25 ms (hyperfine, mean).
	// Parsing comments as GitHub renders them (goldmark with its GFM extensions, bot/slash.go: a slash
	// command counts only where a reader sees one) added 0.51 MB on purpose (2026-12-02): goldmark/extension
	// 0.26 MB (the table, linkify and task-list regexps), goldmark/util 0.14 MB (HTML entities),
	// goldmark/parser 0.11 MB; 4.65 MB in all with it. validate's pull specs then went through podman's
	// docker/reference, the package opm itself uses and the validators link anyway, instead of its twin
	// github.com/distribution/reference (2026-12-02): 4.19 MB.
	maxInitBytes        = 4_350_000
	maxPackageInitBytes = 450_000
)

var initLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, ([0-9]+) bytes, [0-9]+ allocs$`)

func TestStartupInitialisersStayCheap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds catalogbot")
	}
	bin := filepath.Join(t.TempDir(), "catalogbot")
	build := exec.Command("go", "build", "-o", bin, "./cmd/catalogbot")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := exec.Command(bin, "version")
	run.Env = append(os.Environ(), "GODEBUG=inittrace=1,gctrace=1", "GOGC=100")
	var stderr strings.Builder
	run.Stderr = &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("catalogbot version: %v\n%s", err, stderr.String())
	}
	inits, err := parseInitTrace(stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	if gc := collectionDuringInit(stderr.String()); gc != "" {
		t.Errorf("a garbage collection started while packages initialised (internal/initgc holds it off until main):\n%s", gc)
	}
	if len(inits) < 100 {
		t.Fatalf("only %d initialisers traced: is GODEBUG=inittrace=1 still the format this test reads?\n%s", len(inits), stderr.String())
	}
	total := 0
	for pkg, bytes := range inits {
		total += bytes
		for _, h := range heavyInit {
			if pkg == strings.TrimSuffix(h, "/") || strings.HasSuffix(h, "/") && strings.HasPrefix(pkg, h) {
				t.Errorf("catalogbot initialises %s at start-up: build what needs it only when a verb runs (see checks/smoke/core.go)", pkg)
			}
		}
		if bytes > maxPackageInitBytes {
			t.Errorf("%s allocates %d bytes at init (budget %d): make what it builds lazy", pkg, bytes, maxPackageInitBytes)
		}
	}
	if total > maxInitBytes {
		t.Errorf("catalogbot's initialisers allocate %d bytes (budget %d); the largest:\n%s", total, maxInitBytes, largest(inits, 10))
	}
	t.Logf("%d initialisers allocate %d bytes; the largest:\n%s", len(inits), total, largest(inits, 5))
}

// collectionDuringInit returns the first gctrace line (GODEBUG=gctrace=1) that comes before the trace's
// last initialiser, or "". A collection during initialisation marks a heap of regular expressions, maps
// and descriptors that all stay live: it costs every run and frees nothing.
func collectionDuringInit(trace string) string {
	lines := strings.Split(trace, "\n")
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "init ") {
			last = i
		}
	}
	for _, l := range lines[:last+1] {
		if strings.HasPrefix(l, "gc ") {
			return l
		}
	}
	return ""
}

// parseInitTrace maps each package of a GODEBUG=inittrace=1 trace to the bytes its initialisers allocated.
func parseInitTrace(trace string) (map[string]int, error) {
	inits := map[string]int{}
	for _, l := range strings.Split(trace, "\n") {
		if !strings.HasPrefix(l, "init ") {
			continue
		}
		m := initLine.FindStringSubmatch(l)
		if m == nil {
			return nil, fmt.Errorf("unexpected inittrace line %q", l)
		}
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return nil, fmt.Errorf("inittrace line %q: %w", l, err)
		}
		inits[m[1]] += n
	}
	return inits, nil
}

func largest(inits map[string]int, n int) string {
	pkgs := make([]string, 0, len(inits))
	for p := range inits {
		pkgs = append(pkgs, p)
	}
	sort.Slice(pkgs, func(i, j int) bool { return inits[pkgs[i]] > inits[pkgs[j]] })
	var b strings.Builder
	for _, p := range pkgs[:min(n, len(pkgs))] {
		fmt.Fprintf(&b, "  %8d %s\n", inits[p], p)
	}
	return b.String()
}

func TestCollectionDuringInit(t *testing.T) {
	for _, c := range []struct {
		name, trace, want string
	}{
		{"none", "init a @0.1 ms, 0.1 ms clock, 10 bytes, 1 allocs\ninit b @0.2 ms, 0.1 ms clock, 10 bytes, 1 allocs\n", ""},
		{"after the last initialiser", "init a @0.1 ms, 0.1 ms clock, 10 bytes, 1 allocs\ngc 1 @0.030s 6%: ...\n", ""},
		{"between initialisers", "init a @0.1 ms, 0.1 ms clock, 10 bytes, 1 allocs\ngc 1 @0.029s 6%: ...\ninit b @30 ms, 0.1 ms clock, 10 bytes, 1 allocs\n", "gc 1 @0.029s 6%: ..."},
	} {
		if got := collectionDuringInit(c.trace); got != c.want {
			t.Errorf("%s: collectionDuringInit = %q, want %q", c.name, got, c.want)
		}
	}
}
