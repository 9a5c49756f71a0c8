package pipeline_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// Two catalogs whose image tags follow the Kubernetes version (v4.19 runs 1.32, v4.20 runs 1.33) are
// each pushed under their {version} tag and their Kubernetes tags, one digest per catalog; every tag
// moves only forward, each checked on its own; the publish report prints the CatalogSource that follows
// them (golden).
func TestPublishKubernetesTags(t *testing.T) {
	w := newMultiPublishWorld(t, "")
	w.cfg = strings.Replace(w.cfg, "  migrateFrom: v4.17\n", "  migrateFrom: v4.17\n  versions: [v4.19, v4.20]\n"+
		"  tags: [\"v{kube_major_version}.{kube_minor_version}\", \"k{kube_minor_version}\"]\n", 1)
	base := elevenBase(t)
	a := w.commit(t, base, "eleven catalogs, two published")
	res := w.publish(t, plumbing.ZeroHash, a)
	st := lastStage(t, res)
	if st.Status != report.Pass || len(res.Digests) != 2 {
		t.Fatalf("publish A: %s %q %s, digests %v\n%s", st.Status, st.Summary, st.Err, res.Digests, st.Details)
	}
	for v, tags := range map[string][]string{"v4.19": {"v4.19", "v1.32", "k32"}, "v4.20": {"v4.20", "v1.33", "k33"}} {
		_, want, _ := strings.Cut(res.Digests[v], "@")
		for _, tag := range tags {
			if got := tagDigest(t, w.index+":"+tag); got != want {
				t.Errorf("%s:%s is %s, want catalog %s's %s", w.index, tag, got, v, want)
			}
			if rev, _, _ := pipeline.TagRevision(t.Context(), w.index+":"+tag, build.Options{}); rev != a.String() {
				t.Errorf("%s:%s holds %s, want %s", w.index, tag, rev, a)
			}
		}
	}
	aV420 := res.Digests["v4.20"]
	host := strings.TrimSuffix(w.index, "/ops/index")
	_, cs, ok := strings.Cut(st.Details, "#### CatalogSource")
	if !ok {
		t.Fatalf("no CatalogSource in the publish report:\n%s", st.Details)
	}
	golden(t, filepath.Join("testdata", "publish", "catalogsource.golden"), strings.ReplaceAll(cs, host, "registry.test"))

	// B gives nfs-provisioner-operator a beta channel in v4.19-v4.22, rendered: both catalogs' tags move to B.
	b := w.commit(t, renderedTree(t, base.with(map[string]string{nfsTemplate: nfsBeta(t, base.files[nfsTemplate])}), base, nfsPkg), "nfs beta")
	if res := w.publish(t, a, b); len(res.Digests) != 2 {
		t.Fatalf("publish B: %q, pushed %v\n%s", lastStage(t, res).Summary, res.Digests, lastStage(t, res).Details)
	}
	// Someone moves v4.20 back to A's image; A published again (a late job) moves none of v4.20's tags:
	// v1.33 holds the newer B and never moves backwards, and a set of tags is moved whole or not at all.
	dig, err := name.NewDigest(aV420, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	aImage, err := remote.Index(dig)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Tag(mustTag(t, w.index+":v4.20"), aImage); err != nil {
		t.Fatal(err)
	}
	res = w.publish(t, plumbing.ZeroHash, a)
	st = lastStage(t, res)
	refused := w.index + ":v1.33 holds an image built from " + b.String()[:12] + ", which is newer than " + a.String()[:12]
	if st.Status != report.Fail || len(res.Digests) != 0 || !strings.Contains(st.Details, refused) {
		t.Errorf("publish A after B: %s %q %s, pushed %v\n%s", st.Status, st.Summary, st.Err, res.Digests, st.Details)
	}
	for _, tag := range []string{"v4.19", "v1.32", "k32", "v1.33", "k33"} {
		if rev, _, _ := pipeline.TagRevision(t.Context(), w.index+":"+tag, build.Options{}); rev != b.String() {
			t.Errorf("%s:%s moved back to %s", w.index, tag, rev)
		}
	}
	// With v4.20 deleted, A published again would create it (a new tag moves "forward") and then be refused
	// v1.33: the half-moved set this guards against. Nothing is created.
	if err := remote.Delete(mustTag(t, w.index+":v4.20")); err != nil {
		t.Fatal(err)
	}
	res = w.publish(t, plumbing.ZeroHash, a)
	if st := lastStage(t, res); st.Status != report.Fail || !strings.Contains(st.Details, refused) {
		t.Errorf("publish A after B, v4.20 deleted: %s %q %s\n%s", st.Status, st.Summary, st.Err, st.Details)
	}
	if rev, found, err := pipeline.TagRevision(t.Context(), w.index+":v4.20", build.Options{}); found || err != nil {
		t.Errorf("%s:v4.20 was created (%s, %v) although its tag v1.33 was refused", w.index, rev, err)
	}
}

// tagDigest is the digest tag ref points at.
func tagDigest(t *testing.T, ref string) string {
	t.Helper()
	desc, err := remote.Head(mustTag(t, ref))
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	return desc.Digest.String()
}
