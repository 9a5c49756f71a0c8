package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

// writeFiles writes path -> content under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRenderLocalReferencesStayInRepository renders local references of a config in a git work tree's
// subdirectory: what resolves inside the work tree renders; an absolute path, a ../ escape or a symlink
// leading out is an error on the reference's line, and the catalog outside is never read.
func TestRenderLocalReferencesStayInRepository(t *testing.T) {
	files, want := twoPackages(t)
	tmp := t.TempDir()
	repo, outside := filepath.Join(tmp, "repo"), filepath.Join(tmp, "host")
	catalogFiles := map[string]string{}
	for p, c := range files {
		catalogFiles["fbc/"+p] = c
	}
	writeFiles(t, repo, catalogFiles)
	writeFiles(t, outside, catalogFiles)
	writeFiles(t, repo, map[string]string{"config/catalog.yaml": "", "fbc-in/.keep": ""})
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"config/out":        filepath.Join(outside, "fbc"), // absolute, outside
		"config/up":         "../../host/fbc",              // relative, outside
		"config/in":         "../fbc",                      // relative, inside: fine
		"fbc-in/commons":    filepath.Join(outside, "fbc"), // a symlink further down the path
		"config/loop":       "loop",
		"config/dangling":   "../nothing",
		"config/throughout": "up/listener-operator",
	} {
		if err := os.Symlink(target, filepath.Join(repo, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	base := filepath.Join(repo, "config")

	for _, tc := range []struct {
		image string
		rule  string // "" renders
		msg   string
	}{
		{image: "../fbc"},
		{image: "./in"},
		{image: "./../config/in"},
		{image: filepath.Join(repo, "fbc")},
		{image: filepath.Join(outside, "fbc"), rule: ruleOutsideRoot, msg: "is outside the repository"},
		{image: "../../host/fbc", rule: ruleOutsideRoot, msg: "is outside the repository"},
		{image: "./../../host/fbc", rule: ruleOutsideRoot, msg: "is outside the repository"},
		{image: "/etc", rule: ruleOutsideRoot, msg: "is outside the repository"},
		{image: "./out", rule: ruleOutsideRoot, msg: "leads through a symlink outside the repository"},
		{image: "./up", rule: ruleOutsideRoot, msg: "leads through a symlink outside the repository"},
		{image: "../fbc-in/commons", rule: ruleOutsideRoot, msg: "leads through a symlink outside the repository"},
		{image: "./throughout", rule: ruleOutsideRoot, msg: "leads through a symlink outside the repository"},
		{image: "./loop", rule: "directory-not-found", msg: "cannot be resolved"},
		{image: "./dangling", rule: "directory-not-found", msg: "does not exist"},
	} {
		t.Run(tc.image, func(t *testing.T) {
			cfg, ds := ParseConfig([]byte("name: catalog\nreferences:\n- name: listener-operator\n  image: "+tc.image+"\n"), "config/catalog.yaml")
			if len(ds) > 0 {
				t.Fatal(ds)
			}
			opts := testOptions(t)
			opts.BaseDir = base
			out, ds, err := Render(context.Background(), cfg, opts)
			if tc.rule == "" {
				if err != nil {
					t.Fatalf("Render: %v %v", err, ds)
				}
				dir := t.TempDir()
				if err := out.Write(dir, "yaml"); err != nil {
					t.Fatal(err)
				}
				if got := readAll(t, dir)["catalog/listener-operator/index.yaml"]; got != want["listener-operator"] {
					t.Errorf("rendered %q", got)
				}
				return
			}
			if err == nil || diag.CategoryOf(err) != diag.Invalid || len(ds) != 1 {
				t.Fatalf("got %v (%s) %v, want one %s diagnostic", err, diag.CategoryOf(err), ds, tc.rule)
			}
			d := ds[0]
			if d.Rule != tc.rule || d.File != "config/catalog.yaml" || d.Line != 3 || !strings.Contains(d.Message, tc.msg) {
				t.Errorf("got %s:%d %s %q, want config/catalog.yaml:3 %s %q", d.File, d.Line, d.Rule, d.Message, tc.rule, tc.msg)
			}
			// What a path outside resolves to is never told.
			if strings.Contains(d.Message, outside) && !strings.Contains(tc.image, outside) || strings.Contains(err.Error(), "host/fbc/listener") {
				t.Errorf("the message names what lies outside: %s", d.Message)
			}
		})
	}
}

// TestRenderLocalRootOption: an explicit Root wins over the git work tree, and without a work tree the
// config's directory is the root.
func TestRenderLocalRootOption(t *testing.T) {
	files, _ := twoPackages(t)
	tmp := t.TempDir()
	catalogFiles := map[string]string{}
	for p, c := range files {
		catalogFiles["fbc/"+p] = c
	}
	writeFiles(t, tmp, catalogFiles)
	cfg := config(t, "catalog", Reference{Name: "listener-operator", Image: "../fbc"})
	opts := testOptions(t)
	opts.BaseDir = filepath.Join(tmp, "sub")
	if err := os.Mkdir(opts.BaseDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ds, err := Render(context.Background(), cfg, opts); err == nil || len(ds) != 1 || ds[0].Rule != ruleOutsideRoot {
		t.Errorf("no work tree, root is the config's directory: got %v %v", err, ds)
	}
	opts.Root = tmp
	if _, ds, err := Render(context.Background(), cfg, opts); err != nil {
		t.Errorf("root %s: %v %v", tmp, err, ds)
	}
}

// TestRenderAllowedRegistries: with an allow-list, a reference on another registry is an error on its
// line and that registry gets no request; references on listed registries render.
func TestRenderAllowedRegistries(t *testing.T) {
	allowed, other := newTestRegistry(t), newTestRegistry(t)
	files, _ := twoPackages(t)
	okRef, _ := allowed.push(t, "org/catalog:v1", indexImage(t, files))
	badRef, _ := other.push(t, "org/catalog:v1", indexImage(t, files))
	before := other.requests.Load()
	cfg := config(t, "catalog",
		Reference{Name: "commons-operator", Image: okRef},
		Reference{Name: "listener-operator", Image: badRef})
	opts := testOptions(t)
	opts.AllowedRegistries = []string{strings.ToUpper(allowed.Host), "quay.io"}
	_, ds, err := Render(context.Background(), cfg, opts)
	if err == nil || len(ds) != 1 || ds[0].Rule != "registry-not-allowed" || ds[0].Line != 5 ||
		!strings.Contains(ds[0].Message, "registry "+other.Host+" is not an allowed registry") {
		t.Fatalf("got %v %v", err, ds)
	}
	if n := other.requests.Load() - before; n != 0 {
		t.Errorf("the registry outside the list got %d requests", n)
	}
	if allowed.requests.Load() == 0 {
		t.Errorf("the allowed registry was not asked")
	}
	opts.AllowedRegistries = []string{"not a host!"}
	if _, _, err := Render(context.Background(), cfg, opts); err == nil || diag.CategoryOf(err) != diag.Usage {
		t.Errorf("bad allow-list: %v", err)
	}
}
