package template

import (
	"encoding/json"
	"fmt"

	"github.com/catalogbot/catalogbot/catalog"
)

// BundleImages are the bundle images a template names, in the order it names them, read as its render
// reads them: an olm.template.basic template's olm.bundle entries, an olm.semver template's channel
// lists (each image once). Other schemas (olm.substitutes) name none here.
func BundleImages(data []byte) ([]string, error) {
	schema, err := detectSchema(data)
	if err != nil {
		return nil, err
	}
	var out []string
	switch schema {
	case SchemaBasic:
		raw, err := firstDocument(data)
		if err != nil {
			return nil, fmt.Errorf("decoding template: %v", err)
		}
		var bt BasicTemplateData
		if err := json.Unmarshal(raw, &bt); err != nil {
			return nil, fmt.Errorf("unmarshalling template: %s", jsonMessage(err))
		}
		for _, m := range bt.Entries {
			if m == nil || m.Schema != catalog.SchemaBundle {
				continue
			}
			var b struct {
				Image string `json:"image"`
			}
			if err := json.Unmarshal(m.Blob, &b); err != nil {
				return nil, fmt.Errorf("parse bundle: %s", jsonMessage(err))
			}
			if b.Image != "" {
				out = append(out, b.Image)
			}
		}
	case SchemaSemver:
		sv, err := readSemver(data)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, a := range archetypes {
			for _, e := range sv.list(a) {
				if e.Image != "" && !seen[e.Image] {
					seen[e.Image] = true
					out = append(out, e.Image)
				}
			}
		}
	}
	return out, nil
}
