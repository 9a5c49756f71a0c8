package template

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/internal/reftools"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// TestMermaidMatchesOPMOnRealCatalogs draws every package of every real catalog directory (the shared
// template repository's 11 catalogs and the opm cases that opm loads) with WriteMermaid and with `opm
// alpha render-graph --draw-v0-semantics -p PACKAGE`, which uses the writer render-template -o mermaid
// uses, and requires the same bytes: real skips, skipRanges, replaces and deprecations, where the
// template cases are small. One package at a time: opm loads a directory's files in no fixed order and
// sorts channels with an unstable sort, so its graph of a whole many-package directory changes from run
// to run (a template is one input, in order, so render-template's is stable).
func TestMermaidMatchesOPMOnRealCatalogs(t *testing.T) {
	opm := reftools.OPM(t)
	dirs, err := filepath.Glob(filepath.Join(shareddata.Dir(t, "fbc-templates", "catalogs"), "v4.*"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := filepath.Glob(filepath.Join(shareddata.Dir(t, "opm-cases"), "*", "*", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, cases...)
	drawn := 0
	for _, dir := range dirs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		res, err := catalog.LoadDir(ctx, dir, catalog.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pkgs := map[string]bool{}
		for _, ch := range res.Catalog.Channels {
			pkgs[ch.Package] = true
		}
		names := make([]string, 0, len(pkgs))
		for p := range pkgs {
			names = append(names, p)
		}
		sort.Strings(names)
		for _, pkg := range names {
			t.Run(filepath.Base(filepath.Dir(dir))+"-"+filepath.Base(dir)+"/"+pkg, func(t *testing.T) {
				cmd := exec.CommandContext(ctx, opm, "alpha", "render-graph", "--draw-v0-semantics", "-p", pkg, dir)
				home := t.TempDir()
				cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+home)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				opmErr := cmd.Run()
				// opm keeps every bundle (versions) and deprecation (channel deprecations match by name
				// across packages) and draws the package's channels only; -p also drops a channel with no
				// entries (render-template filters nothing and draws it).
				one := *res.Catalog
				one.Channels = nil
				for _, ch := range res.Catalog.Channels {
					if ch.Package == pkg && len(ch.Entries) > 0 {
						one.Channels = append(one.Channels, ch)
					}
				}
				var got bytes.Buffer
				ourErr := WriteMermaid(&got, &one, DefaultOPMVersion, io.Discard)
				if opmErr != nil {
					t.Skipf("opm does not load it (a catalog case about loading): %s", stderr.Bytes())
				}
				if ourErr != nil {
					t.Fatalf("opm draws it, WriteMermaid: %v", ourErr)
				}
				if !bytes.Equal(got.Bytes(), stdout.Bytes()) {
					t.Errorf("differs from opm:\n--- opm\n%s\n--- ours\n%s", stdout.Bytes(), got.Bytes())
				}
				drawn++
			})
		}
		cancel()
	}
	if drawn < 100 {
		t.Errorf("only %d packages drawn", drawn)
	}
}
