package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render/bundle"
	"github.com/catalogbot/catalogbot/render/template"
)

// Release is one bundle directory's release: what it adds and where.
type Release struct {
	// Root is the repository root; Dir the bundle directory relative to it (operators/<package>/<version>).
	Root, Dir        string
	Package, Version string
	Bundle           Bundle
	// Rendered is the bundle rendered from its directory, named by Bundle.Image.
	Rendered *catalog.Bundle
	Targets  []Target
	// Mappings are the package's ci.yaml fbc.catalog_mapping entries.
	Mappings []template.Mapping
	// ConfigFile and CIFile are relative to Root; configData and ciData their contents.
	ConfigFile, CIFile string
	configData, ciData []byte
}

// Image is the bundle image reference pattern (release.bundleImage) with {package} and {version} filled.
func Image(pattern, pkg, version string) (string, error) {
	if !strings.Contains(pattern, "{version}") {
		return "", diag.UsageError(fmt.Errorf("release.bundleImage %q: the pattern must name {version} (such as registry/prefix/{package}:{version})", pattern))
	}
	image := strings.NewReplacer("{package}", pkg, "{version}", version).Replace(pattern)
	if _, err := name.ParseReference(image, name.StrictValidation); err != nil {
		return "", diag.UsageError(fmt.Errorf("release.bundleImage %q for %s %s: %q is not an image reference: %w", pattern, pkg, version, image, err))
	}
	return image, nil
}

// Load reads the release of bundle directory dir (relative to root: operators/<package>/<version>),
// naming the bundle image by pattern, and renders the bundle from the directory.
func Load(ctx context.Context, root, dir, pattern string) (*Release, error) {
	r, err := read(root, dir, pattern)
	if err != nil {
		return nil, err
	}
	if r.Rendered, err = bundle.RenderDir(ctx, filepath.Join(root, filepath.FromSlash(r.Dir)), r.Bundle.Image); err != nil {
		return nil, fmt.Errorf("rendering bundle %s: %w", r.Dir, err)
	}
	if r.Rendered.Package != r.Package {
		return nil, diag.InvalidError(fmt.Errorf("%s: the bundle's package annotation is %q, not the directory's %q", r.Dir, r.Rendered.Package, r.Package))
	}
	r.Bundle.Name = r.Rendered.Name
	return r, nil
}

// read is Load but for the bundle's render: its name is not known yet.
func read(root, dir, pattern string) (*Release, error) {
	dir = path.Clean(filepath.ToSlash(dir))
	parts := strings.Split(dir, "/")
	if len(parts) != 3 || parts[0] != template.OperatorsDir || parts[1] == ".." || parts[2] == ".." {
		return nil, diag.UsageError(fmt.Errorf("%s: a release is a bundle directory %s/<package>/<version>, from the repository root", dir, template.OperatorsDir))
	}
	r := &Release{Root: root, Dir: dir, Package: parts[1], Version: parts[2],
		ConfigFile: path.Join(dir, ConfigFile), CIFile: path.Join(template.OperatorsDir, parts[1], template.CIFile)}
	var err error
	if r.configData, err = readFile(root, r.ConfigFile, maxConfigSize); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, diag.UsageError(fmt.Errorf("%s: the bundle has no %s, so it names no template to release into", dir, ConfigFile))
		}
		return nil, fmt.Errorf("reading %s: %w", r.ConfigFile, err)
	}
	if r.Targets, err = ParseConfig(r.ConfigFile, r.configData); err != nil {
		return nil, err
	}
	if r.ciData, err = readFile(root, r.CIFile, template.MaxCISize); err != nil {
		return nil, diag.UsageError(fmt.Errorf("reading the package's %s: %w", r.CIFile, err))
	}
	if r.Mappings, err = template.ParseCI(r.ciData, r.CIFile); err != nil {
		return nil, diag.InvalidError(err)
	}
	image, err := Image(pattern, r.Package, r.Version)
	if err != nil {
		return nil, err
	}
	r.Bundle = Bundle{Package: r.Package, Image: image}
	return r, nil
}

// mapping is the ci.yaml mapping of template name, nil when none.
func (r *Release) mapping(name string) *template.Mapping {
	for i := range r.Mappings {
		if r.Mappings[i].Template == name {
			return &r.Mappings[i]
		}
	}
	return nil
}

// templateFile is a template's path relative to the root.
func (r *Release) templateFile(name string) string {
	return path.Join(template.OperatorsDir, r.Package, template.TemplatesDir, name)
}

// Change is one template file a release rewrites (Before nil: it creates it).
type Change struct {
	File          string
	Before, After []byte
}

// Apply computes the edited templates (it writes nothing): one Change per template, in the order the
// release configuration names them. A release Validate refuses is refused (with its first diagnostic).
func (r *Release) Apply() ([]Change, error) {
	if ds := r.Validate(); len(ds) > 0 {
		return nil, diag.InvalidError(fmt.Errorf("release %s refused (%d problems): %s", r.Dir, len(ds), ds[0].String()))
	}
	var out []Change
	for _, t := range r.Targets {
		m := r.mapping(t.Template)
		if m == nil {
			return nil, diag.InvalidError(fmt.Errorf("%s:%d: template %q is not mapped in %s", r.ConfigFile, t.Line, t.Template, r.CIFile))
		}
		file := r.templateFile(t.Template)
		data, err := readFile(r.Root, file, template.MaxTemplateSize)
		missing := errors.Is(err, fs.ErrNotExist)
		if err != nil && !missing {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		err = nil
		var after []byte
		switch {
		case missing && m.Type == template.SchemaBasic:
			after = CreateBasic(t, r.Bundle)
		case missing && m.Type == template.SchemaSemver:
			after = CreateSemver(t, r.Bundle)
		case m.Type == template.SchemaBasic:
			after, err = EditBasic(data, t, r.Bundle)
		case m.Type == template.SchemaSemver:
			after, err = EditSemver(data, t, r.Bundle)
		default:
			err = fmt.Errorf("a %s template cannot take a release (basic and semver templates can)", m.Type)
		}
		if err != nil {
			return nil, diag.InvalidError(fmt.Errorf("%s: %w", file, err))
		}
		out = append(out, Change{File: file, Before: data, After: after})
	}
	return out, nil
}

// Jobs are the render jobs of the templates the release edits, into every catalog their mappings name
// (of catalogs, the repository's).
func (r *Release) Jobs(catalogs []template.Catalog) ([]template.Job, []string, error) {
	jobs, warnings, err := template.Plan(r.Root, catalogs, r.Package)
	if err != nil {
		return nil, nil, err
	}
	named := map[string]bool{}
	for _, t := range r.Targets {
		named[r.templateFile(t.Template)] = true
	}
	var out []template.Job
	for _, j := range jobs {
		if named[j.Template] {
			out = append(out, j)
		}
	}
	return out, warnings, nil
}

// Render renders jobs (the release's Jobs), the bundle from its directory (as the image built from it
// renders) and every other image from next, concurrency jobs at a time; it writes nothing.
func (r *Release) Render(ctx context.Context, jobs []template.Job, next template.Source, concurrency int, progress io.Writer) []template.Result {
	src := &template.Local{Image: r.Bundle.Image, Rendered: r.Rendered, Next: next}
	return template.RenderJobs(ctx, r.Root, jobs, src, concurrency, false, progress)
}

// readFile reads a regular file of at most limit bytes under root (name slash-separated) as the template
// renderer reads templates: through an os.Root, so no symbolic link leads the release outside the repository.
func readFile(root, name string, limit int64) ([]byte, error) {
	data, err := template.ReadFile(root, name, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}
