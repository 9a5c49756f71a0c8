package pipeline

import (
	"context"
	"fmt"
	"path"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/gitrepo"
)

// addIgnoreFlips adds to files (catalog dir's changed files, catalog-relative) the unchanged files of dir
// that a changed .indexignore takes out of the catalog or brings into it: a load reads them on one side
// and not the other, so the change adds or removes their blobs as surely as an edit would, and they belong
// to the packages those blobs name (an .indexignore that hides another package's blob is that package's
// change).
func addIgnoreFlips(ctx context.Context, repo *gitrepo.Repo, base, head *object.Commit, dir string, files map[string]bool) error {
	changed := false
	for f := range files {
		changed = changed || path.Base(f) == catalog.IndexIgnore
	}
	if !changed {
		return nil
	}
	var loaded [2]map[string]bool
	for i, commit := range []*object.Commit{base, head} {
		fsys, err := repo.TreeNames(commit, dir, func(p string) bool { return path.Base(p) == catalog.IndexIgnore })
		if err != nil {
			return err
		}
		loaded[i] = map[string]bool{}
		if _, err := catalog.LoadFS(ctx, fsys, catalog.LoadOptions{Include: func(p string) bool {
			loaded[i][p] = true
			return false
		}}); err != nil {
			return fmt.Errorf("listing %s at %s: %w", dir, short(commit.Hash.String()), err)
		}
	}
	for i := range loaded {
		for f := range loaded[i] {
			if !loaded[1-i][f] {
				files[f] = true
			}
		}
	}
	return nil
}
