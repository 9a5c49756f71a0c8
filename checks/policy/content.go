package policy

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/catalog"
)

// The bundle content rules, read from olm.bundle.object and olm.csv.metadata properties.
const (
	ruleCSVMetadataRequired = "policy-csv-metadata-required"
	ruleCSVRequiredFields   = "policy-csv-required-fields"
	ruleNetworkPolicy       = "policy-network-policy"
	ruleSize                = "policy-bundle-size"
)

// What OLM and the API server accept. A manifest is created as one object, which etcd stores only under
// its request limit (--max-request-bytes, 1.5 MiB by default: etcd's "Request size limit"; a 1.1 MiB CRD
// installs). A bundle is staged by OLM's unpacker in one ConfigMap (Kubernetes' 1 MiB limit) as its
// manifests gzipped and base64-encoded, each file on its own: the bound operator-framework's bundle
// validator refuses (validateBundleSize, max_bundle_size), so when policy-of-bundle judges a bundle the
// staged size is its finding, not this rule's (one problem, one finding).
const (
	maxManifestBytes = 3 << 19
	maxStagedBytes   = 1 << 20
)

var contentRules = []string{ruleCSVMetadataRequired, ruleCSVRequiredFields, ruleNetworkPolicy, ruleSize}

// migrateToCSVMetadata is the migrate level under which a catalog's bundles carry olm.csv.metadata.
const migrateToCSVMetadata = "bundle-object-to-csv-metadata"

// content is what a bundle's property values say, reduced to what the rules judge (a catalog's worth of
// them is kept for a run, so no descriptions or manifests).
type content struct {
	objects       int  // olm.bundle.object properties
	networkPolicy bool // one of them is a NetworkPolicy
	// hasCSV: the CSV is in the catalog, as an object or as olm.csv.metadata (csvFromMeta).
	hasCSV, csvFromMeta bool
	missing             []string // required CSV fields missing or malformed (requiredFields)
	minKube             string   // spec.minKubeVersion, "" when not set
	allNamespaces       bool
	webhooks            int
	operatorConditions  bool
	removed             []removedAPI // objects whose API some Kubernetes version removed
	largest             int          // the largest manifest's size, and its kind and name
	largestWhat         string
	// total is the manifests' size; staged their size gzipped and base64-encoded, each on its own, as OLM
	// stages them (computed only when asked for and a bound of it is over maxStagedBytes)
	total, staged int
	mediatype     string // olm.bundle.mediatype, "" when absent
	constraint    bool   // an olm.constraint property
	// read counts the manifests read (the olm.bundle.object data that decoded), and digest is their
	// objectsDigest, of which operator-framework's validators' cache key is made; both only when the
	// validators run (decodeWhat.manifests). manifests are the manifests themselves when they are the
	// content's memory (decoded from the property values, or read from the image), for the validators,
	// which drop them once they ran (see ofValidate); a Collector keeps none: on a cache miss the
	// validators read the bundle's file again (Input.Reread).
	read      int
	digest    [32]byte
	manifests [][]byte
}

// csvFields are the CSV fields the rules read. olm.csv.metadata has no icon, webhooks or permissions.
// A pointer is nil when the field is absent or null, which operator-pipelines tells apart from empty.
type csvFields struct {
	Name           string
	DisplayName    *string     `json:"displayName"`
	Description    *textLength `json:"description"`
	Version        string      `json:"version"`
	MinKubeVersion string      `json:"minKubeVersion"`
	Icon           []struct {
		Data      *string `json:"base64data"`
		MediaType *string `json:"mediatype"`
	} `json:"icon"`
	Maintainers []struct {
		Name  *string `json:"name"`
		Email *string `json:"email"`
	} `json:"maintainers"`
	Provider *struct {
		Name *string `json:"name"`
	} `json:"provider"`
	Links []struct {
		Name *string `json:"name"`
		URL  *string `json:"url"`
	} `json:"links"`
	InstallModes       []catalog.InstallMode `json:"installModes"`
	WebhookDefinitions []struct{}            `json:"webhookdefinitions"`
	Install            struct {
		Spec struct {
			Permissions        []permission `json:"permissions"`
			ClusterPermissions []permission `json:"clusterPermissions"`
		} `json:"spec"`
	} `json:"install"`
}

type permission struct {
	Rules []struct {
		APIGroups []string `json:"apiGroups"`
		Resources []string `json:"resources"`
	} `json:"rules"`
}

type csvObject struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec csvFields `json:"spec"`
}

// Collector decodes, while a catalog loads, what the rules read from each bundle's property values, so
// that a lean load (validate's, which drops the values) serves every rule: pass Visit as the load's
// bundle visitor (validate.Options.VisitBundle) and the Collector as Input.Collected.
type Collector struct {
	mu   sync.Mutex
	m    map[*catalog.Bundle]*content
	what decodeWhat
}

// decodeWhat says what decodeContent keeps beyond the rules' summary: the manifests themselves (for
// operator-framework's validators) and the staged size (for policy-bundle-size when the bundle
// validator, which measures it itself, does not run).
type decodeWhat struct{ manifests, staged bool }

func (s Severities) decodeWhat() decodeWhat {
	return decodeWhat{manifests: s.keepsManifests(), staged: s[ruleSize] != "" && s[ruleOFBundle] == ""}
}

// NewCollector returns an empty Collector for the rules sev enables: it keeps the bundles' manifests
// only when operator-framework's validators run.
func NewCollector(sev Severities) *Collector {
	return &Collector{m: map[*catalog.Bundle]*content{}, what: sev.decodeWhat()}
}

// Visit decodes b's property values, reading its objects as the load decoded them (objects, in the
// order of its olm.bundle.object properties); it is safe to call from the loader's workers at once, and
// keeps nothing of the loader's memory: of the manifests, only their digest (see content.read).
func (c *Collector) Visit(b *catalog.Bundle, objects [][]byte) {
	ct := decodeContent(b, c.what, objects, false)
	c.mu.Lock()
	c.m[b] = ct
	c.mu.Unlock()
}

// contentOf is what b's property values say: collected during the load, or decoded now. A bundle of a
// lean load not collected has no values: its content is empty but for what the property types say.
func (r *run) contentOf(b *catalog.Bundle) *content {
	if c, ok := r.contents[b]; ok {
		return c
	}
	c := decodeContent(b, r.what, nil, true)
	r.contents[b] = c
	return c
}

// decodeContent reads what the rules judge from b's property values. objects, when not nil, are b's
// olm.bundle.object manifests already decoded (Collector.Visit, or read from b's image), which the
// content may keep when kept says they are its own (else they are valid only during the call); nil
// decodes each from its property.
func decodeContent(b *catalog.Bundle, what decodeWhat, objects [][]byte, kept bool) *content {
	if objects == nil {
		objects, kept = bundleObjects(b), true
	}
	c := &content{}
	var csv *csvFields
	var datas [][]byte // the bundle's manifests, while they are hashed or their staged size measured
	var bound int64
	for _, p := range b.Properties {
		switch p.Type {
		case "olm.constraint":
			c.constraint = true
		case "olm.bundle.mediatype":
			_ = catalog.DecodeJSON(p.Value, &c.mediatype)
		case catalog.PropertyBundleObject:
			c.objects++
			if c.objects > len(objects) || objects[c.objects-1] == nil {
				continue // an object that does not decode is the loader's and validate's finding
			}
			data := objects[c.objects-1]
			f, _ := c.addObject(data)
			if f != nil {
				csv, c.csvFromMeta = f, false
			}
			c.total += len(data)
			if what.manifests || what.staged {
				datas = append(datas, data)
			}
			if what.staged {
				bound += gzipBase64Bound(len(data))
			}
		case catalog.PropertyCSVMetadata:
			if len(p.Value) == 0 || csv != nil {
				continue
			}
			f := &csvFields{}
			if err := catalog.DecodeJSON(p.Value, f); err == nil {
				csv, c.csvFromMeta = f, true
				if b.Parsed != nil && len(b.Parsed.Packages) == 1 {
					f.Version = b.Parsed.Packages[0].Version
				}
			}
		}
	}
	if what.manifests {
		c.read, c.digest = len(datas), objectsDigest(datas)
		if kept {
			c.manifests = datas
		}
	}
	if bound > maxStagedBytes { // only a bundle that may be over the limit is compressed to be measured
		for _, d := range datas {
			gz := newGzipCounter()
			gz.Write(d)
			c.staged += (gz.Size() + 2) / 3 * 4
		}
	}
	if csv != nil {
		c.hasCSV = true
		c.minKube = csv.MinKubeVersion
		c.missing = requiredFields(csv, c.csvFromMeta)
		c.allNamespaces = supports(csv.InstallModes, "AllNamespaces")
		if !c.csvFromMeta {
			c.webhooks = len(csv.WebhookDefinitions)
			c.operatorConditions = usesOperatorConditions(csv)
		}
	}
	return c
}

// bundleObjects decodes b's olm.bundle.object values, in order: nil for one that does not decode.
func bundleObjects(b *catalog.Bundle) [][]byte {
	var out [][]byte
	for _, p := range b.Properties {
		if p.Type != catalog.PropertyBundleObject {
			continue
		}
		var bo catalog.BundleObject
		if len(p.Value) == 0 || catalog.DecodeJSON(p.Value, &bo) != nil {
			out = append(out, nil)
			continue
		}
		if bo.Data == nil {
			bo.Data = []byte{}
		}
		out = append(out, bo.Data)
	}
	return out
}

// addObject reads one manifest (an olm.bundle.object's data, decoded); it returns the CSV when the object
// is one. It keeps nothing of data.
func (c *content) addObject(data []byte) (*csvFields, error) {
	js := data // opm writes objects as JSON; only YAML needs converting
	if t := bytes.TrimLeftFunc(js, unicode.IsSpace); len(t) == 0 || t[0] != '{' {
		var err error
		if js, err = yaml.YAMLToJSON(data); err != nil {
			return nil, err
		}
	}
	apiVersion, kind, name, err := catalog.ManifestHeader(js)
	if err != nil {
		return nil, err
	}
	if len(data) > c.largest {
		c.largest, c.largestWhat = len(data), fmt.Sprintf("%s %q", kind, name)
	}
	if a, ok := removal(apiVersion, kind, name); ok {
		c.removed = append(c.removed, a)
	}
	switch kind {
	case "NetworkPolicy":
		c.networkPolicy = true
	case "ClusterServiceVersion":
		var csv csvObject
		if err := catalog.DecodeJSON(js, &csv); err != nil {
			return nil, fmt.Errorf("ClusterServiceVersion %s: %w", csv.Metadata.Name, err)
		}
		return &csv.Spec, nil
	}
	return nil, nil
}

func (r *run) bundleContents() {
	if !r.on(contentRules...) {
		return
	}
	for _, p := range r.ix.order {
		for _, bi := range p.bundles {
			if err := r.ctx.Err(); err != nil {
				return
			}
			b := bi.b
			f := finding{pos: b.Pos, pkg: p.name, bundle: b.Name}
			if r.in.MigrateLevel == migrateToCSVMetadata && hasProperty(b, catalog.PropertyBundleObject) {
				f.rule = ruleCSVMetadataRequired
				f.msg = fmt.Sprintf("bundle %q carries olm.bundle.object properties%s, whose migrate level is %s: the catalog must hold olm.csv.metadata instead", b.Name, r.inCatalog(), migrateToCSVMetadata)
				f.hint = "render the bundle with opm render --migrate-level " + migrateToCSVMetadata
				r.add(f)
			}
			if !r.on(ruleCSVRequiredFields, ruleNetworkPolicy, ruleSize) {
				continue
			}
			c := r.contentOf(b)
			if c.networkPolicy {
				f.rule = ruleNetworkPolicy
				f.msg = fmt.Sprintf("bundle %q contains a NetworkPolicy: OLM cannot install one", b.Name)
				f.hint = "remove the NetworkPolicy from the bundle's manifests; have the operator create it at run time"
				r.add(f)
			}
			if c.largest > maxManifestBytes {
				f.rule = ruleSize
				f.msg = fmt.Sprintf("bundle %q has a manifest of %s (%s), over the %s etcd stores as one object by default", b.Name, mib(c.largest), c.largestWhat, mib(maxManifestBytes))
				f.hint = "split the manifest (for a CRD: trim descriptions from its schema)"
				r.add(f)
			}
			if c.staged > maxStagedBytes {
				f.rule = ruleSize
				f.msg = fmt.Sprintf("bundle %q is %s gzipped and base64-encoded (%s of manifests), over the %s ConfigMap OLM stages a bundle in", b.Name, mib(c.staged), mib(c.total), mib(maxStagedBytes))
				f.hint = "make the bundle smaller: fewer or smaller manifests"
				r.add(f)
			}
			if len(c.missing) > 0 {
				f.rule = ruleCSVRequiredFields
				f.msg = fmt.Sprintf("the CSV of bundle %q lacks what operator-pipelines requires: %s", b.Name, strings.Join(c.missing, "; "))
				f.hint = "fix the ClusterServiceVersion's spec and rebuild the bundle"
				r.add(f)
			}
		}
	}
}

func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func hasProperty(b *catalog.Bundle, typ string) bool {
	for _, p := range b.Properties {
		if p.Type == typ {
			return true
		}
	}
	return false
}

var iconTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/svg+xml": true}

// requiredFields lists what operator-pipelines' check_required_fields refuses (its fatal fields; the
// others are warnings there and not reported here), with its semantics: displayName and provider.name
// match ".{3,50}" and ".{3,}" from their start (so: at least 3 characters before any line break, and no
// upper bound, since the pattern is not anchored at the end), description ".{20,}" (20 characters, white
// space included), version semver, every icon valid base64 of a supported mediatype, maintainers and
// links non-empty lists whose entries have both their fields. olm.csv.metadata has no icon (it stays in
// the bundle image), so the icon is checked only on CSV objects.
func requiredFields(c *csvFields, fromMeta bool) []string {
	var out []string
	if c.DisplayName == nil || firstLineRunes(*c.DisplayName) < 3 {
		out = append(out, fmt.Sprintf("displayName %q must have at least 3 characters", deref(c.DisplayName)))
	}
	if c.Description == nil || *c.Description < 20 {
		out = append(out, "description must be at least 20 characters")
	}
	if !fromMeta && !validIcons(c) {
		out = append(out, "icon must be a base64 image of mediatype image/png, image/jpeg, image/gif or image/svg+xml")
	}
	if _, err := semver.Parse(c.Version); err != nil {
		out = append(out, fmt.Sprintf("version %q is not semver", c.Version))
	}
	ok := len(c.Maintainers) > 0
	for _, m := range c.Maintainers {
		ok = ok && m.Name != nil && m.Email != nil
	}
	if !ok {
		out = append(out, "at least one maintainer with a name and an email is required")
	}
	if c.Provider == nil || c.Provider.Name == nil || firstLineRunes(*c.Provider.Name) < 3 {
		name := ""
		if c.Provider != nil {
			name = deref(c.Provider.Name)
		}
		out = append(out, fmt.Sprintf("provider.name %q must have at least 3 characters", name))
	}
	ok = len(c.Links) > 0
	for _, l := range c.Links {
		ok = ok && l.Name != nil && l.URL != nil
	}
	if !ok {
		out = append(out, "at least one link with a name and a url is required")
	}
	return out
}

// validIcons is operator-pipelines' validate_icon: at least one icon, each with base64 data (at least 4
// characters once white space is removed) and a supported mediatype.
func validIcons(c *csvFields) bool {
	for _, icon := range c.Icon {
		if icon.Data == nil || icon.MediaType == nil || !iconTypes[*icon.MediaType] {
			return false
		}
		data := withoutSpace(*icon.Data)
		if len(data) < 4 {
			return false
		}
		if _, err := base64.StdEncoding.DecodeString(data); err != nil {
			return false
		}
	}
	return len(c.Icon) > 0
}

// withoutSpace is s without ASCII white space (space, \t, \n, \r, \v, \f), or s itself when it has none:
// an icon's data is mostly one line of base64, tens of kilobytes long. An ASCII byte is never part of a
// multi-byte character, so bytes are removed as characters would be.
func withoutSpace(s string) string {
	isSpace := func(c byte) bool { return c == ' ' || c-'\t' <= '\r'-'\t' }
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			b := []byte(s[:i])
			for ; i < len(s); i++ {
				if !isSpace(s[i]) {
					b = append(b, s[i])
				}
			}
			return string(b)
		}
	}
	return s
}

// firstLineRunes counts the characters before the first line break (what "." matches in Python).
func firstLineRunes(s string) int {
	line, _, _ := strings.Cut(s, "\n")
	return utf8.RuneCountInString(line)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// textLength is a JSON string's length in runes (what Python's len counts), read without building the
// string: a CSV's description is most of what the policy decodes of it.
type textLength int

// UnmarshalJSON implements json.Unmarshaler on a JSON string (null is empty); raw is valid JSON.
func (n *textLength) UnmarshalJSON(raw []byte) error {
	if string(raw) == "null" {
		*n = 0
		return nil
	}
	if len(raw) < 2 || raw[0] != '"' {
		return fmt.Errorf("want a string, got %.20s", raw)
	}
	s := raw[1 : len(raw)-1]
	count := 0
	for i := 0; i < len(s); count++ {
		_, w := utf8.DecodeRune(s[i:])
		if s[i] == '\\' && i+1 < len(s) {
			_, w = unescape(s[i:])
		}
		i += w
	}
	*n = textLength(count)
	return nil
}

// unescape decodes the JSON escape s starts with, as encoding/json does (a lone surrogate is U+FFFD),
// and returns its width.
func unescape(s []byte) (rune, int) {
	switch s[1] {
	case 'n':
		return '\n', 2
	case 't':
		return '\t', 2
	case 'r':
		return '\r', 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'u':
		r := hex4(s[2:])
		if r < 0 {
			return utf8.RuneError, 2
		}
		if utf16.IsSurrogate(r) {
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if lo := hex4(s[8:]); lo >= 0 {
					if dec := utf16.DecodeRune(r, lo); dec != unicode.ReplacementChar {
						return dec, 12
					}
				}
			}
			return unicode.ReplacementChar, 6
		}
		return r, 6
	}
	return rune(s[1]), 2 // \" \\ \/
}

func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(d)
	}
	return r
}
