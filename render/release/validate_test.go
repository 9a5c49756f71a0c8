package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// withConfig is fixture id's release with its release-config.yaml replaced by cfg.
func withConfig(t *testing.T, id, cfg string) *Release {
	t.Helper()
	f := loadFixture(t, id)
	root := copyDir(t, filepath.Join(f.dir, "before"))
	if err := os.WriteFile(filepath.Join(root, "operators", f.pkg, f.version, ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return releaseIn(t, f, root)
}

// Each refusal of issue 35 item 4 names its file and line (ed1800b0e: jumpstarter-operator's basic
// template; a8565d621: dotvirt-operator's semver template).
func TestValidateRefusesWithFileAndLine(t *testing.T) {
	const rc = "operators/jumpstarter-operator/0.9.0/release-config.yaml"
	for _, tc := range []struct {
		name, id, cfg string
		csv           string // the bundle's name, when not the fixture's
		file          string
		line          int
		msg           string
	}{
		{name: "unmapped template", id: "ed1800b0e", cfg: "catalog_templates:\n- template_name: basic.yaml\n  channels: [alpha]\n  replaces: jumpstarter-operator.v0.9.0-rc.2\n- template_name: v4.99.yaml\n  channels: [alpha]\n",
			file: rc, line: 5, msg: `template "v4.99.yaml" is not mapped`},
		{name: "template outside the package", id: "ed1800b0e", cfg: "catalog_templates:\n- template_name: ../../../ci.yaml\n  channels: [alpha]\n",
			file: rc, line: 2, msg: "is not mapped"},
		{name: "replaces target missing", id: "ed1800b0e", cfg: "catalog_templates:\n- template_name: basic.yaml\n  channels: [alpha]\n  replaces: jumpstarter-operator.v0.8.9\n",
			file: rc, line: 4, msg: `no channel has "jumpstarter-operator.v0.8.9"`},
		{name: "version already in the template", id: "ed1800b0e", cfg: "catalog_templates:\n- template_name: basic.yaml\n  channels: [alpha]\n",
			csv: "jumpstarter-operator.v0.8.1", file: "operators/jumpstarter-operator/catalog-templates/basic.yaml", line: 15, msg: "channel alpha already has an entry for jumpstarter-operator.v0.8.1"},
		{name: "semver channel", id: "a8565d621", cfg: "catalog_templates:\n- template_name: semver.yaml\n  channels: [stable]\n",
			file: "operators/dotvirt-operator/0.0.32/release-config.yaml", line: 3, msg: `channel "stable" is not one of`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := withConfig(t, tc.id, tc.cfg)
			if tc.csv != "" {
				r.Bundle.Name = tc.csv
			}
			ds := r.Validate()
			found := false
			for _, d := range ds {
				found = found || d.File == tc.file && d.Line == tc.line && strings.Contains(d.Message, tc.msg)
			}
			if !found {
				t.Fatalf("no diagnostic on %s:%d saying %q; got %v", tc.file, tc.line, tc.msg, ds)
			}
			if _, err := r.Apply(); err == nil {
				t.Errorf("Apply took a release Validate refuses")
			}
		})
	}
}

// A mapped template missing from the package is created with the bundle alone, so a replaces target is
// refused on its line; without replaces the template is created.
func TestValidateMissingTemplate(t *testing.T) {
	cfg := "catalog_templates:\n- template_name: basic.yaml\n  channels: [alpha]\n  replaces: jumpstarter-operator.v0.9.0-rc.2\n"
	r := withConfig(t, "ed1800b0e", cfg)
	if err := os.Remove(filepath.Join(r.Root, "operators/jumpstarter-operator/catalog-templates/basic.yaml")); err != nil {
		t.Fatal(err)
	}
	ds := r.Validate()
	if len(ds) != 1 || ds[0].Line != 4 || !strings.Contains(ds[0].Message, "does not exist yet") {
		t.Fatalf("got %v", ds)
	}
	if err := os.WriteFile(filepath.Join(r.Root, r.ConfigFile), []byte("catalog_templates:\n- template_name: basic.yaml\n  channels: [alpha]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := read(r.Root, r.Dir, upstreamPattern); err != nil {
		t.Fatal(err)
	} else if ds := r.Validate(); len(ds) > 0 {
		t.Fatalf("refused: %v", ds)
	}
}

// Attack: names in a release-config.yaml that would write YAML structure into the template (a line break
// starting a new entry, a flow mapping, a comment, a colon) are refused when read, or written as the one
// scalar they are: the template then has one more olm.bundle, and the channel's new entry replaces exactly
// the name written.
func TestAttackReleaseConfigInjectsTemplateStructure(t *testing.T) {
	for name, tc := range map[string]struct {
		replaces, want string // want "" = refused when read
	}{
		"line break":   {`"jumpstarter-operator.v0.9.0-rc.2\n- schema: olm.bundle\n  image: evil.example/x:1"`, ""},
		"flow mapping": {`"{name: evil, replaces: x}"`, "{name: evil, replaces: x}"},
		"comment":      {`"jumpstarter-operator.v0.9.0-rc.2 # - schema: olm.bundle"`, "jumpstarter-operator.v0.9.0-rc.2 # - schema: olm.bundle"},
		"colon":        {`"a: b"`, "a: b"},
		"quote":        {`"it's"`, "it's"},
	} {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, "ed1800b0e")
			root := copyDir(t, filepath.Join(f.dir, "before"))
			cfg := "catalog_templates:\n- template_name: basic.yaml\n  channels: [alpha]\n  replaces: " + tc.replaces + "\n"
			if err := os.WriteFile(filepath.Join(root, "operators", f.pkg, f.version, ConfigFile), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := read(root, "operators/"+f.pkg+"/"+f.version, upstreamPattern)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("read took replaces %s", tc.replaces)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r.Bundle.Name = f.csvName
			// edited regardless of Validate (which refuses the unknown replaces target): the writer itself
			// must not write structure
			before := readTestFile(t, filepath.Join(root, "operators", f.pkg, "catalog-templates", "basic.yaml"))
			out, err := EditBasic(before, r.Targets[0], r.Bundle)
			if err != nil {
				t.Fatal(err)
			}
			var old, now struct {
				Entries []struct {
					Schema  string
					Name    string
					Entries []map[string]string
				}
			}
			if err := yaml.Unmarshal(before, &old); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(out, &now); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if len(now.Entries) != len(old.Entries)+1 {
				t.Fatalf("%d entries, want %d:\n%s", len(now.Entries), len(old.Entries)+1, out)
			}
			alpha := now.Entries[1].Entries
			if last := alpha[len(alpha)-1]; last["replaces"] != tc.want || last["name"] != f.csvName || len(last) != 2 {
				t.Fatalf("new entry %v, want name %s replaces %q:\n%s", last, f.csvName, tc.want, out)
			}
		})
	}
}
