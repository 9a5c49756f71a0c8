package release

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
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
		} else if kind == "differs (insertions only upstream)" || kind == "error" {
			t.Errorf("%s %s: %s", hash[:9], subject, kind)
		}
	}
	t.Logf("%v", counts)
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
	put := func(rev, name string) bool {
		data, err := git("show", rev+":"+name)
		if err != nil {
			return false
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		return os.MkdirAll(filepath.Dir(p), 0o755) == nil && os.WriteFile(p, data, 0o644) == nil
	}
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
	case same:
		return "identical"
	case onlyAdded:
		return "differs (insertions only upstream)"
	}
	return "differs (upstream rewrote lines)"
}
