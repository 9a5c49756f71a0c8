package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The pre-commit hook (validate --staged, no DIR) in a template-driven repository configured as README
// says: a bad defaultChannel staged in catalogs/v4.20 is the only error reported, on its file and line,
// whatever else the commit stages outside the catalogs; --changed-since HEAD reports the same.
func TestValidateStagedTemplateLayoutCLI(t *testing.T) {
	repo := communityRepo(t)
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "base")
	file := filepath.Join(repo, "catalogs", "v4.20", "dotvirt-operator", "catalog.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(data), "defaultChannel: stable-v0", "defaultChannel: nosuch", 1)
	if broken == string(data) {
		t.Fatal("edit did not apply")
	}
	if err := os.WriteFile(file, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "add", "-A")
	wd, _ := os.Getwd()
	t.Cleanup(func() { _ = os.Chdir(wd) })
	if err := os.Chdir(filepath.Join(repo, "operators")); err != nil { // a hook's directory must not matter
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate", "--staged"}, {"validate", "--changed-since", "HEAD"}} {
		out, _, code := runCLI(t, append(args, "-o", "json")...)
		var r struct {
			Stages []struct {
				Name        string
				Diagnostics []struct{ Severity, File, Message string }
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		var errs []string
		for _, st := range r.Stages {
			for _, d := range st.Diagnostics {
				if d.Severity == "error" {
					errs = append(errs, st.Name+" "+d.File+": "+d.Message)
				}
			}
		}
		if code != 1 || len(r.Stages) != 1 || len(errs) != 1 || !strings.HasPrefix(errs[0], "validate v4.20 catalogs/v4.20/dotvirt-operator/catalog.yaml: ") ||
			!strings.Contains(errs[0], "nosuch") {
			t.Errorf("%v: exit %d, want exactly the staged error in catalogs/v4.20; got %d stages, errors:\n%s\n%s", args, code, len(r.Stages), strings.Join(errs, "\n"), out)
		}
	}
	// Nothing staged in a catalog: nothing to validate, and no error.
	gitIn(t, repo, "commit", "-q", "-m", "broken")
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("# more notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "add", "-A")
	if out, _, code := runCLI(t, "validate", "--staged"); code != 0 || !strings.Contains(out, "no catalog file changed") {
		t.Errorf("a commit outside the catalogs (exit %d):\n%s", code, out)
	}
}

// A configuration with two errors prints both, each with its hint; upstream's host/namespace prefix
// (allowed_bundle_registries) is accepted.
func TestConfigErrorsPrintedWithHints(t *testing.T) {
	repo := communityRepo(t)
	cfg := communityConfig + "images:\n  allowedRegistries: [quay.io/community-operator-pipeline-prod/, \"bad host/\"]\nsmoke: {timeout: soon}\n"
	if err := os.WriteFile(filepath.Join(repo, ".catalogbot.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := newRootCmd()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetArgs([]string{"validate", repo})
	err := cmd.ExecuteContext(context.Background())
	var stderr bytes.Buffer
	if code := exitCode(&stderr, err); code != 2 {
		t.Fatalf("exit %d, want 2: %v", code, err)
	}
	got := stderr.String()
	for _, want := range []string{`"bad host/" is malformed`, "hint: want a registry host", `smoke.timeout: "soon"`, "hint: a Go duration"} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"quay.io/community-operator-pipeline-prod/" is malformed`) {
		t.Errorf("a host/namespace prefix was refused:\n%s", got)
	}
}
