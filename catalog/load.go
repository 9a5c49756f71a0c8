package catalog

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/catalogbot/catalogbot/catalog/internal/scan"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
)

// IndexIgnore is the name of the files whose gitignore-style patterns exclude paths from a catalog.
const IndexIgnore = filetree.IndexIgnore

// Default limits on what a load reads. A catalog larger than this is refused with a diagnostic naming the
// file and the limit; both can be raised (flags, .catalogbot.yaml limits). The largest public catalogs
// are about 100 MB in total, their largest file a few tens of MB.
const (
	DefaultMaxFileSize  = 256 << 20
	DefaultMaxTotalSize = 1 << 30
)

// LoadOptions tune a load. The zero value is a full load with default limits.
type LoadOptions struct {
	// Lean drops bundle property values after checking them, keeping their decoded summary in
	// Bundle.Parsed: validation needs no more, and memory stays small.
	Lean bool
	// Concurrency is the number of files parsed at once (default GOMAXPROCS).
	Concurrency int
	// MaxFileSize overrides DefaultMaxFileSize.
	MaxFileSize int64
	// MaxTotalSize overrides DefaultMaxTotalSize: the files of the load together. A catalog over it is not
	// read at all (Result.Refused), and the file where the total passes the limit gets a diagnostic.
	MaxTotalSize int64
	// Diagnostics, when set, receives every load diagnostic (the caller adds its own and reads the
	// result from it); when nil, a limiter with diag.DefaultMaxPerRule is used.
	Diagnostics *diag.Limiter
	// Dir is where the catalog is in the repository: every diagnostic of the load names its file under
	// it, and the catalog keeps it (Catalog.Dir) for the checks that name its files. Positions stay
	// relative to the root.
	Dir diag.Dir
	// Include, when set, limits the load to the files it accepts (slash paths relative to the root).
	Include func(path string) bool
	// Files, when set, are the catalog's files as an earlier listing of the same root found them (the
	// paths a load without Include offers to Include, in that order): the load does not list them again.
	Files []string
	// VisitBundle, when set, is called for each decoded bundle on the worker that parsed it (concurrently),
	// so per-bundle checks run in parallel with parsing. It sees the property values even in a lean load
	// (which drops them right after), and objects, the bundle's olm.bundle.object manifests as the load
	// decoded them to check them (base64-decoded, one per such property, in order), so that it need not
	// decode them again. It must not keep either: they point into the file's and the loader's memory,
	// which the next bundle reuses.
	VisitBundle func(b *Bundle, objects [][]byte)
	// CSVTypesOnly says that nothing reads the strings of a bundle's olm.csv.metadata value, VisitBundle
	// included: a lean load then converts YAML catalogs without them, checking only the types of that
	// value, most of a YAML catalog's text (83% of community-operators-prod v4.20). Its string values,
	// if VisitBundle reads them, are "". A full load ignores it.
	CSVTypesOnly bool
	// Sized, when set, is told the total size of the files the load reads, from the sizes it orders them
	// by, before it reads any (not when the catalog is over MaxTotalSize: then it reads none).
	Sized func(bytes int64)
	// flight, when set, counts the file data the workers hold (tests read it); else a load counts its own.
	flight *inFlight
}

// Result is a loaded catalog and every problem found while reading it. Problems do not stop the load:
// each file is read as far as it can be, and the rest of the catalog still loads.
type Result struct {
	Catalog     *Catalog
	Diagnostics []diag.Diagnostic
	// Truncated counts, per rule, the diagnostics beyond the limit that were dropped.
	Truncated []diag.Truncation
	// Files lists the catalog files read (after .indexignore), in order.
	Files []string
	// Refused is set when the catalog was over a size limit and was not read (a diagnostic says why).
	Refused bool
}

// LoadDir loads the catalog under dir. Nothing outside dir is read, and no symbolic link is followed
// (each one is refused with a diagnostic, see filetree.ListCatalog).
func LoadDir(ctx context.Context, dir string, opts LoadOptions) (*Result, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("open catalog directory %s: %w", dir, err))
	}
	defer root.Close()
	return LoadFS(ctx, rootFS{FS: root.FS(), root: root}, opts)
}

// rootFS is an os.Root's file system whose files open without waiting (see open).
type rootFS struct {
	fs.FS
	root *os.Root
}

func (r rootFS) Open(name string) (fs.File, error) { return r.open(name) }

// ReadLink and Lstat make rootFS an fs.ReadLinkFS, so a refused link's diagnostic names its target.
func (r rootFS) ReadLink(name string) (string, error) {
	return r.root.Readlink(filepath.FromSlash(name))
}

func (r rootFS) Lstat(name string) (fs.FileInfo, error) {
	return r.root.Lstat(filepath.FromSlash(name))
}

// open opens a file of the root without waiting on it: a named pipe in the catalog directory would block
// an ordinary open until something writes to it (the loader then refuses it as not a regular file).
func (r rootFS) open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := r.root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|openNoWait, 0)
	if err != nil {
		return nil, err // a nil *os.File must not become a non-nil fs.File
	}
	return f, nil
}

// maxKeptBuffer is the largest read or JSON buffer a worker keeps for its next file: a larger one would
// stay live for the rest of the load, and the collector lets the heap grow to twice what is live. A
// larger JSON buffer serves the file's next document only if that one is larger than this too.
const maxKeptBuffer = 1 << 20

// LoadFS loads the catalog in fsys.
func LoadFS(ctx context.Context, fsys fs.FS, opts LoadOptions) (*Result, error) {
	files := slices.Clone(opts.Files)
	var refused []diag.Diagnostic
	if files == nil {
		var err error
		if files, refused, err = catalogFiles(fsys, opts.Dir); err != nil {
			return nil, err
		}
	}
	if opts.Include != nil {
		kept := files[:0]
		for _, f := range files {
			if opts.Include(f) {
				kept = append(kept, f)
			}
		}
		files = kept
	}
	workers := opts.Concurrency
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	maxSize := opts.MaxFileSize
	if maxSize <= 0 {
		maxSize = DefaultMaxFileSize
	}
	sink := opts.Diagnostics
	if sink == nil {
		sink = diag.NewLimiter(diag.DefaultMaxPerRule)
	}
	for _, d := range refused {
		sink.Add(d) // whatever Include takes: the directory holds it, and the image would
	}
	finish := func(res *Result) *Result {
		res.Diagnostics, res.Truncated = sink.Diagnostics(), sink.Truncated()
		return res
	}
	d, over, sizes := overTotal(fsys, files, opts.MaxTotalSize, opts.Dir)
	if over {
		sink.Add(d)
		return finish(&Result{Catalog: &Catalog{Dir: opts.Dir}, Files: files, Refused: true}), nil
	}
	if opts.Sized != nil {
		var total int64
		for _, n := range sizes {
			total += n
		}
		opts.Sized(total)
	}
	flight := opts.flight
	if flight == nil {
		flight = &inFlight{}
	}
	parts := make([]*fileLoader, len(files))
	var bufs, jsBufs sync.Pool // read buffers and YAML documents' JSON, reused across files
	var g errgroup.Group
	g.SetLimit(workers)
	for _, i := range largestFirst(sizes) {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			buf, _ := bufs.Get().([]byte)
			js, _ := jsBufs.Get().([]byte)
			l := &fileLoader{file: files[i], dir: opts.Dir, lean: opts.Lean, elide: opts.elide(),
				cat: &Catalog{}, visit: opts.VisitBundle, sink: sink,
				flight: flight, js: js}
			if buf = l.load(fsys, maxSize, buf); cap(buf) <= maxKeptBuffer {
				//lint:ignore SA6002 a 24-byte slice header per file, against the buffer of up to maxKeptBuffer it keeps
				bufs.Put(buf)
			}
			if l.js != nil && cap(l.js) <= maxKeptBuffer {
				//lint:ignore SA6002 as above
				jsBufs.Put(l.js)
				l.js = nil
			}
			parts[i] = l
			return nil
		})
	}
	g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	res := &Result{Catalog: &Catalog{Dir: opts.Dir}, Files: files}
	for _, p := range parts {
		c := res.Catalog
		c.Packages = append(c.Packages, p.cat.Packages...)
		c.Channels = append(c.Channels, p.cat.Channels...)
		c.Bundles = append(c.Bundles, p.cat.Bundles...)
		c.Deprecations = append(c.Deprecations, p.cat.Deprecations...)
		c.Others = append(c.Others, p.cat.Others...)
	}
	return finish(res), nil
}

// largestFirst returns the indexes of the files by decreasing size (equal sizes in file order): the workers
// take the largest files first, so the load does not end waiting on one large file picked up last (in file
// order, v4.20's one worker still parses its 2.3 MB package while the other is done). Each file's part
// keeps its index, so the catalog and the diagnostics come out in file order whatever order they were read.
func largestFirst(sizes []int64) []int {
	order := make([]int, len(sizes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })
	return order
}

// catalogFiles lists the files a load reads (filetree.ListCatalog: every regular file in lexical order,
// minus the .indexignore files and what their patterns exclude), and a diagnostic for each entry no
// reader takes (a symbolic link, a special file, a name another one could be taken for), naming its file
// under dir.
func catalogFiles(fsys fs.FS, dir diag.Dir) ([]string, []diag.Diagnostic, error) {
	l, err := filetree.ListCatalog(fsys)
	if err != nil {
		return nil, nil, diag.UsageError(err)
	}
	var ds []diag.Diagnostic
	for _, r := range l.Refused {
		ds = append(ds, diag.Diagnostic{Severity: diag.Error, Check: "validate", Rule: RuleRefused, File: dir.File(r.Path),
			Message: r.Path + " " + r.Reason, Hint: r.Hint})
	}
	return l.Loaded, ds, nil
}

// fileLoader loads one file into its own small catalog; the parts are joined in file order.
type fileLoader struct {
	file  string
	dir   diag.Dir // where the catalog is: diagnostics name files under it
	lean  bool
	elide string // the type of the properties YAML is converted without their strings for (LoadOptions.elide)
	visit func(*Bundle, [][]byte)
	cat   *Catalog
	sink  *diag.Limiter
	keys  keyScratch
	strs  map[string]string // see intern
	lines lineIndex
	// the file's bytes while it is parsed: mapped from the file (see minMapped), data[:reached] read,
	// data[:released] given back
	data              []byte
	mapped            bool
	reached, released int
	flight            *inFlight
	js                []byte        // the JSON of a YAML document, reused for the next one
	objs              objectScratch // the decoded objects of the bundle being read
	prechecked        []bool        // per property of the bundle being read: value already checked (plainProperties)
	props             []Property    // the properties list plainProperties reads into, reused from bundle to bundle
	// yamlDoc, when set, is the position every offset maps to (the blob came from a YAML document).
	yamlDoc *Pos
}

func (l *fileLoader) pos(off int) Pos {
	if l.yamlDoc != nil {
		return *l.yamlDoc
	}
	line, col := l.lines.at(off)
	return Pos{File: l.file, Line: line, Column: col}
}

func (l *fileLoader) report(p Pos, rule, msg, hint string) {
	l.sink.Add(diag.Diagnostic{Severity: diag.Error, Check: "validate", Rule: rule,
		File: l.dir.File(p.File), Line: p.Line, Column: p.Column, Message: msg, Hint: hint})
}

func (l *fileLoader) reportErr(err error) {
	var be *blobError
	var se *scan.SyntaxError
	switch {
	case errors.As(err, &be):
		d := diag.Diagnostic{Severity: diag.Error, Check: "validate", Rule: be.rule, Message: be.msg, Hint: be.hint}
		p := l.pos(max(be.off, 0))
		d.File, d.Line, d.Column = l.dir.File(p.File), p.Line, p.Column
		switch be.schema {
		case SchemaBundle:
			d.Package, d.Bundle = be.pkg, be.name
			d.Message = fmt.Sprintf("bundle %q: %s", be.name, be.msg)
		case SchemaChannel:
			d.Package, d.Channel = be.pkg, be.name
			d.Message = fmt.Sprintf("channel %q: %s", be.name, be.msg)
		case SchemaPackage:
			d.Package = be.name
			d.Message = fmt.Sprintf("package %q: %s", be.name, be.msg)
		case SchemaDeprecations:
			d.Package = be.pkg
			d.Message = fmt.Sprintf("deprecations of package %q: %s", be.pkg, be.msg)
		}
		l.sink.Add(d)
	case errors.As(err, &se):
		l.report(l.pos(se.Off), RuleSyntax, "JSON syntax error: "+se.Msg, "fix the JSON syntax at this position")
	default:
		l.report(Pos{File: l.file}, RuleFile, err.Error(), "")
	}
}

// load reads and parses the file, reading into buf when it is large enough (or mapping it, see minMapped);
// it returns the buffer for the worker's next file. Nothing the catalog keeps may point into the file's
// bytes (the decoders copy what they keep): the buffer is reused, and a mapping ends with the load.
func (l *fileLoader) load(fsys fs.FS, maxSize int64, buf []byte) []byte {
	data, mapped, err := readCapped(fsys, l.file, maxSize, buf)
	if err != nil {
		rule := RuleFile
		if errors.Is(err, errTooLarge) {
			rule = RuleTooLarge
		}
		l.report(Pos{File: l.file}, rule, err.Error(), "")
		return buf
	}
	l.data, l.mapped, l.reached, l.released = data, mapped, 0, 0
	l.lines = lineIndex{data: data}
	defer func() {
		l.flight.add(-int64(l.reached - l.released))
		l.data, l.lines = nil, lineIndex{} // do not keep the file's bytes alive
	}()
	if !mapped {
		l.reach(len(data))
		l.parse(data)
		return data
	}
	defer unmapFile(data)
	l.parseMapped(data)
	return buf
}

func (l *fileLoader) parse(data []byte) {
	if looksLikeJSON(data) {
		l.loadJSON(data)
	} else {
		l.loadYAML(data, 0)
	}
}

var errTooLarge = errors.New("file too large")

// readCapped reads a file of at most maxSize bytes into reuse when it is large enough, or maps it
// (mapped true; the caller unmaps it) when it has minMapped bytes or more and the system can. A mapping
// holds the bytes the file had when it was opened; a read goes on to the end, wherever that is.
func readCapped(fsys fs.FS, name string, maxSize int64, reuse []byte) (data []byte, mapped bool, err error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, false, fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	size := int64(0)
	if st, err := f.Stat(); err == nil {
		size = st.Size()
		if !st.Mode().IsRegular() {
			return nil, false, fmt.Errorf("read %s: not a regular file", name)
		}
	}
	if size > maxSize {
		return nil, false, fmt.Errorf("%s is %d bytes, more than the limit of %d bytes: %w", name, size, maxSize, errTooLarge)
	}
	if size >= minMapped {
		if data, ok := mapFile(f, size); ok {
			return data, true, nil
		}
	}
	buf := reuse[:0]
	if int64(cap(buf)) < size {
		buf = make([]byte, 0, size)
	}
	for {
		var n int
		if len(buf) == cap(buf) {
			// the stat'ed size is reached: check for more with a small read before growing
			var probe [512]byte
			n, err = f.Read(probe[:])
			buf = append(buf, probe[:n]...)
		} else {
			n, err = f.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
		}
		if int64(len(buf)) > maxSize {
			return nil, false, fmt.Errorf("%s is more than the limit of %d bytes: %w", name, maxSize, errTooLarge)
		}
		if errors.Is(err, io.EOF) {
			return buf, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("read %s: %w", name, err)
		}
	}
}

// looksLikeJSON is opm's (Kubernetes') guess: the first non-space character is '{'.
func looksLikeJSON(data []byte) bool {
	t := bytes.TrimLeftFunc(data, isUnicodeSpace)
	return len(t) > 0 && t[0] == '{'
}

// loadJSON reads a stream of concatenated JSON values. Like opm, when the first or second value does not
// decode, the rest of the file is read as YAML instead; if that fails too, the JSON error stands.
func (l *fileLoader) loadJSON(data []byte) {
	i, count, consumed := 0, 0, 0
	for {
		i = scan.SkipSpace(data, i)
		if i >= len(data) {
			return
		}
		l.releaseBefore(i)
		end, ok, derr := l.bundleBlob(data, i)
		var err error
		if !ok {
			var m Meta
			m, end, err = l.keys.metaKeys(data, i)
			if err == nil {
				derr = l.decodeBlob(data, i, end, m)
			}
		}
		l.reach(end)
		if err == nil {
			if derr != nil {
				// a syntax error anywhere in the blob is found before any other problem, as in opm
				if _, serr := scan.SkipValue(data, i, 0); serr != nil {
					err = serr
				} else {
					l.reportErr(derr)
				}
			}
		}
		if err != nil {
			if count <= 1 {
				yamlFrom, ok := consumeSpaceLine(data, consumed)
				if ok && yamlFrom < len(data) && l.tryYAML(data, yamlFrom) {
					return
				}
			}
			l.reportErr(err)
			return
		}
		count++
		i, consumed = end, end
	}
}

// consumeSpaceLine is where Kubernetes' decoder starts reading YAML once JSON failed after the value
// ending at i: it skips Unicode whitespace up to and including the first newline, reading 4 bytes at a
// time. It gives up (ok false, the JSON error stands) on fewer than 4 bytes left, or on invalid UTF-8.
func consumeSpaceLine(data []byte, i int) (next int, ok bool) {
	for {
		if len(data)-i < 4 {
			return i, false
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError {
			return i, false
		}
		if !unicode.IsSpace(r) {
			return i, true
		}
		i += size
		if r == '\n' {
			return i, true
		}
	}
}

// tryYAML reads data[from:] as YAML if its first document decodes; it reports false (and nothing) if not.
func (l *fileLoader) tryYAML(data []byte, from int) bool {
	docs := newYAMLDocs(data, from)
	first, ok, _ := docs.next()
	if !ok {
		return false // a bad separator after the first document is reported by loadYAML
	}
	js, _, err := docJSON(nil, data, first, "")
	if err != nil {
		return false
	}
	if js != nil {
		if _, _, err := metaKeys(js, scan.SkipSpace(js, 0)); err != nil {
			return false
		}
	}
	l.loadYAML(data, from)
	return true
}

func isUnicodeSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xA0:
		return true
	}
	return r > 0xff && strings.ContainsRune("\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000", r)
}
