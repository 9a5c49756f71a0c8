package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/build/bundleimage"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/reftools"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// cliResult is what one command line printed and its exit code.
type cliResult struct {
	stdout, stderr string
	code           int
}

// catalogbotCLI runs catalogbot with args and stdin as main does.
func catalogbotCLI(t *testing.T, stdin []byte, args ...string) cliResult {
	t.Helper()
	root := newRootCmd()
	var stdout, stderr bytes.Buffer
	root.SetArgs(args)
	root.SetIn(bytes.NewReader(stdin))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	started := false
	markStarted(root, &started)
	err := root.ExecuteContext(t.Context())
	if err != nil && !started {
		err = diag.UsageError(fmt.Errorf("%w (see catalogbot help)", err))
	}
	code := exitCode(&stderr, err)
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// opmCLI runs opm with args and stdin in dir, with a container policy that lets it pull from the test
// registry; stderr is cut to opm's message (the text after "Error: ", without the usage).
func opmCLI(t *testing.T, opm, dir string, stdin []byte, args ...string) cliResult {
	t.Helper()
	env := reftools.OPMEnv(t, t.TempDir())
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, opm, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("opm timed out: %s", stderr.Bytes())
	}
	r := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		r.code = 1
		if i := strings.Index(r.stderr, "Error: "); i >= 0 {
			r.stderr = r.stderr[i+len("Error: "):]
		}
		r.stderr, _, _ = strings.Cut(r.stderr, "\nUsage:\n")
		r.stderr = strings.TrimSuffix(r.stderr, "\n")
	}
	return r
}

// sameAsOPM runs `opm ARGS` and `catalogbot ARGS` (opm's "alpha" dropped) in dir and requires the same
// verdict: the same stdout when both succeed; when both fail, catalogbot's message holds opm's and its exit
// code says the template (1) or the command line (2) is wrong.
func sameAsOPM(t *testing.T, opm, dir string, stdin []byte, args ...string) {
	t.Helper()
	sameAsOPMArgs(t, opm, dir, stdin, append([]string{"alpha"}, args...), args, true)
}

// sameAsOPMArgs is sameAsOPM with opm's command line and catalogbot's each written out; without
// messages, a refusal's wording is not compared (opm v1.46.0 logs its own, catalogbot words v1.73.0's).
func sameAsOPMArgs(t *testing.T, opm, dir string, stdin []byte, opmArgs, args []string, messages bool) {
	t.Helper()
	want := opmCLI(t, opm, dir, stdin, opmArgs...)
	t.Chdir(dir)
	got := catalogbotCLI(t, stdin, args...)
	switch {
	case want.code == 0 && got.code != 0:
		t.Fatalf("opm accepts, catalogbot refuses (exit %d): %s", got.code, got.stderr)
	case strings.Contains(want.stderr, "panic: "):
		// opm crashes (a null entry in a basic template); catalogbot must refuse it as the template's fault.
		if got.code != 1 {
			t.Errorf("opm panics; catalogbot exits %d, want 1: %s", got.code, got.stderr)
		}
	case want.code != 0 && got.code == 0:
		t.Fatalf("opm refuses (%s), catalogbot accepts", want.stderr)
	case want.code == 0:
		if got.stdout != want.stdout {
			t.Errorf("stdout differs from opm's:\n--- opm\n%s\n--- catalogbot\n%s", want.stdout, got.stdout)
		}
	default:
		// A registry's answer is worded by each side's registry client: the message is opm's up to it.
		want.stderr, _, _ = strings.Cut(want.stderr, ": failed to pull image ")
		if messages && !strings.Contains(got.stderr, want.stderr) {
			t.Errorf("message differs:\nopm:        %q\ncatalogbot: %q", want.stderr, got.stderr)
		}
		if got.code != 1 && got.code != 2 {
			t.Errorf("exit code %d, want 1 (template) or 2 (usage): %s", got.code, got.stderr)
		}
	}
}

// TestRenderTemplateMatchesOPM runs the same command lines through opm alpha render-template v1.73.0 and
// catalogbot render-template: files, standard input, TYPE with and without FILE, every output format,
// the migration, and command lines and templates opm refuses. Bundles come from a local registry.
func TestRenderTemplateMatchesOPM(t *testing.T) {
	opm := reftools.OPM(t)
	dir, semverT, basicT := templateFixtures(t)
	for _, format := range []string{"json", "yaml", "mermaid"} {
		for name, c := range map[string]struct {
			stdin []byte
			args  []string
		}{
			"file-detected":       {args: []string{"semver.yaml"}},
			"type-and-file":       {args: []string{"semver", "semver.yaml"}},
			"basic-file":          {args: []string{"basic.yaml"}},
			"stdin-detected":      {stdin: basicT},
			"type-and-stdin":      {stdin: semverT, args: []string{"semver"}},
			"type-and-dash":       {stdin: basicT, args: []string{"basic", "-"}},
			"migrated":            {args: []string{"--migrate-level", "bundle-object-to-csv-metadata", "basic.yaml"}},
			"wrong-type":          {args: []string{"basic", "semver.yaml"}},
			"unknown-schema":      {args: []string{"unknown-schema.yaml"}},
			"missing-image":       {args: []string{"missing-image.yaml"}},
			"type-named-file":     {args: []string{"semver"}, stdin: basicT},
			"no-such-file":        {args: []string{"nosuch.yaml"}},
			"invalid-type":        {args: []string{"fancy", "semver.yaml"}},
			"bad-migrate-level":   {args: []string{"--migrate-level", "everything", "semver.yaml"}},
			"empty-stdin":         {},
			"three-arguments":     {args: []string{"semver", "semver.yaml", "x"}},
			"unknown-output-flag": {args: []string{"-o", "xml", "semver.yaml"}},
			"bundle-with-fields":  {args: []string{"bundle-with-fields.yaml"}},
		} {
			t.Run(format+"/"+name, func(t *testing.T) {
				args := append([]string{"render-template", "--use-http", "-o", format}, c.args...)
				sameAsOPM(t, opm, dir, c.stdin, args...)
			})
		}
	}
}

// TestRenderTemplateMatchesOPMv1_46_0 holds `render-template --opm-version v1.46.0 TYPE FILE` to opm
// v1.46.0's `alpha render-template TYPE FILE` (JSON and YAML; mermaid for semver, the only type v1.46.0
// draws), with and without the migration, and to its refusals.
func TestRenderTemplateMatchesOPMv1_46_0(t *testing.T) {
	opm := reftools.OPMv1_46_0(t)
	dir, _, _ := templateFixtures(t)
	for _, c := range []struct {
		typ, file string
		formats   []string
	}{
		{"semver", "semver.yaml", []string{"json", "yaml", "mermaid"}},
		{"basic", "basic.yaml", []string{"json", "yaml"}},
		{"semver", "missing-image.yaml", []string{"json"}},
		{"basic", "bundle-with-fields.yaml", []string{"json"}},
		{"basic", "semver.yaml", []string{"json"}},
	} {
		for _, format := range c.formats {
			for _, level := range []string{"", "bundle-object-to-csv-metadata"} {
				t.Run(c.file+"/"+format+"/"+level, func(t *testing.T) {
					opmArgs := []string{"alpha", "render-template", c.typ, "--use-http", "-o", format}
					args := []string{"render-template", "--opm-version", "v1.46.0", "--use-http", "-o", format}
					if level != "" {
						opmArgs = append(opmArgs, "--migrate-level", level)
						args = append(args, "--migrate-level", level)
					}
					sameAsOPMArgs(t, opm, dir, nil, append(opmArgs, c.file), append(args, c.typ, c.file), false)
				})
			}
		}
	}
}

// templateFixtures pushes real bundles to a local registry and writes templates naming them into a temp
// dir: a semver template, a basic one (returned too, for stdin), and templates opm refuses.
func templateFixtures(t *testing.T) (dir string, semverT, basicT []byte) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	reg := registrytest.New(t, nil)
	refs := map[string]string{}
	for _, b := range []string{"etcd/0.9.2", "etcd/0.9.4", "grafana-operator/5.22.0", "grafana-operator/5.22.2", "grafana-operator/5.24.0"} {
		pkg, version, _ := strings.Cut(b, "/")
		ref := reg.Host + "/bundles/" + pkg + ":v" + version
		if _, err := bundleimage.Push(t.Context(), shareddata.Dir(t, "bundles", pkg, version), ref); err != nil {
			t.Fatal(err)
		}
		refs[b] = ref
	}
	dir = t.TempDir()
	write := func(file, text string) []byte {
		for b, ref := range refs {
			text = strings.ReplaceAll(text, "{"+b+"}", ref)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return []byte(text)
	}
	semverT = write("semver.yaml", `schema: olm.semver
generateMajorChannels: true
candidate:
  bundles:
  - image: {grafana-operator/5.22.0}
  - image: {grafana-operator/5.22.2}
  - image: {grafana-operator/5.24.0}
stable:
  bundles:
  - image: {grafana-operator/5.22.0}
  - image: {grafana-operator/5.24.0}
`)
	basicT = write("basic.yaml", `schema: olm.template.basic
entries:
- {schema: olm.package, name: etcd, defaultChannel: alpha}
- schema: olm.channel
  package: etcd
  name: alpha
  entries:
  - {name: etcdoperator.v0.9.4, replaces: etcdoperator.v0.9.2}
  - {name: etcdoperator.v0.9.2}
- {schema: olm.bundle, image: {etcd/0.9.2}}
- {schema: olm.bundle, image: {etcd/0.9.4}}
- schema: olm.deprecations
  package: etcd
  entries:
  - {reference: {schema: olm.bundle, name: etcdoperator.v0.9.2}, message: old}
`)
	write("unknown-schema.yaml", "schema: olm.template.fancy\n")
	write("missing-image.yaml", "schema: olm.semver\nstable:\n  bundles:\n  - image: "+reg.Host+"/bundles/nosuch:v1\n")
	write("semver", "schema: olm.semver\n")
	write("bundle-with-fields.yaml", "schema: olm.template.basic\nentries:\n- {schema: olm.bundle, image: "+refs["etcd/0.9.4"]+", properties: [{type: olm.package, value: {packageName: etcd, version: 0.9.4}}]}\n")
	return dir, semverT, basicT
}

// TestRenderKeepsPinnedOPM: catalogs.opmVersion reaches `catalogbot render` and its --check. Pinned to
// v1.46.0 (community-operators-prod's opm), a semver package renders the channels upstream committed;
// re-pinned to v1.73.0 the same catalogs drift; an opm catalogbot does not reproduce is a configuration
// error on its line, not a render with another opm's rules.
func TestRenderKeepsPinnedOPM(t *testing.T) {
	repo := communityRepo(t)
	pin := func(v string) {
		cfg := strings.Replace(communityConfig, "  migrateFrom: v4.17\n", "  migrateFrom: v4.17\n  opmVersion: "+v+"\n", 1)
		if err := os.WriteFile(filepath.Join(repo, ".catalogbot.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	seed := communityRepo(t)
	base := []string{"render", "--repo", repo, "--offline", "--seed-from", seed, "--template-cache-dir", t.TempDir(), "--package", "openshift-integration-operator"}
	file := filepath.Join(repo, "catalogs", "v4.19", "openshift-integration-operator", "catalog.yaml")
	committed, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}

	pin("v1.46.0")
	if r := catalogbotCLI(t, nil, base...); r.code != 0 {
		t.Fatalf("render pinned to v1.46.0 failed (%d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	rendered, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, gotRest, _ := bytes.Cut(rendered, []byte("\n---\n"))
	_, wantRest, _ := bytes.Cut(committed, []byte("\n---\n"))
	if !bytes.Equal(gotRest, wantRest) {
		t.Errorf("v1.46.0 did not render the committed channels and bundles")
	}
	if r := catalogbotCLI(t, nil, append(base, "--check")...); r.code != 0 {
		t.Errorf("check pinned to v1.46.0 after its render failed (%d):\n%s", r.code, r.stdout)
	}

	pin("v1.73.0")
	r := catalogbotCLI(t, nil, append(base, "--check")...)
	if r.code != 1 || !strings.Contains(r.stdout, "catalogs/v4.19/openshift-integration-operator/catalog.yaml") {
		t.Errorf("re-pinned to v1.73.0, the v1.46.0 render does not drift (exit %d):\n%s", r.code, r.stdout)
	}

	pin("v1.50.0")
	r = catalogbotCLI(t, nil, append(base, "--check")...)
	if r.code != 2 || !strings.Contains(r.stdout+r.stderr, "catalogs.opmVersion") || !strings.Contains(r.stdout+r.stderr, ".catalogbot.yaml:8:") {
		t.Errorf("an unsupported opm is not a configuration error on its line (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestRenderTemplateArgs reads TYPE and FILE as opm does: one argument is a TYPE when it names one (the
// template then comes from stdin), else the file; "-" and no FILE are stdin.
func TestRenderTemplateArgs(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		typ, file string
	}{
		{nil, "", "-"},
		{[]string{"semver"}, "semver", "-"},
		{[]string{"t.yaml"}, "", "t.yaml"},
		{[]string{"basic", "t.yaml"}, "basic", "t.yaml"},
		{[]string{"substitutes", "-"}, "substitutes", "-"},
		{[]string{"-o", "mermaid", "--migrate-level", "all", "--opm-version", "1.46.0", "semver", "t.yaml"}, "semver", "t.yaml"},
	} {
		o := parse(t, newRenderTemplateCmd, tc.args...)
		if o.typ != tc.typ || o.file != tc.file {
			t.Errorf("%q: type %q file %q, want %q %q", tc.args, o.typ, o.file, tc.typ, tc.file)
		}
	}
	o := parse(t, newRenderTemplateCmd, "-o", "yaml", "--migrate-level", "all", "--opm-version", "1.46.0", "--skip-tls")
	if o.output != "yaml" || o.migrateLevel != "all" || o.opmVersion != "1.46.0" || !o.skipTLSVerify {
		t.Errorf("flags: %+v", o)
	}
}
