package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/catalog"
)

// The bundle content rules, read from olm.bundle.object and olm.csv.metadata properties.
const (
	ruleCSVMetadataRequired = "policy-csv-metadata-required"
	ruleCSVRequiredFields   = "policy-csv-required-fields"
	ruleNetworkPolicy       = "policy-network-policy"
)

var contentRules = []string{ruleCSVMetadataRequired, ruleCSVRequiredFields, ruleNetworkPolicy}

// migrateToCSVMetadata is the migrate level under which a catalog's bundles carry olm.csv.metadata.
const migrateToCSVMetadata = "bundle-object-to-csv-metadata"

// content is what a bundle's properties say about its manifests.
type content struct {
	objects     int // olm.bundle.object properties
	kinds       []string
	csv         *csvFields // from the CSV object, else from olm.csv.metadata; nil when neither is there
	csvFromMeta bool
	mediatype   string // olm.bundle.mediatype, "" when absent
	constraint  bool   // an olm.constraint property
	err         error  // the first object that did not decode
}

// csvFields are the CSV fields the rules read. olm.csv.metadata has no icon, webhooks or permissions.
type csvFields struct {
	Name        string
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
	Version     string `json:"version"`
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
	WebhookDefinitions []json.RawMessage     `json:"webhookdefinitions"`
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

type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec json.RawMessage `json:"spec"`
}

// contentOf decodes b's properties once per run. A lean catalog's bundles have no property values:
// their content is empty but for the property types.
func (r *run) contentOf(b *catalog.Bundle) *content {
	if c, ok := r.contents[b]; ok {
		return c
	}
	c := &content{}
	for i, p := range b.Properties {
		switch p.Type {
		case "olm.constraint":
			c.constraint = true
		case "olm.bundle.mediatype":
			_ = json.Unmarshal(p.Value, &c.mediatype)
		case catalog.PropertyBundleObject:
			c.objects++
			if len(p.Value) == 0 {
				continue
			}
			if err := c.addObject(p.Value); err != nil && c.err == nil {
				c.err = fmt.Errorf("property[%d] (olm.bundle.object): %w", i, err)
			}
		case catalog.PropertyCSVMetadata:
			if len(p.Value) == 0 || c.csv != nil {
				continue
			}
			f := &csvFields{}
			if err := json.Unmarshal(p.Value, f); err == nil {
				c.csv, c.csvFromMeta = f, true
			}
		}
	}
	if c.csv != nil && c.csvFromMeta {
		if b.Parsed != nil && len(b.Parsed.Packages) == 1 {
			c.csv.Version = b.Parsed.Packages[0].Version
		}
		c.csv.Name = b.Name
	}
	r.contents[b] = c
	return c
}

func (c *content) addObject(value []byte) error {
	var bo catalog.BundleObject
	if err := json.Unmarshal(value, &bo); err != nil {
		return err
	}
	js := bo.Data // opm writes objects as JSON; only YAML needs converting
	if t := bytes.TrimLeftFunc(js, unicode.IsSpace); len(t) == 0 || t[0] != '{' {
		var err error
		if js, err = yaml.YAMLToJSON(bo.Data); err != nil {
			return err
		}
	}
	var o object
	if err := json.Unmarshal(js, &o); err != nil {
		return err
	}
	c.kinds = append(c.kinds, o.Kind)
	if o.Kind == "ClusterServiceVersion" && (c.csv == nil || c.csvFromMeta) {
		f := &csvFields{}
		if len(o.Spec) > 0 {
			if err := json.Unmarshal(o.Spec, f); err != nil {
				return fmt.Errorf("ClusterServiceVersion %s: %w", o.Metadata.Name, err)
			}
		}
		f.Name = o.Metadata.Name
		c.csv, c.csvFromMeta = f, false
	}
	return nil
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
			if !r.on(ruleCSVRequiredFields, ruleNetworkPolicy) {
				continue
			}
			c := r.contentOf(b)
			for _, k := range c.kinds {
				if k == "NetworkPolicy" {
					f.rule = ruleNetworkPolicy
					f.msg = fmt.Sprintf("bundle %q contains a NetworkPolicy: OLM cannot install one", b.Name)
					f.hint = "remove the NetworkPolicy from the bundle's manifests; have the operator create it at run time"
					r.add(f)
					break
				}
			}
			if c.csv != nil {
				if missing := requiredFields(c.csv, c.csvFromMeta); len(missing) > 0 {
					f.rule = ruleCSVRequiredFields
					f.msg = fmt.Sprintf("the CSV of bundle %q lacks what operator-pipelines requires: %s", b.Name, strings.Join(missing, "; "))
					f.hint = "fix the ClusterServiceVersion's spec and rebuild the bundle"
					r.add(f)
				}
			}
		}
	}
}

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
	if len([]rune(strings.TrimSpace(c.Description))) < 20 {
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
