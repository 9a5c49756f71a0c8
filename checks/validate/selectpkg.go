package validate

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/catalogbot/catalogbot/catalog"
)

// addPackages adds the package every blob of c belongs to (its identity, whatever file holds it).
func addPackages(pkgs map[string]bool, c *catalog.Catalog) {
	for _, p := range c.PackageNames() {
		pkgs[p] = true
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
		if !nameByte(p[i]) {
			return false
		}
	}
	return true
}

// bufs are the read buffers of selectFiles' workers, reused across files.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

// maxQuickLook is the largest file selectFiles reads to decide; larger ones are simply loaded.
const maxQuickLook = 64 << 20

// selectFiles returns the catalog files (files, as catalogFileList lists them) that may hold a blob of one of pkgs (all searchable), plus the
// touched ones: a file is left out only when none of the names is in its bytes and nothing in it could
// spell one otherwise (mayHold).
func selectFiles(ctx context.Context, src source, files []string, touched, pkgs map[string]bool) (map[string]bool, error) {
	names := make([][]byte, 0, len(pkgs))
	var chars [256]bool
	for p := range pkgs {
		names = append(names, []byte(p))
		for i := 0; i < len(p); i++ {
			chars[p[i]] = true
		}
	}
	keep := make([]bool, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, f := range files {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			buf := bufs.Get().(*[]byte)
			keep[i] = touched[f] || quickLook(src, f, names, &chars, buf)
			bufs.Put(buf)
			return nil
		})
	}
	_ = g.Wait()
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
// plainly (not regular, too large, unreadable) is kept, for the load to judge. buf is reused.
func quickLook(src source, file string, names [][]byte, chars *[256]bool, buf *[]byte) bool {
	f, err := src.open(file)
	if err != nil {
		return true
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxQuickLook {
		return true
	}
	n := int(st.Size())
	if cap(*buf) < n+1 {
		*buf = make([]byte, n+1)
	}
	data := (*buf)[:n+1]
	got, err := io.ReadFull(f, data)
	if err != io.ErrUnexpectedEOF || got != n {
		return true // it grew, shrank or failed while read: let the load judge
	}
	return mayHold(data[:n], names, chars)
}

// readPlain reads a touched file: ok is false when it cannot be read plainly (not a regular file, too
// large, a link the open does not follow), and data is nil when it does not exist.
func readPlain(src source, file string) (data []byte, ok bool) {
	f, err := src.open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxQuickLook {
		return nil, false
	}
	data, err = io.ReadAll(io.LimitReader(f, maxQuickLook))
	return data, err == nil
}

// mayHold reports whether data may hold a blob of a package named in names (chars marks their bytes):
// a name is in it; or an escape (\u, \U, \x, in JSON or YAML double-quoted strings) spells one of the
// names' characters; or it has a YAML tag that may decode a value (!!binary, a %TAG directive, a
// verbatim tag); or it is not UTF-8 text (NUL bytes, a UTF-16 byte order mark), which YAML may decode.
func mayHold(data []byte, names [][]byte, chars *[256]bool) bool {
	for _, n := range names {
		if containsToken(data, n) {
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
		rest = rest[i+2:] // past the escape's two bytes (an escaped backslash is skipped whole)
		if digits == 0 {
			continue
		}
		if len(rest) < digits {
			return true
		}
		if r, ok := hexValue(rest[:digits]); !ok || r < 256 && chars[r] {
			return true
		}
	}
}

// containsToken reports whether name is in data as a whole token: not preceded or followed by a byte
// that a package name may hold (a blob's value is delimited by a quote, a space, a line end, a comma...).
// It looks for the name's rarest byte (byRarity) and compares around it: each candidate costs a call, and
// the first byte of a name is often one of the commonest (an 'e' every 20 bytes of a catalog, a 'd' every
// 53).
func containsToken(data, name []byte) bool {
	k := rarest(name)
	c := name[k]
	for off := k; off < len(data); {
		i := bytes.IndexByte(data[off:], c)
		if i < 0 {
			return false
		}
		start := off + i - k
		end := start + len(name)
		if end <= len(data) && bytes.Equal(data[start:end], name) &&
			(start == 0 || !nameByte(data[start-1])) && (end == len(data) || !nameByte(data[end])) {
			return true
		}
		off += i + 1
	}
	return false
}

// byRarity lists the bytes a package name may hold from the commonest to the rarest in catalog text, as
// counted on the shared composed-279 and community-operators-prod-v4.16 catalogs (JSON, YAML and base64).
const byRarity = "eiantorsclpdmuIhby.gvZfk0GJWSVCN1wXR2-BY53F9jzxHAUOM6LTD_E4QP87Kq"

// rarest returns the index in name of its rarest byte by byRarity.
func rarest(name []byte) int {
	best, rank := 0, -1
	for i, c := range name {
		if r := strings.IndexByte(byRarity, c); r > rank {
			best, rank = i, r
		}
	}
	return best
}

// hexValue parses hexadecimal digits (at most 8).
func hexValue(digits []byte) (uint32, bool) {
	var v uint32
	for _, c := range digits {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint32(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}
