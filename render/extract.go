package render

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"testing/fstest"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/diag"
)

// Default limits of what an image may put under the directories Render reads.
const (
	DefaultMaxTotalBytes = 1 << 30
	DefaultMaxFileBytes  = 256 << 20
	DefaultMaxEntries    = 100000
)

// Whiteout markers of the OCI image layout (overlay semantics).
const (
	whiteoutPrefix = ".wh."
	opaqueWhiteout = ".wh..wh..opq"
	maxLinkHops    = 32
)

// limits bound an extraction.
type limits struct {
	maxTotal, maxFile int64
	maxEntries        int
}

// unsafeError is a tar entry Render refuses to unpack.
type unsafeError struct {
	layer, entry, why string
}

func (e *unsafeError) Error() string {
	return fmt.Sprintf("layer %s: entry %q: %s", e.layer, e.entry, e.why)
}

// entry is one kept tar entry: a directory, a regular file, or a link resolved once all layers are read.
type entry struct {
	typ      byte
	data     []byte
	linkname string
	layer    string
}

// flattener applies an image's layers from the top down, keeping only entries under roots, as the union
// filesystem would show them: upper layers win, whiteouts and opaque directories hide lower entries.
type flattener struct {
	roots []string
	lim   limits
	total int64
	count int

	result map[string]*entry
	// decided holds every path an upper layer had an entry for; hidden the paths whose whole subtree an
	// upper layer removed (whiteouts, non-directories); opaque the directories whose lower contents an
	// upper layer replaced.
	decided, hidden, opaque map[string]bool
}

// extractFS returns the files of img under roots (slash paths relative to the image root, such as
// "configs") as an in-memory file system keyed by their paths in the image. It refuses, anywhere in the
// image, absolute entry names and names with ".." components, and under roots: device files, links that
// leave their root, links to directories, and content beyond the limits. Nothing touches the disk.
func extractFS(ctx context.Context, img v1.Image, roots []string, lim limits) (fstest.MapFS, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("list layers: %w", err)
	}
	f := &flattener{
		roots: roots, lim: lim, result: map[string]*entry{},
		decided: map[string]bool{}, hidden: map[string]bool{}, opaque: map[string]bool{},
	}
	for i := len(layers) - 1; i >= 0; i-- {
		if err := f.layer(ctx, layers[i]); err != nil {
			return nil, err
		}
	}
	return f.mapFS()
}

func (f *flattener) layer(ctx context.Context, l v1.Layer) error {
	id := "?"
	if d, err := l.Digest(); err == nil {
		id = d.String()
	}
	rc, err := l.Uncompressed()
	if err != nil {
		return fmt.Errorf("layer %s: %w", id, err)
	}
	defer rc.Close()
	own := map[string]*entry{}
	var whiteouts, opaques []string
	tr := tar.NewReader(rc)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("layer %s: read tar: %w", id, err)
		}
		p, err := entryPath(h.Name)
		if err != nil {
			return diag.InvalidError(&unsafeError{layer: id, entry: h.Name, why: err.Error()})
		}
		if p == "." {
			continue
		}
		dir, base := path.Split(p)
		dir = path.Clean(dir)
		switch {
		case base == opaqueWhiteout:
			if f.relevant(dir) {
				opaques = append(opaques, dir)
			}
			continue
		case strings.HasPrefix(base, whiteoutPrefix):
			if target := path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix)); f.relevant(target) {
				whiteouts = append(whiteouts, target)
			}
			continue
		}
		if !f.relevant(p) || f.hiddenBelow(p) {
			continue
		}
		e, err := f.read(h, tr, p, id)
		if err != nil {
			return err
		}
		if old := own[p]; old != nil {
			f.total -= int64(len(old.data))
		}
		own[p] = e
	}
	// Read to the end so the layer's digest is verified.
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return fmt.Errorf("layer %s: %w", id, err)
	}
	for p, e := range own {
		f.decided[p] = true
		if e.typ != tar.TypeDir {
			f.hidden[p] = true
		}
		if e.typ != tar.TypeDir && f.holdsRoot(p) {
			return diag.InvalidError(&unsafeError{layer: id, entry: p,
				why: fmt.Sprintf("is not a directory, but it holds %s", f.describeRoots())})
		}
		if f.under(p) {
			f.result[p] = e
		}
	}
	for _, w := range whiteouts {
		f.decided[w] = true
		f.hidden[w] = true
	}
	for _, d := range opaques {
		f.opaque[d] = true
	}
	return nil
}

// read checks one entry under (or above) the roots and reads its content.
func (f *flattener) read(h *tar.Header, r io.Reader, p, layer string) (*entry, error) {
	bad := func(format string, a ...any) error {
		return diag.InvalidError(&unsafeError{layer: layer, entry: h.Name, why: fmt.Sprintf(format, a...)})
	}
	f.count++
	if f.count > f.lim.maxEntries {
		return nil, bad("more than %d entries under %s", f.lim.maxEntries, f.describeRoots())
	}
	e := &entry{typ: h.Typeflag, layer: layer}
	switch h.Typeflag {
	case tar.TypeDir:
	//lint:ignore SA1019 archives written before Go 1.11's writers (and some other tools) still mark files '\x00'
	case tar.TypeReg, tar.TypeRegA:
		e.typ = tar.TypeReg
		if h.Size > f.lim.maxFile {
			return nil, bad("file of %d bytes is larger than the %d-byte limit", h.Size, f.lim.maxFile)
		}
		if f.total+h.Size > f.lim.maxTotal {
			return nil, bad("the files under %s exceed the %d-byte limit", f.describeRoots(), f.lim.maxTotal)
		}
		e.data = make([]byte, h.Size)
		if _, err := io.ReadFull(r, e.data); err != nil {
			return nil, fmt.Errorf("layer %s: entry %q: %w", layer, h.Name, err)
		}
		f.total += h.Size
	case tar.TypeSymlink:
		e.linkname = h.Linkname
	case tar.TypeLink:
		lp, err := entryPath(h.Linkname)
		if err != nil {
			return nil, bad("hard link to %q: %v", h.Linkname, err)
		}
		e.linkname = lp
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return nil, bad("device or FIFO files are not allowed")
	default:
		return nil, bad("unsupported tar entry type %q", h.Typeflag)
	}
	return e, nil
}

// entryPath cleans a tar entry name into a slash path relative to the image root.
func entryPath(name string) (string, error) {
	if strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) {
		return "", errors.New("absolute path")
	}
	for _, part := range strings.Split(strings.ReplaceAll(name, `\`, "/"), "/") {
		if part == ".." {
			return "", errors.New(`path with a ".." component`)
		}
	}
	return path.Clean(name), nil
}

// under reports whether p is one of the roots or inside one.
func (f *flattener) under(p string) bool { return f.rootOf(p) != "" }

func (f *flattener) rootOf(p string) string {
	for _, r := range f.roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return r
		}
	}
	return ""
}

// relevant reports whether an entry at p can matter: it is under a root or is an ancestor of one.
func (f *flattener) relevant(p string) bool {
	if f.under(p) || p == "." {
		return true
	}
	for _, r := range f.roots {
		if strings.HasPrefix(r, p+"/") {
			return true
		}
	}
	return false
}

// holdsRoot reports whether p is a root or an ancestor of one.
func (f *flattener) holdsRoot(p string) bool {
	for _, r := range f.roots {
		if p == r || strings.HasPrefix(r, p+"/") {
			return true
		}
	}
	return false
}

// hiddenBelow reports whether upper layers already decided p or removed or replaced one of its parents.
func (f *flattener) hiddenBelow(p string) bool {
	if f.decided[p] {
		return true
	}
	for d := p; d != "."; {
		d = path.Dir(d)
		if f.opaque[d] || d != "." && f.hidden[d] {
			return true
		}
	}
	return false
}

// hasChildren reports whether the image has entries inside directory p (which may have no entry itself).
func (f *flattener) hasChildren(p string) bool {
	for q := range f.result {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return false
}

func (f *flattener) describeRoots() string {
	s := make([]string, len(f.roots))
	for i, r := range f.roots {
		s[i] = "/" + r
	}
	return strings.Join(s, " and ")
}

// mapFS resolves links and builds the file system.
func (f *flattener) mapFS() (fstest.MapFS, error) {
	m := fstest.MapFS{}
	for p, e := range f.result {
		switch e.typ {
		case tar.TypeDir:
			m[p] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		case tar.TypeReg:
			m[p] = &fstest.MapFile{Data: e.data, Mode: 0o644}
		default:
			data, err := f.resolve(p, e)
			if err != nil {
				return nil, diag.InvalidError(err)
			}
			m[p] = &fstest.MapFile{Data: data, Mode: 0o644}
		}
	}
	return m, nil
}

// resolve follows a link to the regular file it names, which must be under the link's own root (a
// symbolic link) or under one of the roots (a hard link).
func (f *flattener) resolve(p string, e *entry) ([]byte, error) {
	start, cur := p, e
	for hop := 0; hop < maxLinkHops; hop++ {
		var target string
		switch cur.typ {
		case tar.TypeReg:
			return cur.data, nil
		case tar.TypeDir:
			return nil, &unsafeError{layer: e.layer, entry: start, why: fmt.Sprintf("links to directory /%s; links to directories are not supported", p)}
		case tar.TypeLink:
			target = cur.linkname
			if f.rootOf(target) == "" {
				return nil, &unsafeError{layer: cur.layer, entry: p, why: fmt.Sprintf("hard link to /%s, outside %s", target, f.describeRoots())}
			}
		case tar.TypeSymlink:
			link := cur.linkname
			if path.IsAbs(link) {
				target = path.Clean(link)[1:]
			} else {
				target = path.Join(path.Dir(p), link)
			}
			if target == "" || target == ".." || strings.HasPrefix(target, "../") {
				return nil, &unsafeError{layer: cur.layer, entry: p, why: fmt.Sprintf("symbolic link to %q escapes the image", link)}
			}
			if root := f.rootOf(p); f.rootOf(target) != root {
				return nil, &unsafeError{layer: cur.layer, entry: p, why: fmt.Sprintf("symbolic link to %q points outside /%s", link, root)}
			}
		}
		next := f.result[target]
		if next == nil && f.hasChildren(target) {
			next = &entry{typ: tar.TypeDir, layer: cur.layer}
		}
		if next == nil {
			return nil, &unsafeError{layer: cur.layer, entry: p, why: fmt.Sprintf("links to /%s, which the image does not have", target)}
		}
		p, cur = target, next
	}
	return nil, &unsafeError{layer: e.layer, entry: start, why: fmt.Sprintf("more than %d levels of links", maxLinkHops)}
}
