package release

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/render/template"
)

// TestReleaseOverUpstreamHistory replays every "Add <package> <version> to FBC" commit of a
// community-operators-prod clone named by CATALOGBOT_RELEASE_UPSTREAM (skipped without it): the release
// runs on the parent's files and its templates are compared with the commit's. A commit whose template diff
// only adds lines must come out byte for byte, or be refused as already released (its bundle pull request
// had edited the template); the others (upstream's writer rewrote lines it did not change) are counted.
//
//	CATALOGBOT_RELEASE_UPSTREAM=/path/to/community-operators-prod go test ./render/release -run OverUpstreamHistory -v
func TestReleaseOverUpstreamHistory(t *testing.T) {
	repo := os.Getenv("CATALOGBOT_RELEASE_UPSTREAM")
	if repo == "" {
		t.Skip("CATALOGBOT_RELEASE_UPSTREAM names no clone of community-operators-prod")
	}
	git := func(args ...string) ([]byte, error) {
		return exec.Command("git", append([]string{"--git-dir", repo}, args...)...).Output()
	}
	if _, err := os.Stat(filepath.Join(repo, ".git")); err == nil {
		repo = filepath.Join(repo, ".git")
	}
	log, err := git("log", "--format=%H %s", "--grep=^Add .* to FBC")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		hash, subject, _ := strings.Cut(line, " ")
		f := strings.Fields(subject)
		if len(f) < 4 || f[0] != "Add" || f[3] != "to" {
			continue
		}
		kind := replayCommit(t, git, hash, f[1], f[2])
		counts[kind]++
		if why, ok := knownHistory[hash[:9]]; ok {
			t.Logf("%s %s: %s (%s)", hash[:9], subject, kind, why)
		} else if kind == "differs (insertions only upstream)" || kind == "error" || kind == "identical, catalogs differ" {
			t.Errorf("%s %s: %s", hash[:9], subject, kind)
		}
	}
	t.Logf("%v", counts)
}

// replayRender renders the catalogs hash changed from root (the parent's files with the release's
// templates) offline, the bundle from its directory at the parent, and compares them with hash's.
func replayRender(t *testing.T, git func(...string) ([]byte, error), hash, root, dir string, changes []Change) string {
	t.Helper()
	parent := hash + "^"
	for _, c := range changes {
		p := filepath.Join(root, filepath.FromSlash(c.File))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, c.After, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put := putter(git, root)
	files, _ := git("ls-tree", "-r", "--name-only", parent, dir+"/")
	for _, f := range strings.Fields(string(files)) {
		if !put(parent, f) {
			return "catalogs not rendered (bundle file missing from the clone)"
		}
	}
	pkg := path.Base(path.Dir(dir))
	changed, _ := git("show", "--format=", "--name-only", hash, "--", "catalogs/*/"+pkg+"/catalog.yaml")
	var cats []template.Catalog
	at := committed(git, hash)
	for _, f := range strings.Fields(string(changed)) {
		put(parent, f) // a catalog new in the commit has no parent file
		name := strings.Split(f, "/")[1]
		c := template.Catalog{Name: name, Dir: "catalogs/" + name, OPMVersion: template.DefaultOPMVersion}
		if at.Before(pipelineOPMChange) {
			c.OPMVersion = template.OPMv1_46_0
		}
		if v, err := semver.ParseTolerant(strings.TrimPrefix(name, "v")); err == nil && v.GTE(semver.MustParse("4.17.0")) && !at.Before(pipelineMigrates) {
			c.MigrateLevel = template.MigrateCSVMetadata
		}
		cats = append(cats, c)
	}
	if len(cats) == 0 {
		return "no catalog changed"
	}
	// every committed catalog of the package seeds the cache (a template may name a bundle only another
	// catalog holds)
	seedCats := slices.Clone(cats)
	all, _ := git("ls-tree", "--name-only", parent, "catalogs/")
	for _, d := range strings.Fields(string(all)) {
		name := path.Base(d)
		if !slices.ContainsFunc(cats, func(c template.Catalog) bool { return c.Name == name }) && put(parent, d+"/"+pkg+"/catalog.yaml") {
			seedCats = append(seedCats, template.Catalog{Name: name, Dir: d})
		}
	}
	ctx := context.Background()
	r, err := Load(ctx, root, dir, upstreamPattern)
	if err != nil {
		return "catalogs not rendered (bundle: " + err.Error() + ")"
	}
	jobs, _, err := r.Jobs(cats)
	if err != nil {
		t.Fatal(err)
	}
	store := template.NewStore("")
	if err := template.SeedFromCommitted(ctx, store, root, seedCats, jobs); err != nil {
		return "catalogs not rendered (seed: " + err.Error() + ")"
	}
	results := r.Render(ctx, jobs, &template.Images{Store: store, Offline: true}, 2, io.Discard)
	if ds := template.Diagnostics(root, results, false); len(ds) > 0 {
		t.Logf("%s: render: %v", hash[:9], ds[0])
		return "catalogs not rendered (a bundle the committed catalogs do not hold)"
	}
	for _, res := range results {
		want, err := git("show", hash+":"+res.Job.Output())
		if err != nil || !bytes.Equal(want, res.Data) {
			t.Logf("%s: %s differs", hash[:9], res.Job.Output())
			return "catalogs differ"
		}
	}
	return "catalogs identical"
}

// Upstream's release pipeline (operator-pipelines' add_bundle_to_fbc) rendered with what its image and
// code held at the time, which its history dates: catalogs from v4.17 on migrated to olm.csv.metadata
// since 4e1fc770 ("FBC auto-release uses migration option for 4.17+ catalogs"), and opm v1.46.0 until
// f3b3522d ("update OPM version", to v1.71.0, which renders templates as v1.73.0 does; v1.46.0's semver
// template links channels otherwise and leaves the package's description and icon out).
var (
	pipelineMigrates  = time.Date(2025, 5, 15, 12, 3, 19, 0, time.UTC)
	pipelineOPMChange = time.Date(2026, 7, 14, 8, 48, 44, 0, time.UTC)
)

// committed is when hash was committed (the zero time when git cannot tell).
func committed(git func(...string) ([]byte, error), hash string) time.Time {
	out, err := git("show", "-s", "--format=%cI", hash)
	if err != nil {
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
	if err != nil {
		return time.Time{}
	}
	return at
}

// putter writes a file of a revision under root (false when the clone does not have it).
func putter(git func(...string) ([]byte, error), root string) func(rev, name string) bool {
	return func(rev, name string) bool {
		data, err := git("show", rev+":"+name)
		if err != nil {
			return false
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		return os.MkdirAll(filepath.Dir(p), 0o755) == nil && os.WriteFile(p, data, 0o644) == nil
	}
}

// knownHistory are the commits the release does not reproduce, and why.
var knownHistory = map[string]string{
	"b7e5f72c5": "written before upstream's writer moved long values to the next line, into a template with no long line yet to tell",
	"004f7d031": "its ci.yaml has fbc.catalog_mapping twice: upstream's reader takes the last, catalogbot's (render/template.ParseCI) the first",
}

// replayCommit releases pkg version at hash's parent and says how it compares with hash.
func replayCommit(t *testing.T, git func(...string) ([]byte, error), hash, pkg, version string) string {
	t.Helper()
	dir := path.Join("operators", pkg)
	names, err := git("show", "--format=", "--name-only", hash, "--", dir+"/catalog-templates/")
	if err != nil || len(bytes.TrimSpace(names)) == 0 {
		return "no template change"
	}
	parent := hash + "^"
	root := t.TempDir()
	put := putter(git, root)
	if !put(parent, dir+"/ci.yaml") || !put(parent, dir+"/"+version+"/"+ConfigFile) {
		return "no release-config.yaml or ci.yaml at the parent"
	}
	files := strings.Fields(string(names))
	onlyAdded := true
	for _, name := range files {
		put(parent, name)
		stat, _ := git("diff", "--numstat", parent, hash, "--", name)
		if f := strings.Fields(string(stat)); len(f) < 2 || f[1] != "0" {
			onlyAdded = false
		}
	}
	manifests, _ := git("ls-tree", "--name-only", parent, dir+"/"+version+"/manifests/")
	csvName := ""
	for _, m := range strings.Fields(string(manifests)) {
		if strings.Contains(m, "clusterserviceversion") {
			data, _ := git("show", parent+":"+m)
			var csv struct {
				Metadata struct{ Name string }
			}
			if yaml.Unmarshal(data, &csv) == nil {
				csvName = csv.Metadata.Name
			}
		}
	}
	if csvName == "" {
		return "no ClusterServiceVersion at the parent"
	}
	r, err := read(root, dir+"/"+version, upstreamPattern)
	if err != nil {
		return "refused when read"
	}
	r.Bundle.Name = csvName
	changes, err := r.Apply()
	if err != nil {
		if onlyAdded && strings.Contains(err.Error(), "already") {
			return "refused: already in the template"
		}
		if onlyAdded {
			t.Logf("%s: %v", hash[:9], err)
			return "error"
		}
		t.Logf("%s: refused: %v", hash[:9], err)
		return "refused (upstream rewrote lines)"
	}
	same := len(changes) == len(files)
	for _, c := range changes {
		want, err := git("show", hash+":"+c.File)
		same = same && err == nil && bytes.Equal(want, c.After)
	}
	switch {
	case same && os.Getenv("CATALOGBOT_RELEASE_RENDER") != "":
		return "identical, " + replayRender(t, git, hash, root, r.Dir, changes)
	case same:
		return "identical"
	case onlyAdded:
		return "differs (insertions only upstream)"
	}
	return "differs (upstream rewrote lines)"
}
