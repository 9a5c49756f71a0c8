package filetree

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/diag"
)

// Read reads the files of the catalog directory dir as every reader of a catalog lists them
// (ListCatalog; .indexignore'd files included: what the image holds), keyed by slash path relative to dir,
// through an os.Root (nothing outside dir is read). A missing dir is an empty tree; a tree with an entry
// the listing refuses (a symbolic link, a special file, a look-alike name) is a *RefusedError.
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
	l, err := ListCatalog(root.FS())
	if err != nil {
		return nil, err
	}
	if len(l.Refused) > 0 {
		return nil, diag.InvalidError(&RefusedError{Dir: dir, Refused: l.Refused})
	}
	for _, p := range l.Files {
		if files[p], err = fs.ReadFile(root.FS(), p); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// RefusedError is a tree holding entries no reader of a catalog takes.
type RefusedError struct {
	Dir     string
	Refused []Refusal
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	for i, r := range e.Refused {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(filepath.Join(e.Dir, filepath.FromSlash(r.Path)) + " " + r.Reason)
	}
	return b.String()
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
