package validate

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strconv"
	"sync"

	"github.com/catalogbot/catalogbot/catalog"
)

// addPackages adds the package every blob of c belongs to (its identity, whatever file holds it).
func addPackages(pkgs map[string]bool, c *catalog.Catalog) {
	add := func(p string) {
		if p != "" {
			pkgs[p] = true
		}
	}
	for _, p := range c.Packages {
		add(p.Name)
	}
	for _, ch := range c.Channels {
		add(ch.Package)
	}
	for _, b := range c.Bundles {
		add(b.Package)
	}
	for _, d := range c.Deprecations {
		add(d.Package)
	}
	for _, o := range c.Others {
		add(o.Package)
	}
}

// searchable reports whether a blob of package p can only be written with p's bytes in its file: p is
// made of letters, digits, '.', '_' and '-', which JSON and YAML write as themselves (or as a \u, \U or
// \x escape, which mayHold looks for), and no YAML 1.1 scalar of another type (a timestamp, a number)
// turns into such a string.
func searchable(p string) bool {
	if p == "" {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// maxQuickLook is the largest file selectFiles reads to decide; larger ones are simply loaded.
const maxQuickLook = 64 << 20

// selectFiles returns the catalog files that may hold a blob of one of pkgs (all searchable), plus the
// touched ones: a file is left out only when none of the names is in its bytes and nothing in it could
// spell one otherwise (mayHold).
func selectFiles(ctx context.Context, src source, touched, pkgs map[string]bool) (map[string]bool, error) {
	var files []string
	if _, err := src.load(ctx, catalog.LoadOptions{Include: func(p string) bool {
		files = append(files, p)
		return false
	}}); err != nil {
		return nil, err
	}
	names := make([][]byte, 0, len(pkgs))
	var chars [256]bool
	for p := range pkgs {
		names = append(names, []byte(p))
		for i := 0; i < len(p); i++ {
			chars[p[i]] = true
		}
	}
	keep := make([]bool, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			for i := range next {
				keep[i] = touched[files[i]] || quickLook(src, files[i], names, &chars, &buf)
			}
		}()
	}
feed:
	for i := range files {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	include := map[string]bool{}
	for i, f := range files {
		if keep[i] {
			include[f] = true
		}
	}
	return include, nil
}

// quickLook reads one file and says whether it may hold a blob of one of names; a file it cannot read
// plainly (not regular, too large, unreadable) is kept, for the load to judge.
func quickLook(src source, file string, names [][]byte, chars *[256]bool, buf *bytes.Buffer) bool {
	f, err := src.open(file)
	if err != nil {
		return true
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxQuickLook {
		return true
	}
	buf.Reset()
	if _, err := buf.ReadFrom(io.LimitReader(f, maxQuickLook+1)); err != nil || buf.Len() > maxQuickLook {
		return true
	}
	return mayHold(buf.Bytes(), names, chars)
}

// mayHold reports whether data may hold a blob of a package named in names (chars marks their bytes):
// a name is in it; or an escape (\u, \U, \x, in JSON or YAML double-quoted strings) spells one of the
// names' characters; or it has a YAML tag that may decode a value (!!binary, a %TAG directive, a
// verbatim tag); or it is not UTF-8 text (NUL bytes, a UTF-16 byte order mark), which YAML may decode.
func mayHold(data []byte, names [][]byte, chars *[256]bool) bool {
	for _, n := range names {
		if bytes.Contains(data, n) {
			return true
		}
	}
	if bytes.IndexByte(data, 0) >= 0 || bytes.HasPrefix(data, []byte{0xfe, 0xff}) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) {
		return true
	}
	if bytes.Contains(data, []byte("!!")) || bytes.Contains(data, []byte("%TAG")) || bytes.Contains(data, []byte("!<")) {
		return true
	}
	for rest := data; ; {
		i := bytes.IndexByte(rest, '\\')
		if i < 0 || i+1 >= len(rest) {
			return false
		}
		digits := 0
		switch rest[i+1] {
		case 'u':
			digits = 4
		case 'U':
			digits = 8
		case 'x':
			digits = 2
		}
		if digits == 0 {
			rest = rest[i+2:] // another escape (or an escaped backslash): skip both bytes
			continue
		}
		if i+2+digits > len(rest) {
			return true
		}
		r, err := strconv.ParseUint(string(rest[i+2:i+2+digits]), 16, 32)
		if err != nil || r < 256 && chars[r] {
			return true
		}
		rest = rest[i+2:]
	}
}
