package pipeline_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// olmCalls lists "CATALOG OLM" per smoke runner call, in order ("v0" for an empty OLM).
func (f *fakeSmoke) olmCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, o := range f.calls {
		olm := o.OLM
		if olm == "" {
			olm = smoke.OLMv0
		}
		out = append(out, catalogOf(o.ClusterName)+" "+olm)
	}
	return out
}

// smoke.olmByCatalog of the base chooses each catalog's OLMs: one runner call (and cluster) per catalog
// and OLM, in order, one report line each; an OLM v1 call gets the OLM v1 manifests, the plan's versions
// and no catalog archive.
func TestSmokeOLMByCatalogReachesRun(t *testing.T) {
	base, head := smokeTrees(t, true, "  olm: v0\n  olmByCatalog:\n    - clusterVersions: [v4.20, \"4.21\"]\n      olm: both\n    - clusterVersions: [v4.22]\n      olm: v1\n")
	f := newFakeSmoke(t)
	r := runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages, OLMManifestsDir: "/olm", OLMv1ManifestsDir: "/olmv1"}, nil, 0)
	st := stageOf(t, r, "smoke")
	if st.Status != report.Pass {
		t.Fatalf("smoke %s: %s %s %+v", st.Status, st.Summary, st.Err, st.Diagnostics)
	}
	want := []string{"v4.12 v0", "v4.19 v0", "v4.20 v0", "v4.20 v1", "v4.21 v0", "v4.21 v1", "v4.22 v1"}
	if got := f.olmCalls(); !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	f.checkLifecycles(t)
	names := map[string]bool{}
	for _, o := range f.calls {
		names[o.ClusterName] = true
		if o.OLM != smoke.OLMv1 {
			continue
		}
		if o.OLMv1ManifestsDir != "/olmv1" || o.CatalogArchive != "" || o.BaseCatalogArchive != "" ||
			o.Versions[nfsPkg] != "0.0.9" || o.BaseVersions[nfsPkg] != "0.0.8" || !slices.Equal(o.FromBase, []string{nfsPkg}) {
			t.Errorf("OLM v1 call %s: %+v", o.ClusterName, o)
		}
	}
	if len(names) != len(f.calls) {
		t.Errorf("cluster names repeat: %v", names)
	}
	for _, line := range []string{
		"- catalog v4.12 (OLM v0, Kubernetes 1.25, node image kind/node:v1.25): passed, 1 of 1 installed (" + odfPkg + "), 1 of 1 upgraded from the base catalog in ",
		"- catalog v4.20 (OLM v0, Kubernetes 1.33, node image kind/node:v1.33.13): passed",
		"- catalog v4.20 (OLM v1, Kubernetes 1.33, node image kind/node:v1.33.13): passed, 1 of 1 installed (" + nfsPkg + "), 1 of 1 upgraded",
		"- catalog v4.22 (OLM v1, Kubernetes 1.35, node image kind/node:v1.35): passed",
	} {
		if !strings.Contains(st.Details, line) {
			t.Errorf("details lack %q:\n%s", line, st.Details)
		}
	}
	if strings.Count(st.Details, "\n- ") != 7 || !strings.HasPrefix(st.Summary, "5 catalogs smoke-installed in 7 kind clusters one after the other: 7 of 7 package installs succeeded (OLM v0: CSV Succeeded; OLM v1: Installed and its Deployments Available)") {
		t.Errorf("summary %q details:\n%s", st.Summary, st.Details)
	}
}

// The OLM comes from the base branch's configuration: a pull request cannot drop the OLM v1 install the
// base asks for (nor add one the base does not).
func TestSmokeOLMFromTheBaseOnly(t *testing.T) {
	for _, tc := range []struct {
		base, head string
		want       string
	}{
		{"  olm: v1\n", "  olm: v0\n", smoke.OLMv1},
		{"", "  olm: both\n", smoke.OLMv0},
	} {
		base, head := smokeTrees(t, false, tc.base)
		head.files[".catalogbot.yaml"] = strings.Replace(head.files[".catalogbot.yaml"], "smoke:\n  enabled: true\n"+tc.base, "smoke:\n  enabled: true\n"+tc.head, 1)
		if !strings.Contains(head.files[".catalogbot.yaml"], tc.head) {
			t.Fatalf("head config unchanged:\n%s", head.files[".catalogbot.yaml"])
		}
		f := newFakeSmoke(t)
		runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0)
		got := f.olmCalls()
		if len(got) != 4 {
			t.Fatalf("base %q head %q: calls %q", tc.base, tc.head, got)
		}
		for _, c := range got {
			if !strings.HasSuffix(c, " "+tc.want) {
				t.Errorf("base %q head %q: calls %q, want every install with OLM %s", tc.base, tc.head, got, tc.want)
				break
			}
		}
	}
}

// The front-end's choice (--olm, the Action's olm, bot.yaml) replaces the configuration's; an unknown
// one is refused before anything runs.
func TestSmokeOLMFrontEndChoice(t *testing.T) {
	base, head := smokeTrees(t, false, "  olm: v0\n")
	f := newFakeSmoke(t)
	runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages, OLM: "both"}, nil, 0)
	if got := f.olmCalls(); !slices.Equal(got, []string{"v4.19 v0", "v4.19 v1", "v4.20 v0", "v4.20 v1", "v4.21 v0", "v4.21 v1", "v4.22 v0", "v4.22 v1"}) {
		t.Errorf("calls %q", got)
	}
	f = newFakeSmoke(t)
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages, OLM: "v2"}, nil, 0), "smoke")
	if st.Status != report.ActionRequired || !strings.Contains(st.Err, `smoke OLM "v2" is not one of v0, v1, both`) || len(f.calls) != 0 {
		t.Errorf("smoke %s %q, %d calls", st.Status, st.Err, len(f.calls))
	}
}

// An OLM v1 install failing fails the stage, naming the catalog and the OLM; the OLM v0 install of the
// same catalog still passes, on its own line.
func TestSmokeOLMv1FailureNamesCatalogAndOLM(t *testing.T) {
	base, head := smokeTrees(t, false, "  olm: both\n")
	f := newFakeSmoke(t)
	f.failV1["v4.21"] = true
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0), "smoke")
	if st.Status != report.Fail || len(st.Diagnostics) != 1 {
		t.Fatalf("smoke %s: %s %+v", st.Status, st.Summary, st.Diagnostics)
	}
	if d := st.Diagnostics[0]; !strings.HasPrefix(d.Message, "catalog v4.21 (OLM v1): CSV "+nfsNew) {
		t.Errorf("diagnostic %+v: want it to name catalog v4.21 and OLM v1", d)
	}
	for _, line := range []string{
		"- catalog v4.21 (OLM v0, Kubernetes 1.34, node image kind/node:v1.34): passed",
		"- catalog v4.21 (OLM v1, Kubernetes 1.34, node image kind/node:v1.34): FAILED, 0 of 1 installed",
	} {
		if !strings.Contains(st.Details, line) {
			t.Errorf("details lack %q:\n%s", line, st.Details)
		}
	}
}
