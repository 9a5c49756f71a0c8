package bundleimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
)

// Limits on what a bundle directory may hold: the numbers of render/bundle's defaults (which count
// manifests/ and metadata/ only; MaxFiles here counts the directories and tests/scorecard/ too).
const (
	MaxFileSize  = 16 << 20
	MaxTotalSize = 256 << 20
	MaxFiles     = 10000
)

// trees are the directories the image holds, as the bundle Dockerfiles copy them; required ones must exist.
var trees = []struct {
	dir      string
	required bool
}{{"manifests", true}, {"metadata", true}, {"tests/scorecard", false}}

// epoch is every timestamp of the image.
var epoch = time.Unix(0, 0).UTC()

// entry is one directory or regular file of the layer, by its slash path (also its path in the bundle
// directory).
type entry struct {
	name string
	dir  bool
	size int64
}

// limits are the caps a build enforces.
type limits struct {
	file, total int64
	files       int
}

// list returns the layer's entries in tar order: the trees' directories and regular files, their parents
// ("tests/") included. A symbolic link, a special file or a look-alike name anywhere in a tree, a tree
// that is a link or a file, a missing manifests/ or metadata/, and a tree over the limits are refused,
// every problem named.
func list(ctx context.Context, fsys fs.FS, lim limits) ([]entry, error) {
	var (
		out   []entry
		errs  []error
		total int64
	)
	seen := map[string]bool{}
	addDir := func(d string) {
		if !seen[d] {
			seen[d] = true
			out = append(out, entry{name: d, dir: true})
		}
	}
	for _, tr := range trees {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ok, err := realDir(fsys, tr.dir, tr.required)
		if err != nil {
			errs = append(errs, err)
		}
		if !ok {
			continue
		}
		sub, err := fs.Sub(fsys, tr.dir)
		if err != nil {
			return nil, err
		}
		l, err := filetree.ListCatalog(sub)
		if err != nil {
			return nil, fmt.Errorf("reading %s/: %w", tr.dir, err)
		}
		for _, r := range l.Refused {
			errs = append(errs, fmt.Errorf("%s %s: a bundle image holds regular files and directories only", path.Join(tr.dir, r.Path), r.Reason))
		}
		for d := path.Dir(tr.dir); d != "."; d = path.Dir(d) {
			addDir(d)
		}
		for _, d := range l.Dirs {
			addDir(path.Join(tr.dir, d))
		}
		for _, f := range l.Files {
			name := path.Join(tr.dir, f)
			fi, err := fs.Stat(sub, f)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", name, err)
			}
			switch {
			case fi.Size() > lim.file:
				errs = append(errs, fmt.Errorf("%s: file is %d bytes, larger than the %d-byte limit", name, fi.Size(), lim.file))
			case total+fi.Size() > lim.total:
				return nil, diag.InvalidError(errors.Join(append(errs, fmt.Errorf("%s: the bundle's files add up to more than the %d-byte limit", name, lim.total))...))
			}
			total += fi.Size()
			out = append(out, entry{name: name, size: fi.Size()})
		}
		if len(out) > lim.files {
			return nil, diag.InvalidError(errors.Join(append(errs, fmt.Errorf("%s/: more than %d files and directories in the bundle", tr.dir, lim.files))...))
		}
	}
	if len(errs) > 0 {
		return nil, diag.InvalidError(errors.Join(errs...))
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// realDir says whether name is a directory of fsys reached through no symbolic link; a missing optional
// one is not an error.
func realDir(fsys fs.FS, name string, required bool) (bool, error) {
	parts := strings.Split(name, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := fs.Lstat(fsys, p)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !required:
			return false, nil
		case errors.Is(err, fs.ErrNotExist):
			return false, fmt.Errorf("%s/: directory not found: a registry+v1 bundle has manifests/ and metadata/", p)
		case err != nil:
			return false, fmt.Errorf("%s/: %w", p, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return false, fmt.Errorf("%s/: is a symbolic link: a bundle image holds real directories only", p)
		case !fi.IsDir():
			return false, fmt.Errorf("%s: is not a directory", p)
		}
	}
	return true, nil
}

// layer writes entries, read from fsys, into a gzip-compressed tar: owned by 0:0, files 0644 and
// directories 0755, every timestamp the epoch, no user or group names, a gzip header without name or
// time. It returns the layer and the content of AnnotationsFile.
func layer(ctx context.Context, fsys fs.FS, entries []entry) (gz, annotations []byte, err error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, nil, err
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		hdr := &tar.Header{Name: e.name, ModTime: epoch}
		if e.dir {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, e.name+"/", 0o755
			if err := tw.WriteHeader(hdr); err != nil {
				return nil, nil, fmt.Errorf("layer: directory %s: %w", e.name, err)
			}
			continue
		}
		data, err := readRegular(fsys, e)
		if err != nil {
			return nil, nil, err
		}
		if e.name == AnnotationsFile {
			annotations = data
		}
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, nil, fmt.Errorf("layer: file %s: %w", e.name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, nil, fmt.Errorf("layer: file %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, nil, fmt.Errorf("layer: close tar: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, nil, fmt.Errorf("layer: close gzip: %w", err)
	}
	if annotations == nil {
		return nil, nil, diag.InvalidError(fmt.Errorf("%s: not found: its annotations are the image's labels", AnnotationsFile))
	}
	return buf.Bytes(), annotations, nil
}

// readRegular reads the file of e, which must still be the regular file of the size listed.
func readRegular(fsys fs.FS, e entry) ([]byte, error) {
	f, err := fsys.Open(e.name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", e.name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", e.name, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() != e.size {
		return nil, diag.InvalidError(fmt.Errorf("%s: changed while the image was built", e.name))
	}
	data, err := io.ReadAll(io.LimitReader(f, e.size+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", e.name, err)
	}
	if int64(len(data)) != e.size {
		return nil, diag.InvalidError(fmt.Errorf("%s: changed while the image was built", e.name))
	}
	return data, nil
}
