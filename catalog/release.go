package catalog

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
)

// MaxReleaseLength bounds a bundle's release (olm.package's "release"), as the ClusterServiceVersion CRD
// does.
const MaxReleaseLength = 20

// ReleaseSegments reads a release as operator-registry does: dot-separated semver pre-release
// identifiers. It returns the identifiers and one error per bad segment ("segment N: ..."); the length is
// the caller's to check against MaxReleaseLength.
func ReleaseSegments(rel string) ([]semver.PRVersion, []error) {
	var (
		out  []semver.PRVersion
		errs []error
	)
	for i, seg := range strings.Split(rel, ".") {
		pr, err := semver.NewPRVersion(seg)
		if err != nil {
			errs = append(errs, fmt.Errorf("segment %d: %v", i, err))
			continue
		}
		out = append(out, pr)
	}
	return out, errs
}
