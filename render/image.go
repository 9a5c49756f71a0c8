package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"testing/fstest"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// Image labels opm reads to tell what an image holds.
const (
	LabelConfigs   = "operators.operatorframework.io.index.configs.v1"
	LabelDatabase  = "operators.operatorframework.io.index.database.v1"
	LabelMediatype = "operators.operatorframework.io.bundle.mediatype.v1"
	LabelPackage   = "operators.operatorframework.io.bundle.package.v1"
	// MediatypeRegistryV1 is the only bundle format opm renders.
	MediatypeRegistryV1 = "registry+v1"
)

// pulled is an image as Render needs it: an index image's file-based catalog, or a bundle image's
// manifests/ and metadata/.
type pulled struct {
	kind Kind
	// root is the catalog directory in the image ("/configs"), for messages.
	root string
	fsys fs.FS
	cat  once[*catalog.Result]
}

// pull reads img's labels and unpacks the directories they name, as opm render decides: the configs label
// means a file-based catalog, the bundle package or mediatype label a registry+v1 bundle. (opm prefers an
// sqlite database when an image has both database and configs labels; Render has no sqlite support and
// reads the configs.)
func pull(ctx context.Context, img v1.Image, lim limits) (*pulled, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read image config: %w", err)
	}
	labels := cf.Config.Labels
	configs, isIndex := labels[LabelConfigs]
	_, hasPackage := labels[LabelPackage]
	mediatype, hasMediatype := labels[LabelMediatype]
	switch {
	case isIndex:
		root := path.Clean("/" + configs)
		if root == "/" {
			return nil, ruleErr("image-unusable", "", diag.InvalidError(fmt.Errorf("label %s=%q names the image root, not a catalog directory", LabelConfigs, configs)))
		}
		dir := root[1:]
		m, err := extractFS(ctx, img, []string{dir}, lim)
		if err != nil {
			return nil, err
		}
		if !hasFileUnder(m, dir) {
			return nil, ruleErr("image-unusable", "", diag.InvalidError(fmt.Errorf("label %s=%s, but the image has no files under %s", LabelConfigs, configs, root)))
		}
		sub, err := fs.Sub(m, dir)
		if err != nil {
			return nil, err
		}
		return &pulled{kind: IndexImage, root: root, fsys: sub}, nil
	case hasPackage || hasMediatype:
		if hasMediatype && mediatype != MediatypeRegistryV1 {
			return nil, ruleErr("image-unusable", "only registry+v1 bundles can be rendered",
				diag.InvalidError(fmt.Errorf("bundle format %s=%q is not supported", LabelMediatype, mediatype)))
		}
		m, err := extractFS(ctx, img, []string{"manifests", "metadata"}, lim)
		if err != nil {
			return nil, err
		}
		return &pulled{kind: BundleImage, fsys: m}, nil
	case labels[LabelDatabase] != "":
		return nil, ruleErr("image-unusable", "rebuild the index as a file-based catalog (opm migrate)",
			diag.InvalidError(fmt.Errorf("sqlite-based index images (label %s) are not supported", LabelDatabase)))
	}
	var found []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		found = append(found, k+"="+labels[k])
	}
	msg := "image type could not be determined: image has no labels"
	if len(found) > 0 {
		msg = "image type could not be determined, found labels " + strings.Join(found, ", ")
	}
	return nil, ruleErr("image-unusable", fmt.Sprintf("an index image has the label %s, a bundle image %s", LabelConfigs, LabelPackage),
		diag.InvalidError(errors.New(msg)))
}

func hasFileUnder(m fstest.MapFS, dir string) bool {
	for p, f := range m {
		if strings.HasPrefix(p, dir+"/") && !f.Mode.IsDir() {
			return true
		}
	}
	return false
}

// catalog loads the index's file-based catalog once per run.
func (p *pulled) catalog(ctx context.Context) (*catalog.Result, error) {
	return p.cat.get(func() (*catalog.Result, error) {
		return catalog.LoadFS(ctx, p.fsys, catalog.LoadOptions{})
	})
}

// packageOf returns pkg's blobs from a loaded catalog, failing when the catalog does not parse where it
// concerns pkg or does not have pkg. where names the catalog in messages.
func packageOf(res *catalog.Result, pkg, where, root string) (*catalog.Catalog, error) {
	var problems []string
	for _, d := range res.Diagnostics {
		if d.Severity == diag.Error && (d.Package == "" || d.Package == pkg) {
			loc := d.Location()
			if root != "" && loc != "" {
				loc = root + "/" + loc
			}
			problems = append(problems, strings.TrimPrefix(loc+": ", ": ")+d.Message)
		}
	}
	if len(problems) > 0 {
		more := ""
		if len(problems) > 5 {
			more = fmt.Sprintf(" (and %d more)", len(problems)-5)
			problems = problems[:5]
		}
		return nil, ruleErr("catalog-invalid", "", diag.InvalidError(fmt.Errorf("%s: the catalog does not load: %s%s", where, strings.Join(problems, "; "), more)))
	}
	c := filterPackage(res.Catalog, pkg)
	if len(c.Packages)+len(c.Channels)+len(c.Bundles)+len(c.Deprecations)+len(c.Others) == 0 {
		names := packageNames(res.Catalog)
		has := "no packages"
		switch {
		case len(names) > 20:
			has = fmt.Sprintf("packages %s and %d more", strings.Join(names[:20], ", "), len(names)-20)
		case len(names) > 0:
			has = "packages " + strings.Join(names, ", ")
		}
		return nil, ruleErr("package-not-found", "name the reference after the package it should render",
			diag.InvalidError(fmt.Errorf("%s has no package %q; it has %s", where, pkg, has)))
	}
	return c, nil
}

// filterPackage keeps the blobs of package pkg: its olm.package blob, and every other blob whose package
// is pkg.
func filterPackage(c *catalog.Catalog, pkg string) *catalog.Catalog {
	return &catalog.Catalog{
		Packages:     ofPackage(c.Packages, pkg, func(p *catalog.Package) string { return p.Name }),
		Channels:     ofPackage(c.Channels, pkg, func(ch *catalog.Channel) string { return ch.Package }),
		Bundles:      ofPackage(c.Bundles, pkg, func(b *catalog.Bundle) string { return b.Package }),
		Deprecations: ofPackage(c.Deprecations, pkg, func(d *catalog.Deprecation) string { return d.Package }),
		Others:       ofPackage(c.Others, pkg, func(o *catalog.Meta) string { return o.Package }),
	}
}

// ofPackage keeps, in their order, the blobs whose package (packageOf) is pkg; nil when none is.
func ofPackage[B any](blobs []B, pkg string, packageOf func(B) string) []B {
	var out []B
	for _, b := range blobs {
		if packageOf(b) == pkg {
			out = append(out, b)
		}
	}
	return out
}

// packageNames lists the packages a catalog has blobs of, sorted.
func packageNames(c *catalog.Catalog) []string {
	set := map[string]bool{}
	for _, p := range c.Packages {
		set[p.Name] = true
	}
	for _, ch := range c.Channels {
		set[ch.Package] = true
	}
	for _, b := range c.Bundles {
		set[b.Package] = true
	}
	delete(set, "")
	return slices.Sorted(maps.Keys(set))
}
