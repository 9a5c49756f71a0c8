package main

import (
	"context"
	"path"
	"path/filepath"

	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/report"
)

// relocate rewrites the report's file paths, which come relative to the directory dir, so that editors
// and pre-commit point at the files: joined to --path-prefix when it is given, else made relative to the
// repository root holding dir; outside a git repository, joined to dir as given, unless isRoot says dir
// is itself the repository's root (the directory of a template-driven repository's .catalogbot.yaml).
func (o *outputFlags) relocate(ctx context.Context, r *report.Report, dir string, isRoot bool) {
	prefix := o.root
	o.root = "" // applied here, not again by the renderers
	if !namesFiles(r) {
		return // nothing to rewrite: no need to ask git where the repository is
	}
	if prefix == "" {
		prefix = repoRelative(ctx, dir, isRoot)
	}
	if prefix == "" || prefix == "." {
		return
	}
	for i := range r.Stages {
		for j := range r.Stages[i].Diagnostics {
			if d := &r.Stages[i].Diagnostics[j]; d.File != "" {
				d.File = path.Join(prefix, d.File)
			}
		}
	}
}

// namesFiles reports whether a diagnostic of r names a file.
func namesFiles(r *report.Report) bool {
	for _, st := range r.Stages {
		for _, d := range st.Diagnostics {
			if d.File != "" {
				return true
			}
		}
	}
	return false
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
