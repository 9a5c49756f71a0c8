package template

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// communityCatalogs are the eleven catalogs of the shared data, as upstream renders them: from v4.17 on
// with the olm.csv.metadata migration.
func communityCatalogs() []Catalog {
	var out []Catalog
	for y := 12; y <= 22; y++ {
		c := Catalog{Name: fmt.Sprintf("v4.%d", y), Dir: fmt.Sprintf("catalogs/v4.%d", y)}
		if y >= 17 {
			c.MigrateLevel = MigrateCSVMetadata
		}
		out = append(out, c)
	}
	return out
}

// knownOutOfSync are the committed renders of the shared data that are not the render of the committed
// templates by opm v1.73.0, and why (the README repeats this).
var knownOutOfSync = func() map[string]string {
	m := map[string]string{
		"catalogs/v4.19/kubebrowser/catalog.yaml": "written by hand, not by opm: the package blob has `properties: []` (opm omits empty properties) and keys out of opm's order",
	}
	for y := 16; y <= 22; y++ {
		m[fmt.Sprintf("catalogs/v4.%d/ecr-secret-operator/catalog.yaml", y)] = "basic.yaml's channel gained v0.5.1 and v0.6.0 after the last committed render"
	}
	for y := 19; y <= 22; y++ {
		m[fmt.Sprintf("catalogs/v4.%d/openshift-integration-operator/catalog.yaml", y)] = "rendered by an older opm (the Makefile pins v1.46.0) whose semver template also lists the replaced bundle in skips; v1.73.0 leaves it out"
	}
	return m
}()

// templateAhead are the renders whose template names bundle images that no committed catalog has: the
// template moved on and the catalogs were not rendered again. Offline, they must fail as not cached.
var templateAhead = map[string]bool{}

func init() {
	for y := 18; y <= 22; y++ {
		templateAhead[fmt.Sprintf("catalogs/v4.%d/kubernaut-operator/catalog.yaml", y)] = true
	}
}

// TestOfflineRenderReproducesCommittedCatalogs is the cache's proof on real data: with no registry at
// all, every mapping of the 22 packages renders from the cache seeded by the committed catalogs, and
// each render is the committed catalogs/<catalog>/<package>/catalog.yaml byte for byte.
func TestOfflineRenderReproducesCommittedCatalogs(t *testing.T) {
	root := shareddata.Dir(t, "fbc-templates")
	ctx := context.Background()
	cats := communityCatalogs()
	jobs, warnings, err := Plan(root, cats, "")
	if err != nil {
		t.Fatal(err)
	}
	// rsct-operator's ci.yaml lists "4.22" next to v4.22.
	if want := `operators/rsct-operator/ci.yaml:6: catalog "4.22" is not one of the configured catalogs; rsct-fbc-template.yaml is not rendered into it`; len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", warnings, want)
	}
	store := NewStore("")
	if err := SeedFromCommitted(ctx, store, root, cats, jobs); err != nil {
		t.Fatal(err)
	}
	src := &Images{Store: store, Offline: true}
	pkgs := map[string]bool{}
	same := 0
	for _, j := range jobs {
		pkgs[j.Package] = true
		t.Run(j.Output(), func(t *testing.T) {
			got, err := j.Render(ctx, root, src)
			if templateAhead[j.Output()] {
				var te *Error
				if !errors.Is(err, ErrNotCached) || !errors.As(err, &te) || te.Line == 0 {
					t.Errorf("template names uncommitted bundles: want a not-cached error on a template line, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(j.Output())))
			if err != nil {
				t.Fatal(err)
			}
			if why, ok := knownOutOfSync[j.Output()]; ok {
				if bytes.Equal(got, want) {
					t.Errorf("listed as out of sync (%s) but reproduces", why)
				}
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("differs from the committed render:\n%s", firstDiff(want, got))
				return
			}
			same++
		})
	}
	if len(pkgs) != 22 {
		t.Errorf("planned %d packages, want 22", len(pkgs))
	}
	if want := len(jobs) - len(knownOutOfSync) - len(templateAhead); same != want && !t.Failed() {
		t.Errorf("%d renders reproduced, want %d", same, want)
	}
	t.Logf("%d jobs: %d reproduced byte for byte, %d committed out of sync, %d templates ahead of their catalogs", len(jobs), same, len(knownOutOfSync), len(templateAhead))
}

func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\ncommitted: %.300s\nrendered:  %.300s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(la), len(lb))
}
