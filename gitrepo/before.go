package gitrepo

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
)

// Before returns a reader of files of the catalog directory dir (slash paths relative to it) as they
// were before the change Changed lists: at ref, or with staged at HEAD (nothing, before the first
// commit). A file that did not exist there reads as ok false.
func Before(ctx context.Context, dir, ref string, staged bool) func(path string) ([]byte, bool, error) {
	if staged {
		ref = "HEAD"
	}
	return func(p string) ([]byte, bool, error) {
		spec := ref + ":./" + p
		// cat-file -e answers whether the object exists without printing it
		if err := exec.CommandContext(ctx, "git", "-C", dir, "cat-file", "-e", spec).Run(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return nil, false, nil
			}
			return nil, false, err
		}
		data, err := Run(ctx, filepath.Clean(dir), "cat-file", "blob", spec)
		if err != nil {
			return nil, false, err
		}
		return data, true, nil
	}
}
