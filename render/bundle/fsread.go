package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/catalogbot/catalogbot/diag"
)

// Default limits; Options can change them.
const (
	DefaultMaxFileSize  = 16 << 20
	DefaultMaxTotalSize = 256 << 20
	DefaultMaxFiles     = 10000
	maxSymlinkHops      = 40
)

// errIsDir marks a directory met where a file was expected (opm skips those).
var errIsDir = errors.New("is a directory")

// reader reads a bundle's files from an fs.FS: sizes are capped, only regular files are read and no
// symlink may lead outside the file system's root.
type reader struct {
	fsys     fs.FS
	maxFile  int64
	maxTotal int64
	maxFiles int
	total    int64
	files    int
}

// dir checks that name is a real directory (not a symlink) and lists it in name order.
func (r *reader) dir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fi, err := fs.Lstat(r.fsys, name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, diag.InvalidError(fmt.Errorf("%s/: directory not found: a registry+v1 bundle has manifests/ and metadata/", name))
	case err != nil:
		return nil, fmt.Errorf("%s/: %w", name, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, diag.InvalidError(fmt.Errorf("%s/: is a symlink; bundle directories must be real directories", name))
	case !fi.IsDir():
		return nil, diag.InvalidError(fmt.Errorf("%s: is not a directory", name))
	}
	entries, err := fs.ReadDir(r.fsys, name)
	if err != nil {
		return nil, fmt.Errorf("%s/: %w", name, err)
	}
	r.files += len(entries)
	if r.files > r.maxFiles {
		return nil, diag.InvalidError(fmt.Errorf("%s/: more than %d files in the bundle", name, r.maxFiles))
	}
	return entries, nil
}

// read returns the content of the regular file name, following symlinks only while they stay inside the
// file system. It returns errIsDir (wrapped) for directories.
func (r *reader) read(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	real, err := r.resolve(name)
	if err != nil {
		return nil, err
	}
	f, err := r.fsys.Open(real)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: %w", name, errIsDir)
	}
	if !fi.Mode().IsRegular() {
		return nil, diag.InvalidError(fmt.Errorf("%s: not a regular file (%s)", name, fi.Mode().Type()))
	}
	if fi.Size() > r.maxFile {
		return nil, r.tooLarge(name, fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, r.maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > r.maxFile {
		return nil, r.tooLarge(name, int64(len(data)))
	}
	r.total += int64(len(data))
	if r.total > r.maxTotal {
		return nil, diag.InvalidError(fmt.Errorf("%s: the bundle's files add up to more than the %d-byte limit", name, r.maxTotal))
	}
	return data, nil
}

func (r *reader) tooLarge(name string, size int64) error {
	return diag.InvalidError(fmt.Errorf("%s: file is %d bytes, larger than the %d-byte limit", name, size, r.maxFile))
}

// resolve follows the symlinks on the way to name, component by component, and returns the path of the
// file they lead to. A link that is absolute or climbs above the root is an error; so is a symlink in a file
// system that cannot say where it points.
func (r *reader) resolve(name string) (string, error) {
	rl, canReadLinks := r.fsys.(fs.ReadLinkFS)
	if !canReadLinks {
		fi, err := fs.Lstat(r.fsys, name)
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", diag.InvalidError(fmt.Errorf("%s: is a symlink and the file system cannot tell where it points", name))
		}
		return name, nil
	}
	parts := strings.Split(name, "/")
	done := ""
	for hops := 0; len(parts) > 0; {
		next := path.Join(done, parts[0])
		parts = parts[1:]
		fi, err := rl.Lstat(next)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return "", diag.InvalidError(fmt.Errorf("%s: too many levels of symlinks", name))
		}
		target, err := rl.ReadLink(next)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		joined := path.Join(path.Dir(next), target)
		if path.IsAbs(target) || joined == ".." || strings.HasPrefix(joined, "../") {
			return "", diag.InvalidError(fmt.Errorf("%s: symlink %s points outside the bundle (%s)", name, next, target))
		}
		if joined != "." {
			parts = append(strings.Split(joined, "/"), parts...)
		}
		done = ""
	}
	if done == "" {
		done = "."
	}
	return done, nil
}
