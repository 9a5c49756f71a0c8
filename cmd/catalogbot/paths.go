package main

import (
	"context"
	"path/filepath"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
)

// filesDir is where the directory dir is for the report's file paths, so that editors and pre-commit
// point at the files: the loads and checks of dir name every file under it as they make their
// diagnostics. It is --path-prefix when given, else dir relative to the root of the repository holding
// it; outside a git repository, dir as given, unless isRoot says dir is itself the repository's root (the
// directory of a template-driven repository's .catalogbot.yaml). The repository is looked for only when
// a diagnostic names a file: a run without one starts no git process.
func (o *outputFlags) filesDir(ctx context.Context, dir string, isRoot bool) diag.Dir {
	prefix := o.root
	o.root = "" // the diagnostics carry it, not again the renderers
	if prefix != "" {
		return diag.DirOf(prefix)
	}
	return diag.LazyDir(func() string { return repoRelative(ctx, dir, isRoot) })
}

// repoRelative is dir relative to the root of the git repository holding it; outside one, dir as given
// (cleaned), or "." when isRoot says dir is the repository's root.
func repoRelative(ctx context.Context, dir string, isRoot bool) string {
	given := filepath.ToSlash(filepath.Clean(dir))
	if isRoot {
		given = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return given
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	top, err := gitrepo.TopLevel(ctx, abs)
	if err != nil {
		return given
	}
	return repoRelativeTo(top, dir)
}

// repoRelativeTo is dir relative to top, the root of the git repository holding it, or dir as given
// (cleaned) when it is not inside.
func repoRelativeTo(top, dir string) string {
	given := filepath.ToSlash(filepath.Clean(dir))
	abs, err := filepath.Abs(dir)
	if err != nil {
		return given
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return given
	}
	return filepath.ToSlash(rel)
}
