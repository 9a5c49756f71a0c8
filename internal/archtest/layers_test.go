package archtest

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// allowed is the allow-list of the module's own packages each package may import directly (test files
// excluded), layer by layer from the ground up: an import never runs back up. A package missing here
// fails the test, so a new package has to say where it belongs. (go-containerregistry's
// pkg/registry/depcheck_test.go holds the same kind of list.)
var allowed = map[string][]string{
	// ground
	"diag":   nil,
	"config": {"diag"},
	"report": {"diag"},
	// registry requests: deadlines, plain HTTP only to loopback, one set of remote options
	"netdeadline": nil,
	"registry":    {"netdeadline"},
	"filetree":    {"diag"},
	// domain

	"catalog/internal/yamljson": nil, // the loader's YAML-to-JSON converter for the subset opm writes

	"catalog/internal/scan":            nil, // the loader's JSON engine: catalog reads as the model
	"catalog":                          {"catalog/internal/scan", "catalog/internal/yamljson", "diag", "filetree"},
	"gitrepo":                          {"catalog", "diag"},
	"build":                            {"diag", "filetree", "registry"},
	"build/bundleimage":                {"build", "diag", "filetree", "registry"}, // a bundle directory's image, built and pushed
	"checks/approval":                  nil,
	"checks/merge":                     {"checks/approval", "report"},
	"checks/graph":                     {"catalog", "diag", "report"},
	"checks/images":                    {"catalog", "diag", "registry"},
	"checks/owners":                    {"config", "diag"},
	"checks/policy":                    {"catalog", "config", "diag", "filetree"}, // filetree: its cache entries written whole
	"checks/smoke":                     {"catalog", "diag"},
	"checks/validate":                  {"catalog", "diag", "filetree"}, // filetree: the select cache written whole
	"render/bundle/internal/kubetypes": nil,                             // decode-only copies of the Kubernetes and OLM API types
	"render/bundle":                    {"catalog", "diag", "render/bundle/internal/kubetypes"},
	"render":                           {"catalog", "diag", "filetree", "registry", "render/bundle"},
	"render/template":                  {"catalog", "checks/validate", "config", "diag", "filetree", "render", "render/bundle"},
	"render/release":                   {"catalog", "checks/policy", "diag", "render", "render/bundle", "render/template"}, // a bundle directory's release-config.yaml applied to its templates
	"render/promote":                   {"diag", "render", "render/template"},                                              // packages promoted into a new catalog per their ci.yaml
	// orchestration
	"pipeline": {"build", "catalog", "checks/approval", "checks/graph", "checks/images", "checks/owners", "checks/policy", "checks/smoke", "checks/validate",
		"config", "diag", "gitrepo", "registry", "render", "render/bundle", "render/promote", "render/release", "render/template", "report"},
	// front-ends
	"bot/ghclient":      nil,
	"bot/gitcache":      {"diag", "gitrepo"},
	"bot/queue":         nil,
	"bot/checkrun":      {"bot/checkrun/internal/checksapi", "bot/ghclient", "bot/queue", "report"},
	"bot/store":         {"bot/queue", "checks/approval", "report"},   // the App's records: runs, approvals, holds, App pull-request jobs
	"bot/statuspage":    {"bot/queue", "bot/store", "diag", "report"}, // the status and run pages, reading the queue and the bot's records (bot/store's model) through its interfaces
	"bot":               {"bot/checkrun", "bot/ghclient", "bot/gitcache", "bot/queue", "bot/statuspage", "bot/store", "checks/approval", "checks/merge", "config", "diag", "gitrepo", "netdeadline", "pipeline", "registry", "report"},
	"internal/demo":     {"build", "build/bundleimage", "catalog", "gitrepo", "internal/registrytest", "pipeline", "render/bundle", "report"},
	"internal/ghaction": {"bot/ghclient", "bot/gitcache", "build", "build/bundleimage", "checks/approval", "checks/merge", "config", "diag", "gitrepo", "pipeline", "report"},

	// the Checks API: Go's internal rule lets only bot/checkrun import it
	"bot/checkrun/internal/checksapi": {"bot/ghclient"},
	"cmd/catalogbot": {"bot", "build", "build/bundleimage", "catalog", "checks/images", "checks/policy", "checks/smoke", "checks/validate", "config", "diag", "filetree",
		"gitrepo", "internal/demo", "internal/ghaction", "netdeadline", "pipeline", "registry", "render",
		"internal/initgc", "render/promote", "render/release", "render/template", "report"},
	// small shared helpers and test kits: nothing of the product
	"internal/registrytest": nil,
	"internal/githubtest":   {"internal/shareddata"}, // the real webhook payloads it edits (Payload)
	"internal/pgtest":       nil,
	"internal/golden":       nil,
	"internal/chromiumtest": nil, // headless Chromium for the status pages' browser tests
	"internal/initgc":       nil, // the collector held off while packages initialise (main only)
	"internal/reftools":     nil,
	"internal/shareddata":   nil,
	"internal/archtest":     nil,
	"bot/internal/gittest":  nil,
	"test/e2e/smoke":        nil,
	// the tools modules' commands (bench/go.mod: benchmarks; hack/go.mod: the kind lane's tools, the
	// release image)
	"bench/imagesbench":                     {"internal/registrytest"},
	"bench/publishbench":                    {"build"},
	"bench/renderbench":                     {"internal/registrytest"},
	"bench/startupfloor":                    nil, // operator-framework's validators alone: start-up's floor
	"bench/templatebench":                   {"build/bundleimage", "catalog", "config", "internal/registrytest", "render/template"},
	"hack/kind-offline":                     nil, // lib_test.go: the lane scripts' go settings
	"hack/kind-offline/cmd/grpchealthprobe": nil,
	"hack/kind-offline/cmd/imagetool":       {"build", "catalog", "render/bundle"},
	"hack/kind-offline/cmd/registry":        nil,
	"hack/kind-offline/cmd/testoperator":    nil,
	"hack/releaseimage":                     {"build"},
}

func TestLayersImportOnlyWhatTheyMay(t *testing.T) {
	// the product's module, then the tools modules (hack/go.mod, bench/go.mod)
	var out []byte
	for _, dir := range []string{"../..", "../../hack", "../../bench"} {
		cmd := exec.Command("go", "list", "-tags", "tools", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		o, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
		}
		out = append(out, o...)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module+"/")
		if !ok {
			continue
		}
		seen++
		may, listed := allowed[pkg]
		if !listed {
			t.Errorf("%s is not in the layer allow-list (internal/archtest/layers_test.go): say which layer it belongs to", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, own := strings.CutPrefix(imp, module+"/")
			if own && !slices.Contains(may, dep) {
				t.Errorf("%s imports %s, which its layer may not (allowed: %v)", pkg, dep, may)
			}
		}
	}
	if seen < 30 {
		t.Fatalf("go list saw only %d packages of the module", seen)
	}
}
