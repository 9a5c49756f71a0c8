package main

import (
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// templateRepo writes a template-driven repository of two catalogs (v4.17 and v4.18), each holding one
// valid package foo and two packages whose default channel does not exist (bar and baz), with extra
// appended to its .catalogbot.yaml.
func templateRepo(t *testing.T, extra string) string {
	t.Helper()
	repo := t.TempDir()
	files := map[string]string{".catalogbot.yaml": "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\ncatalogs:\n  pattern: catalogs/{version}\n" + extra}
	for _, v := range []string{"v4.17", "v4.18"} {
		files["catalogs/"+v+"/foo/catalog.json"] = catalogFile("quay.io/example/foo-bundle@" + digest)
		for _, p := range []string{"bar", "baz"} {
			files["catalogs/"+v+"/"+p+"/catalog.json"] = strings.ReplaceAll(strings.Replace(catalogFile("quay.io/example/"+p+"@"+digest),
				`"defaultChannel":"stable"`, `"defaultChannel":"nosuch"`, 1), "foo", p)
		}
	}
	for name, data := range files {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

// validateJSON runs validate with args and -o json and returns its exit code and, per stage, its
// diagnostics as "rule file" and its truncated rules' counts.
func validateJSON(t *testing.T, args ...string) (code int, diags map[string][]string, truncated map[string]int) {
	t.Helper()
	out, _, code := runCLI(t, append([]string{"validate", "-o", "json"}, args...)...)
	var r struct {
		Stages []struct {
			Name        string
			Diagnostics []struct{ Rule, File string }
			Truncated   []struct {
				Rule  string
				Count int
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	diags, truncated = map[string][]string{}, map[string]int{}
	for _, st := range r.Stages {
		for _, d := range st.Diagnostics {
			diags[st.Name] = append(diags[st.Name], d.Rule+" "+d.File)
		}
		for _, tr := range st.Truncated {
			truncated[st.Name+" "+tr.Rule] += tr.Count
		}
	}
	return code, diags, truncated
}

// Validating a template-driven repository takes the same path as validating one catalog: the --max-*
// flags and the configuration's limits apply to every catalog, and the memory bound is set from the
// catalogs' size. (They were ignored for template-driven repositories, whose catalogs took a path of
// their own.)
func TestValidateTemplateLayoutKeepsTheLimits(t *testing.T) {
	repo := templateRepo(t, "")
	code, diags, _ := validateJSON(t, "--max-file-bytes", "100", repo)
	for _, v := range []string{"v4.17", "v4.18"} {
		got := strings.Join(diags["validate "+v], "\n")
		if code != 1 || !strings.Contains(got, "file-too-large catalogs/"+v+"/foo/catalog.json") {
			t.Errorf("--max-file-bytes 100: exit %d, want file-too-large on catalogs/%s/foo/catalog.json:\n%s", code, v, got)
		}
	}

	code, diags, truncated := validateJSON(t, "--max-diagnostics", "1", repo)
	for _, v := range []string{"v4.17", "v4.18"} {
		if n := len(diags["validate "+v]); code != 1 || n != 1 || truncated["validate "+v+" default-channel-not-found"] != 1 {
			t.Errorf("--max-diagnostics 1: exit %d, %s keeps %d diagnostics, truncated %v; want one kept and one counted:\n%s",
				code, v, n, truncated, strings.Join(diags["validate "+v], "\n"))
		}
	}

	configured := templateRepo(t, "limits:\n  maxFileBytes: 100\n")
	code, diags, _ = validateJSON(t, configured)
	if got := strings.Join(diags["validate v4.18"], "\n"); code != 1 || !strings.Contains(got, "file-too-large catalogs/v4.18/bar/catalog.json") {
		t.Errorf("limits.maxFileBytes: 100: exit %d, want file-too-large on catalogs/v4.18/bar/catalog.json:\n%s", code, got)
	}

	if os.Getenv("GOMEMLIMIT") != "" {
		return // the bound is the environment's then
	}
	prev := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	var size int64
	if err := filepath.WalkDir(filepath.Join(repo, "catalogs"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			size += info.Size()
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	validateJSON(t, repo)
	if got, want := debug.SetMemoryLimit(-1), memoryLimitFor(size); got != want {
		t.Errorf("memory limit after validating %d catalog bytes: %d, want %d", size, got, want)
	}
}
