package template

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// konfluxCatalog is konflux-operator's committed catalog in community-operators-prod v4.20: a semver
// package whose catalogs are all migrated to olm.csv.metadata (no olm.bundle.object, so no bundle holds
// its icon), with candidate channels of release candidates and stable channels of releases.
func konfluxCatalog(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(shareddata.Dir(t, "catalogs", "community-operators-prod-v4.20"), "konflux", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// konfluxTemplate is the semver template of the committed catalog: its release candidates as Candidate
// bundles, its releases as Stable ones, one channel per minor version.
func konfluxTemplate(t *testing.T, committed []byte) string {
	t.Helper()
	var candidate, stable []string
	for _, line := range strings.Split(string(committed), "\n") {
		img, ok := strings.CutPrefix(line, "image: ")
		if !ok {
			continue
		}
		if strings.Contains(img, "-rc.") {
			candidate = append(candidate, img)
		} else {
			stable = append(stable, img)
		}
	}
	if len(candidate)+len(stable) != 49 {
		t.Fatalf("%d candidate and %d stable bundles, want 49 in all", len(candidate), len(stable))
	}
	sort.Strings(candidate)
	sort.Strings(stable)
	var b strings.Builder
	b.WriteString("---\nSchema: olm.semver\nGenerateMajorChannels: false\nGenerateMinorChannels: true\nCandidate:\n  Bundles:\n")
	for _, img := range candidate {
		b.WriteString("  - Image: " + img + "\n")
	}
	b.WriteString("Stable:\n  Bundles:\n")
	for _, img := range stable {
		b.WriteString("  - Image: " + img + "\n")
	}
	return b.String()
}

// TestKonfluxMigratedSemverReproducesOffline: a semver package whose every catalog is migrated renders
// offline byte for byte from its committed catalogs: the bundles come from their olm.csv.metadata form,
// and the package's icon and description (its default channel head's, which that form does not hold)
// from the committed olm.package blob, the channel head being unchanged. A change that moves the head
// (a new release) cannot reuse them: offline, that bundle is not cached.
func TestKonfluxMigratedSemverReproducesOffline(t *testing.T) {
	committed := konfluxCatalog(t)
	tmpl := konfluxTemplate(t, committed)
	root := t.TempDir()
	ci := "---\nreviewers: [konflux-ci]\nfbc:\n  enabled: true\n  catalog_mapping:\n    - template_name: semver.yaml\n      type: olm.semver\n      catalog_names: [v4.20, v4.21]\n"
	files := map[string]string{
		"operators/konflux-operator/ci.yaml":                       ci,
		"operators/konflux-operator/catalog-templates/semver.yaml": tmpl,
		"catalogs/v4.20/konflux-operator/catalog.yaml":             string(committed),
		"catalogs/v4.21/konflux-operator/catalog.yaml":             string(committed),
	}
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cats := []Catalog{{Name: "v4.20", Dir: "catalogs/v4.20", MigrateLevel: MigrateCSVMetadata}, {Name: "v4.21", Dir: "catalogs/v4.21", MigrateLevel: MigrateCSVMetadata}}
	ctx := context.Background()
	jobs, _, err := Plan(root, cats, "konflux-operator")
	if err != nil || len(jobs) != 2 {
		t.Fatalf("plan: %d jobs, %v", len(jobs), err)
	}
	store := NewStore("")
	if err := SeedFromCommitted(ctx, store, root, cats, jobs); err != nil {
		t.Fatal(err)
	}
	src := &Images{Store: store, Offline: true}
	for _, j := range jobs {
		got, err := j.Render(ctx, root, src)
		if err != nil {
			t.Fatalf("%s: %v", j.Output(), err)
		}
		if !bytes.Equal(got, committed) {
			t.Errorf("%s differs from the committed render:\n%s", j.Output(), firstDiff(committed, got))
		}
	}

	// A new release moves the stable-v0.2 head: offline it is not cached, and the error names it.
	newer := "quay.io/community-operator-pipeline-prod/konflux:0.2.9"
	p := filepath.Join(root, "operators", "konflux-operator", "catalog-templates", "semver.yaml")
	if err := os.WriteFile(p, []byte(tmpl+"  - Image: "+newer+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs[0].Render(ctx, root, src); err == nil || !strings.Contains(err.Error(), newer) {
		t.Errorf("a new head rendered offline: %v", err)
	}
}
