package catalog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/catalog/internal/scan"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
)

// The writer reproduces `opm render <dir> -o json|yaml` of operator-registry v1.73.0 byte for byte:
//
//   - blobs are grouped by package, packages in name order; blobs with an empty package (name) are
//     dropped, as opm drops them, except other-schema blobs, which come last in input order;
//   - within a package: its olm.package blobs, channels by name, bundles by name, other-schema blobs by
//     schema (stable), then deprecations, each group otherwise in input order;
//   - opm reads every blob through a map[string]any, so property values and other-schema blobs are
//     written with their object keys sorted and their numbers as float64 (1.0 is 1, 1e400 fails);
//   - as `opm render` does, a bundle's olm.bundle.object and olm.csv.metadata properties move after
//     its other properties (stable), and its related images are sorted by image;
//   - JSON: each blob indented by four spaces, HTML characters unescaped, newline-terminated;
//     YAML: each blob is "---\n" then sigs.k8s.io/yaml's rendering of its compact JSON (keys sorted).
//
// The catalog passed in is never modified.

// WriteJSON writes c as `opm render -o json` does.
func WriteJSON(w io.Writer, c *Catalog) error {
	return writeCatalog(newJSONBlobEncoder(w), c)
}

// WriteYAML writes c as `opm render -o yaml` does.
func WriteYAML(w io.Writer, c *Catalog) error {
	return writeCatalog(&yamlBlobEncoder{w: w}, c)
}

// blobEncoder writes one blob.
type blobEncoder interface {
	Encode(v any) error
}

func newJSONBlobEncoder(w io.Writer) blobEncoder {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	return enc
}

// yamlBlobEncoder renders each blob's compact JSON as a YAML document, as opm's yamlEncoder does.
type yamlBlobEncoder struct {
	w   io.Writer
	buf bytes.Buffer
}

func (e *yamlBlobEncoder) Encode(v any) error {
	e.buf.Reset()
	enc := json.NewEncoder(&e.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	doc, err := yaml.JSONToYAML(e.buf.Bytes())
	if err != nil {
		return fmt.Errorf("convert to YAML: %w", err)
	}
	if _, err := io.WriteString(e.w, "---\n"); err != nil {
		return err
	}
	_, err = e.w.Write(doc)
	return err
}

// packageBlobs are the blobs of one package, in the order they are written.
type packageBlobs struct {
	name         string
	packages     []*Package
	channels     []*Channel
	bundles      []*Bundle
	others       []*Meta
	deprecations []*Deprecation
}

// groupByPackage splits c by package in write order, and returns the other-schema blobs that belong to
// no package. Blobs that name no package are left out, as opm leaves them out. A nil catalog is empty.
func groupByPackage(c *Catalog) (groups []*packageBlobs, rootOthers []*Meta) {
	if c == nil {
		return nil, nil
	}
	byName := map[string]*packageBlobs{}
	group := func(name string) *packageBlobs {
		g := byName[name]
		if g == nil {
			g = &packageBlobs{name: name}
			byName[name] = g
			groups = append(groups, g)
		}
		return g
	}
	for _, p := range c.Packages {
		if p.Name != "" {
			g := group(p.Name)
			g.packages = append(g.packages, p)
		}
	}
	for _, ch := range c.Channels {
		if ch.Package != "" {
			g := group(ch.Package)
			g.channels = append(g.channels, ch)
		}
	}
	for _, b := range c.Bundles {
		if b.Package != "" {
			g := group(b.Package)
			g.bundles = append(g.bundles, b)
		}
	}
	for _, o := range c.Others {
		if o.Package == "" {
			rootOthers = append(rootOthers, o)
			continue
		}
		g := group(o.Package)
		g.others = append(g.others, o)
	}
	for _, d := range c.Deprecations {
		if d.Package != "" {
			g := group(d.Package)
			g.deprecations = append(g.deprecations, d)
		}
	}
	slices.SortFunc(groups, func(a, b *packageBlobs) int { return cmp.Compare(a.name, b.name) })
	// The same sorts as opm, on slices in input order, so that even duplicate names come out alike.
	for _, g := range groups {
		sort.Slice(g.channels, func(i, j int) bool { return g.channels[i].Name < g.channels[j].Name })
		sort.Slice(g.bundles, func(i, j int) bool { return g.bundles[i].Name < g.bundles[j].Name })
		sort.SliceStable(g.others, func(i, j int) bool { return g.others[i].Schema < g.others[j].Schema })
	}
	return groups, rootOthers
}

func writeCatalog(enc blobEncoder, c *Catalog) error {
	groups, rootOthers := groupByPackage(c)
	for _, g := range groups {
		if err := writePackage(enc, g); err != nil {
			return err
		}
	}
	return writeOthers(enc, rootOthers)
}

func writePackage(enc blobEncoder, g *packageBlobs) error {
	for _, p := range g.packages {
		out := *p
		if err := encodeCanonical(enc, &out, &out.Properties); err != nil {
			return fmt.Errorf("write package %q: %w", p.Name, err)
		}
	}
	for _, ch := range g.channels {
		out := *ch
		if err := encodeCanonical(enc, &out, &out.Properties); err != nil {
			return fmt.Errorf("write channel %q of package %q: %w", ch.Name, ch.Package, err)
		}
	}
	for _, b := range g.bundles {
		out, err := renderedBundle(b)
		if err == nil {
			err = enc.Encode(out)
		}
		if err != nil {
			return fmt.Errorf("write bundle %q of package %q: %w", b.Name, b.Package, err)
		}
	}
	if err := writeOthers(enc, g.others); err != nil {
		return err
	}
	for _, d := range g.deprecations {
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("write deprecations of package %q: %w", d.Package, err)
		}
	}
	return nil
}

// encodeCanonical encodes blob, a copy of a package or channel blob whose properties props points at, with
// its property values made canonical first.
func encodeCanonical(enc blobEncoder, blob any, props *[]Property) error {
	canon, err := canonicalProperties(*props)
	if err != nil {
		return err
	}
	*props = canon
	return enc.Encode(blob)
}

func writeOthers(enc blobEncoder, others []*Meta) error {
	for _, o := range others {
		if o.Blob == nil {
			return fmt.Errorf("write %s blob %q of package %q: its JSON is missing (a lean load drops it; load with LoadOptions{Lean: false} to write)",
				o.Schema, o.Name, o.Package)
		}
		blob, err := canonicalJSON(o.Blob)
		if err == nil {
			err = enc.Encode(blob)
		}
		if err != nil {
			return fmt.Errorf("write %s blob %q of package %q: %w", o.Schema, o.Name, o.Package, err)
		}
	}
	return nil
}

// renderedBundle is b as opm render writes it: canonical property values, object and CSV-metadata
// properties last, related images by image.
func renderedBundle(b *Bundle) (*Bundle, error) {
	out := *b
	props, err := canonicalProperties(b.Properties)
	if err != nil {
		return nil, err
	}
	for _, p := range props {
		if p.Value == nil && (p.Type == PropertyBundleObject || p.Type == PropertyCSVMetadata) {
			return nil, fmt.Errorf("property %s has no value (a lean load drops it; load with LoadOptions{Lean: false} to write)", p.Type)
		}
	}
	var rest, objects []Property
	for _, p := range props {
		switch p.Type {
		case PropertyBundleObject, PropertyCSVMetadata:
			objects = append(objects, p)
		default:
			rest = append(rest, p)
		}
	}
	out.Properties = append(rest, objects...)
	if b.RelatedImages != nil {
		out.RelatedImages = slices.Clone(b.RelatedImages)
		sort.Slice(out.RelatedImages, func(i, j int) bool { return out.RelatedImages[i].Image < out.RelatedImages[j].Image })
	}
	return &out, nil
}

// canonicalProperties returns a copy of props with each value canonical (nil values stay nil, which
// encodes as null, as in opm).
func canonicalProperties(props []Property) ([]Property, error) {
	if props == nil {
		return nil, nil
	}
	out := make([]Property, len(props))
	for i, p := range props {
		out[i].Type = p.Type
		if p.Value == nil {
			continue
		}
		v, err := canonicalJSON(p.Value)
		if err != nil {
			return nil, fmt.Errorf("property %d (%s): %w", i, p.Type, err)
		}
		out[i].Value = v
	}
	return out, nil
}

// canonicalJSON is raw as opm holds it after reading: decoded into Go's generic values and re-encoded
// without HTML escaping, so object keys are sorted (the last of duplicate keys wins), numbers pass through
// float64, strings are re-escaped and whitespace goes. It gives the bytes encoding/json would (a test
// proves it against encoding/json), several times faster: plain strings and small integers are copied.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	i := scan.SkipSpace(raw, 0)
	out, end, err := appendCanonical(make([]byte, 0, len(raw)), raw, i, 0)
	if err == nil && scan.SkipSpace(raw, end) != len(raw) {
		err = scan.ErrAt(raw, scan.SkipSpace(raw, end), "after top-level value")
	}
	if err != nil {
		return nil, diag.InvalidError(fmt.Errorf("decode value: %w", err))
	}
	return out, nil
}

// canonicalMember is one member of an object being canonicalised.
type canonicalMember struct {
	key    string
	ks, ke int // the key literal
	plain  bool
	val    int
}

// appendCanonical appends the canonical form of the value at data[i] and returns the offset after it.
func appendCanonical(dst, data []byte, i, depth int) ([]byte, int, error) {
	if i >= len(data) {
		return dst, i, scan.ErrAt(data, i, "looking for beginning of value")
	}
	switch c := data[i]; {
	case c == '{':
		if depth >= scan.MaxDepth {
			return dst, i, &scan.SyntaxError{Off: i, Msg: "exceeded max depth"}
		}
		var members []canonicalMember
		end, err := scan.IterObject(data, i, func(ks, ke int, esc bool, at int) (int, error) {
			members = append(members, canonicalMember{key: scan.StringValue(data, ks, ke, esc), ks: ks, ke: ke,
				plain: isPlainString(data[ks+1:ke-1], esc), val: at})
			return scan.SkipValue(data, at, depth+1)
		})
		if err != nil {
			return dst, end, err
		}
		// Stable, so that of equal keys the last one read comes last and wins, as in a Go map.
		slices.SortStableFunc(members, func(a, b canonicalMember) int { return strings.Compare(a.key, b.key) })
		dst = append(dst, '{')
		first := true
		for k, m := range members {
			if k+1 < len(members) && members[k+1].key == m.key {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			if m.plain {
				dst = append(dst, data[m.ks:m.ke]...)
			} else if dst, err = appendEncoded(dst, m.key); err != nil {
				return dst, end, err
			}
			dst = append(dst, ':')
			if dst, _, err = appendCanonical(dst, data, m.val, depth+1); err != nil {
				return dst, end, err
			}
		}
		return append(dst, '}'), end, nil
	case c == '[':
		if depth >= scan.MaxDepth {
			return dst, i, &scan.SyntaxError{Off: i, Msg: "exceeded max depth"}
		}
		dst = append(dst, '[')
		end, err := scan.IterArray(data, i, func(n int, at int) (int, error) {
			if n > 0 {
				dst = append(dst, ',')
			}
			var end int
			var err error
			dst, end, err = appendCanonical(dst, data, at, depth+1)
			return end, err
		})
		if err != nil {
			return dst, end, err
		}
		return append(dst, ']'), end, nil
	case c == '"':
		end, esc, err := scan.ScanString(data, i)
		if err != nil {
			return dst, end, err
		}
		if isPlainString(data[i+1:end-1], esc) {
			return append(dst, data[i:end]...), end, nil
		}
		dst, err = appendEncoded(dst, scan.StringValue(data, i, end, esc))
		return dst, end, err
	case c == '-' || '0' <= c && c <= '9':
		end, err := scan.ScanNumber(data, i)
		if err != nil {
			return dst, end, err
		}
		num := data[i:end]
		if isSmallInt(num) {
			return append(dst, num...), end, nil
		}
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil {
			return dst, end, fmt.Errorf("number %s does not fit a float64", num)
		}
		dst, err = appendEncoded(dst, f)
		return dst, end, err
	case c == 't':
		return appendLiteral(dst, data, i, "true")
	case c == 'f':
		return appendLiteral(dst, data, i, "false")
	case c == 'n':
		return appendLiteral(dst, data, i, "null")
	}
	return dst, i, scan.ErrAt(data, i, "looking for beginning of value")
}

func appendLiteral(dst, data []byte, i int, lit string) ([]byte, int, error) {
	end, err := scan.ScanLiteral(data, i, lit)
	return append(dst, lit...), end, err
}

// isPlainString reports whether a string literal's content is already what encoding/json writes: no
// escapes, valid UTF-8, no U+2028 or U+2029 (which encoding/json escapes).
func isPlainString(content []byte, escaped bool) bool {
	return !escaped && utf8.Valid(content) && !bytes.Contains(content, []byte("\u2028")) && !bytes.Contains(content, []byte("\u2029"))
}

// isSmallInt reports whether a number literal is an integer of at most 15 digits: one that float64 holds
// exactly and encoding/json writes back unchanged (-0 included).
func isSmallInt(num []byte) bool {
	if len(num) > 0 && num[0] == '-' {
		num = num[1:]
	}
	if len(num) == 0 || len(num) > 15 || (num[0] == '0' && len(num) > 1) {
		return false
	}
	for _, c := range num {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// appendEncoded appends v as encoding/json writes it without HTML escaping.
func appendEncoded(dst []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// Formats WriteDir accepts.
const (
	FormatJSON = "json"
	FormatYAML = "yaml"
)

// WriteDir writes c as a catalog directory in opm's WriteFS layout: <dir>/<package>/catalog.<format>
// holding that package's blobs as WriteJSON or WriteYAML writes them, and <dir>/catalog.<format> for
// other-schema blobs of no package. format is FormatJSON or FormatYAML.
//
// dir is replaced as a whole, never updated in place: the catalog is written into a new directory next to
// it, synced, and renamed over it; an existing dir is first moved aside and removed once the new one is in
// place. Readers see the old catalog or the complete new one (or, for the instant between the two
// renames, none); a failure leaves dir as it was.
func WriteDir(dir string, c *Catalog, format string) error {
	if format != FormatJSON && format != FormatYAML {
		return diag.UsageError(fmt.Errorf("write catalog directory %s: unknown format %q (want %q or %q)", dir, format, FormatJSON, FormatYAML))
	}
	groups, rootOthers := groupByPackage(c)
	for _, g := range groups {
		if !isDirName(g.name) {
			return diag.InvalidError(fmt.Errorf("write catalog directory %s: package name %q cannot be a directory name", dir, g.name))
		}
	}
	err := filetree.ReplaceDir(dir, func(tmp string) error { return fillDir(tmp, groups, rootOthers, format) })
	if err != nil {
		return fmt.Errorf("write catalog directory %s: %w", dir, err)
	}
	return nil
}

// isDirName reports whether a package name is one plain path element on every platform.
func isDirName(name string) bool {
	return name != "." && name != ".." && !strings.ContainsAny(name, `/\`) && filepath.IsLocal(name)
}

// fillDir writes the catalog files into the new, empty directory root and syncs them.
func fillDir(root string, groups []*packageBlobs, rootOthers []*Meta, format string) error {
	name := "catalog." + format
	for _, g := range groups {
		pkgDir := filepath.Join(root, g.name)
		if err := os.Mkdir(pkgDir, 0o755); err != nil {
			return err
		}
		err := writeFileSynced(filepath.Join(pkgDir, name), func(enc blobEncoder) error { return writePackage(enc, g) }, format)
		if err != nil {
			return err
		}
	}
	if len(rootOthers) > 0 {
		err := writeFileSynced(filepath.Join(root, name), func(enc blobEncoder) error { return writeOthers(enc, rootOthers) }, format)
		if err != nil {
			return err
		}
	}
	return nil
}

// writeFileSynced writes one new catalog file of the tree being built with the encoder of format, synced.
func writeFileSynced(path string, write func(blobEncoder) error, format string) error {
	return filetree.WriteNew(path, 0o644, func(w io.Writer) error {
		if format == FormatJSON {
			return write(newJSONBlobEncoder(w))
		}
		return write(&yamlBlobEncoder{w: w})
	})
}
