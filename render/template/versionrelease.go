package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/catalog"
)

// release is a bundle's release: dot-separated semver pre-release identifiers; nil is no release.
type release []semver.PRVersion

// parseRelease reads a release with operator-registry's rules and messages.
func parseRelease(s string) (release, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > catalog.MaxReleaseLength {
		return nil, fmt.Errorf("invalid release %q: exceeds maximum length of %d characters", s, catalog.MaxReleaseLength)
	}
	r, errs := catalog.ReleaseSegments(s)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("invalid release %q: %v", s, err)
	}
	return r, nil
}

// compare orders releases: any release is above none, otherwise as semver pre-releases.
func (r release) compare(o release) int {
	switch {
	case len(r) == 0 && len(o) > 0:
		return -1
	case len(o) == 0 && len(r) > 0:
		return 1
	}
	return semver.Version{Pre: r}.Compare(semver.Version{Pre: o})
}

// versionRel is a bundle's version and release.
type versionRel struct {
	version semver.Version
	release release
}

// compare orders by version (build metadata ignored), then release.
func (v versionRel) compare(o versionRel) int {
	if c := v.version.Compare(o.version); c != 0 {
		return c
	}
	return v.release.compare(o.release)
}

// versionRelease reads a bundle's version and release from its one olm.package property, as
// operator-registry's Bundle.VersionRelease does: a bundle whose ClusterServiceVersion substitutes for
// another and has no release takes its build metadata as the release.
// A bundle rendered from an image (fromImage) has its ClusterServiceVersion at hand, as opm's CsvJSON.
func versionRelease(b *catalog.Bundle, fromImage bool) (versionRel, error) {
	var (
		vr    versionRel
		found bool
	)
	for _, p := range b.Properties {
		if p.Type != catalog.PropertyPackage {
			continue
		}
		if found {
			return vr, fmt.Errorf("must be exactly one property of type %q", catalog.SchemaPackage)
		}
		found = true
		var pkg struct {
			Version string `json:"version"`
			Release string `json:"release"`
		}
		if err := json.Unmarshal(p.Value, &pkg); err != nil {
			return vr, fmt.Errorf("unable to unmarshal \"olm.package\" property for bundle %q: %v", b.Name, err)
		}
		v, err := semver.Parse(pkg.Version)
		if err != nil {
			return vr, fmt.Errorf("invalid semver version %q in \"olm.package\" property for bundle %q: %v", pkg.Version, b.Name, err)
		}
		r, err := parseRelease(pkg.Release)
		if err != nil {
			return vr, fmt.Errorf("invalid release %q in \"olm.package\" property for bundle %q: %v", pkg.Release, b.Name, err)
		}
		vr = versionRel{version: v, release: r}
	}
	if !found {
		return vr, fmt.Errorf("no \"olm.package\" property found for bundle %q", b.Name)
	}
	if len(vr.release) == 0 && vr.version.Build != nil && substitutesFor(b, fromImage) {
		r, err := parseRelease(strings.Join(vr.version.Build, "."))
		if err != nil {
			return vr, fmt.Errorf("unable to convert build metadata to release for bundle %q: %v", b.Name, err)
		}
		vr.release, vr.version.Build = r, nil
	}
	return vr, nil
}

// csvHead is what substitutesFor reads of a ClusterServiceVersion.
type csvHead struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

// substitutesFor tells whether a bundle's ClusterServiceVersion carries a non-empty olm.substitutesFor
// annotation, looking where operator-registry does: for a bundle rendered from an image, its
// ClusterServiceVersion (an olm.bundle.object of that kind, or the olm.csv.metadata it migrated to);
// otherwise olm.csv.metadata properties and the first olm.bundle.object that decodes as an object,
// whatever its kind.
func substitutesFor(b *catalog.Bundle, fromImage bool) bool {
	const key = "olm.substitutesFor"
	for _, p := range b.Properties {
		switch p.Type {
		case catalog.PropertyCSVMetadata:
			var m struct {
				Annotations map[string]string `json:"annotations"`
			}
			if json.Unmarshal(p.Value, &m) == nil && m.Annotations[key] != "" {
				return true
			}
		case catalog.PropertyBundleObject:
			var obj catalog.BundleObject
			if json.Unmarshal(p.Value, &obj) != nil {
				continue
			}
			var csv csvHead
			if json.Unmarshal(obj.Data, &csv) != nil || fromImage && csv.Kind != "ClusterServiceVersion" {
				continue
			}
			return csv.Metadata.Annotations[key] != ""
		}
	}
	return false
}
