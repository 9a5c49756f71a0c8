package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/render/template"
)

// Layout is where a repository keeps its catalogs: a single-catalog repository is a layout of one
// (catalog.dir); a template-driven one (catalogs: in .catalogbot.yaml) has one catalog per version and
// keeps each package's templates and ci.yaml under operators/<package>/.
type Layout struct {
	// Catalogs are the catalogs, in version order.
	Catalogs []config.Catalog
	// Templates says packages keep their templates under operators/<package>/.
	Templates bool
	// OwnersFrom is where a package's owners are listed when the configuration's ownersFrom is not set:
	// DefaultMultiOwnersFrom in a template-driven layout, none otherwise.
	OwnersFrom string
	// References is the references config (references.file) that renders a layout of one catalog; empty
	// for none.
	References string
	// NothingToRender says why the render stage has nothing to render when no template mapping of a
	// touched package and no references config applies.
	NothingToRender string
	// Sources are the paths the catalogs are built from besides the references config's own (the
	// catalogs' directories; in a template-driven layout also the configuration, the templates and the
	// catalogs' parent): a push that touches none of them publishes nothing.
	Sources []string
	// ImageSetting is the setting that names the catalogs' images (publish.image or catalogs.image).
	ImageSetting string
}

// noTemplateMapping is a template-driven layout's NothingToRender.
const noTemplateMapping = "no template mapping of a touched package"

// LayoutAt resolves cfg's layout from git: for a catalogs pattern without versions, the catalogs are the
// directories the pattern matches in any of commits (a change that removes or adds a catalog still has
// it in its layout).
func LayoutAt(cfg *config.Config, commits ...*object.Commit) (*Layout, error) {
	versions, err := patternVersions(cfg.Catalogs, commits) // nil unless a versions-less pattern
	if err != nil {
		return nil, err
	}
	return layoutOf(cfg, func() ([]config.Catalog, error) {
		switch {
		case versions == nil:
			return cfg.ResolveCatalogs("")
		case len(versions) == 0:
			return nil, nil // no catalog yet
		}
		c := *cfg
		c.Catalogs.Versions = versions
		return c.ResolveCatalogs("")
	})
}

// LayoutIn resolves cfg's layout in the directory root (a work tree): for a catalogs pattern without
// versions, the catalogs are the directories the pattern matches under root.
func LayoutIn(cfg *config.Config, root string) (*Layout, error) {
	return layoutOf(cfg, func() ([]config.Catalog, error) { return cfg.ResolveCatalogs(root) })
}

// layoutOf is cfg's layout: catalog.dir as a layout of one, or, with catalogs:, the template-driven
// layout of the catalogs resolve lists.
func layoutOf(cfg *config.Config, resolve func() ([]config.Catalog, error)) (*Layout, error) {
	if !cfg.MultiCatalog() {
		dir := path.Clean(cfg.Catalog.Dir)
		return &Layout{Catalogs: []config.Catalog{{Name: path.Base(dir), Dir: dir, Image: cfg.Publish.Image}}, References: cfg.References.File,
			NothingToRender: "no references config (references.file in " + config.ConfigFile + ")",
			Sources:         []string{dir}, ImageSetting: "publish.image"}, nil
	}
	cats, err := resolve()
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("resolving the catalogs of %s: %w", config.ConfigFile, err))
	}
	return &Layout{Catalogs: cats, Templates: true, OwnersFrom: DefaultMultiOwnersFrom, NothingToRender: noTemplateMapping,
		Sources: multiSources(cfg), ImageSetting: "catalogs.image"}, nil
}

// multiSources are the paths a template-driven repository's catalogs are built from: the configuration
// (images, build settings), the templates and ci.yaml files, and the catalogs' directories (the pattern's
// parent, where a catalog may be added). Which catalogs are rebuilt is decided per catalog (publishOne).
func multiSources(cfg *config.Config) []string {
	out := []string{config.ConfigFile, template.OperatorsDir}
	if cc := cfg.Catalogs; cc.Pattern != "" {
		if parent, _, _ := strings.Cut(cc.Pattern, config.VersionPlaceholder); strings.HasSuffix(parent, "/") {
			return append(out, path.Clean(parent))
		}
		return append(out, ".")
	}
	for _, e := range cfg.Catalogs.List {
		out = append(out, path.Clean(e.Dir))
	}
	return out
}

// HasImage tells whether any catalog of the layout is published (names an image).
func (l *Layout) HasImage() bool {
	for _, c := range l.Catalogs {
		if c.Image != "" {
			return true
		}
	}
	return false
}

// patternVersions lists the directories a versions-less catalogs pattern matches at commits; nil when the
// configuration lists its catalogs or versions (or the pattern is malformed: ResolveCatalogs says so).
func patternVersions(cc config.CatalogsConfig, commits []*object.Commit) ([]string, error) {
	parent, rest, _ := strings.Cut(cc.Pattern, config.VersionPlaceholder)
	if cc.Pattern == "" || len(cc.Versions) > 0 || len(cc.List) > 0 || rest != "" || !strings.HasSuffix(parent, "/") {
		return nil, nil
	}
	parent = path.Clean(parent)
	seen := map[string]bool{}
	out := []string{}
	for _, c := range commits {
		tree, err := c.Tree()
		if err != nil {
			return nil, fmt.Errorf("tree of %s: %w", short(c.Hash.String()), err)
		}
		sub, err := tree.Tree(parent)
		if errors.Is(err, object.ErrDirectoryNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing catalogs in %s at %s: %w", parent, short(c.Hash.String()), err)
		}
		for _, e := range sub.Entries {
			if e.Mode == filemode.Dir && !seen[e.Name] {
				seen[e.Name] = true
				out = append(out, e.Name)
			}
		}
	}
	return out, nil
}

// CatalogOf is the catalog holding repository path p, and p relative to the catalog's directory.
func (l *Layout) CatalogOf(p string) (config.Catalog, string, bool) {
	for _, c := range l.Catalogs {
		if rel, ok := strings.CutPrefix(p, path.Clean(c.Dir)+"/"); ok {
			return c, rel, true
		}
	}
	return config.Catalog{}, "", false
}

// catalogAt tells whether catalog c's directory exists at commit (the owners and smoke stages ask it of
// the base: a directory the change adds is a new catalog). A tree that cannot be read is an error, never
// a guess either way.
func catalogAt(commit *object.Commit, c config.Catalog) (bool, error) {
	tree, err := commit.Tree()
	if err != nil {
		return false, fmt.Errorf("tree of %s: %w", short(commit.Hash.String()), err)
	}
	_, err = tree.Tree(path.Clean(c.Dir))
	switch {
	case errors.Is(err, object.ErrDirectoryNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("catalog %s (%s) at %s: %w", c.Name, c.Dir, short(commit.Hash.String()), err)
	}
	return true, nil
}

// catalogNamed is the layout's catalog called name.
func (l *Layout) catalogNamed(name string) (config.Catalog, bool) {
	for _, c := range l.Catalogs {
		if c.Name == name {
			return c, true
		}
	}
	return config.Catalog{}, false
}

// templatePackage is the package whose operators/<package>/ directory holds p, in a template-driven layout.
func (l *Layout) templatePackage(p string) (string, bool) {
	if !l.Templates {
		return "", false
	}
	rest, ok := strings.CutPrefix(p, template.OperatorsDir+"/")
	if !ok {
		return "", false
	}
	pkg, _, nested := strings.Cut(rest, "/")
	return pkg, nested
}

// dirPackage is the package the package directory dir holds (catalogs.packages may declare a name
// other than the directory's, as upstream's operators/konflux/ holds konflux-operator).
func (l *Layout) dirPackage(dir string) string {
	if len(l.Catalogs) == 0 {
		return dir
	}
	return config.CatalogsConfig{Packages: l.Catalogs[0].Packages}.DirPackage(dir)
}

// packageDir is the package whose directory holds p (operators/<pkg>/ or <catalog>/<pkg>/): where its
// templates and rendered catalogs are kept, which is not whom the file's blobs name (Attribute decides
// that).
func (l *Layout) packageDir(p string) (string, bool) {
	if pkg, ok := l.templatePackage(p); ok {
		return pkg, true
	}
	if _, rel, ok := l.CatalogOf(p); ok {
		pkg, _, nested := strings.Cut(rel, "/")
		return pkg, nested
	}
	return "", false
}

// Attribution is a change's paths by package.
type Attribution struct {
	// Packages maps each touched package to its changed files (repository paths, sorted).
	Packages map[string][]string
	// Other are the changed paths no package holds (sorted): the configuration, anything outside the
	// catalogs and templates, and catalog files that name no package.
	Other []string
}

// Attribute says which packages the paths changed between base and head belong to. A catalog file belongs
// to every package its blobs name at the base or at the head (package identity, not the directory: an
// olm.deprecations blob for bar in foo's directory is bar's); a catalog file naming no package (deleted
// blobs are named at the base) belongs to the package of its directory when that package's blobs are also
// touched, and otherwise to nobody (a maintainer's). A file under operators/<pkg>/ is pkg's.
func (l *Layout) Attribute(ctx context.Context, repo *gitrepo.Repo, base, head *object.Commit, paths []string) (*Attribution, error) {
	a := &Attribution{Packages: map[string][]string{}}
	add := func(pkg, file string) {
		if !slices.Contains(a.Packages[pkg], file) {
			a.Packages[pkg] = append(a.Packages[pkg], file)
		}
	}
	byCatalog := map[string]map[string]bool{} // catalog dir -> changed catalog-relative files
	var inCatalogs []string
	for _, p := range paths {
		if dir, ok := l.templatePackage(p); ok {
			add(l.dirPackage(dir), p)
			continue
		}
		c, rel, ok := l.CatalogOf(p)
		if !ok {
			a.Other = append(a.Other, p)
			continue
		}
		dir := path.Clean(c.Dir)
		if byCatalog[dir] == nil {
			byCatalog[dir] = map[string]bool{}
		}
		byCatalog[dir][rel] = true
		inCatalogs = append(inCatalogs, p)
	}
	named := map[string]bool{}
	for _, dir := range slices.Sorted(maps.Keys(byCatalog)) {
		files := byCatalog[dir]
		if err := addIgnoreFlips(ctx, repo, base, head, dir, files); err != nil {
			return nil, err
		}
		include := func(p string) bool { return files[p] || path.Base(p) == catalog.IndexIgnore }
		for _, commit := range []*object.Commit{base, head} {
			fsys, err := repo.TreeFS(commit, dir, include)
			if err != nil {
				return nil, err
			}
			cat, err := loadSubset(ctx, fsys, "") // positions relative to dir, as files are
			if err != nil {
				return nil, fmt.Errorf("reading the changed files of %s at %s: %w", dir, short(commit.Hash.String()), err)
			}
			for pkg, pos := range cat.Blobs() {
				if pkg != "" && files[pos.File] {
					f := dir + "/" + pos.File
					add(pkg, f)
					named[f] = true
				}
			}
		}
	}
	for _, p := range inCatalogs {
		if named[p] {
			continue
		}
		_, rel, _ := l.CatalogOf(p)
		if top, _, nested := strings.Cut(rel, "/"); nested && a.Packages[top] != nil {
			add(top, p)
			continue
		}
		a.Other = append(a.Other, p)
	}
	for pkg := range a.Packages {
		sort.Strings(a.Packages[pkg])
	}
	sort.Strings(a.Other)
	return a, ctx.Err()
}
