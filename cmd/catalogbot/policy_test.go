package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// validate runs the policy of .catalogbot.yaml and of --policy after validation (what pre-commit runs):
// a real package passes the community preset; a skipRange reaching above its bundle fails it with the
// file:line, and an unknown preset is a usage error.
func TestValidatePolicyCLI(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(shareddata.Dir(t, "catalogs", "composed-279"), "hawtio-operator", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeCatalog(t, map[string]string{"hawtio-operator/catalog.json": string(data)})
	out, _, code := runCLI(t, "validate", dir)
	if code != 0 || strings.Contains(out, "policy") {
		t.Fatalf("no policy asked for (exit %d):\n%s", code, out)
	}
	out, _, code = runCLI(t, "validate", "--policy", "community,olmv1", dir)
	if code != 0 || !strings.Contains(out, "policy") || !strings.Contains(out, "OLM v1 can install 0 of the 10 bundles") {
		t.Fatalf("--policy community,olmv1 on hawtio-operator (exit %d):\n%s", code, out)
	}
	if err := runValidate(t.Context(), &validateOptions{dir: dir, policy: policyFlags{presets: []string{"comunity"}}}); diag.CategoryOf(err) != diag.Usage || !strings.Contains(err.Error(), `"comunity"`) {
		t.Fatalf("unknown preset: %v (%s)", err, diag.CategoryOf(err))
	}

	const from, to = `"skipRange": ">=1.0.0 <1.1.0"`, `"skipRange": ">=1.0.0 <1.2.0"`
	broken := strings.Replace(string(data), from, to, 1)
	line := strings.Count(broken[:strings.Index(broken, to)], "\n")
	dir = writeCatalog(t, map[string]string{"catalog/hawtio-operator/catalog.json": broken,
		".catalogbot.yaml": "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\npolicy:\n  presets: [community]\n",
		".git/HEAD":        "ref: refs/heads/main\n"})
	out, _, code = runCLI(t, "validate", filepath.Join(dir, "catalog"))
	if code != 1 || !strings.Contains(out, "[policy-skiprange-above-version]") || !strings.Contains(out, "hawtio-operator/catalog.json:") {
		t.Fatalf("skipRange above the bundle, policy from .catalogbot.yaml (exit %d, entry near line %d):\n%s", code, line, out)
	}
}

// In a template-driven repository each catalog gets its policy stage after its validation.
func TestValidatePolicyEveryCatalogCLI(t *testing.T) {
	repo := communityRepo(t)
	out, _, code := runCLI(t, "validate", "--policy", "community", repo)
	if code != 1 || strings.Count(out, "policy v4.") != 11 || !strings.Contains(out, "[policy-replaces-missing]") ||
		!strings.Contains(out, "catalogs/v4.22/") {
		t.Fatalf("want a policy stage per catalog with the shared data's findings (exit %d):\n%s", code, out)
	}
}

// validate --since REV judges what the work tree adds to REV: the shared data's replaces-missing findings
// (rabbitmq-messaging-topology-operator's v1.12.1, merged upstream) are listed as pre-existing notes and
// the run passes; one more dangling replaces in the work tree is the one error.
func TestValidatePolicySinceCLI(t *testing.T) {
	repo := communityRepo(t)
	git(t, repo, "init", "-q")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-qm", "base")
	out, _, code := runCLI(t, "validate", "--policy", "community", "--since", "HEAD", repo)
	if code != 0 || !strings.Contains(out, "pre-existing (already on HEAD, error)") || !strings.Contains(out, "[policy-replaces-missing]") {
		t.Fatalf("the committed catalogs against themselves (exit %d):\n%s", code, out)
	}
	file := filepath.Join(repo, "catalogs", "v4.22", "rabbitmq-messaging-topology-operator", "catalog.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "replaces: rabbitmq-messaging-topology-operator.v1.12.0", "replaces: rabbitmq-messaging-topology-operator.v1.11.9", 1)
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = runCLI(t, "validate", "--policy", "community", "--since", "HEAD", "-o", "json", repo)
	var r struct {
		Stages []struct {
			Name        string
			Diagnostics []diag.Diagnostic
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var errs, pre []string
	for _, st := range r.Stages {
		for _, d := range st.Diagnostics {
			switch {
			case d.Check == "policy" && d.Severity == diag.Error:
				errs = append(errs, d.File+": "+d.Message)
			case strings.HasPrefix(d.Message, "pre-existing (already on HEAD"):
				pre = append(pre, d.Message)
			}
		}
	}
	if code != 1 || len(errs) != 1 || !strings.Contains(errs[0], "v4.22/") || !strings.Contains(errs[0], "v1.11.9") || len(pre) == 0 {
		t.Fatalf("one more dangling replaces (exit %d): errors %q, %d pre-existing", code, errs, len(pre))
	}
}
