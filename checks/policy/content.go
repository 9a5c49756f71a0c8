package policy

import (
	"bytes"
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

// What OLM accepts: each manifest is stored as one object (about 1 MiB, etcd's limit; operator-sdk#5559),
// and the bundle is unpacked through a ConfigMap of its gzipped manifests (about 4 MiB since OLM 0.19;
// operator-framework/api#228).
const (
	maxManifestBytes   = 1 << 20
	maxCompressedBytes = 4 << 20
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
	allNamespaces       bool
	webhooks            int
	operatorConditions  bool
	removed             []removedAPI // objects whose API some Kubernetes version removed
	largest             int          // the largest manifest's size, and its kind and name
	largestWhat         string
	total, compressed   int    // the manifests' size, and gzipped (computed only when total is over the limit)
	mediatype           string // olm.bundle.mediatype, "" when absent
	constraint          bool   // an olm.constraint property
	// manifests are the olm.bundle.object data, kept only for operator-framework's validators (which
	// drop them once they ran: see ofValidate).
	manifests [][]byte
}

// csvFields are the CSV fields the rules read. olm.csv.metadata has no icon, webhooks or permissions.
type csvFields struct {
	Name        string
	DisplayName string     `json:"displayName"`
	Description textLength `json:"description"`
	Version     string     `json:"version"`
	Icon        []struct {
		Data      string `json:"base64data"`
		MediaType string `json:"mediatype"`
	} `json:"icon"`
	Maintainers []struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	} `json:"maintainers"`
	Provider struct {
		Name string `json:"name"`
	} `json:"provider"`
	Links []struct {
		Name string `json:"name"`
		URL  string `json:"url"`
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
	mu        sync.Mutex
	m         map[*catalog.Bundle]*content
	manifests bool
}

// NewCollector returns an empty Collector for the rules sev enables: it keeps the bundles' manifests
// only when operator-framework's validators run.
func NewCollector(sev Severities) *Collector {
	return &Collector{m: map[*catalog.Bundle]*content{}, manifests: sev.keepsManifests()}
}

// Visit decodes b's property values; it is safe to call from the loader's workers at once, and keeps
// nothing of the values themselves.
func (c *Collector) Visit(b *catalog.Bundle) {
	ct := decodeContent(b, c.manifests)
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
	c := decodeContent(b, r.keepManifests)
	r.contents[b] = c
	return c
}

func decodeContent(b *catalog.Bundle, keepManifests bool) *content {
	c := &content{}
	var csv *csvFields
	var gz *gzipCounter
	var below [][]byte // the objects so far, while their total is under the gzip limit
	for _, p := range b.Properties {
		switch p.Type {
		case "olm.constraint":
			c.constraint = true
		case "olm.bundle.mediatype":
			_ = catalog.DecodeJSON(p.Value, &c.mediatype)
		case catalog.PropertyBundleObject:
			c.objects++
			if len(p.Value) > 0 {
				// an object that does not decode is the loader's and validate's finding
				f, data, _ := c.addObject(p.Value)
				if f != nil {
					csv, c.csvFromMeta = f, false
				}
				c.total += len(data)
				if keepManifests && data != nil {
					c.manifests = append(c.manifests, data)
				}
				switch {
				case gz != nil:
					gz.Write(data)
				case c.total > maxCompressedBytes:
					// only a large bundle is compressed to be measured: what came before is fed from
					// below, never decoded again (at most the limit is held meanwhile)
					gz = newGzipCounter()
					for _, d := range below {
						gz.Write(d)
					}
					gz.Write(data)
					below = nil
				default:
					below = append(below, data)
				}
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
	if gz != nil {
		c.compressed = gz.Size()
	}
	if csv != nil {
		c.hasCSV = true
		c.missing = requiredFields(csv, c.csvFromMeta)
		c.allNamespaces = supports(csv.InstallModes, "AllNamespaces")
		if !c.csvFromMeta {
			c.webhooks = len(csv.WebhookDefinitions)
			c.operatorConditions = usesOperatorConditions(csv)
		}
	}
	return c
}

// addObject reads one olm.bundle.object value; it returns the CSV when the object is one, and the
// manifest as stored.
func (c *content) addObject(value []byte) (*csvFields, []byte, error) {
	var bo catalog.BundleObject
	if err := catalog.DecodeJSON(value, &bo); err != nil {
		return nil, nil, err
	}
	js := bo.Data // opm writes objects as JSON; only YAML needs converting
	if t := bytes.TrimLeftFunc(js, unicode.IsSpace); len(t) == 0 || t[0] != '{' {
		var err error
		if js, err = yaml.YAMLToJSON(bo.Data); err != nil {
			return nil, bo.Data, err
		}
	}
	apiVersion, kind, name, err := catalog.ManifestHeader(js)
	if err != nil {
		return nil, bo.Data, err
	}
	if len(bo.Data) > c.largest {
		c.largest, c.largestWhat = len(bo.Data), fmt.Sprintf("%s %q", kind, name)
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
			return nil, bo.Data, fmt.Errorf("ClusterServiceVersion %s: %w", csv.Metadata.Name, err)
		}
		return &csv.Spec, bo.Data, nil
	}
	return nil, bo.Data, nil
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
				f.msg = fmt.Sprintf("bundle %q has a manifest of %s (%s), over the %s OLM can store as one object", b.Name, mib(c.largest), c.largestWhat, mib(maxManifestBytes))
				f.hint = "split the manifest (for a CRD: trim descriptions from its schema)"
				r.add(f)
			}
			if c.compressed > maxCompressedBytes {
				f.rule = ruleSize
				f.msg = fmt.Sprintf("bundle %q is %s gzipped (%s of manifests), over the %s OLM unpacks", b.Name, mib(c.compressed), mib(c.total), mib(maxCompressedBytes))
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

// requiredFields lists what operator-pipelines' check_required_fields would refuse. olm.csv.metadata
// has no icon (it stays in the bundle image), so the icon is checked only on CSV objects.
func requiredFields(c *csvFields, fromMeta bool) []string {
	var out []string
	if n := len([]rune(c.DisplayName)); n < 3 || n > 50 {
		out = append(out, fmt.Sprintf("displayName %q must be 3 to 50 characters", c.DisplayName))
	}
	if c.Description < 20 {
		out = append(out, "description must be at least 20 characters")
	}
	if !fromMeta && (len(c.Icon) == 0 || c.Icon[0].Data == "" || !iconTypes[c.Icon[0].MediaType]) {
		out = append(out, "icon must be a base64 image of mediatype image/png, image/jpeg, image/gif or image/svg+xml")
	}
	if _, err := semver.Parse(c.Version); err != nil {
		out = append(out, fmt.Sprintf("version %q is not semver", c.Version))
	}
	if len(c.Maintainers) == 0 {
		out = append(out, "at least one maintainer is required")
	}
	if len([]rune(c.Provider.Name)) < 3 {
		out = append(out, fmt.Sprintf("provider.name %q must be at least 3 characters", c.Provider.Name))
	}
	if len(c.Links) == 0 {
		out = append(out, "at least one link is required")
	}
	return out
}

// textLength is a JSON string's length in runes once trimmed of white space (strings.TrimSpace), read
// without building the string: a CSV's description is most of what the policy decodes of it.
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
	first, last, idx := -1, -1, 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRune(s[i:])
		if s[i] == '\\' && i+1 < len(s) {
			r, w = unescape(s[i:])
		}
		i += w
		if !unicode.IsSpace(r) {
			if first < 0 {
				first = idx
			}
			last = idx
		}
		idx++
	}
	*n = 0
	if first >= 0 {
		*n = textLength(last - first + 1)
	}
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
