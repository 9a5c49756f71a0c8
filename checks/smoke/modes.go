package smoke

import (
	"encoding/json"

	"github.com/catalogbot/catalogbot/catalog"
)

// InstallModesOf returns the install modes supported by the CSV at the head of pkg's channel (its
// default channel when channel is ""), read from the bundle's olm.csv.metadata property or its inline
// CSV (olm.bundle.object). It returns nil when the catalog does not say, and Run then assumes
// AllNamespaces.
func InstallModesOf(c *catalog.Catalog, pkg, channel string) []string {
	if channel == "" {
		for _, p := range c.Packages {
			if p.Name == pkg {
				channel = p.DefaultChannel
			}
		}
	}
	head := ""
	for _, ch := range c.Channels {
		if ch.Package == pkg && ch.Name == channel {
			head = catalog.NewGraph(ch).Head()
		}
	}
	if head == "" {
		return nil
	}
	for _, b := range c.Bundles {
		if b.Package != pkg || b.Name != head {
			continue
		}
		if b.Parsed != nil && b.Parsed.CSVMetadata != nil && len(b.Parsed.CSVMetadata.InstallModes) > 0 {
			return supportedModes(b.Parsed.CSVMetadata.InstallModes)
		}
		for _, p := range b.Properties {
			if p.Type != catalog.PropertyBundleObject {
				continue
			}
			var obj catalog.BundleObject
			if json.Unmarshal(p.Value, &obj) != nil {
				continue
			}
			var csv struct {
				Kind string `json:"kind"`
				Spec struct {
					InstallModes []catalog.InstallMode `json:"installModes"`
				} `json:"spec"`
			}
			if json.Unmarshal(obj.Data, &csv) == nil && csv.Kind == "ClusterServiceVersion" {
				return supportedModes(csv.Spec.InstallModes)
			}
		}
	}
	return nil
}

func supportedModes(ms []catalog.InstallMode) []string {
	out := []string{}
	for _, m := range ms {
		if m.Supported {
			out = append(out, m.Type)
		}
	}
	return out
}
