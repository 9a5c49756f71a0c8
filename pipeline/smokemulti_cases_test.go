package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// Every affected catalog is installed on a cluster of its own Kubernetes version, in version order, one
// cluster at a time; the base catalog's image serves first (it lacks the new bundle), the head's after
// (it has it); unaffected catalogs (v4.13-v4.18) are never installed.
func TestMultiCatalogSmokePerClusterVersion(t *testing.T) {
	base, head := smokeTrees(t, true, "")
	f := newFakeSmoke(t)
	r := runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0)
	st := stageOf(t, r, "smoke")
	if st.Status != report.Pass {
		t.Fatalf("smoke %s: %s %s %+v", st.Status, st.Summary, st.Err, st.Diagnostics)
	}
	want := []string{"v4.12 kind/node:v1.25", "v4.19 kind/node:v1.32", "v4.20 kind/node:v1.33.13", "v4.21 kind/node:v1.34", "v4.22 kind/node:v1.35"}
	if got := f.created(); !slices.Equal(got, want) {
		t.Fatalf("clusters %q, want %q", got, want)
	}
	f.checkLifecycles(t)
	for i, o := range f.calls {
		cat := CatalogOf(o.ClusterName)
		wantPkg := nfsPkg
		if cat == "v4.12" {
			wantPkg = odfPkg
		}
		if !slices.Equal(o.Packages, []string{wantPkg}) || !slices.Equal(o.FromBase, []string{wantPkg}) || !o.CreateCluster || o.Keep {
			t.Errorf("run %d (%s): packages %v from base %v create %v keep %v", i, cat, o.Packages, o.FromBase, o.CreateCluster, o.Keep)
		}
		if want := map[string]string{nfsPkg: nfsNew, odfPkg: odfNew}[wantPkg]; o.Expect[wantPkg] != want {
			t.Errorf("%s: expect %v, want %s", cat, o.Expect, want)
		}
		if f.baseHas[cat] || !f.headHas[cat] {
			t.Errorf("%s: the base catalog image must lack the new bundle (has %v) and the head's hold it (has %v)", cat, f.baseHas[cat], f.headHas[cat])
		}
		if o.BaseCatalogImage == o.CatalogImage {
			t.Errorf("%s: base and head catalog images are the same %s", cat, o.CatalogImage)
		}
	}
	for _, line := range []string{
		"- catalog v4.12 (Kubernetes 1.25, node image kind/node:v1.25): passed, 1 of 1 installed (" + odfPkg + "), 1 of 1 upgraded from the base catalog in ",
		"- catalog v4.20 (Kubernetes 1.33, node image kind/node:v1.33.13): passed, 1 of 1 installed (" + nfsPkg + "), 1 of 1 upgraded",
	} {
		if !strings.Contains(st.Details, line) {
			t.Errorf("details lack %q:\n%s", line, st.Details)
		}
	}
	if strings.Count(st.Details, "\n- ") != 5 || !strings.HasPrefix(st.Summary, "5 catalogs smoke-installed in 5 kind clusters one after the other: 5 of 5 package installs reached CSV Succeeded, 5 of 5 upgraded") {
		t.Errorf("summary %q details:\n%s", st.Summary, st.Details)
	}
}

// A failing install in one cluster version fails the stage naming that catalog (and the bundle); the
// versions after it still run.
func TestMultiCatalogSmokeFailureNamesCatalog(t *testing.T) {
	base, head := smokeTrees(t, false, "")
	f := newFakeSmoke(t)
	f.fail["v4.21"] = true
	r := runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0)
	st := stageOf(t, r, "smoke")
	if st.Status != report.Fail || r.Verdict() == report.Pass {
		t.Fatalf("smoke %s: %s", st.Status, st.Summary)
	}
	if len(f.created()) != 4 {
		t.Fatalf("clusters %q: the versions after the failing one must run too", f.created())
	}
	f.checkLifecycles(t)
	if len(st.Diagnostics) != 1 {
		t.Fatalf("diagnostics %+v", st.Diagnostics)
	}
	d := st.Diagnostics[0]
	if !strings.HasPrefix(d.Message, "catalog v4.21: CSV "+nfsNew) || d.Bundle != nfsNew || d.Package != nfsPkg {
		t.Errorf("diagnostic %+v: want it to name catalog v4.21, the package and the bundle", d)
	}
	if !strings.Contains(st.Summary, "failed: catalog v4.21") || !strings.Contains(st.Details, "- catalog v4.21 (Kubernetes 1.34, node image kind/node:v1.34): FAILED, 0 of 1 installed") {
		t.Errorf("summary %q details:\n%s", st.Summary, st.Details)
	}
}

// A catalog whose Kubernetes version has no node image is a usage error naming it, before any cluster
// is created: never a skip, never a run on another version's image.
func TestMultiCatalogSmokeMissingNodeImage(t *testing.T) {
	base, head := smokeTrees(t, false, "")
	images := map[string]string{}
	for k, v := range nodeImages {
		if k != "1.34" {
			images[k] = v
		}
	}
	for _, in := range []pipeline.SmokeInput{
		{NodeImages: images},
		// a single node image serves only the version its tag says
		{NodeImage: "kind/node:v1.33.13"},
		{NodeImage: "example.test/my-node:latest"},
	} {
		f := newFakeSmoke(t)
		r := runSmoke(t, base, head, f, in, nil, 0)
		st := stageOf(t, r, "smoke")
		if st.Status != report.ActionRequired || !strings.Contains(st.Err, "catalog v4.21 (OpenShift 4.21, Kubernetes 1.34) has no kind node image") || len(f.calls) != 0 {
			t.Errorf("%+v: smoke %s %q, %d installs; want action required naming v4.21 and none", in, st.Status, st.Err, len(f.calls))
		}
		if in.NodeImage == "example.test/my-node:latest" && !strings.Contains(st.Err, "its tag does not say its Kubernetes version") {
			t.Errorf("err %q: want why the node image does not count", st.Err)
		}
	}
	// one version: the single node image whose tag names it serves it
	f := newFakeSmoke(t)
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImage: "kind/node:v1.33.13"}, nil, 0), "smoke")
	if st.Status != report.ActionRequired || !strings.Contains(st.Err, "catalog v4.19 (OpenShift 4.19, Kubernetes 1.32)") || strings.Contains(st.Err, "catalog v4.20") {
		t.Errorf("smoke %s %q: want v4.19, v4.21 and v4.22 without a node image, v4.20 served", st.Status, st.Err)
	}
}

// smoke.clusterVersions of the base limits the installs; affected catalogs outside it are named in a
// warning and the summary; a limit that leaves no affected catalog skips the stage with that warning.
func TestMultiCatalogSmokeClusterVersionsLimit(t *testing.T) {
	base, head := smokeTrees(t, true, "  clusterVersions: [v4.12, \"4.22\", v4.99]\n")
	f := newFakeSmoke(t)
	r := runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0)
	st := stageOf(t, r, "smoke")
	if got := f.created(); !slices.Equal(got, []string{"v4.12 kind/node:v1.25", "v4.22 kind/node:v1.35"}) || st.Status != report.Pass {
		t.Fatalf("clusters %q, smoke %s %s", got, st.Status, st.Summary)
	}
	warnings := map[string]string{}
	for _, d := range st.Diagnostics {
		warnings[d.Rule] = d.Message
	}
	if !strings.Contains(warnings["smoke-catalog-not-installed"], "catalogs v4.19-v4.21 changed but are not smoke-installed") ||
		!strings.Contains(warnings["smoke-unknown-cluster-version"], `"v4.99"`) || len(st.Diagnostics) != 2 {
		t.Errorf("diagnostics %+v", st.Diagnostics)
	}
	if !strings.Contains(st.Summary, "not installed (smoke.clusterVersions): catalogs v4.19-v4.21") {
		t.Errorf("summary %q", st.Summary)
	}

	// a limit without any affected catalog: skipped, and says which catalogs were not installed
	base, head = smokeTrees(t, false, "  clusterVersions: [v4.12]\n")
	f = newFakeSmoke(t)
	st = stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0), "smoke")
	if st.Status != report.Skipped || len(f.calls) != 0 || !strings.Contains(st.Summary, "catalogs v4.19-v4.22 are outside smoke.clusterVersions (v4.12)") ||
		len(st.Diagnostics) != 1 || st.Diagnostics[0].Rule != "smoke-catalog-not-installed" {
		t.Errorf("smoke %s %q %+v, %d installs", st.Status, st.Summary, st.Diagnostics, len(f.calls))
	}
}

// Hostile: the pull request's own .catalogbot.yaml cannot narrow or switch off its smoke install (the
// base's decides), and a catalog the pull request adds is installed like any other (or is a usage
// error without a node image; never skipped).
func TestMultiCatalogSmokeBaseConfigDecides(t *testing.T) {
	base, head := smokeTrees(t, false, "")
	for name, cfg := range map[string]string{
		"narrowed":     "  clusterVersions: [v4.12]\n",
		"switched off": "",
	} {
		h := head.with(nil)
		h.files[".catalogbot.yaml"] = strings.Replace(h.files[".catalogbot.yaml"], "smoke:\n  enabled: true\n", "smoke:\n  enabled: "+map[bool]string{true: "true", false: "false"}[cfg != ""]+"\n"+cfg, 1)
		f := newFakeSmoke(t)
		st := stageOf(t, runSmoke(t, base, h, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0), "smoke")
		if len(f.created()) != 4 || st.Status != report.Pass {
			t.Errorf("%s by the pull request: clusters %q, smoke %s %s", name, f.created(), st.Status, st.Summary)
		}
	}
	// the pull request adds catalog v4.23 (Kubernetes 1.36) with the nfs package
	added := head.with(map[string]string{"catalogs/v4.23/" + nfsPkg + "/catalog.yaml": head.files["catalogs/v4.22/"+nfsPkg+"/catalog.yaml"]})
	f := newFakeSmoke(t)
	st := stageOf(t, runSmoke(t, base, added, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0), "smoke")
	if st.Status != report.ActionRequired || !strings.Contains(st.Err, "catalog v4.23 (OpenShift 4.23, Kubernetes 1.36) has no kind node image") || len(f.calls) != 0 {
		t.Errorf("added catalog without a node image: smoke %s %q, %d installs", st.Status, st.Err, len(f.calls))
	}
	images := map[string]string{"1.36": "kind/node:v1.36"}
	for k, v := range nodeImages {
		images[k] = v
	}
	f = newFakeSmoke(t)
	st = stageOf(t, runSmoke(t, base, added, f, pipeline.SmokeInput{NodeImages: images}, nil, 0), "smoke")
	if got := f.created(); st.Status != report.Pass || len(got) != 5 || got[4] != "v4.23 kind/node:v1.36" {
		t.Errorf("added catalog: clusters %q, smoke %s %s", got, st.Status, st.Summary)
	}
	if c := f.calls[len(f.calls)-1]; len(c.FromBase) != 0 || c.BaseCatalogImage != "" {
		t.Errorf("a catalog the base lacks installs fresh: from base %v (%s)", c.FromBase, c.BaseCatalogImage)
	}
	// with a limit on the base, a catalog the pull request adds is still installed: the limit cannot
	// have meant it, and a new catalog name must not dodge the install
	limited, _ := smokeTrees(t, false, "  clusterVersions: [v4.22]\n")
	f = newFakeSmoke(t)
	st = stageOf(t, runSmoke(t, limited, added.with(map[string]string{".catalogbot.yaml": limited.files[".catalogbot.yaml"]}), f, pipeline.SmokeInput{NodeImages: images}, nil, 0), "smoke")
	if got := f.created(); st.Status != report.Pass || !slices.Equal(got, []string{"v4.22 kind/node:v1.35", "v4.23 kind/node:v1.36"}) {
		t.Errorf("added catalog under a limit: clusters %q, smoke %s %s", got, st.Status, st.Summary)
	}
}

// Hostile, list form: a catalog the pull request adds to .catalogbot.yaml's list is no catalog (the
// base's configuration decides), so it is neither installed nor able to change what is.
func TestMultiCatalogSmokeListFromBase(t *testing.T) {
	base, head := smokeTrees(t, false, "")
	list := "catalogs:\n  list:\n  - {name: v4.21, dir: catalogs/v4.21, openshift: \"4.21\"}\n  - {name: v4.22, dir: catalogs/v4.22, openshift: \"4.22\"}\n"
	cfg := strings.Replace(base.files[".catalogbot.yaml"], multiConfig[strings.Index(multiConfig, "catalogs:"):], list, 1)
	if cfg == base.files[".catalogbot.yaml"] {
		t.Fatal("test data: the catalogs section was not replaced")
	}
	base.files[".catalogbot.yaml"] = cfg
	head = head.with(map[string]string{
		".catalogbot.yaml": strings.Replace(cfg, "  - {name: v4.22", "  - {name: v4.20, dir: catalogs/v4.20, openshift: \"4.20\"}\n  - {name: v4.22", 1),
	})
	f := newFakeSmoke(t)
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0), "smoke")
	if got := f.created(); st.Status != report.Pass || !slices.Equal(got, []string{"v4.21 kind/node:v1.34", "v4.22 kind/node:v1.35"}) {
		t.Errorf("clusters %q, smoke %s %s", got, st.Status, st.Summary)
	}
}

// Catalogs with the same node image, the same catalog images and the same packages share one install;
// the same node image with other content does not.
func TestMultiCatalogSmokeSharesOnlyTheSameInstall(t *testing.T) {
	base, head := smokeTrees(t, true, "")
	same := map[string]string{"1.25": "kind/node:one", "1.32": "kind/node:one", "1.33": "kind/node:one", "1.34": "kind/node:v1.34", "1.35": "kind/node:v1.35"}
	if head.files["catalogs/v4.19/"+nfsPkg+"/catalog.yaml"] != head.files["catalogs/v4.20/"+nfsPkg+"/catalog.yaml"] {
		t.Fatal("test data: v4.19 and v4.20 hold different nfs catalogs")
	}
	f := newFakeSmoke(t)
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: same}, nil, 0), "smoke")
	want := []string{"v4.12 kind/node:one", "v4.19 kind/node:one", "v4.21 kind/node:v1.34", "v4.22 kind/node:v1.35"}
	if got := f.created(); !slices.Equal(got, want) || st.Status != report.Pass {
		t.Fatalf("clusters %q, want %q; smoke %s %s", got, want, st.Status, st.Summary)
	}
	if !strings.Contains(st.Details, "- catalogs v4.19, v4.20 (Kubernetes 1.32, 1.33, node image kind/node:one, one install: the same node image, catalog images and packages): passed") ||
		!strings.HasPrefix(st.Summary, "5 catalogs smoke-installed in 4 kind clusters") {
		t.Errorf("summary %q details:\n%s", st.Summary, st.Details)
	}
}

// The stage's deadline is shared: a version that hangs runs out of its share, is reported by name as
// an infrastructure failure with its cluster deleted, and the next version still runs in what is left.
// Cancelling the run ends the running install (its cluster deleted) and starts no other.
func TestMultiCatalogSmokeDeadlineAndCancel(t *testing.T) {
	base, head := smokeTrees(t, false, "  clusterVersions: [v4.19, v4.20]\n")
	f := newFakeSmoke(t)
	f.hang["v4.19"] = true
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 2*time.Second), "smoke")
	f.checkLifecycles(t)
	if got := f.created(); len(got) != 2 || st.Status != report.Error || !strings.Contains(st.Err, "catalog v4.19 (Kubernetes 1.32): did not finish within its share") ||
		strings.Contains(st.Err, "v4.20") || !strings.Contains(st.Details, "- catalog v4.20 (Kubernetes 1.33, node image kind/node:v1.33.13): passed") {
		t.Errorf("clusters %q, smoke %s %q\n%s", got, st.Status, st.Err, st.Details)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f = newFakeSmoke(t)
	f.hang["v4.19"] = true
	f.onStart = func(string) { cancel() }
	st = stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, ctx, 0), "smoke")
	f.checkLifecycles(t)
	if got := f.created(); len(got) != 1 || st.Status != report.Error || !strings.Contains(st.Err, "catalog v4.20: not run: context canceled") {
		t.Errorf("cancelled: clusters %q, events %q, smoke %s %q", got, f.events, st.Status, st.Err)
	}
}

// Settings that cannot hold for several cluster versions are usage errors before anything runs: an
// existing cluster (one Kubernetes version for all), and --smoke-keep with more than one cluster.
func TestMultiCatalogSmokeRefusedSettings(t *testing.T) {
	base, head := smokeTrees(t, false, "")
	for _, tc := range []struct {
		in   pipeline.SmokeInput
		want string
	}{
		{pipeline.SmokeInput{ClusterName: "mine"}, "creates one kind cluster per cluster version"},
		{pipeline.SmokeInput{KubeconfigPath: "/k"}, "creates one kind cluster per cluster version"},
		{pipeline.SmokeInput{NodeImages: nodeImages, Keep: true}, "4 clusters would be needed here (catalogs v4.19-v4.22)"},
	} {
		f := newFakeSmoke(t)
		st := stageOf(t, runSmoke(t, base, head, f, tc.in, nil, 0), "smoke")
		if st.Status != report.ActionRequired || !strings.Contains(st.Err, tc.want) || len(f.calls) != 0 {
			t.Errorf("%+v: smoke %s %q, %d installs", tc.in, st.Status, st.Err, len(f.calls))
		}
	}
	// --smoke-keep with one catalog to install keeps its cluster
	base, head = smokeTrees(t, false, "  clusterVersions: [v4.22]\n")
	f := newFakeSmoke(t)
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages, Keep: true}, nil, 0), "smoke")
	if st.Status != report.Pass || len(f.calls) != 1 || !f.calls[0].Keep || len(f.live) != 1 {
		t.Errorf("keep with one catalog: smoke %s %q, calls %d, live %q", st.Status, st.Err, len(f.calls), f.live)
	}
}

// A cluster that could not be deleted stops the sequence: no second cluster is created next to it, and
// the catalogs not run say why.
func TestMultiCatalogSmokeStopsAtUndeletedCluster(t *testing.T) {
	base, head := smokeTrees(t, false, "")
	f := newFakeSmoke(t)
	f.undeletable["v4.20"] = true
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0), "smoke")
	if got := f.created(); len(got) != 2 || st.Status != report.Error ||
		!strings.Contains(st.Err, "catalog v4.21: not run: the cluster of catalog v4.20 could not be deleted") ||
		!strings.Contains(st.Err, "catalog v4.22: not run: the cluster of catalog v4.20 could not be deleted") {
		t.Errorf("clusters %q, smoke %s %q", got, st.Status, st.Err)
	}
}

// Settings the first cluster refuses (no OLM and no manifests to install it) stop the sequence: the next
// clusters would refuse them too.
func TestMultiCatalogSmokeStopsAtRefusedSettings(t *testing.T) {
	base, head := smokeTrees(t, false, "")
	f := newFakeSmoke(t)
	f.refuse["v4.19"] = true
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0), "smoke")
	f.checkLifecycles(t)
	if got := f.created(); len(got) != 1 || st.Status != report.ActionRequired || !strings.Contains(st.Err, "no OLM manifests were given") ||
		!strings.Contains(st.Err, "catalog v4.22: not run: the smoke settings were refused for catalog v4.19") {
		t.Errorf("clusters %q, smoke %s %q", got, st.Status, st.Err)
	}
}

// Eleven catalogs changed, one failing: one smoke stage, one line per catalog, the failure named once.
// Sizes are logged (go test ./pipeline -run TestMultiCatalogSmokeElevenCatalogs -v).
func TestMultiCatalogSmokeElevenCatalogs(t *testing.T) {
	base, head := smokeTreesOdf(t, []string{"v4.12", "v4.13", "v4.14", "v4.15", "v4.16", "v4.17", "v4.18"}, "")
	images := map[string]string{}
	for y := 12; y <= 22; y++ {
		images[fmt.Sprintf("1.%d", y+13)] = fmt.Sprintf("kind/node:v1.%d", y+13)
	}
	f := newFakeSmoke(t)
	f.fail["v4.17"] = true
	r := runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: images}, nil, 0)
	st := stageOf(t, r, "smoke")
	if len(f.created()) != 11 || st.Status != report.Fail || strings.Count(st.Details, "\n- ") != 11 || len(st.Diagnostics) != 1 ||
		!strings.Contains(st.Summary, "11 catalogs smoke-installed in 11 kind clusters one after the other: 10 of 11 package installs reached CSV Succeeded, 10 of 11 upgraded from the base catalog; failed: catalog v4.17") {
		t.Fatalf("clusters %q, smoke %s %q\n%s", f.created(), st.Status, st.Summary, st.Details)
	}
	f.checkLifecycles(t)
	var md, text bytes.Buffer
	smokeOnly := &report.Report{Title: r.Title, Stages: []report.Stage{st}}
	if err := report.WriteMarkdown(&md, smokeOnly, 0); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteText(&text, smokeOnly, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("smoke stage at eleven catalogs, one failing: Markdown %d bytes, text %d bytes\n%s\n%s", md.Len(), text.Len(), md.String(), text.String())
}

// The attack: a package's bundles put in another package's directory of a catalog. The smoke stage
// installs the package the blobs name (blob identity), not the directory's: odf-node-recovery-operator's
// v4.18 catalog planted under nfs-provisioner-operator's directory of v4.19 is installed in v4.19.
func TestSmokeInstallsThePackageABlobNames(t *testing.T) {
	base, _ := smokeTrees(t, false, "")
	base = base.with(map[string]string{"catalogs/v4.19/" + nfsPkg + "/catalog.yaml": multiBase(t).files["catalogs/v4.19/"+nfsPkg+"/catalog.yaml"]})
	head := base.with(map[string]string{"catalogs/v4.19/" + nfsPkg + "/odf.yaml": base.files["catalogs/v4.18/"+odfPkg+"/catalog.yaml"]})
	f := newFakeSmoke(t)
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0), "smoke")
	if len(f.calls) != 1 || !slices.Equal(f.calls[0].Packages, []string{odfPkg}) || CatalogOf(f.calls[0].ClusterName) != "v4.19" {
		var got [][]string
		for _, o := range f.calls {
			got = append(got, append([]string{CatalogOf(o.ClusterName)}, o.Packages...))
		}
		t.Fatalf("odf's bundles in nfs's directory of v4.19: installs %q; smoke %s %s %q", got, st.Status, st.Summary, st.Err)
	}
}
