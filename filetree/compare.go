package filetree

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// Read reads every regular file under dir, keyed by its slash-separated path relative to dir, through an
// os.Root (nothing outside dir is read). A missing dir is an empty tree; anything but directories and
// regular files (a symlink, a device) is an error naming it.
func Read(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return files, nil
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", filepath.Join(dir, filepath.FromSlash(p)))
		}
		data, err := fs.ReadFile(root.FS(), p)
		if err != nil {
			return err
		}
		files[p] = data
		return nil
	})
	return files, err
}

// Kind is how a file differs between two trees.
type Kind int

const (
	Modified Kind = iota // in both, with other bytes
	Added                // only in the new tree
	Removed              // only in the old tree
)

// Change is one file that differs between two trees.
type Change struct {
	Path     string // slash-separated, relative to the trees' roots
	Kind     Kind
	Old, New []byte // nil where the file is missing
}

// Diff lists the files that differ from old to new, by path.
func Diff(old, new map[string][]byte) []Change {
	paths := maps.Clone(old)
	maps.Copy(paths, new)
	var out []Change
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		o, inOld := old[p]
		n, inNew := new[p]
		switch {
		case !inOld:
			out = append(out, Change{Path: p, Kind: Added, New: n})
		case !inNew:
			out = append(out, Change{Path: p, Kind: Removed, Old: o})
		case string(o) != string(n):
			out = append(out, Change{Path: p, Kind: Modified, Old: o, New: n})
		}
	}
	return out
}
