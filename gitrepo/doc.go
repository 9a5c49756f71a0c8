// Package gitrepo is every git read the product does: revisions, merge bases, tree diffs, files at a
// revision, throw-away checkouts (Repo, through go-git: pr, publish, action and the bot need no git executable), and the work-tree diffs pre-commit needs (through
// the git CLI, which is much faster at them). Writes (commits of rendered catalogs, pushes) live with the
// bot's clone cache.
package gitrepo
