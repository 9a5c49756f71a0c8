package release

import (
	"bytes"
	"strings"
	"testing"
)

// The two upstream commits the editing was written against: a semver template (dotvirt-operator) and a
// basic template with replaces and skipRange (jumpstarter-operator). TestReleaseHeldOutUpstreamCommits
// holds the others.
func TestReleaseReproducesUpstreamDevelopmentCommits(t *testing.T) {
	for _, id := range []string{"a8565d621", "ed1800b0e"} {
		t.Run(id, func(t *testing.T) { checkUpstream(t, id) })
	}
}

// Upstream commits held out of the development: each must come out byte for byte as upstream committed
// it. d024b82c4 and b37db848c create their templates. b212bb168 is not here: upstream's writer also rewrote two lines it did not change
// (TestReleaseKeepsLinesUpstreamRewrote).
func TestReleaseHeldOutUpstreamCommits(t *testing.T) {
	for _, id := range []string{"1b9480a9f", "747fb4749", "801fc346d", "835a15045", "f2f7a3eae", "d024b82c4", "b37db848c"} {
		t.Run(id, func(t *testing.T) { checkUpstream(t, id) })
	}
}

// b212bb168: upstream's writer (a ruamel.yaml round trip of the whole file) also rewrote the untouched
// "image:" lines whose value it had moved to the next line, adding a trailing space. The release keeps
// them as written; everything else is upstream's commit.
func TestReleaseKeepsLinesUpstreamRewrote(t *testing.T) {
	f := loadFixture(t, "b212bb168")
	r := releaseOf(t, f)
	changes, err := r.Apply()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		want := readTestFile(t, f.dir+"/after/"+c.File)
		if bytes.Equal(c.After, want) {
			t.Errorf("%s: came out as upstream's, which rewrote a line it did not change", c.File)
		}
		if got := strings.ReplaceAll(string(c.After), "  image:\n", "  image: \n"); got != string(want) {
			t.Errorf("%s: differs from upstream's commit by more than the rewritten lines:\n%s", c.File, c.After)
		}
		if !keepsLines(c.Before, c.After) {
			t.Errorf("%s: a line of the template changed", c.File)
		}
	}
}

// An upstream commit whose bundle pull request had added the image to the template by hand already
// (cf557fe14, kairos-operator 2.2.0: upstream's release changed nothing but the document marker): the
// release refuses, naming the template line that holds it.
func TestReleaseRefusesBundleAlreadyInTemplate(t *testing.T) {
	f := loadFixture(t, "cf557fe14")
	r := releaseOf(t, f)
	ds := r.Validate()
	if len(ds) != 1 || ds[0].File != "operators/kairos-operator/catalog-templates/semver.yaml" || ds[0].Line != 9 ||
		!strings.Contains(ds[0].Message, "already holds quay.io/community-operator-pipeline-prod/kairos-operator:2.2.0") {
		t.Fatalf("diagnostics %v, want one on semver.yaml:9 naming the image", ds)
	}
}
