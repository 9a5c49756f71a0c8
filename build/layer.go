package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
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

// listCatalog lists fbcDir as every reader of a catalog lists it (filetree.ListCatalog: no link followed,
// .git skipped) and returns its entries sorted by tar path. The image holds every regular file,
// .indexignore'd ones too; an entry the listing refuses (a symbolic link, a special file, a name another
// one could be taken for) fails the build with an error naming each.
func listCatalog(ctx context.Context, root *os.Root, fbcDir string) ([]layerEntry, error) {
	l, err := filetree.ListCatalog(root.FS())
	if err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", fbcDir, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(l.Refused) > 0 {
		var errs []error
		for _, r := range l.Refused {
			full := filepath.Join(fbcDir, filepath.FromSlash(r.Path))
			if r.Why == filetree.Link {
				errs = append(errs, fmt.Errorf("%s: %w: a catalog image holds regular files only; replace the link with the file it points to", full, ErrSymlink))
				continue
			}
			errs = append(errs, fmt.Errorf("%s %s: %s", full, r.Reason, r.Hint))
		}
		return nil, diag.InvalidError(errors.Join(errs...))
	}
	entries := make([]layerEntry, 0, len(l.Dirs)+len(l.Files))
	for _, d := range l.Dirs {
		entries = append(entries, layerEntry{rel: d, dir: true})
	}
	for _, f := range l.Files {
		entries = append(entries, layerEntry{rel: f})
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
