package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/catalogbot/catalogbot/catalog/internal/scan"
	"golang.org/x/text/cases"
	"sigs.k8s.io/yaml"
)

// blobError is a problem with one blob, at a byte offset of the text it was decoded from.
type blobError struct {
	off  int
	rule string
	msg  string
	hint string
	// what the blob is, when known, for the diagnostic's package/channel/bundle fields
	schema, pkg, name string
}

func (e *blobError) Error() string { return e.msg }

// Rule ids of load-time problems; they are part of catalogbot's output contract.
const (
	RuleSyntax          = "parse-json-syntax"
	RuleYAML            = "parse-yaml"
	RuleNotObject       = "parse-not-object"
	RuleDuplicateKey    = "parse-duplicate-key"
	RuleMetaNotString   = "parse-name-not-string"
	RuleMissingSchema   = "parse-missing-schema"
	RuleWrongType       = "parse-wrong-type"
	RulePropertyInvalid = "property-invalid"
	RuleBundleObject    = "property-bundle-object-invalid"
	RuleTooLarge        = "file-too-large"
	RuleCatalogTooLarge = "catalog-too-large"
	RuleFile            = "file-unreadable"
	RuleRefused         = "catalog-file-refused"
)

var folder = cases.Fold()

func foldKey(k string) string {
	for i := 0; i < len(k); i++ {
		if k[i] >= utf8.RuneSelf {
			return folder.String(k)
		}
	}
	return strings.ToLower(k)
}

// metaKeys is the first pass over a top-level object: it validates the whole value and finds the
// identifying keys, rejecting case-insensitive duplicates and non-string identifiers as opm does.
func metaKeys(data []byte, i int) (m Meta, end int, err error) {
	return (&keyScratch{}).metaKeys(data, i)
}

// keyScratch is metaKeys' memory, reused from blob to blob by one loader: the top-level keys by
// case-folded spelling. Blobs have a handful of keys, so a slice searched linearly beats a map; an index
// map is built past 16 keys so a hostile blob with a million keys stays linear.
type keyScratch struct {
	list  []seenKey
	index map[string]int
}

type seenKey struct {
	fold, key string
	others    []string // other spellings of the same folded key (a duplicate)
	val       int
}

func (sc *keyScratch) find(f string) int {
	if sc.index != nil {
		if j, ok := sc.index[f]; ok {
			return j
		}
		return -1
	}
	for j := range sc.list {
		if sc.list[j].fold == f {
			return j
		}
	}
	return -1
}

func (sc *keyScratch) metaKeys(data []byte, i int) (m Meta, end int, err error) {
	if data[i] != '{' {
		// not an object: a syntax error (e.g. YAML after a JSON blob) is the better message
		end, err = scan.SkipValue(data, i, 0)
		if err != nil {
			return m, end, err
		}
		return m, end, &blobError{off: i, rule: RuleNotObject,
			msg: fmt.Sprintf("expected a JSON object (a blob with a \"schema\" key), got %s", scan.KindAt(data, i))}
	}
	sc.reset()
	end, err = scan.IterObject(data, i, func(ks, ke int, esc bool, at int) (int, error) {
		sc.see(data, ks, ke, esc, at)
		return scan.FastSkip(data, at)
	})
	if err != nil {
		return m, end, err
	}
	m, err = sc.meta(data, i)
	return m, end, err
}

// reset forgets the previous blob's keys (and drops their strings).
func (sc *keyScratch) reset() {
	clear(sc.list)
	sc.list, sc.index = sc.list[:0], nil
}

// see records a top-level key (the literal data[ks:ke]) whose value starts at data[at].
func (sc *keyScratch) see(data []byte, ks, ke int, esc bool, at int) {
	key := scan.StringValue(data, ks, ke, esc)
	f := foldKey(key)
	j := sc.find(f)
	if j < 0 {
		sc.list = append(sc.list, seenKey{fold: f, key: key})
		j = len(sc.list) - 1
		if sc.index != nil {
			sc.index[f] = j
		} else if len(sc.list) > 16 {
			sc.index = make(map[string]int, 2*len(sc.list))
			for n, e := range sc.list {
				sc.index[e.fold] = n
			}
		}
	} else if e := &sc.list[j]; e.key != key && !slices.Contains(e.others, key) {
		e.others = append(e.others, key)
	}
	sc.list[j].val = at
}

// meta checks the keys seen in the blob at data[i] (duplicates differing in case, identifying values that
// are not strings) and returns its identifying keys.
func (sc *keyScratch) meta(data []byte, i int) (m Meta, err error) {
	var dups []string
	for _, e := range sc.list {
		if len(e.others) > 0 {
			dups = append(dups, fmt.Sprintf("%q (%s)", e.fold, strings.Join(quoteAll(append([]string{e.key}, e.others...)), ", ")))
		}
	}
	if len(dups) > 0 {
		return m, &blobError{off: i, rule: RuleDuplicateKey,
			msg:  "duplicate keys differing only in case: " + strings.Join(dups, "; "),
			hint: "keys of a blob are matched case-insensitively; keep exactly one spelling of each"}
	}
	for _, k := range []struct {
		name string
		dst  *string
	}{{"schema", &m.Schema}, {"package", &m.Package}, {"name", &m.Name}} {
		j := sc.find(k.name)
		if j < 0 {
			continue
		}
		s := sc.list[j]
		last := s.key
		if len(s.others) > 0 {
			last = s.others[len(s.others)-1]
		}
		if data[s.val] != '"' {
			vend, _ := scan.FastSkip(data, s.val)
			return m, &blobError{off: s.val, rule: RuleMetaNotString,
				msg:  fmt.Sprintf("value of key %q must be a string, got %s", last, strings.TrimSpace(string(data[s.val:vend]))),
				hint: "quote the value"}
		}
		// values were only skipped so far, not validated: a bad string is a syntax error, as in opm
		send, esc, serr := scan.ScanString(data, s.val)
		if serr != nil {
			return m, serr
		}
		*k.dst = scan.StringValue(data, s.val, send, esc)
	}
	return m, nil
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strconv.Quote(s)
	}
	return out
}

// wrapBlobError makes an error decoding the blob at i (identified by m) a blobError with its rule.
func wrapBlobError(err error, m *Meta, i int) error {
	if err == nil {
		return nil
	}
	be := &blobError{rule: RuleWrongType, schema: m.Schema, pkg: m.Package, name: m.Name}
	switch e := err.(type) {
	case *scan.TypeError:
		be.off, be.msg = e.Off, e.Error()
	case *PropertyError:
		be.off, be.msg, be.rule = e.Off, e.Error(), RulePropertyInvalid
		if e.Type == PropertyBundleObject {
			be.rule = RuleBundleObject
		}
	case *blobError:
		return e
	default:
		be.off, be.msg = i, err.Error()
	}
	return be
}

// decodeBlob decodes the top-level value data[i:end], whose identifying keys are m, into the catalog.
func (l *fileLoader) decodeBlob(data []byte, i, end int, m Meta) error {
	pos := l.pos(i)
	switch m.Schema {
	case "":
		return &blobError{off: i, rule: RuleMissingSchema, pkg: m.Package, name: m.Name,
			msg:  "blob has no \"schema\" key (every FBC object needs one, e.g. olm.package, olm.channel, olm.bundle)",
			hint: "add a schema, or list non-catalog files in a .indexignore file"}
	case SchemaPackage:
		p := &Package{Pos: pos}
		if _, err := scan.DecodeInto(data, i, p); err != nil {
			return wrapBlobError(err, &m, i)
		}
		p.Properties = cloneProperties(p.Properties)
		p.Schema, p.DefaultChannel = SchemaPackage, l.intern(p.DefaultChannel)
		l.cat.Packages = append(l.cat.Packages, p)
	case SchemaChannel:
		c := &Channel{Pos: pos}
		if _, err := scan.DecodeInto(data, i, c); err != nil {
			return wrapBlobError(err, &m, i)
		}
		l.entryPositions(data, i, c)
		c.Properties = cloneProperties(c.Properties)
		c.Schema, c.Package = SchemaChannel, l.intern(c.Package)
		l.cat.Channels = append(l.cat.Channels, c)
	case SchemaBundle:
		b := &Bundle{Pos: pos}
		if _, err := scan.DecodeInto(data, i, b); err != nil {
			return wrapBlobError(err, &m, i)
		}
		return l.addBundle(data, i, b, m, true, nil)
	case SchemaDeprecations:
		d := &Deprecation{Pos: pos}
		if _, err := scan.DecodeInto(data, i, d); err != nil {
			return wrapBlobError(err, &m, i)
		}
		l.cat.Deprecations = append(l.cat.Deprecations, d)
	default:
		if _, err := scan.SkipValue(data, i, 0); err != nil {
			return err
		}
		o := m // a copy, so that m itself stays on the stack for the common schemas
		o.Pos = pos
		if !l.lean {
			o.Blob = bytes.Clone(data[i:end])
		}
		l.cat.Others = append(l.cat.Others, &o)
	}
	return nil
}

// addBundle checks the properties of b, decoded from the blob at data[i] (identified by m), and adds it;
// checked says whether their values were validated as they were decoded (see parseProperties).
func (l *fileLoader) addBundle(data []byte, i int, b *Bundle, m Meta, checked bool, pre []bool) error {
	parsed, err := parseProperties(data, b.Properties, checked, pre, l.lean, l.intern, &l.objs)
	if err != nil {
		return wrapBlobError(err, &m, i)
	}
	b.Parsed = parsed
	b.Schema, b.Package = SchemaBundle, l.intern(b.Package)
	if l.visit != nil {
		l.visit(b, l.objs.views) // before a lean load drops the property values: the visitor may read them
	}
	if l.lean {
		b.Properties = l.leanProperties(b.Properties)
		b.RelatedImages = exact(b.RelatedImages)
		parsed.Packages, parsed.GVKs = exact(parsed.Packages), exact(parsed.GVKs)
	} else {
		b.Properties = cloneProperties(b.Properties)
	}
	l.cat.Bundles = append(l.cat.Bundles, b)
	return nil
}

// onePassBundles says whether bundles are read in one pass (bundleBlob); a variable so tests can compare
// with the two passes every blob took before.
var onePassBundles = true

// errNotBundle stops the one-pass bundle decode at a blob that is not a bundle (see bundleBlob).
var errNotBundle = errors.New("not a bundle blob")

// bundleBlob reads the blob at data[i] in one pass when it is a well-formed bundle, the blob catalogs are
// mostly made of: its keys are recorded (as metaKeys does) while it decodes into a Bundle, where metaKeys'
// pass would only find the end of each value and the decode would read the blob again. It reports ok false,
// having added nothing, at anything else: another schema, a duplicate key, any error. The caller then
// reads the blob the usual way (metaKeys, then decodeBlob), which finds the same problems in the same
// order as before. On ok, err is what checking the bundle's properties found (decodeBlob's error).
func (l *fileLoader) bundleBlob(data []byte, i int) (end int, ok bool, err error) {
	if !onePassBundles || data[i] != '{' {
		return i, false, nil
	}
	sc := &l.keys
	sc.reset()
	b := &Bundle{}
	l.prechecked = l.prechecked[:0]
	end, derr := scan.DecodeObjectInto(data, i, b, func(ks, ke int, esc bool, at int) (int, error) {
		if ke-ks == len(`"schema"`) && bytes.EqualFold(data[ks+1:ke-1], []byte("schema")) && !bytes.HasPrefix(data[at:], []byte(`"`+SchemaBundle+`"`)) {
			return -1, errNotBundle // a channel, a package...: not worth decoding as a bundle
		}
		sc.see(data, ks, ke, esc, at)
		if l.lean && string(data[ks:ke]) == `"properties"` {
			return l.plainProperties(data, at, b)
		}
		return -1, nil
	})
	if derr != nil {
		return i, false, nil
	}
	m, merr := sc.meta(data, i)
	if merr != nil || m.Schema != SchemaBundle {
		return i, false, nil
	}
	b.Pos = l.pos(i)
	return end, true, l.addBundle(data, i, b, m, false, l.prechecked)
}

// errNotPlain stops plainProperties at anything but the plainest properties array (the two passes read it).
var errNotPlain = errors.New("properties not in the plain form")

// plainProperties reads a bundle's properties array at data[at] when it is in the form opm writes (and
// its YAML converts to): objects of exactly the keys "type" then "value", spelled so, the type a string
// without escapes. An olm.csv.metadata value, most of a bundle's text, is checked against its type right
// there (the check delimits it) instead of being delimited first and checked afterwards; l.prechecked
// records which. Anything else is errNotPlain: the blob is then read the usual way.
func (l *fileLoader) plainProperties(data []byte, at int, b *Bundle) (int, error) {
	byteAt := func(j int) byte {
		if j < len(data) {
			return data[j]
		}
		return 0
	}
	key := func(j int, k string) (int, bool) {
		if !bytes.HasPrefix(data[j:], []byte(k)) {
			return j, false
		}
		j = scan.SkipSpace(data, j+len(k))
		if byteAt(j) != ':' {
			return j, false
		}
		return scan.SkipSpace(data, j+1), true
	}
	if byteAt(at) != '[' {
		return at, errNotPlain
	}
	props := l.props[:0] // a lean load copies the list (leanProperties); [] is an empty list, not none
	if props == nil {
		props = []Property{}
	}
	l.prechecked = l.prechecked[:0]
	end, err := scan.IterArray(data, at, func(_ int, e int) (int, error) {
		if byteAt(e) != '{' {
			return e, errNotPlain
		}
		j, ok := key(scan.SkipSpace(data, e+1), `"type"`)
		if !ok || byteAt(j) != '"' {
			return j, errNotPlain
		}
		te, esc, err := scan.ScanString(data, j)
		if err != nil || esc {
			return j, errNotPlain
		}
		typ := l.internBytes(data[j+1 : te-1])
		if !utf8.Valid(data[j+1 : te-1]) {
			typ = scan.StringValue(data, j, te, false) // invalid UTF-8 is replaced, as encoding/json does
		}
		if j = scan.SkipSpace(data, te); byteAt(j) != ',' {
			return j, errNotPlain
		}
		if j, ok = key(scan.SkipSpace(data, j+1), `"value"`); !ok || j >= len(data) {
			return j, errNotPlain
		}
		var ve int
		checked := typ == PropertyCSVMetadata && data[j] == '{'
		if checked {
			ve, err = scan.CheckWhole[CSVMetadata](data, j)
		} else {
			ve, err = scan.DelimitRaw(data, j)
		}
		if err != nil {
			return j, errNotPlain
		}
		props = append(props, Property{Type: typ, Value: data[j:ve]})
		l.prechecked = append(l.prechecked, checked)
		if ve = scan.SkipSpace(data, ve); byteAt(ve) != '}' {
			return ve, errNotPlain
		}
		return ve + 1, nil
	})
	if err != nil {
		return end, errNotPlain
	}
	b.Properties = props
	if cap(props) <= 1024 {
		l.props = props[:0]
	}
	return end, nil
}

// entryPositions finds where each entry of a channel starts (a third, cheap pass over the entries array).
func (l *fileLoader) entryPositions(data []byte, i int, c *Channel) {
	n := 0
	_, _ = scan.IterObject(data, i, func(ks, ke int, esc bool, at int) (int, error) {
		if !strings.EqualFold(scan.StringValue(data, ks, ke, esc), "entries") || data[at] != '[' {
			return scan.SkipValue(data, at, 0)
		}
		return scan.IterArray(data, at, func(_ int, e int) (int, error) {
			if n < len(c.Entries) {
				c.Entries[n].Pos = l.pos(e)
			}
			n++
			return scan.SkipValue(data, e, 0)
		})
	})
}

// parseProperties decodes bundle property values into their types, as opm's property.Parse does. The
// names a catalog repeats from bundle to bundle (packages, groups, kinds, versions of the APIs) go through
// intern. Bundle objects are decoded into objs (objectScratch), whose views are the bundle's manifests.
// Unless checked, the values were only delimited (scan.DecodeObjectInto): each is validated here, by its
// typed decode, which must then end where the value does, or whole when its type has none. pre[k] says
// that property k's value was checked as its type already (see plainProperties).
func parseProperties(data []byte, props []Property, checked bool, pre []bool, lean bool, intern func(string) string, objs *objectScratch) (*Parsed, error) {
	p := &Parsed{}
	objs.reset()
	defer objs.done()
	// the lists are made to their length (a lean catalog keeps them for the whole run; no growing)
	var nPkg, nReq, nGVK, nGVKReq, nCh int
	for _, prop := range props {
		switch prop.Type {
		case PropertyPackage:
			nPkg++
		case PropertyPackageRequired:
			nReq++
		case PropertyGVK:
			nGVK++
		case PropertyGVKRequired:
			nGVKReq++
		case PropertyChannel:
			nCh++
		}
	}
	p.Packages, p.PackagesRequired = sized[PackageProperty](nPkg), sized[PackageRequired](nReq)
	p.GVKs, p.GVKsRequired, p.Channels = sized[GVK](nGVK), sized[GVK](nGVKReq), sized[ChannelProperty](nCh)
	for idx, prop := range props {
		off := -1
		if len(prop.Value) > 0 {
			off = offsetIn(data, prop.Value)
		}
		if prop.Value == nil {
			return nil, &PropertyError{Index: idx, Type: prop.Type, Off: off, Err: fmt.Errorf("value is missing")}
		}
		v := []byte(prop.Value)
		var err error
		end := len(v)
		switch prop.Type {
		case PropertyPackage:
			var x *PackageProperty
			if x, end, err = decodeNext(&p.Packages, v); err == nil {
				x.PackageName = intern(x.PackageName)
			}
		case PropertyPackageRequired:
			_, end, err = decodeNext(&p.PackagesRequired, v)
		case PropertyGVK:
			var x *GVK
			if x, end, err = decodeNext(&p.GVKs, v); err == nil {
				x.Group, x.Kind, x.Version = intern(x.Group), intern(x.Kind), intern(x.Version)
			}
		case PropertyGVKRequired:
			_, end, err = decodeNext(&p.GVKsRequired, v)
		case PropertyChannel:
			_, end, err = decodeNext(&p.Channels, v)
		case PropertyBundleObject:
			x := bundleObjectCheck{Data: objs.room()}
			if end, err = scan.DecodeInto(v, 0, &x); err == nil {
				objs.add(x.Data)
				err = checkManifest(x.Data)
				p.Objects++
			}
		case PropertyCSVMetadata:
			if lean && idx < len(pre) && pre[idx] {
				// checked where it was read
			} else if lean {
				end, err = scan.CheckAs[CSVMetadata](v, 0)
			} else {
				x := &CSVMetadata{} // decoded from a copy: its raw descriptor values must not alias the file
				if end, err = scan.DecodeInto(bytes.Clone(v), 0, x); err == nil {
					p.CSVMetadata = x
				}
			}
		default:
			if !checked {
				err = scan.CheckRaw(v)
			}
		}
		if err == nil && end != len(v) {
			err = scan.ErrAt(v, end, "after top-level value")
		}
		if err != nil {
			if te, ok := err.(*scan.TypeError); ok && off >= 0 {
				off += te.Off
			}
			return nil, &PropertyError{Index: idx, Type: prop.Type, Off: off, Err: err}
		}
	}
	return p, nil
}

// decodeNext decodes the value v into a new last element of *list, in the list's own memory (a value
// decoded through a pointer to a variable would be moved to the heap, once per property). On an error the
// element is left as the decode left it: the caller drops the list.
func decodeNext[E any](list *[]E, v []byte) (x *E, end int, err error) {
	*list = append(*list, *new(E))
	x = &(*list)[len(*list)-1]
	end, err = scan.DecodeInto(v, 0, x)
	return x, end, err
}

// sized returns an empty list with room for n elements, or nil for none.
func sized[E any](n int) []E {
	if n == 0 {
		return nil
	}
	return make([]E, 0, n)
}

// bundleObjectCheck is BundleObject decoded into memory reused from bundle to bundle (objectScratch: a
// bundle's objects, CSVs and CRDs, were a quarter of what community-operators-prod-v4.16's load allocated).
type bundleObjectCheck struct {
	Data scan.ReusedBytes `json:"data"`
}

// checkManifest accepts what opm's bundle-object reading accepts: text whose first non-space character
// (unicode.IsSpace, as apimachinery's yaml.ToJSON has it) is '{' is taken as JSON unchecked; anything else
// must be YAML that converts to JSON.
func checkManifest(data []byte) error {
	if t := bytes.TrimLeftFunc(data, unicode.IsSpace); len(t) > 0 && t[0] == '{' {
		return nil
	}
	if _, err := yaml.YAMLToJSON(data); err != nil {
		return fmt.Errorf("decoded manifest is not YAML or JSON: %w", err)
	}
	return nil
}

// offsetIn returns the offset of sub inside data when sub is a sub-slice of it, else -1.
func offsetIn(data, sub []byte) int {
	if len(sub) == 0 || len(data) == 0 {
		return -1
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	if p < d || p >= d+uintptr(len(data)) {
		return -1
	}
	return int(p - d)
}

func cloneProperties(props []Property) []Property {
	for i := range props {
		props[i].Value = bytes.Clone(props[i].Value)
	}
	return props
}

// leanProperties drops every property value once checked: validation needs only their types and the
// decoded summary in Parsed, and a lean catalog is never written back. The types, a handful of names
// repeated by every bundle, are shared, and the list is copied to its length (the decoder's appends
// leave up to as much again spare): a lean catalog is kept for the whole run.
func (l *fileLoader) leanProperties(props []Property) []Property {
	if props == nil {
		return nil
	}
	// always a copy: the list may be the loader's scratch (see plainProperties)
	out := make([]Property, len(props))
	for i := range props {
		out[i] = Property{Type: l.intern(props[i].Type)}
	}
	return out
}

// exact returns s, copied to a slice of its length when it has spare capacity.
func exact[S ~[]E, E any](s S) S {
	if len(s) == cap(s) {
		return s
	}
	return append(make(S, 0, len(s)), s...)
}
