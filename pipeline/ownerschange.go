package pipeline

import (
	"context"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/checks/owners"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/render/template"
)

// DefaultMultiOwnersFrom is where a template-driven repository's package owners are listed when
// ownersFrom is not configured: the reviewers of the package's ci.yaml, as community-operators keeps them.
const DefaultMultiOwnersFrom = template.OperatorsDir + "/" + config.PackagePlaceholder + "/" + template.CIFile

// ownersChange classifies the change for owners.Decide under the run's layout. Files belong to the
// packages their blobs name (Attribute), in the catalogs the base has: a directory a catalogs pattern
// would take for a new catalog (a new published image) is the repository's, for a maintainer to add; a
// file under operators/<pkg>/ of a template-driven layout is pkg's. A package is new when no catalog file
// of the base names it as a package (olm.package) and no template directory of the base holds it. An
// owners file whose owners the change keeps as they were (a ci.yaml whose catalog mapping changed, say)
// is package content; one whose owners change is for a maintainer. The references file's changed entries
// are their packages'; its top-level fields are the repository's. It returns the configuration to decide
// with (ownersFrom defaulted to the layout's).
func (s *state) ownersChange(ctx context.Context) (*config.Config, owners.Change, error) {
	cfg := *s.cfg
	if cfg.OwnersFrom == "" {
		cfg.OwnersFrom = s.layout.OwnersFrom
	}
	ch := owners.Change{Packages: map[string]owners.PackageChange{}, OwnersKept: map[string]bool{},
		ReferenceEntries: s.changes.refEntries}
	baseTree, err := s.base.Tree()
	if err != nil {
		return nil, ch, err
	}
	existing := &Layout{Templates: s.layout.Templates}
	for _, c := range s.layout.Catalogs {
		if ok, err := catalogAt(s.base, c); err != nil {
			return nil, ch, err
		} else if ok {
			existing.Catalogs = append(existing.Catalogs, c)
		}
	}
	for _, p := range s.changes.paths {
		if p == config.ConfigFile {
			ch.ConfigChanged = true
		}
	}
	var at *Attribution
	if len(existing.Catalogs) == len(s.layout.Catalogs) {
		at, err = s.attribution(ctx) // the run's own: the base has every catalog
	} else {
		at, err = existing.Attribute(ctx, s.in.Repo, s.base, s.head, s.changes.paths)
	}
	if err != nil {
		return nil, ch, err
	}
	for pkg, files := range at.Packages {
		ch.Packages[pkg] = owners.PackageChange{Files: files}
	}
	for _, p := range at.Other {
		if p != s.refsFile() || s.changes.refsGlobal {
			ch.Paths = append(ch.Paths, p)
		}
	}
	defined, err := s.basePackages(ctx)
	if err != nil {
		return nil, ch, err
	}
	for _, pkg := range slices.Sorted(maps.Keys(ch.Packages)) {
		existed := defined[pkg]
		if _, err := baseTree.Tree(path.Join(template.OperatorsDir, pkg)); err == nil && s.layout.Templates {
			existed = true
		}
		if !existed {
			ch.NewPackages = append(ch.NewPackages, pkg)
			continue
		}
		file := cfg.OwnersFilePath(pkg)
		if !slices.Contains(ch.Packages[pkg].Files, file) {
			continue
		}
		kept, err := s.ownersKept(file)
		if err != nil {
			return nil, ch, err
		}
		ch.OwnersKept[file] = kept
	}
	return &cfg, ch, ctx.Err()
}

// basePackages are the packages an olm.package blob of the base defines in the affected catalogs'
// touched packages' and changed files' directories.
func (s *state) basePackages(ctx context.Context) (map[string]bool, error) {
	pairs, _, err := s.catalogPairs(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range pairs {
		for _, pkg := range p.base.Packages {
			out[pkg.Name] = true
		}
	}
	return out, nil
}

// ownersKept tells whether the owners file lists the same owners, and no entry it ignores, at the change's
// base and at its head (both must have it).
func (s *state) ownersKept(file string) (bool, error) {
	var lists [2][]string
	for i, commit := range [2]*object.Commit{s.base, s.head} {
		data, ok, err := s.in.Repo.ReadFile(commit, file)
		if err != nil || !ok {
			return false, err
		}
		logins, ds := config.ParseOwnersFile(file, data)
		if len(ds) > 0 && i == 1 {
			return false, nil // an entry the head's file gets wrong is for a maintainer to fix
		}
		for _, l := range logins {
			lists[i] = append(lists[i], strings.ToLower(l))
		}
		slices.Sort(lists[i])
		lists[i] = slices.Compact(lists[i])
	}
	return slices.Equal(lists[0], lists[1]), nil
}

// templateFirst places a package's owners finding on the first file the change touched under
// operators/<pkg>/ (a template, most often: what the author wrote) rather than on a rendered catalog;
// file when there is none.
func templateFirst(files []string, file, ownersFile string) string {
	for _, f := range slices.Sorted(slices.Values(files)) {
		if strings.HasPrefix(f, template.OperatorsDir+"/") && f != ownersFile {
			return f
		}
	}
	return file
}
