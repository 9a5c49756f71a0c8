package validate

import (
	"context"
	"strconv"
	"strings"

	"github.com/catalogbot/catalogbot/internal/diag"
)

// Changed validates only what a change touched: the top-level directories (one per package in the usual
// layout) holding the changed files. It falls back to the whole catalog when a changed file is at the
// catalog root, or when the touched packages turn out to have blobs elsewhere (an unknown package in the
// subset), so a partial load can never invent or hide an error. It reports whether it fell back.
func Changed(ctx context.Context, dir string, changed []string, lim Limits) (*Result, bool, error) {
	dirs := map[string]bool{}
	for _, f := range changed {
		top, _, nested := strings.Cut(f, "/")
		if !nested {
			res, err := Dir(ctx, dir, Options{Limits: lim})
			return res, true, err
		}
		dirs[top] = true
	}
	include := func(p string) bool {
		top, _, nested := strings.Cut(p, "/")
		return nested && dirs[top]
	}
	if len(dirs) == 0 {
		return &Result{}, false, nil
	}
	res, err := Dir(ctx, dir, Options{Include: include, Limits: lim})
	if err != nil {
		return nil, false, err
	}
	for _, d := range res.Diagnostics {
		if d.Rule == "channel-unknown-package" || d.Rule == "bundle-unknown-package" || d.Rule == "deprecation-unknown-package" {
			full, err := Dir(ctx, dir, Options{Limits: lim})
			return full, true, err
		}
	}
	return res, false, nil
}

// Summary describes a result in one line.
func (r *Result) Summary() string {
	if r.Catalog == nil {
		return "nothing to validate"
	}
	c := r.Catalog
	errs := diag.TruncatedCount(r.Truncated, diag.Error)
	for _, d := range r.Diagnostics {
		if d.Severity == diag.Error {
			errs++
		}
	}
	return plural(len(r.Files), "file") + ", " + plural(len(c.Packages), "package") + ", " + plural(len(c.Channels), "channel") +
		", " + plural(len(c.Bundles), "bundle") + ": " + plural(errs, "error")
}

func plural(n int, what string) string {
	s := itoa(n) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
