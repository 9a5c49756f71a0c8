package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The done criterion of issue 15 through `catalogbot pr`: the 22 packages and 11 catalogs of the shared
// data as a git repository whose main branch is the base. odf-node-recovery-operator's ci.yaml lists
// jordigilh as a reviewer and maps basic.yaml into v4.12-v4.18.

const (
	prOdfTemplate = "operators/odf-node-recovery-operator/catalog-templates/basic.yaml"
	prOdfCI       = "operators/odf-node-recovery-operator/ci.yaml"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.test",
		"-c", "commit.gpgsign=false"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", args, err, out)
	}
	return string(out)
}

// communityGitRepo is communityRepo committed on main, with catalog-admin as its maintainer.
func communityGitRepo(t *testing.T) string {
	t.Helper()
	dir := communityRepo(t)
	if err := os.WriteFile(filepath.Join(dir, ".catalogbot.yaml"), []byte(communityConfig+"maintainers: [catalog-admin]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "community-operators catalogs")
	return dir
}

// branchWith commits, on a new branch from main, the odf template with a stable channel; render says
// whether the catalogs are re-rendered (offline, the cache seeded from a trusted copy of main). extra
// edits other files (repository path -> transform).
func branchWith(t *testing.T, repo, branch string, render bool, extra map[string]func(string) string) {
	t.Helper()
	git(t, repo, "checkout", "-q", "-b", branch, "main")
	edit := func(rel string, fn func(string) string) {
		p := filepath.Join(repo, filepath.FromSlash(rel))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out := fn(string(data))
		if out == string(data) {
			t.Fatalf("edit of %s changed nothing", rel)
		}
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit(prOdfTemplate, func(s string) string {
		stable := "  - entries:\n      - name: odf-node-recovery-operator.v1.0.0\n      - name: odf-node-recovery-operator.v1.1.0\n        replaces: odf-node-recovery-operator.v1.0.0\n" +
			"    name: stable\n    package: odf-node-recovery-operator\n    schema: olm.channel\n"
		return strings.Replace(s, "  - schema: olm.bundle\n", stable+"  - schema: olm.bundle\n", 1)
	})
	for rel, fn := range extra {
		if _, err := os.Stat(filepath.Join(repo, filepath.FromSlash(rel))); os.IsNotExist(err) {
			if err := os.WriteFile(filepath.Join(repo, filepath.FromSlash(rel)), []byte(fn("")), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		edit(rel, fn)
	}
	if render {
		seed := communityRepo(t)
		if _, _, code := runCLI(t, "render", "--repo", repo, "--offline", "--seed-from", seed, "--template-cache-dir", t.TempDir(),
			"--package", "odf-node-recovery-operator"); code != 0 {
			t.Fatalf("render exit %d", code)
		}
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", branch)
	git(t, repo, "checkout", "-q", "main")
}

func TestPRTemplateDrivenRepository(t *testing.T) {
	repo := communityGitRepo(t)
	branchWith(t, repo, "reviewed", true, nil)
	branchWith(t, repo, "stale", false, nil)
	branchWith(t, repo, "self-added", true, map[string]func(string) string{
		prOdfCI: func(s string) string { return strings.Replace(s, "reviewers:\n", "reviewers:\n  - mallory\n", 1) }})
	// v4.18 gets its own template, in which v1.0.0 is gone (a released bundle removed)
	oddTemplate := "operators/odf-node-recovery-operator/catalog-templates/v4.18.yaml"
	branchWith(t, repo, "breaks-one", true, map[string]func(string) string{
		prOdfCI: func(s string) string {
			return strings.Replace(s, `catalog_names: ["v4.12", "v4.13", "v4.14","v4.15", "v4.16", "v4.17","v4.18"]`,
				`catalog_names: ["v4.12", "v4.13", "v4.14","v4.15", "v4.16", "v4.17"]`+"\n    type: olm.template.basic\n  - template_name: v4.18.yaml\n    catalog_names: [\"v4.18\"]", 1)
		},
		oddTemplate: func(string) string {
			return "schema: olm.template.basic\nname: odf-node-recovery-operator\nentries:\n" +
				"  - schema: olm.package\n    name: odf-node-recovery-operator\n    defaultChannel: alpha\n" +
				"  - entries:\n      - name: odf-node-recovery-operator.v1.1.0\n    name: alpha\n    package: odf-node-recovery-operator\n    schema: olm.channel\n" +
				"  - schema: olm.bundle\n    image: quay.io/community-operator-pipeline-prod/odf-node-recovery-operator@sha256:77b0ef6110a71da56216719ceed0f448257dec9633c98d7dfabc1038b23b6e29\n"
		}})
	pr := func(head, author string) (string, int) {
		out, _, code := runCLI(t, "pr", "--repo", repo, "--base", "main", "--head", head, "--author", author, "--skip-images")
		return out, code
	}

	// A ci.yaml reviewer's rendered template change passes, its seven identical graph diffs read as one.
	out, code := pr("reviewed", "jordigilh")
	if code != 0 {
		t.Fatalf("reviewer's change: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "7 changed channels in 1 package across 7 catalogs (1 distinct diff)") {
		t.Errorf("graph stage does not read as one diff:\n%s", out)
	}
	t.Logf("reviewer's change, text report: %d bytes", len(out))

	// The same change by a stranger fails on the template, naming the reviewers.
	out, code = pr("reviewed", "mallory")
	if code != 1 || !strings.Contains(out, prOdfTemplate) || !strings.Contains(out, "jordigilh") {
		t.Errorf("stranger's change: exit %d, want 1 with the owners error on %s naming jordigilh:\n%s", code, prOdfTemplate, out)
	}
	// Attack: the stranger adds themselves to ci.yaml's reviewers in the same pull request.
	out, code = pr("self-added", "mallory")
	if code != 1 || !strings.Contains(out, prOdfCI+": error") || !strings.Contains(out, prOdfTemplate) {
		t.Errorf("self-added reviewer: exit %d, want 1 with errors on %s and %s:\n%s", code, prOdfCI, prOdfTemplate, out)
	}
	// A template that breaks one catalog's graph (by a reviewer, rendered) fails on that catalog's file only.
	out, code = pr("breaks-one", "jordigilh")
	if code != 1 || !strings.Contains(out, "catalogs/v4.18/odf-node-recovery-operator/catalog.yaml: error: released bundle") ||
		strings.Count(out, "released bundle") != 1 || !strings.Contains(out, "(2 distinct diffs)") {
		t.Errorf("breaks-one: exit %d, want 1 with one released-bundle error on catalogs/v4.18:\n%s", code, out)
	}
	// A stale render fails on each catalog file of the package, with its line.
	out, code = pr("stale", "jordigilh")
	if code != 1 {
		t.Errorf("stale render: exit %d, want 1:\n%s", code, out)
	}
	// the seven identical diffs are printed once (readable at many catalogs; see README for the sizes)
	if n := strings.Count(out, "+name: stable"); n != 1 || !strings.Contains(out, "(the same diff in catalogs v4.12-v4.18)") {
		t.Errorf("stale render: the diff is printed %d times, want once for the seven catalogs:\n%s", n, out)
	}
	t.Logf("stale render, text report: %d bytes", len(out))
	for _, v := range []string{"v4.12", "v4.13", "v4.14", "v4.15", "v4.16", "v4.17", "v4.18"} {
		if !strings.Contains(out, "catalogs/"+v+"/odf-node-recovery-operator/catalog.yaml:") {
			t.Errorf("stale render: no diagnostic on catalogs/%s's file and line:\n%s", v, out)
		}
	}
}
