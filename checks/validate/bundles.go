package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/catalog"
)

func (v *validator) bundles() {
	for _, b := range v.c.Bundles {
		if b.Package == "" {
			v.add(b.Pos, "bundle-no-package", "", "", b.Name,
				fmt.Sprintf("bundle %q has no \"package\"", b.Name), "set \"package\" to the bundle's package name")
			continue
		}
		ps := v.pkgs[b.Package]
		if ps == nil {
			v.add(b.Pos, "bundle-unknown-package", b.Package, "", b.Name,
				fmt.Sprintf("bundle %q belongs to package %q, which has no olm.package blob", b.Name, b.Package),
				"add the olm.package blob, or fix the bundle's \"package\"")
			continue
		}
		if first := ps.bundles[b.Name]; first != nil {
			v.add(b.Pos, "bundle-duplicate", b.Package, "", b.Name,
				fmt.Sprintf("package %q has two bundles named %q (first at %s:%d)", b.Package, b.Name, first.b.Pos.File, first.b.Pos.Line),
				"bundle names must be unique within a package")
			continue
		}
		bs := &bundleState{b: b}
		if ps.bundles == nil {
			ps.bundles = map[string]*bundleState{}
		}
		ps.bundles[b.Name] = bs
		v.bundle(ps, bs)
		if len(ps.inChannels[b.Name]) == 0 {
			v.add(b.Pos, "bundle-not-in-any-channel", b.Package, "", b.Name,
				fmt.Sprintf("bundle %q of package %q is not in any channel; channels are: %s", b.Name, b.Package, names(ps.channels)),
				"add an entry for it to a channel, or remove the bundle")
		}
	}
}

// bundle checks one bundle's own fields: its olm.package property, image references and version.
func (v *validator) bundle(ps *pkgState, bs *bundleState) {
	b := bs.b
	add := func(rule, msg, hint string) { v.add(b.Pos, rule, b.Package, "", b.Name, msg, hint) }
	pkgs := b.Parsed.Packages
	if len(pkgs) != 1 {
		add("bundle-package-property-count",
			fmt.Sprintf("bundle %q must have exactly one olm.package property, found %d", b.Name, len(pkgs)),
			"keep one {\"type\":\"olm.package\",\"value\":{\"packageName\":...,\"version\":...}} property")
	} else if pkgs[0].PackageName != b.Package {
		add("bundle-package-property-mismatch",
			fmt.Sprintf("bundle %q is in package %q but its olm.package property says %q", b.Name, b.Package, pkgs[0].PackageName),
			"make the property's packageName match the bundle's \"package\"")
	}
	if b.Image != "" {
		if err := v.refs.check(b.Image); err != nil {
			add("bundle-image-bad-pullspec", fmt.Sprintf("bundle %q: image %q is not a valid image reference: %v", b.Name, b.Image, err),
				"use a reference like registry.example.com/org/repo@sha256:<digest>")
		}
	}
	for i, ri := range b.RelatedImages {
		if ri.Image == "" {
			continue
		}
		if err := v.refs.check(ri.Image); err != nil {
			add("bundle-image-bad-pullspec", fmt.Sprintf("bundle %q: relatedImages[%d] (%q) image %q is not a valid image reference: %v", b.Name, i, ri.Name, ri.Image, err),
				"use a reference like registry.example.com/org/repo@sha256:<digest>")
		}
	}
	if len(pkgs) != 1 || pkgs[0].PackageName != b.Package {
		return
	}
	ver, err := semver.Parse(pkgs[0].Version)
	if err != nil {
		add("bundle-version-not-semver", fmt.Sprintf("bundle %q: version %q is not strict semver: %v", b.Name, pkgs[0].Version, err),
			"use MAJOR.MINOR.PATCH without a \"v\" prefix, e.g. 1.2.3")
		return
	}
	vs := ver.String()
	if rel := pkgs[0].Release; rel != "" {
		if msg := releaseProblem(rel); msg != "" {
			add("bundle-release-invalid", fmt.Sprintf("bundle %q: release %q is invalid: %s", b.Name, rel, msg),
				"a release is at most 20 characters of dot-separated alphanumeric identifiers without leading zeros")
			return
		}
		vs += "-" + rel
		if len(ver.Build) > 0 {
			add("bundle-build-metadata-with-release", fmt.Sprintf("bundle %q: version %q has build metadata and a release %q; use one of them", b.Name, pkgs[0].Version, rel), "")
		}
		if want := b.Package + "-v" + vs; b.Name != want && len(ps.inChannels[b.Name]) > 0 {
			add("bundle-name-not-normalized", fmt.Sprintf("bundle %q has a release, so its name must be %q", b.Name, want),
				"rename the bundle (and its channel entries) to "+want)
		}
	}
	bs.version, bs.vOK = vs, true
}

// releaseProblem validates a release the way operator-registry's NewRelease does.
func releaseProblem(rel string) string {
	if len(rel) > catalog.MaxReleaseLength {
		return fmt.Sprintf("longer than %d characters", catalog.MaxReleaseLength)
	}
	_, errs := catalog.ReleaseSegments(rel)
	probs := make([]string, len(errs))
	for i, err := range errs {
		probs[i] = err.Error()
	}
	return strings.Join(probs, "; ")
}

// versions checks what needs all bundles of a package: unique versions, and that channel bundles have an
// image or objects.
func (v *validator) versions() {
	for _, ps := range v.pkgOrder {
		byVersion := map[string][]string{}
		for name, bs := range ps.bundles {
			if len(ps.inChannels[name]) == 0 || !bs.vOK {
				continue
			}
			byVersion[bs.version] = append(byVersion[bs.version], name)
			if bs.b.Image == "" && bs.b.Parsed.Objects == 0 {
				v.add(bs.b.Pos, "bundle-no-image-no-objects", ps.p.Name, "", name,
					fmt.Sprintf("bundle %q has no image and no olm.bundle.object properties", name),
					"set \"image\" to the bundle image reference")
			}
		}
		for ver, list := range byVersion {
			if len(list) < 2 {
				continue
			}
			sort.Strings(list)
			for _, name := range list {
				v.add(ps.bundles[name].b.Pos, "bundle-duplicate-version", ps.p.Name, "", name,
					fmt.Sprintf("version %s of package %q is used by %d bundles: %s", ver, ps.p.Name, len(list), strings.Join(list, ", ")),
					"every bundle of a package needs its own version")
			}
		}
	}
}
