package archtest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// The product's go.mod lists, as direct requirements, only modules the product's packages or their tests
// import: a benchmark's or a lane tool's library belongs to the tools modules (grpc was the product's for
// a kind lane health probe until they moved to hack/go.mod).
func TestGoModRequiresOnlyWhatTheModuleImports(t *testing.T) {
	edit := exec.Command("go", "mod", "edit", "-json")
	edit.Dir = "../.."
	data, err := edit.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var f struct {
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "-test", "-tags", "e2e", "-f", "{{with .Module}}{{.Path}}{{end}}", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	used := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		used[m] = true
	}
	for _, r := range f.Require {
		if !r.Indirect && !used[r.Path] {
			t.Errorf("go.mod requires %s, which no package of the product (tests included) imports: move what needs it to a tools module (hack/go.mod, bench/go.mod)", r.Path)
		}
	}
}
