package shareddata

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// UpstreamPackages are the three packages of community-operators-prod's v4.20 catalog that
// UpstreamCheckout lays out, by directory: each was rendered upstream by a different opm or lives in a
// directory that is not its name.
var UpstreamPackages = map[string]string{
	"clusterpulse":    "clusterpulse",     // rendered with opm v1.46.0's semver rules (no icon, replaced head in skips)
	"kairos-operator": "kairos-operator",  // rendered with opm v1.73.0's
	"konflux":         "konflux-operator", // the directory is not the package's name, as upstream has it
}

// upstreamTemplates are the semver template settings that render each package's committed channels:
// the archetype its bundles are in and which channels are generated.
var upstreamTemplates = map[string]string{
	"clusterpulse":    "GenerateMajorChannels: true\nGenerateMinorChannels: false\n",
	"kairos-operator": "GenerateMajorChannels: true\nGenerateMinorChannels: false\n",
	"konflux":         "GenerateMajorChannels: false\nGenerateMinorChannels: true\n",
}

// UpstreamCheckout writes, in a new temporary directory, a template-driven checkout as
// community-operators-prod has it for three real packages of its v4.20 catalog (UpstreamPackages):
// operators/<dir>/ci.yaml mapping operators/<dir>/catalog-templates/semver.yaml to catalogs v4.20 and
// v4.21, and the committed render catalogs/<catalog>/<dir>/catalog.yaml (the real v4.20 file in both).
// The templates are rebuilt from the committed catalogs (upstream's are not part of the data): every
// bundle image, release candidates as Candidate and releases as Stable for konflux, Fast for
// clusterpulse, Candidate for kairos-operator. No .catalogbot.yaml is written.
func UpstreamCheckout(t testing.TB) string {
	t.Helper()
	src := Dir(t, "catalogs", "community-operators-prod-v4.20")
	root := t.TempDir()
	write := func(name, data string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for dir := range UpstreamPackages {
		committed, err := os.ReadFile(filepath.Join(src, dir, "catalog.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		write("operators/"+dir+"/ci.yaml", "---\nreviewers: ["+dir+"-maintainer]\nfbc:\n  enabled: true\n  catalog_mapping:\n"+
			"    - template_name: semver.yaml\n      type: olm.semver\n      catalog_names: [v4.20, v4.21]\n")
		write("operators/"+dir+"/catalog-templates/semver.yaml", upstreamTemplate(dir, committed))
		for _, c := range []string{"v4.20", "v4.21"} {
			write("catalogs/"+c+"/"+dir+"/catalog.yaml", string(committed))
		}
	}
	return root
}

// upstreamTemplate is the semver template of dir's committed catalog.
func upstreamTemplate(dir string, committed []byte) string {
	archetypes := map[string][]string{}
	for _, line := range strings.Split(string(committed), "\n") {
		img, ok := strings.CutPrefix(line, "image: ")
		if !ok {
			continue
		}
		a := map[string]string{"clusterpulse": "Fast", "kairos-operator": "Candidate"}[dir]
		if dir == "konflux" {
			a = "Stable"
			if strings.Contains(img, "-rc.") {
				a = "Candidate"
			}
		}
		archetypes[a] = append(archetypes[a], img)
	}
	var b strings.Builder
	b.WriteString("---\nSchema: olm.semver\n" + upstreamTemplates[dir])
	for _, a := range []string{"Candidate", "Fast", "Stable"} {
		if len(archetypes[a]) == 0 {
			continue
		}
		sort.Strings(archetypes[a])
		b.WriteString(a + ":\n  Bundles:\n")
		for _, img := range archetypes[a] {
			b.WriteString("  - Image: " + img + "\n")
		}
	}
	return b.String()
}
