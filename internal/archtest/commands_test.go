package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// pre-commit builds a golang hook with `go install ./...`: every main package without a build tag lands in
// the hook's environment. Only catalogbot may; benchmarks, the kind lane's tools and the release image
// builder carry the `tools` build tag (hack/test.sh vets and tests them with -tags tools).
func TestGoInstallInstallsOnlyCatalogbot(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := strings.Fields(string(out))
	if want := []string{"github.com/catalogbot/catalogbot/cmd/catalogbot"}; !slices.Equal(got, want) {
		t.Fatalf("go install ./... would install %v, want only %v (tag other commands `//go:build tools`)", got, want)
	}
}
