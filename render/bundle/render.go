package bundle

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// Options tune Render. The zero value renders as `opm render` does by default.
type Options struct {
	// CSVMetadata gives the form of `opm render --migrate-level bundle-object-to-csv-metadata`: one
	// olm.csv.metadata property instead of the olm.bundle.object properties. Like opm, it only applies
	// when the image is not empty.
	CSVMetadata bool
	// Warn, when set, is told about files skipped the way opm skips them (and opm does not say).
	Warn func(msg string)
	// MaxFileSize caps each file (DefaultMaxFileSize when 0), MaxTotalSize all files together
	// (DefaultMaxTotalSize when 0), MaxFiles the number of directory entries (DefaultMaxFiles when 0).
	MaxFileSize  int64
	MaxTotalSize int64
	MaxFiles     int
}

// parsed is a bundle as opm's parser sees it.
type parsed struct {
	image       string
	objects     []manifest
	csvManifest *manifest
	csv         *csvObject
	crdKeys     []apiKey
	md          *metadata
}

// Render renders the registry+v1 bundle at the root of fsys (manifests/ and metadata/) into an
// olm.bundle blob, as `opm render` v1.73.0 does by default. image is the blob's image field: "" is what
// opm writes for a bundle directory, an image reference what it writes for a bundle image (and it is then
// also a related image).
//
// Render rejects everything opm rejects and, where opm would silently produce a bundle other than the one
// written, more: a second ClusterServiceVersion (opm drops it), a .yaml/.yml/.json manifest that does not
// parse or is not a Kubernetes object or starts with an empty document (opm drops the file), a metadata
// .yaml/.yml/.json file that does not parse (opm ignores it), and a missing package annotation (opm
// renders a bundle without a package). Errors name the file and are
// diag.InvalidError when the bundle is at fault.
func Render(ctx context.Context, fsys fs.FS, image string) (*catalog.Bundle, error) {
	return Options{}.Render(ctx, fsys, image)
}

// RenderDir renders the bundle in directory dir through an os.Root, so no symlink can leave it.
func RenderDir(ctx context.Context, dir, image string) (*catalog.Bundle, error) {
	return Options{}.RenderDir(ctx, dir, image)
}

// RenderDir is the package-level RenderDir with these options.
func (o Options) RenderDir(ctx context.Context, dir, image string) (*catalog.Bundle, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, diag.InvalidError(fmt.Errorf("bundle directory %s: %w", dir, err))
	}
	defer root.Close()
	b, err := o.Render(ctx, root.FS(), image)
	if err != nil {
		return nil, fmt.Errorf("bundle directory %s: %w", dir, err)
	}
	return b, nil
}

// Render is the package-level Render with these options.
func (o Options) Render(ctx context.Context, fsys fs.FS, image string) (*catalog.Bundle, error) {
	r := &reader{
		fsys:     fsys,
		maxFile:  orDefault(o.MaxFileSize, DefaultMaxFileSize),
		maxTotal: orDefault(o.MaxTotalSize, DefaultMaxTotalSize),
		maxFiles: int(orDefault(int64(o.MaxFiles), DefaultMaxFiles)),
	}
	p, err := o.parse(ctx, r, image)
	if err != nil {
		return nil, err
	}
	props, err := p.properties()
	if err != nil {
		return nil, diag.InvalidError(err)
	}
	images, err := p.relatedImages()
	if err != nil {
		return nil, diag.InvalidError(err)
	}
	if o.CSVMetadata {
		if props, err = p.toCSVMetadata(props); err != nil {
			return nil, diag.InvalidError(err)
		}
	}
	return &catalog.Bundle{
		Schema:        catalog.SchemaBundle,
		Name:          p.csv.Name,
		Package:       p.md.packageName,
		Image:         image,
		Properties:    props,
		RelatedImages: images,
	}, nil
}

// parse reads manifests/ and metadata/ and checks what opm's bundle parser checks.
func (o Options) parse(ctx context.Context, r *reader, image string) (*parsed, error) {
	objects, csvManifest, err := o.loadManifests(ctx, r)
	if err != nil {
		return nil, err
	}
	csv, err := newCSV(csvManifest)
	if err != nil {
		return nil, diag.InvalidError(err)
	}
	p := &parsed{image: image, objects: objects, csvManifest: csvManifest, csv: csv}
	for _, m := range objects {
		if m.obj.kind() != kindCRD {
			continue
		}
		keys, err := crdAPIs(m)
		if err != nil {
			return nil, diag.InvalidError(err)
		}
		p.crdKeys = append(p.crdKeys, keys...)
	}
	if err := p.checkOwnedCRDs(); err != nil {
		return nil, diag.InvalidError(err)
	}
	if p.md, err = o.loadMetadata(ctx, r); err != nil {
		return nil, err
	}
	return p, nil
}

func (o Options) warn(format string, args ...any) {
	if o.Warn != nil {
		o.Warn(fmt.Sprintf(format, args...))
	}
}

func orDefault(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}
