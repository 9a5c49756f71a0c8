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

// multiOwners classifies a template-driven repository's change for owners.Decide: a file under
// operators/<pkg>/ belongs to package pkg, a catalog file to the packages its blobs name (Attribute); a
// package's owners are read (by the owners stage) from its ci.yaml's reviewers at the base branch's tip;
// a package neither directory holds at the base is new. A ci.yaml whose reviewers the change keeps as they were is package content; one whose
// reviewers change is an owners file, for a maintainer. It returns the configuration to decide with
// (ownersFrom defaulted to DefaultMultiOwnersFrom).
func (s *state) multiOwners(ctx context.Context) (*config.Config, owners.Change, error) {
	cfg := *s.cfg
	if cfg.OwnersFrom == "" {
		cfg.OwnersFrom = DefaultMultiOwnersFrom
	}
	ch := owners.Change{Packages: map[string]owners.PackageChange{}, OwnersKept: map[string]bool{},
		ReferenceEntries: s.changes.refEntries}
	a, err := s.affectedCatalogs(ctx)
	if err != nil {
		return nil, ch, err
	}
	add := func(pkg, file string) {
		pc := ch.Packages[pkg]
		pc.Files = append(pc.Files, file)
		ch.Packages[pkg] = pc
	}
	baseTree, err := s.base.Tree()
	if err != nil {
		return nil, ch, err
	}
	// Only catalogs the base has belong to packages: a directory a catalogs pattern would take for a new
	// catalog (a new published image) is the repository's, for a maintainer to add.
	var existing []config.Catalog
	for _, c := range a.catalogs {
		if _, err := baseTree.Tree(path.Clean(c.Dir)); err == nil {
			existing = append(existing, c)
		}
	}
	for _, p := range s.changes.paths {
		if p == config.ConfigFile {
			ch.ConfigChanged = true
		}
	}
	// Files belong to the packages their blobs name, whatever directory holds them.
	layout := &Layout{Catalogs: existing, Templates: true}
	at, err := layout.Attribute(ctx, s.in.Repo, s.base, s.head, s.changes.paths)
	if err != nil {
		return nil, ch, err
	}
	for pkg, files := range at.Packages {
		for _, f := range files {
			add(pkg, f)
		}
	}
	ch.Paths = at.Other
	for _, pkg := range slices.Sorted(maps.Keys(ch.Packages)) {
		dirs := []string{path.Join(template.OperatorsDir, pkg)}
		for _, c := range a.catalogs {
			dirs = append(dirs, path.Join(path.Clean(c.Dir), pkg))
		}
		existed := false
		for _, d := range dirs {
			if _, err := baseTree.Tree(d); err == nil {
				existed = true
				break
			}
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
