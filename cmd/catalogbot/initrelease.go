package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/render/release"
	"github.com/catalogbot/catalogbot/render/template"
)

// detectBundleImage finds release.bundleImage from the bundle images the packages' templates name
// (template.BundleImages, as their render reads them), each with the version of the bundle a committed
// catalog holds under that image.
func detectBundleImage(ctx context.Context, root string, cats []template.Catalog) (release.Detected, error) {
	jobs, _, err := template.Plan(root, cats, "")
	if err != nil {
		return release.Detected{}, err
	}
	versions, err := committedVersions(ctx, root, cats)
	if err != nil {
		return release.Detected{}, err
	}
	var named []release.Named
	read := map[string]bool{}
	for _, j := range jobs {
		if read[j.Template] {
			continue
		}
		read[j.Template] = true
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(j.Template)))
		if err != nil {
			continue // the proof says why the mapping does not render
		}
		images, err := template.BundleImages(data)
		if err != nil {
			continue // likewise
		}
		for _, img := range images {
			named = append(named, release.Named{Package: j.Package, Image: img, Version: versions[j.Package+" "+img]})
		}
	}
	return release.DetectPattern(named), nil
}

// committedVersions are the versions of the committed catalogs' bundles, by "package image".
func committedVersions(ctx context.Context, root string, cats []template.Catalog) (map[string]string, error) {
	out := map[string]string{}
	for _, c := range cats {
		dir := filepath.Join(root, filepath.FromSlash(c.Dir))
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		res, err := catalog.LoadDir(ctx, dir, catalog.LoadOptions{Lean: true})
		if err != nil {
			return nil, fmt.Errorf("reading the bundle versions of catalog %s: %w", c.Name, err)
		}
		for _, b := range res.Catalog.Bundles {
			if b.Parsed != nil && len(b.Parsed.Packages) == 1 && b.Image != "" {
				out[b.Package+" "+b.Image] = b.Parsed.Packages[0].Version
			}
		}
	}
	return out, nil
}

// bundleImageConfig is the release: section init writes for d ("" when d found no clear pattern).
func bundleImageConfig(d release.Detected) string {
	if d.Pattern == "" {
		return ""
	}
	return fmt.Sprintf("release:\n  # explains %d of the templates' %d bundle images by tag (catalogbot init's report)\n  bundleImage: %s\n",
		d.Explained, d.Counted, d.Pattern)
}

// bundleImageReport is init's account of release.bundleImage: the pattern and how many images it
// explains, or why none was written; the examples it does not explain; the images that did not count.
func bundleImageReport(d release.Detected) string {
	var b strings.Builder
	if d.Pattern != "" {
		fmt.Fprintf(&b, "release.bundleImage: %s explains %d of %d images the templates name by tag (%s)",
			d.Pattern, d.Explained, d.Counted, template.Plural(d.Packages, "package"))
	} else {
		fmt.Fprintf(&b, "release.bundleImage: not written: %s; set it by hand (docs/release.md)", d.Why)
	}
	if len(d.Others) > 0 && d.Explained < d.Counted {
		fmt.Fprintf(&b, "; the others: %s", strings.Join(d.Others, ", "))
		if n := d.Counted - d.Explained; n > len(d.Others) {
			fmt.Fprintf(&b, " and %d more", n-len(d.Others))
		}
	}
	b.WriteString("\n")
	var not []string
	if d.Digests > 0 {
		not = append(not, template.Plural(d.Digests, "image")+" by digest (a digest shows no version)")
	}
	if d.Unknown > 0 {
		not = append(not, template.Plural(d.Unknown, "image")+" no committed catalog holds (its version unknown)")
	}
	if len(not) > 0 {
		fmt.Fprintf(&b, "  not counted, for or against: %s\n", strings.Join(not, "; "))
	}
	return b.String()
}
