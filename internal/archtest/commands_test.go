package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// pre-commit builds a golang hook with `go install ./...`: every main package of the module lands in the
// hook's environment. Only catalogbot may; benchmarks, the kind lane's tools and the release image
// builder are in the tools modules (bench/go.mod, hack/go.mod), which ./... of the product does not reach.
func TestGoInstallInstallsOnlyCatalogbot(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := strings.Fields(string(out))
	if want := []string{"github.com/catalogbot/catalogbot/cmd/catalogbot"}; !slices.Equal(got, want) {
		t.Fatalf("go install ./... would install %v, want only %v (put other commands in a tools module: hack/ or bench/)", got, want)
	}
}
