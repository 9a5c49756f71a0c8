package template

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
)

// The community-operators layout: operators/<package>/ci.yaml maps templates in
// operators/<package>/catalog-templates/ to catalogs; each catalog's render of a package is
// <catalog dir>/<package>/catalog.yaml.
const (
	OperatorsDir = "operators"
	CIFile       = "ci.yaml"
	TemplatesDir = "catalog-templates"
	RenderedFile = "catalog.yaml"
)

// Catalog is one catalog of a repository: where it lives and how templates render into it.
type Catalog struct {
	Name string
	// Dir is relative to the repository root (slash-separated).
	Dir          string
	MigrateLevel string
	// OPMVersion is the opm release whose rendering the catalog keeps (DefaultOPMVersion when empty).
	OPMVersion OPMVersion
	// Packages are the repository's per-package settings (catalogs.packages), by package directory.
	Packages map[string]config.CatalogPackage
}

// PackageOf is the package held by dir (operators/<dir>, <catalog>/<dir>).
func (c Catalog) PackageOf(dir string) string {
	return config.CatalogsConfig{Packages: c.Packages}.DirPackage(dir)
}

// DirOf is the directory holding package pkg: the one declared for it, else pkg.
func (c Catalog) DirOf(pkg string) string {
	return config.CatalogsConfig{Packages: c.Packages}.PackageDir(pkg)
}

// OPMVersionOf is the opm release the package of directory dir renders with in this catalog.
func (c Catalog) OPMVersionOf(dir string) OPMVersion {
	if v := c.Packages[dir].OPMVersion; v != "" {
		return OPMVersion(v)
	}
	return c.OPMVersion
}

// Mapping is one fbc.catalog_mapping entry of a ci.yaml.
type Mapping struct {
	Template string
	// Type is the template schema as written (olm.template.basic, olm.semver, ...).
	Type     string
	Catalogs []string
	// Line is the entry's line; CatalogLines the line of each catalog name.
	Line         int
	CatalogLines []int
}

// MaxCISize bounds a ci.yaml.
const MaxCISize = 1 << 20

// ParseCI reads the fbc.catalog_mapping of a ci.yaml (other keys are left to their owners). A ci.yaml
// without fbc, or with fbc.enabled false, maps nothing.
func ParseCI(data []byte, file string) ([]Mapping, error) {
	if len(data) > MaxCISize {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, MaxCISize)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	_, fbc := exactField(doc.Content[0], "fbc")
	if fbc == nil {
		return nil, nil
	}
	if _, en := exactField(fbc, "enabled"); en != nil && en.Value == "false" {
		return nil, nil
	}
	_, list := exactField(fbc, "catalog_mapping")
	if list == nil {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: fbc.catalog_mapping is not a list", file, list.Line)
	}
	var out []Mapping
	for _, item := range list.Content {
		m := Mapping{Line: item.Line}
		for _, f := range []struct {
			key string
			dst *string
		}{{"template_name", &m.Template}, {"type", &m.Type}} {
			_, v := exactField(item, f.key)
			if v == nil || v.Kind != yaml.ScalarNode || v.Value == "" {
				return nil, fmt.Errorf("%s:%d: catalog mapping has no %s", file, item.Line, f.key)
			}
			*f.dst = v.Value
		}
		if m.Template != path.Base(m.Template) || m.Template == "." || m.Template == ".." || strings.Contains(m.Template, `\`) {
			return nil, fmt.Errorf("%s:%d: template_name %q must be a file name in %s/", file, item.Line, m.Template, TemplatesDir)
		}
		_, names := exactField(item, "catalog_names")
		if names == nil || names.Kind != yaml.SequenceNode || len(names.Content) == 0 {
			return nil, fmt.Errorf("%s:%d: catalog mapping has no catalog_names list", file, item.Line)
		}
		for _, n := range names.Content {
			if n.Kind != yaml.ScalarNode || n.Value == "" {
				return nil, fmt.Errorf("%s:%d: a catalog name must be a string", file, n.Line)
			}
			m.Catalogs = append(m.Catalogs, n.Value)
			m.CatalogLines = append(m.CatalogLines, n.Line)
		}
		out = append(out, m)
	}
	return out, nil
}

func exactField(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// typeOf is opm's TYPE argument for a mapping's schema.
func typeOf(schema string) (string, bool) {
	for t, s := range typeSchemas {
		if s == schema {
			return t, true
		}
	}
	return "", false
}

// Job renders one package's template into one catalog.
type Job struct {
	// Package is the package the template renders; Dir the directory holding it under operators/ and
	// in the catalog (the package's name unless the configuration declares another).
	Package, Dir string
	// OPMVersion is the opm release whose rendering the job reproduces (the package's pin, else the
	// catalog's).
	OPMVersion OPMVersion
	// Template and CI are slash paths relative to the repository root.
	Template, CI string
	// CILine is the line of the catalog's name in the ci.yaml.
	CILine  int
	Type    string
	Catalog Catalog
}

// Output is where the job's render is committed, relative to the repository root.
func (j Job) Output() string { return path.Join(j.Catalog.Dir, j.Dir, RenderedFile) }

// Plan lists the jobs of every package under root/operators (only pkg, a package or its directory, when
// not empty), in package, mapping and catalog order. A template type opm does not know is an error on its ci.yaml line; a catalog
// name that is not configured renders nowhere (upstream's recipe writes no configured catalog for it
// either) and is returned as a warning on its line.
func Plan(root string, catalogs []Catalog, pkg string) (jobs []Job, warnings []string, err error) {
	byName := map[string]Catalog{}
	for _, c := range catalogs {
		byName[c.Name] = c
	}
	var pkgs []string
	if pkg != "" {
		dir := pkg
		if len(catalogs) > 0 {
			dir = catalogs[0].DirOf(pkg)
		}
		pkgs = []string{dir}
	} else {
		entries, err := os.ReadDir(filepath.Join(root, OperatorsDir))
		if err != nil {
			return nil, nil, fmt.Errorf("listing packages: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() {
				pkgs = append(pkgs, e.Name())
			}
		}
	}
	for _, p := range pkgs {
		ci := path.Join(OperatorsDir, p, CIFile)
		data, err := readCapped(root, ci, MaxCISize)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && pkg == "" {
				continue
			}
			return nil, nil, fmt.Errorf("reading %s: %w", ci, err)
		}
		mappings, err := ParseCI(data, ci)
		if err != nil {
			return nil, nil, err
		}
		for _, m := range mappings {
			typ, ok := typeOf(m.Type)
			if !ok {
				return nil, nil, fmt.Errorf("%s:%d: unknown template type %q (olm.template.basic, olm.semver or olm.template.substitutes)", ci, m.Line, m.Type)
			}
			for i, name := range m.Catalogs {
				c, ok := byName[name]
				if !ok {
					warnings = append(warnings, fmt.Sprintf("%s:%d: catalog %q is not one of the configured catalogs; %s is not rendered into it", ci, m.CatalogLines[i], name, m.Template))
					continue
				}
				jobs = append(jobs, Job{Package: c.PackageOf(p), Dir: p, OPMVersion: c.OPMVersionOf(p),
					Template: path.Join(OperatorsDir, p, TemplatesDir, m.Template), CI: ci, CILine: m.CatalogLines[i], Type: typ, Catalog: c})
			}
		}
	}
	return jobs, warnings, nil
}

// Render renders the job from root with src, as YAML (the layout's catalog.yaml), with the job's opm. A
// rendered package that is not the job's package is an error on the ci.yaml line: it would land in
// another package's directory.
func (j Job) Render(ctx context.Context, root string, src Source) ([]byte, error) {
	return j.RenderWith(ctx, root, src, j.OPMVersion)
}

// RenderWith is Render reproducing opm release opm.
func (j Job) RenderWith(ctx context.Context, root string, src Source, opm OPMVersion) ([]byte, error) {
	data, err := readCapped(root, j.Template, MaxTemplateSize)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: template %s: %w", j.CI, j.CILine, j.Template, err)
	}
	c, err := Render(ctx, data, j.Template, src, Options{Type: j.Type, MigrateLevel: j.Catalog.MigrateLevel, OPMVersion: opm})
	if err != nil {
		return nil, err
	}
	if other := otherPackages(c, j.Package); len(other) > 0 {
		hint := ""
		if len(other) == 1 && len(c.PackageNames()) == 1 && j.Dir == j.Package {
			hint = fmt.Sprintf("; if directory %s holds package %s, declare it in %s: catalogs.packages.%s.package: %s",
				j.Dir, strings.Trim(other[0], `"`), config.ConfigFile, j.Dir, strings.Trim(other[0], `"`))
		}
		return nil, fmt.Errorf("%s: renders package(s) %s, not %q only (into %s)%s", j.Template, strings.Join(other, ", "), j.Package, j.Output(), hint)
	}
	var buf bytes.Buffer
	if err := Write(&buf, c, "yaml"); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func otherPackages(c *catalog.Catalog, pkg string) []string {
	var out []string
	for _, p := range c.PackageNames() {
		if p != pkg {
			out = append(out, fmt.Sprintf("%q", p))
		}
	}
	return out
}

// readCapped reads a repository file through an os.Root, so that no symlink in a pull request leads
// outside the repository, refusing anything but a regular file of at most limit bytes.
func readCapped(root, name string, limit int64) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(filepath.FromSlash(name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// SeedFromCommitted seeds store with every committed catalog of catalogs under root, which must be a
// trusted tree (the base branch's), never a pull request's. Packages whose jobs use semver templates
// also seed their default channel head's description and icon.
func SeedFromCommitted(ctx context.Context, store *Store, root string, catalogs []Catalog, jobs []Job) error {
	return SeedFromFS(ctx, store, os.DirFS(root), catalogs, jobs)
}

// SeedFromFS is SeedFromCommitted over any file system (such as a git tree of the base revision, read
// without a checkout).
func SeedFromFS(ctx context.Context, store *Store, fsys fs.FS, catalogs []Catalog, jobs []Job) error {
	semver := map[string]bool{}
	for _, j := range jobs {
		if j.Type == "semver" {
			semver[j.Package] = true
		}
	}
	for _, c := range catalogs {
		sub, err := fs.Sub(fsys, path.Clean(c.Dir))
		if err != nil {
			return fmt.Errorf("seeding from catalog %s: %w", c.Name, err)
		}
		if _, err := fs.Stat(sub, "."); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return fmt.Errorf("seeding from catalog %s: %w", c.Name, err)
		}
		res, err := catalog.LoadFS(ctx, sub, catalog.LoadOptions{})
		if err != nil {
			return fmt.Errorf("seeding from catalog %s: %w", c.Name, err)
		}
		var plain, sv catalog.Catalog
		for _, b := range res.Catalog.Bundles {
			if semver[b.Package] {
				sv.Bundles = append(sv.Bundles, b)
			} else {
				plain.Bundles = append(plain.Bundles, b)
			}
		}
		for _, p := range res.Catalog.Packages {
			if semver[p.Name] {
				sv.Packages = append(sv.Packages, p)
			}
		}
		for _, ch := range res.Catalog.Channels {
			if semver[ch.Package] {
				sv.Channels = append(sv.Channels, ch)
			}
		}
		if err := store.Seed(&plain, false); err != nil {
			return fmt.Errorf("seeding from catalog %s: %w", c.Name, err)
		}
		if err := store.Seed(&sv, true); err != nil {
			return fmt.Errorf("seeding from catalog %s: %w", c.Name, err)
		}
	}
	return nil
}

// CommittedCatalogs lists the catalog directories under root/dir (catalogs/v4.12 ...), sorted by
// version, for a repository whose configuration names them by pattern.
func CommittedCatalogs(root, dir string) ([]string, error) {
	entries, err := fs.ReadDir(os.DirFS(root), dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}
