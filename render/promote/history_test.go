package promote

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/render/template"
)

// promoteSubject is an upstream promotion commit's subject: one package ("Promote operator <dir> to
// catalog version 4.Y.") or every package with strategy always ("Promote operators with ... to catalog
// version 4.Y").
var promoteSubject = regexp.MustCompile(`^Promote operators? (\S+) .*to catalog version (\d+\.\d+)`)

// TestPromoteOverUpstreamHistory replays every promotion commit of a community-operators-prod clone
// named by CATALOGBOT_RELEASE_UPSTREAM (skipped without it): the promotion runs on the parent's files of
// each package the commit promotes, and its ci.yaml and rendered catalog are compared with the commit's.
// A ci.yaml upstream changed only in the catalog list must come out byte for byte; a catalog must come
// out byte for byte unless upstream's is not the render of the parent's template: upstream copies the
// source catalog's file, which may have drifted from its template, or (a pull request merged long after
// it was opened) may have changed since.
//
//	CATALOGBOT_RELEASE_UPSTREAM=/path/to/community-operators-prod go test ./render/promote -run OverUpstreamHistory -v
func TestPromoteOverUpstreamHistory(t *testing.T) {
	repo := os.Getenv("CATALOGBOT_RELEASE_UPSTREAM")
	if repo == "" {
		t.Skip("CATALOGBOT_RELEASE_UPSTREAM names no clone of community-operators-prod")
	}
	if _, err := os.Stat(filepath.Join(repo, ".git")); err == nil {
		repo = filepath.Join(repo, ".git")
	}
	git := func(args ...string) ([]byte, error) {
		return exec.Command("git", append([]string{"--git-dir", repo}, args...)...).Output()
	}
	log, err := git("log", "--format=%H %s", "-i", "--grep=Promote operator")
	if err != nil {
		t.Fatal(err)
	}
	ci, cat := map[string]int{}, map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		hash, subject, _ := strings.Cut(line, " ")
		m := promoteSubject.FindStringSubmatch(subject)
		if m == nil {
			continue
		}
		pkgs := []string{m[1]}
		if m[1] == "with" {
			changed, _ := git("show", "--format=", "--name-only", hash, "--", "operators/*/ci.yaml")
			pkgs = nil
			for _, f := range strings.Fields(string(changed)) {
				pkgs = append(pkgs, strings.Split(f, "/")[1])
			}
		}
		for _, pkg := range pkgs {
			ciKind, catKind := replayPromotion(t, git, hash, pkg, "v"+m[2])
			ci[ciKind]++
			cat[catKind]++
			id := hash[:9] + " " + pkg
			t.Logf("%s: ci.yaml %s; catalog %s", id, ciKind, catKind)
			if ciKind == ciDiffers || ciKind == ciError {
				t.Errorf("%s: ci.yaml %s", id, ciKind)
			}
			if catKind == catDiffers || catKind == catNone {
				t.Errorf("%s: catalog %s", id, catKind)
			}
		}
	}
	t.Logf("ci.yaml: %v", ci)
	t.Logf("catalogs: %v", cat)
}

// The outcomes of a replayed promotion.
const (
	ciIdentical  = "byte for byte upstream's"
	ciRewritten  = "upstream's writer rewrote lines it did not change; ours reads the same and changes only the list"
	ciDiffers    = "differs where upstream changed only the list"
	ciError      = "refused"
	catIdentical = "byte for byte upstream's"
	catDiffers   = "differs"
	catStale     = "differs: upstream's is not the parent's source catalog either (its pull request copied that file as it was when opened)"
	catDrift     = "differs: the parent's source catalog, which upstream copied, is not the render of its template either (drift upstream)"
	catNone      = "not rendered"
)

// replayPromotion promotes pkg into catalog to at hash's parent and says how its ci.yaml and catalog
// compare with hash's.
func replayPromotion(t *testing.T, git func(...string) ([]byte, error), hash, pkg, to string) (string, string) {
	t.Helper()
	parent := hash + "^"
	root := t.TempDir()
	put := func(name string) bool {
		data, err := git("show", parent+":"+name)
		if err != nil {
			return false
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		return os.MkdirAll(filepath.Dir(p), 0o755) == nil && os.WriteFile(p, data, 0o644) == nil
	}
	files, _ := git("ls-tree", "-r", "--name-only", parent, "operators/"+pkg+"/ci.yaml", "operators/"+pkg+"/catalog-templates/")
	for _, f := range strings.Fields(string(files)) {
		put(f)
	}
	dirs, _ := git("ls-tree", "--name-only", parent, "catalogs/")
	names := map[string]bool{to: true}
	for _, d := range strings.Fields(string(dirs)) {
		names[path.Base(d)] = true
		put(d + "/" + pkg + "/" + template.RenderedFile)
	}
	ctx := context.Background()
	cats, err := detectedCatalogs(ctx, root, names)
	if err != nil {
		t.Logf("%s %s: detecting the configuration: %v", hash[:9], pkg, err)
		return ciError, catNone
	}
	p, err := Plan(root, cats, to, pkg, Config{})
	if err != nil || len(p.Packages) != 1 {
		var ds any
		if p != nil {
			ds = p.Diagnostics
		}
		t.Logf("%s %s: %v %v", hash[:9], pkg, err, ds)
		return ciError, catNone
	}
	pk := p.Packages[0]
	want, _ := git("show", hash+":"+pk.CI.File)
	ciKind := compareCI(git, parent, hash, pk.CI, want)
	if ciKind == ciDiffers {
		t.Logf("%s %s: ci.yaml\n--- ours\n%s--- upstream\n%s", hash[:9], pkg, pk.CI.After, want)
	}
	store := template.NewStore("")
	if err := template.SeedFromCommitted(ctx, store, root, cats, p.Jobs()); err != nil {
		t.Logf("%s %s: seed: %v", hash[:9], pkg, err)
		return ciKind, catNone
	}
	src := &template.Images{Store: store, Offline: true}
	results := p.Render(ctx, src, 1, io.Discard)
	if ds := template.Diagnostics(root, results, false); len(ds) > 0 {
		t.Logf("%s %s: render: %v", hash[:9], pkg, ds[0])
		return ciKind, catNone
	}
	wantCat, _ := git("show", hash+":"+pk.Job.Output())
	if bytes.Equal(results[0].Data, wantCat) {
		return ciKind, catIdentical
	}
	// upstream copies the source catalog's file: say why that copy is not our render
	source := pk.Job
	source.Catalog, source.OPMVersion = p.Source, p.Source.OPMVersionOf(pkg)
	copied, _ := git("show", parent+":"+source.Output())
	if !bytes.Equal(copied, wantCat) {
		return ciKind, catStale
	}
	if again, err := source.Render(ctx, root, src); err == nil && !bytes.Equal(again, copied) {
		return ciKind, catDrift
	}
	return ciKind, catDiffers
}

// compareCI says how the promotion's ci.yaml edit c compares with upstream's file want at hash: the
// same bytes; upstream rewrote lines the promotion keeps (upstream removed a line the promotion did not
// change) and the two read the same; or they differ.
func compareCI(git func(...string) ([]byte, error), parent, hash string, c Change, want []byte) string {
	if bytes.Equal(c.After, want) {
		return ciIdentical
	}
	var ours, theirs any
	if yaml.Unmarshal(c.After, &ours) != nil || yaml.Unmarshal(want, &theirs) != nil || !reflect.DeepEqual(ours, theirs) {
		return ciDiffers
	}
	kept := map[string]bool{}
	for _, l := range splitLines(c.After) {
		kept[l] = true
	}
	diff, _ := git("diff", "-U0", parent, hash, "--", c.File)
	for _, l := range strings.Split(string(diff), "\n") {
		if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") && kept[l[1:]] {
			return ciRewritten
		}
	}
	return ciDiffers
}

// detectedCatalogs are community-operators-prod's catalogs of names under root as its configuration
// would say (catalogbot init's detection): catalogs/<name>, olm.csv.metadata from v4.17 on (upstream's
// Makefile), the opm the committed catalogs are the render of, the package a directory holds.
func detectedCatalogs(ctx context.Context, root string, names map[string]bool) ([]template.Catalog, error) {
	var out []template.Catalog
	for n := range names {
		c := template.Catalog{Name: n, Dir: "catalogs/" + n}
		if minor(n) >= 17 {
			c.MigrateLevel = template.MigrateCSVMetadata
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return minor(out[i].Name) < minor(out[j].Name) })
	d, err := template.Detect(ctx, root, out)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].OPMVersion, out[i].Packages = d.OPMVersion, d.Packages
	}
	return out, nil
}

// minor is Y of a catalog named v4.Y (-1 for another name).
func minor(name string) int {
	y, err := strconv.Atoi(strings.TrimPrefix(name, "v4."))
	if err != nil {
		return -1
	}
	return y
}
