package template

import (
	"context"
	"errors"
	"fmt"
	"github.com/catalogbot/catalogbot/config"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeRepo writes files (slash paths) into a new repository directory.
func writeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const ciFor = "fbc:\n  enabled: true\n  catalog_mapping:\n  - template_name: %s\n    type: olm.template.basic\n    catalog_names: [v4.18]\n"

var oneCatalog = []Catalog{{Name: "v4.18", Dir: "catalogs/v4.18"}}

// TestTemplateNameCannotLeaveTemplatesDir: a ci.yaml naming ../../secret as its template is refused on
// its line.
func TestTemplateNameCannotLeaveTemplatesDir(t *testing.T) {
	for _, name := range []string{"../../../etc/passwd", "../ci.yaml", "sub/t.yaml", `..\x.yaml`, ".."} {
		root := writeRepo(t, map[string]string{"operators/a/ci.yaml": strings.Replace(ciFor, "%s", `"`+strings.ReplaceAll(name, `\`, `\\`)+`"`, 1)})
		if _, _, err := Plan(root, oneCatalog, ""); err == nil || !strings.Contains(err.Error(), "operators/a/ci.yaml:4") {
			t.Errorf("template_name %q: want an error on ci.yaml line 4, got %v", name, err)
		}
	}
}

// TestTemplateSymlinkCannotLeaveRepository: a template that is a symlink to a file outside the
// repository is not read.
func TestTemplateSymlinkCannotLeaveRepository(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(outside, []byte("schema: olm.template.basic\nentries: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := writeRepo(t, map[string]string{"operators/a/ci.yaml": strings.Replace(ciFor, "%s", "t.yaml", 1)})
	if err := os.Symlink(outside, filepath.Join(root, "operators", "a", "catalog-templates", "t.yaml")); err != nil {
		if err := os.MkdirAll(filepath.Join(root, "operators", "a", "catalog-templates"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(root, "operators", "a", "catalog-templates", "t.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	jobs, _, err := Plan(root, oneCatalog, "")
	if err != nil || len(jobs) != 1 {
		t.Fatalf("plan: %v %v", jobs, err)
	}
	if _, err := jobs[0].Render(context.Background(), root, &Images{Store: NewStore(""), Offline: true}); err == nil {
		t.Fatal("a template outside the repository was read")
	}
}

// TestTemplateCannotWriteAnotherPackage: package a's template that renders package b's blobs would
// land in catalogs/<v>/a; it is refused.
func TestTemplateCannotWriteAnotherPackage(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"operators/a/ci.yaml": strings.Replace(ciFor, "%s", "t.yaml", 1),
		"operators/a/catalog-templates/t.yaml": "schema: olm.template.basic\nentries:\n- {schema: olm.package, name: b, defaultChannel: x}\n" +
			"- {schema: olm.channel, package: b, name: x, entries: []}\n",
	})
	jobs, _, err := Plan(root, oneCatalog, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = jobs[0].Render(context.Background(), root, &Images{Store: NewStore(""), Offline: true})
	if err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("want a refusal naming package b, got %v", err)
	}
}

// TestDeclaredDirectoryRendersOnlyItsPackage: catalogs.packages lets directory a hold package b (as
// upstream's konflux/ holds konflux-operator); it is an exact declaration, not a licence. a's template
// rendering c is refused, and so is another directory's template rendering b: it would land in a
// directory that is not b's (and in no declared one), beside b's own catalog files.
func TestDeclaredDirectoryRendersOnlyItsPackage(t *testing.T) {
	tmpl := func(pkg string) string {
		return "schema: olm.template.basic\nentries:\n- {schema: olm.package, name: " + pkg + ", defaultChannel: x}\n" +
			"- {schema: olm.channel, package: " + pkg + ", name: x, entries: []}\n"
	}
	for _, tc := range []struct{ dir, renders, want string }{
		{"a", "b", ""},
		{"a", "c", `"c"`},
		{"d", "b", `"b"`},
	} {
		root := writeRepo(t, map[string]string{
			"operators/" + tc.dir + "/ci.yaml":                  strings.Replace(ciFor, "%s", "t.yaml", 1),
			"operators/" + tc.dir + "/catalog-templates/t.yaml": tmpl(tc.renders),
		})
		cats := slices.Clone(oneCatalog)
		for i := range cats {
			cats[i].Packages = map[string]config.CatalogPackage{"a": {Package: "b"}}
		}
		jobs, _, err := Plan(root, cats, "")
		if err != nil || len(jobs) != 1 {
			t.Fatalf("plan: %v %v", jobs, err)
		}
		_, err = jobs[0].Render(context.Background(), root, &Images{Store: NewStore(""), Offline: true})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("directory %s rendering %s: %v, want %q", tc.dir, tc.renders, err, tc.want)
		}
	}
}

// TestHostileTemplatesFailFast: an alias bomb, deep nesting and an oversized template are refused
// quickly, with an error on the template.
func TestHostileTemplatesFailFast(t *testing.T) {
	bomb := "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
		"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n" +
		"g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\nschema: olm.semver\n"
	cases := map[string]string{
		"alias bomb": bomb,
		"deep":       "schema: olm.template.basic\nentries: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n",
		"oversized":  "schema: olm.template.basic\nentries: []\n#" + strings.Repeat("x", MaxTemplateSize),
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := Render(context.Background(), []byte(text), "t.yaml", &Images{Store: NewStore(""), Offline: true}, Options{})
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("want a template error, got %v", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

// TestSubstitutionInEveryChannel: a base in many channels (and listed as skipped by another entry) is
// substituted in each of them, and no channel keeps an edge to the base but the substitute's own skip.
func TestSubstitutionInEveryChannel(t *testing.T) {
	reg := newRegistry(t, "hawtio-operator/1.1.0")
	var b strings.Builder
	b.WriteString("schema: olm.template.substitutes\nentries:\n- {schema: olm.package, name: hawtio-operator, defaultChannel: c0}\n")
	const channels = 50
	for i := range channels {
		fmt.Fprintf(&b, "- {schema: olm.channel, package: hawtio-operator, name: c%d, entries: [{name: hawtio-operator.v1.0.0}, "+
			"{name: hawtio-operator.v1.0.5, replaces: hawtio-operator.v1.0.0}, {name: hawtio-operator.v1.0.9, replaces: hawtio-operator.v1.0.0, skips: [hawtio-operator.v1.0.5]}]}\n", i)
	}
	b.WriteString(fbcBundle("1.0.0", "") + fbcBundle("1.0.5", "") + fbcBundle("1.0.9", ""))
	fmt.Fprintf(&b, "substitutions:\n- {name: %q, base: hawtio-operator.v1.0.5}\n", reg.digest["hawtio-operator/1.1.0"])
	c, err := Render(context.Background(), []byte(b.String()), "t.yaml", source(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Channels) != channels {
		t.Fatalf("%d channels, want %d", len(c.Channels), channels)
	}
	for _, ch := range c.Channels {
		var subs int
		for _, e := range ch.Entries {
			if e.Name == "hawtio-operator.v1.1.0" {
				subs++
				if e.Replaces != "hawtio-operator.v1.0.0" || !slices.Equal(e.Skips, []string{"hawtio-operator.v1.0.5"}) {
					t.Errorf("channel %s: substitute entry %+v", ch.Name, e)
				}
				continue
			}
			if e.Replaces == "hawtio-operator.v1.0.5" || slices.Contains(e.Skips, "hawtio-operator.v1.0.5") {
				t.Errorf("channel %s: entry %s still leads to the base", ch.Name, e.Name)
			}
		}
		if subs != 1 {
			t.Errorf("channel %s: %d substitute entries, want 1", ch.Name, subs)
		}
	}
	if n := len(c.Bundles); n != 4 {
		t.Errorf("%d bundles, want the 3 entries and the substitute once", n)
	}
}

// TestHugeSubstitutionListFailsFast: a template of fifty thousand substitutions (within
// MaxTemplateSize) that reuse a base is refused at the second, on its line, after rendering one image;
// one past the size limit is refused unread.
func TestHugeSubstitutionListFailsFast(t *testing.T) {
	reg := newRegistry(t, "hawtio-operator/1.1.0")
	head := "schema: olm.template.substitutes\nentries:\n- {schema: olm.package, name: hawtio-operator, defaultChannel: c}\n" +
		"- {schema: olm.channel, package: hawtio-operator, name: c, entries: [{name: hawtio-operator.v1.0.0}]}\n" +
		fbcBundle("1.0.0", "") + "substitutions:\n"
	item := fmt.Sprintf("- {name: %q, base: hawtio-operator.v1.0.0}\n", reg.digest["hawtio-operator/1.1.0"])
	src := &countingSource{Source: source(t)}
	text := head + strings.Repeat(item, 50000)
	_, err := Render(context.Background(), []byte(text), "t.yaml", src, Options{})
	var te *Error
	if !errors.As(err, &te) || te.Line != 14 || !strings.Contains(te.Msg, "cannot reuse the same substitution base") {
		t.Fatalf("want the reused base refused on line 14, got %v", err)
	}
	if src.n != 1 {
		t.Errorf("%d images rendered, want 1", src.n)
	}
	big := head + strings.Repeat(item, MaxTemplateSize/len(item)+1)
	if _, err := Render(context.Background(), []byte(big), "t.yaml", src, Options{}); !errors.As(err, &te) || !strings.Contains(te.Msg, "larger than") {
		t.Fatalf("want the oversized template refused, got %v", err)
	}
	if src.n != 1 {
		t.Errorf("the oversized template rendered images")
	}
}

// countingSource counts the bundles asked of Source.
type countingSource struct {
	Source
	n int
}

func (c *countingSource) Bundle(ctx context.Context, image string, csvMetadata bool) (*Bundle, error) {
	c.n++
	return c.Source.Bundle(ctx, image, csvMetadata)
}

// A package's committed render is a symbolic link to a file with the very bytes the template renders (an
// .indexignore'd copy, say): the drift gate reads committed catalogs as every reader does, so it refuses
// the link (rule catalog-file-refused) instead of following it and finding no drift, as the loader and the
// image build refuse it.
func TestDriftGateRefusesCommittedSymlink(t *testing.T) {
	rendered := []byte("---\nschema: olm.package\nname: foo\n")
	root := writeRepo(t, map[string]string{"catalogs/v4.19/foo/.indexignore": "copy.yaml\n", "catalogs/v4.19/foo/copy.yaml": string(rendered)})
	job := Job{Package: "foo", Template: "operators/foo/catalog-templates/basic.yaml", Catalog: Catalog{Name: "v4.19", Dir: "catalogs/v4.19"}}
	if err := os.Symlink("copy.yaml", filepath.Join(root, filepath.FromSlash(job.Output()))); err != nil {
		t.Fatal(err)
	}
	ds := Diagnostics(root, []Result{{Job: job, Data: rendered}}, true)
	if len(ds) != 1 || ds[0].Rule != "catalog-file-refused" || ds[0].File != job.Output() || !strings.Contains(ds[0].Message, "symbolic link") {
		t.Fatalf("diagnostics %v, want %s refused as a symbolic link", ds, job.Output())
	}
}
