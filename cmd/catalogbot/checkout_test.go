package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// Issue 34 on real checkouts: upstream's directory that is not its package, the pre-commit drift hook,
// render-template seeded from the committed catalogs.

// upstreamGitRepo is shareddata.UpstreamCheckout with the configuration init writes, committed on main.
func upstreamGitRepo(t *testing.T) string {
	t.Helper()
	repo := shareddata.UpstreamCheckout(t)
	initIn(t, repo)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "upstream packages")
	return repo
}

// TestPRDirectoryNotPackage: upstream's konflux directory holds package konflux-operator. With the
// configuration init writes, a reviewer of operators/konflux/ci.yaml who changes the template and
// commits its render passes `catalogbot pr` (owners, the drift gate seeded from the base's konflux/
// directories); a stranger fails, told that the package's reviewers are konflux/ci.yaml's.
func TestPRDirectoryNotPackage(t *testing.T) {
	repo := upstreamGitRepo(t)
	seed := t.TempDir()
	git(t, seed, "clone", "-q", repo, ".")
	git(t, repo, "checkout", "-q", "-b", "konflux-change")
	tmpl := filepath.Join(repo, "operators", "konflux", "catalog-templates", "semver.yaml")
	data, err := os.ReadFile(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(data), "GenerateMajorChannels: false", "GenerateMajorChannels: true", 1)
	if err := os.WriteFile(tmpl, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, code := runCLI(t, "render", "--repo", repo, "--offline", "--seed-from", seed, "--template-cache-dir", t.TempDir(), "--package", "konflux-operator"); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "konflux: major channels")
	git(t, repo, "checkout", "-q", "main")
	pr := func(author string) (string, int) {
		out, _, code := runCLI(t, "pr", "--repo", repo, "--base", "main", "--head", "konflux-change", "--author", author, "--skip-images")
		return out, code
	}
	if out, code := pr("konflux-maintainer"); code != 0 || strings.Contains(out, "not \"konflux\" only") {
		t.Errorf("the reviewer's change: exit %d\n%s", code, out)
	}
	out, code := pr("mallory")
	if code != 1 || !strings.Contains(out, "operators/konflux/catalog-templates/semver.yaml: error: mallory is not an owner of package konflux-operator") ||
		!strings.Contains(out, "permits it: konflux-maintainer") {
		t.Errorf("a stranger's change: exit %d\n%s", code, out)
	}
}

// TestRenderStagedJudgesTheCommit: the pre-commit drift hook (render --check --staged) judges what the
// commit changes, as pr does. On the shared repository, whose committed catalogs drift upstream in four
// packages and name a bundle only a registry has (kubernaut-operator 1.5.1), a commit touching
// dotvirt-operator passes, online or not, without rendering the others; the same commit with a broken
// dotvirt render fails on that file only; an unstaged edit of a touched package is refused.
func TestRenderStagedJudgesTheCommit(t *testing.T) {
	repo := communityGitRepo(t)
	cache := t.TempDir()
	ci := filepath.Join(repo, "operators", "dotvirt-operator", "ci.yaml")
	data, err := os.ReadFile(ci)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ci, append(data, "# reviewed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", "-A")
	for _, offline := range []bool{true, false} {
		args := []string{"render", "--repo", repo, "--check", "--staged", "--template-cache-dir", cache}
		if offline {
			args = append(args, "--offline")
		}
		out, _, code := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, "5 template mappings into 5 catalogs") || !strings.Contains(out, "21 packages the commit does not touch not rendered") ||
			strings.Contains(out, "kubernaut") || strings.Contains(out, "ecr-secret") {
			t.Errorf("offline %v: exit %d, want a pass judging dotvirt-operator only:\n%s", offline, code, out)
		}
	}
	// the whole repository's drift gate fails on the untouched packages' upstream drift
	if out, _, code := runCLI(t, "render", "--repo", repo, "--check", "--offline", "--template-cache-dir", cache); code != 1 || !strings.Contains(out, "hint: re-rendering adds 2 entries (ecr-secret-operator.v0.5.1 to alpha, ecr-secret-operator.v0.6.0 to alpha); if that is intended, run catalogbot render") {
		t.Errorf("render --check: exit %d\n%s", code, out)
	}

	file := filepath.Join(repo, "catalogs", "v4.19", "dotvirt-operator", "catalog.yaml")
	if err := os.WriteFile(file, []byte("schema: olm.package\nname: dotvirt-operator\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	staged := []string{"render", "--repo", repo, "--check", "--staged", "--offline", "--template-cache-dir", cache}
	if err := cliErr(staged...); err == nil || !strings.Contains(err.Error(), "render --staged: 1 file differ from what the commit holds") {
		t.Errorf("an unstaged edit of a touched package: %v", err)
	}
	git(t, repo, "add", "-A")
	out, _, code := runCLI(t, staged...)
	if code != 1 || !strings.Contains(out, "catalogs/v4.19/dotvirt-operator/catalog.yaml") || strings.Contains(out, "ecr-secret") {
		t.Errorf("a staged broken render: exit %d, want 1 on that file only:\n%s", code, out)
	}
}

// TestRenderTemplateSeededOffline: render-template, upstream's render script's command, renders a
// package's template offline from the committed catalogs, byte for byte as committed: clusterpulse with
// opm v1.46.0's rules, konflux (a semver package whose icon only the committed head has) with v1.73.0's;
// from HEAD of the repository holding the working directory, or from --seed-from. Outside a repository,
// --offline without --seed-from is a usage error.
func TestRenderTemplateSeededOffline(t *testing.T) {
	repo := upstreamGitRepo(t)
	for _, tc := range []struct{ dir, opm string }{{"clusterpulse", "v1.46.0"}, {"konflux", "v1.73.0"}} {
		committed, err := os.ReadFile(filepath.Join(repo, "catalogs", "v4.20", tc.dir, "catalog.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		tmpl := filepath.Join(repo, "operators", tc.dir, "catalog-templates", "semver.yaml")
		args := []string{"render-template", "semver", "-o", "yaml", "--migrate-level", "bundle-object-to-csv-metadata", "--opm-version", tc.opm, "--no-cache", tmpl}
		t.Run(tc.dir, func(t *testing.T) {
			chdir(t, repo)
			out, stderr, code := runCLI(t, append(args, "--offline")...)
			if code != 0 || out != string(committed) {
				t.Errorf("seeded from HEAD: exit %d, same as committed %v\n%s", code, out == string(committed), stderr)
			}
			chdir(t, t.TempDir())
			out, stderr, code = runCLI(t, append(args, "--offline", "--seed-from", repo)...)
			if code != 0 || out != string(committed) {
				t.Errorf("--seed-from: exit %d, same as committed %v\n%s", code, out == string(committed), stderr)
			}
			if err := cliErr(append(args, "--offline")...); err == nil || !strings.Contains(err.Error(), "--offline outside a git repository") {
				t.Errorf("--offline outside a repository: %v", err)
			}
		})
	}
}
