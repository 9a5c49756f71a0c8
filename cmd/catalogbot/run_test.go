package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// catalogFile is a one-package catalog whose bundles reference images (one line per blob).
func catalogFile(images ...string) string {
	var b strings.Builder
	b.WriteString(`{"schema":"olm.package","name":"foo","defaultChannel":"stable"}` + "\n")
	var entries []string
	prev := ""
	for i := range images {
		name := "foo.v0." + string(rune('1'+i)) + ".0"
		e := `{"name":"` + name + `"`
		if prev != "" {
			e += `,"replaces":"` + prev + `"`
		}
		entries = append(entries, e+"}")
		prev = name
	}
	b.WriteString(`{"schema":"olm.channel","name":"stable","package":"foo","entries":[` + strings.Join(entries, ",") + "]}\n")
	for i, img := range images {
		v := "0." + string(rune('1'+i)) + ".0"
		b.WriteString(`{"schema":"olm.bundle","name":"foo.v` + v + `","package":"foo","image":"` + img +
			`","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"` + v + `"}}]}` + "\n")
	}
	return b.String()
}

func writeCatalog(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// closedRegistry is a loopback address nothing listens on: every request to it fails to connect.
func closedRegistry(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestExitCodes is the one exit-code map, verb by verb: usage errors found by the command line parser
// (unknown verbs and flags, bad -o, missing required flags, extra arguments) exit 2 like those a verb
// finds; a broken catalog exits 1 even when a registry is also down; only an outage alone exits 3.
func TestExitCodes(t *testing.T) {
	down := closedRegistry(t)
	valid := writeCatalog(t, map[string]string{"foo/catalog.json": catalogFile("quay.io/example/foo-bundle@" + digest)})
	invalid := writeCatalog(t, map[string]string{"foo/catalog.json": `{"schema":"olm.channel","name":"stable","package":"foo","entries":[]}` + "\n"})
	outage := writeCatalog(t, map[string]string{"foo/catalog.json": catalogFile(down + "/foo-bundle@" + digest)})
	brokenDuringOutage := writeCatalog(t, map[string]string{"foo/catalog.json": catalogFile(down+"/foo-bundle@"+digest, "not a reference!")})
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"no verb", nil, 0},
		{"help", []string{"help"}, 0},
		{"version", []string{"version"}, 0},
		{"unknown verb", []string{"bogus"}, 2},
		{"unknown flag", []string{"validate", "--bogus", valid}, 2},
		{"unknown output format", []string{"validate", "-o", "xml", valid}, 2},
		{"too many arguments", []string{"validate", valid, valid}, 2},
		{"version with an argument", []string{"version", "x"}, 2},
		{"pr without --base", []string{"pr", "--repo", valid}, 2},
		{"pr without --author", []string{"pr", "--repo", valid, "--base", "HEAD"}, 2},
		{"bad flag value", []string{"check-images", "--concurrency", "many", valid}, 2},
		{"exclusive flags", []string{"validate", "--staged", "--changed-since", "HEAD", valid}, 2},
		{"valid catalog", []string{"validate", valid}, 0},
		{"valid catalog json", []string{"validate", "-o", "json", valid}, 0},
		{"invalid catalog", []string{"validate", invalid}, 1},
		{"registry down", []string{"check-images", outage}, 3},
		{"broken change while a registry is down", []string{"check-images", brokenDuringOutage}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(t.Context(), tc.args, &stdout, &stderr); got != tc.want {
				t.Errorf("catalogbot %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(tc.args, " "), got, tc.want, stdout.String(), stderr.String())
			}
			if tc.want == 2 && !strings.Contains(stderr.String(), "catalogbot: ") {
				t.Errorf("a usage error says what is wrong on stderr; got %q", stderr.String())
			}
		})
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestValidateStagedOrphanChannel is issue 14's pre-commit case: removing foo/ leaves foo's channel in
// bar/foo-beta.json; the staged validation fails as the full one does, and so does declaring foo again
// from another directory.
func TestValidateStagedOrphanChannel(t *testing.T) {
	repo := writeCatalog(t, map[string]string{
		"catalog/foo/catalog.json":  catalogFile("quay.io/example/foo-bundle@" + digest),
		"catalog/bar/catalog.json":  strings.ReplaceAll(catalogFile("quay.io/example/bar-bundle@"+digest), "foo", "bar"),
		"catalog/bar/foo-beta.json": `{"schema":"olm.channel","name":"beta","package":"foo","entries":[{"name":"foo.v0.1.0"}]}` + "\n",
		"catalog/.indexignore":      "README.md\n",
		"catalog/README.md":         "not a catalog file\n",
	})
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "base")
	dir := filepath.Join(repo, "catalog")
	if code := run(t.Context(), []string{"validate", "--staged", dir}, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("nothing staged: exit %d", code)
	}
	gitIn(t, repo, "rm", "-q", "-r", "catalog/foo")
	var out bytes.Buffer
	if code := run(t.Context(), []string{"validate", "--staged", dir}, &out, &bytes.Buffer{}); code != 1 || !strings.Contains(out.String(), "channel-unknown-package") {
		t.Errorf("foo/ removed: exit %d, want 1 with channel-unknown-package\n%s", code, out.String())
	}
	gitIn(t, repo, "reset", "-q", "--hard")
	if err := os.WriteFile(filepath.Join(dir, "bar", "dup.json"), []byte(`{"schema":"olm.package","name":"foo"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "add", "-A")
	out.Reset()
	if code := run(t.Context(), []string{"validate", "--staged", dir}, &out, &bytes.Buffer{}); code != 1 || !strings.Contains(out.String(), "package-duplicate") {
		t.Errorf("foo declared again in bar/: exit %d, want 1 with package-duplicate\n%s", code, out.String())
	}
}

// TestPreCommitWithoutArgs is the hook as installed without args: run at the repository root, it
// validates the repository's catalog directory (never .git or other trees), and its paths are
// repository-relative, so editors and pre-commit point at the file.
func TestPreCommitWithoutArgs(t *testing.T) {
	repo := writeCatalog(t, map[string]string{
		"catalog/foo/catalog.json": catalogFile("quay.io/example/foo-bundle@" + digest),
		"docs/notes.yaml":          "not: [a catalog\n",
		".github/workflows/ci.yml": "on: push\njobs: {}\n",
	})
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "base")
	t.Chdir(repo)
	for _, args := range [][]string{{"validate"}, {"validate", "--staged"}} {
		if code := run(t.Context(), args, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
			t.Errorf("catalogbot %v at the root of a repository with a valid catalog: exit %d", args, code)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "catalog", "foo", "catalog.json"), []byte(`{"schema":"olm.package","name":"foo","defaultChannel":"stable"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "add", "-A")
	var out bytes.Buffer
	code := run(t.Context(), []string{"validate", "--staged"}, &out, &bytes.Buffer{})
	if code != 1 || !strings.Contains(out.String(), "catalog/foo/catalog.json:1:1: error:") {
		t.Errorf("exit %d, want 1 with a repository-relative path catalog/foo/catalog.json:1:1\n%s", code, out.String())
	}
	// an explicit directory: paths are still repository-relative, whatever the working directory
	t.Chdir(filepath.Join(repo, "catalog"))
	out.Reset()
	if code := run(t.Context(), []string{"validate", "foo"}, &out, &bytes.Buffer{}); code != 1 || !strings.Contains(out.String(), "catalog/foo/catalog.json:1:1") {
		t.Errorf("validate foo from catalog/: exit %d, want 1 with catalog/foo/catalog.json\n%s", code, out.String())
	}
}

// TestGitDirectoryNeverLoaded: a repository whose root is the catalog validates without reading .git.
func TestGitDirectoryNeverLoaded(t *testing.T) {
	repo := writeCatalog(t, map[string]string{"foo/catalog.json": catalogFile("quay.io/example/foo-bundle@" + digest)})
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "base")
	var out bytes.Buffer
	if code := run(t.Context(), []string{"validate", repo}, &out, &bytes.Buffer{}); code != 0 || strings.Contains(out.String(), ".git/") {
		t.Errorf("exit %d, want 0 and nothing of .git\n%s", code, out.String())
	}
}

// TestFmtCheckKeepsFormat: a catalog formatted as YAML (or with packages in both formats) is formatted;
// fmt --check does not call it unformatted for not being JSON.
func TestFmtCheckKeepsFormat(t *testing.T) {
	foo := catalogFile("quay.io/example/foo-bundle@" + digest)
	bar := strings.ReplaceAll(foo, "foo", "bar")
	for _, tc := range []struct {
		name   string
		format map[string]string // package -> format it is formatted in first
	}{
		{"yaml", map[string]string{"foo": "yaml", "bar": "yaml"}},
		{"json", map[string]string{"foo": "json", "bar": "json"}},
		{"mixed", map[string]string{"foo": "yaml", "bar": "json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeCatalog(t, map[string]string{})
			for pkg, data := range map[string]string{"foo": foo, "bar": bar} {
				one := writeCatalog(t, map[string]string{pkg + "/catalog.json": data})
				if code := run(t.Context(), []string{"fmt", "--format", tc.format[pkg], one}, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
					t.Fatalf("fmt --format %s: exit %d", tc.format[pkg], code)
				}
				if err := os.Rename(filepath.Join(one, pkg), filepath.Join(dir, pkg)); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			if code := run(t.Context(), []string{"fmt", "--check", dir}, &out, &bytes.Buffer{}); code != 0 {
				t.Errorf("fmt --check of a formatted %s catalog: exit %d\n%s", tc.name, code, out.String())
			}
			// told otherwise, it says what would change
			other := map[string]string{"yaml": "json", "json": "yaml", "mixed": "json"}[tc.name]
			if code := run(t.Context(), []string{"fmt", "--check", "--format", other, dir}, &out, &bytes.Buffer{}); code != 1 {
				t.Errorf("fmt --check --format %s of a %s catalog: exit %d, want 1", other, tc.name, code)
			}
		})
	}
}

// TestRenderCountsFailedReferences: render does not call failed references rendered (issue 14), and the
// registry being down is an infrastructure error (exit 3).
func TestRenderCountsFailedReferences(t *testing.T) {
	down := closedRegistry(t)
	dir := writeCatalog(t, map[string]string{"catalog.yaml": "name: catalog\nrepo: example.com/catalog\ntag: latest\nreferences:\n" +
		"- name: foo\n  image: " + down + "/foo-index@" + digest + "\n" +
		"- name: bar\n  image: " + down + "/bar-index@" + digest + "\n"})
	var out bytes.Buffer
	code := run(t.Context(), []string{"render", "--no-cache", "-c", filepath.Join(dir, "catalog.yaml"), "--output-dir", dir}, &out, &bytes.Buffer{})
	if code != 3 || !strings.Contains(out.String(), "0 of 2 references rendered (2 failed)") || strings.Contains(out.String(), "): 2 references rendered") {
		t.Errorf("exit %d, want 3 and 0 of 2 references rendered\n%s", code, out.String())
	}
}

// TestBumpPrintsTheChange: bump says what it changed, and that it changed nothing when so.
func TestBumpPrintsTheChange(t *testing.T) {
	old := "quay.io/example/foo-index@" + digest
	neu := "quay.io/example/foo-index@sha256:" + strings.Repeat("f", 64)
	dir := writeCatalog(t, map[string]string{"catalog.yaml": "name: catalog\nrepo: example.com/catalog\ntag: latest\nreferences:\n" +
		"- name: foo\n  image: " + old + "\n"})
	cfg := filepath.Join(dir, "catalog.yaml")
	var out bytes.Buffer
	if code := run(t.Context(), []string{"bump", "-c", cfg, "foo", neu}, &out, &bytes.Buffer{}); code != 0 {
		t.Fatalf("bump: exit %d\n%s", code, out.String())
	}
	if want := cfg + ":6: -image: " + old + "\n" + cfg + ":6: +image: " + neu + "\n"; out.String() != want {
		t.Errorf("bump printed %q, want %q", out.String(), want)
	}
	out.Reset()
	if code := run(t.Context(), []string{"bump", "-c", cfg, "foo", neu}, &out, &bytes.Buffer{}); code != 0 || !strings.Contains(out.String(), "nothing changed") {
		t.Errorf("bump again: exit %d, printed %q", code, out.String())
	}
}

// gitLogged puts a git on PATH that logs each of its invocations before running the real one, and
// returns the log's file.
func gitLogged(t *testing.T) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git executable")
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "calls")
	script := "#!/bin/sh\necho \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func gitCalls(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// The paths of validate's diagnostics are repository-relative as the load makes them, but the repository
// is looked for only when a diagnostic names a file: a passing run starts no git process, a failing one
// starts one (however many diagnostics and catalogs), and --path-prefix starts none.
func TestValidateAsksGitForTheRepositoryOnlyForAFile(t *testing.T) {
	repo := writeCatalog(t, map[string]string{"catalog/foo/catalog.json": catalogFile("quay.io/example/foo-bundle@" + digest)})
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "base")
	log := gitLogged(t)
	dir := filepath.Join(repo, "catalog")
	var out bytes.Buffer
	if code := run(t.Context(), []string{"validate", dir}, &out, &bytes.Buffer{}); code != 0 {
		t.Fatalf("valid catalog: exit %d\n%s", code, out.String())
	}
	if calls := gitCalls(t, log); len(calls) != 0 {
		t.Errorf("a passing run started git: %q", calls)
	}
	broken := `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}` + "\n" + `{"schema":"olm.bundle","name":"x"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "foo", "catalog.json"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(t.Context(), []string{"validate", dir}, &out, &bytes.Buffer{}); code != 1 || !strings.Contains(out.String(), "catalog/foo/catalog.json:1:1: error:") ||
		strings.Count(out.String(), "catalog/foo/catalog.json:") < 2 {
		t.Errorf("broken catalog: exit %d, want 1 with several repository-relative paths catalog/foo/catalog.json\n%s", code, out.String())
	}
	if calls := gitCalls(t, log); len(calls) != 1 || calls[0] != "rev-parse --show-toplevel" {
		t.Errorf("a failing run started git %q, want one rev-parse --show-toplevel", calls)
	}
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(t.Context(), []string{"validate", "--path-prefix", "elsewhere/cat", dir}, &out, &bytes.Buffer{}); code != 1 || !strings.Contains(out.String(), "elsewhere/cat/foo/catalog.json:1:1: error:") {
		t.Errorf("--path-prefix: exit %d, want 1 with elsewhere/cat/foo/catalog.json\n%s", code, out.String())
	}
	if calls := gitCalls(t, log); len(calls) != 0 {
		t.Errorf("--path-prefix started git: %q", calls)
	}
}
