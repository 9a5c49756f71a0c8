package release

import (
	"slices"
	"strings"
	"testing"
)

// TestDetectPatternHostile: the pattern init writes from images that try to mislead the derivation.
func TestDetectPatternHostile(t *testing.T) {
	const prod = "quay.io/community-operator-pipeline-prod/{package}:{version}"
	tests := []struct {
		name                                 string
		images                               []Named
		pattern                              string // "" when none is clear
		why                                  string // part of Why when pattern is ""
		explained, counted, digests, unknown int
	}{{
		name: "the package is a substring of the registry host and of the prefix",
		images: []Named{
			{"quay", "1.0.0", "quay.io/community-operator-pipeline-prod/quay:1.0.0"},
			{"io", "2.0.0", "quay.io/community-operator-pipeline-prod/io:2.0.0"},
			{"community", "0.1.0", "quay.io/community-operator-pipeline-prod/community:0.1.0"},
			{"operator", "3.1.4", "quay.io/community-operator-pipeline-prod/operator:3.1.4"},
		},
		pattern: prod, explained: 4, counted: 4,
	}, {
		name: "the version appears twice in the reference",
		images: []Named{
			{"a", "1.0.0", "registry.example.com/a-1.0.0/bundle:v1.0.0"},
			{"b", "2.3.4", "registry.example.com/b-2.3.4/bundle:v2.3.4"},
			{"a", "1.0.1", "registry.example.com/a-1.0.1/bundle:v1.0.1"},
		},
		pattern: "registry.example.com/{package}-{version}/bundle:v{version}", explained: 3, counted: 3,
	}, {
		name: "a version that is also in the package name",
		images: []Named{
			{"app-2.0.0", "2.0.0", "quay.io/org/app-2.0.0:2.0.0"},
			{"app-2.0.0", "2.1.0", "quay.io/org/app-2.0.0:2.1.0"},
			{"other", "1.0.0", "quay.io/org/other:1.0.0"},
		},
		pattern: "quay.io/org/{package}:{version}", explained: 3, counted: 3,
	}, {
		name: "digests count neither for nor against",
		images: []Named{
			{"a", "1.0.0", "quay.io/community-operator-pipeline-prod/a:1.0.0"},
			{"b", "1.0.0", "quay.io/community-operator-pipeline-prod/b:1.0.0"},
			{"a", "0.9.0", "quay.io/openshift-community-operators/a@sha256:0123456789012345678901234567890123456789012345678901234567890123"},
			{"c", "0.1.0", "quay.io/openshift-community-operators/c@sha256:0123456789012345678901234567890123456789012345678901234567890123"},
			{"b", "", "quay.io/elsewhere/b:0.5.0"},
		},
		pattern: prod, explained: 2, counted: 2, digests: 2, unknown: 1,
	}, {
		name: "tags that are not the version",
		images: []Named{
			{"a", "1.0.0", "quay.io/org/a:latest"},
			{"b", "1.0.0", "quay.io/org/b:main"},
			{"c", "1.0.0", "quay.io/org/c:1.0.0"},
		},
		why: "explains only 1 of 3 images", explained: 1, counted: 3,
	}, {
		name: "a clear majority, but a package explained by none",
		images: []Named{
			{"a", "1.0.0", "quay.io/p/a:1.0.0"}, {"a", "1.1.0", "quay.io/p/a:1.1.0"}, {"a", "1.2.0", "quay.io/p/a:1.2.0"},
			{"a", "1.3.0", "quay.io/p/a:1.3.0"}, {"b", "1.0.0", "quay.io/p/b:1.0.0"}, {"c", "2.0.0", "docker.io/vendor/c-bundle:2.0.0"},
		},
		why: "explains no image of c", explained: 5, counted: 6,
	}, {
		name:   "only digests",
		images: []Named{{"a", "1.0.0", "quay.io/p/a@sha256:0123456789012345678901234567890123456789012345678901234567890123"}},
		why:    "no template names a bundle image by tag", digests: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := DetectPattern(tc.images)
			if d.Pattern != tc.pattern || d.Explained != tc.explained || d.Counted != tc.counted || d.Digests != tc.digests || d.Unknown != tc.unknown {
				t.Errorf("got %+v", d)
			}
			if tc.pattern == "" && !strings.Contains(d.Why, tc.why) {
				t.Errorf("why %q lacks %q", d.Why, tc.why)
			}
			if d.Pattern == "" {
				return
			}
			n := 0
			for _, im := range tc.images {
				if got, err := Image(d.Pattern, im.Package, im.Version); err == nil && got == im.Image {
					n++
				}
			}
			if n != d.Explained {
				t.Errorf("Image(%q) reproduces %d images, the detection claims %d", d.Pattern, n, d.Explained)
			}
		})
	}
}

// TestCandidatesNeverTheHost: a package named like the registry host is never replaced there.
func TestCandidatesNeverTheHost(t *testing.T) {
	got := Candidates("quay.io/quay/quay:3.0.0", "quay", "3.0.0")
	want := []string{"quay.io/quay/{package}:{version}", "quay.io/{package}/quay:{version}", "quay.io/{package}/{package}:{version}"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("candidates %q, want %q", got, want)
	}
	for _, c := range [][3]string{
		{"quay.io/p/a@sha256:0123456789012345678901234567890123456789012345678901234567890123", "a", "1.0.0"},
		{"quay.io/p/a:latest", "a", "1.0.0"},
		{"quay.io/p/bundle:1.0.0", "a", "1.0.0"},
	} {
		if got := Candidates(c[0], c[1], c[2]); got != nil {
			t.Errorf("Candidates(%q, %q, %q) = %q, want none", c[0], c[1], c[2], got)
		}
	}
}
