package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/diag"
)

// ConfigsDir is where the catalog lives in the image, as `opm generate dockerfile` puts it.
const ConfigsDir = "/configs"

// ErrSymlink marks a symbolic link found in the catalog directory; errors.Is finds it in Image's error.
var ErrSymlink = errors.New("symbolic link in catalog directory")

// layerEntry is one file or directory of the catalog, by its slash-separated path relative to fbcDir.
type layerEntry struct {
	rel string // "." for fbcDir itself
	dir bool
}

// CatalogLayer returns the gzip-compressed tar holding fbcDir under configs/: entries sorted by path,
// owned by 0:0, mode 0644 files and 0755 directories, every timestamp epoch, and a gzip header without name
// or time. Symbolic links and special files are refused with an error naming them; nothing outside fbcDir
// is read.
func CatalogLayer(ctx context.Context, fbcDir string, epoch time.Time) ([]byte, error) {
	root, err := os.OpenRoot(fbcDir)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("open catalog directory %s: %w", fbcDir, err))
	}
	defer root.Close()
	entries, err := listCatalog(ctx, root, fbcDir)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, fmt.Errorf("catalog layer of %s: %w", fbcDir, err)
	}
	tw := tar.NewWriter(zw)
	epoch = epoch.Truncate(time.Second).UTC()
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := writeEntry(tw, root, fbcDir, e, epoch); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("catalog layer of %s: close tar: %w", fbcDir, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("catalog layer of %s: close gzip: %w", fbcDir, err)
	}
	return buf.Bytes(), nil
}

// listCatalog walks fbcDir without following links and returns its entries sorted by tar path.
func listCatalog(ctx context.Context, root *os.Root, fbcDir string) ([]layerEntry, error) {
	var entries []layerEntry
	err := fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read catalog %s: %w", filepath.Join(fbcDir, filepath.FromSlash(rel)), err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		full := filepath.Join(fbcDir, filepath.FromSlash(rel))
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			return diag.InvalidError(fmt.Errorf("%s: %w: a catalog image holds regular files only; replace the link with the file it points to", full, ErrSymlink))
		case d.IsDir():
			entries = append(entries, layerEntry{rel: rel, dir: true})
		case t.IsRegular():
			entries = append(entries, layerEntry{rel: rel})
		default:
			return diag.InvalidError(fmt.Errorf("%s: %s is neither a regular file nor a directory", full, t.Type()))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b layerEntry) int { return strings.Compare(tarName(a.rel), tarName(b.rel)) })
	return entries, nil
}

// tarName is the path of a catalog entry inside the layer, without a trailing slash.
func tarName(rel string) string {
	return path.Join(strings.TrimPrefix(ConfigsDir, "/"), rel)
}

func writeEntry(tw *tar.Writer, root *os.Root, fbcDir string, e layerEntry, epoch time.Time) error {
	hdr := &tar.Header{Name: tarName(e.rel), ModTime: epoch, Uid: 0, Gid: 0}
	if e.dir {
		hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("catalog layer: directory %s: %w", filepath.Join(fbcDir, e.rel), err)
		}
		return nil
	}
	full := filepath.Join(fbcDir, filepath.FromSlash(e.rel))
	f, err := root.Open(e.rel)
	if err != nil {
		return fmt.Errorf("catalog layer: open %s: %w", full, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("catalog layer: stat %s: %w", full, err)
	}
	if !st.Mode().IsRegular() {
		return diag.InvalidError(fmt.Errorf("%s: changed into a non-regular file while building", full))
	}
	hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, st.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("catalog layer: file %s: %w", full, err)
	}
	if _, err := io.CopyN(tw, f, st.Size()); err != nil {
		return fmt.Errorf("catalog layer: copy %s (did it change while building?): %w", full, err)
	}
	return nil
}
