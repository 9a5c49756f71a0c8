package promote

import (
	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/render/template"
)

// ConfigLine is where a repository configuration (.catalogbot.yaml) lists its catalogs, the line to edit
// for a new one: catalogs.versions, else catalogs.list, else catalogs.pattern (whose catalogs are then
// the directories it matches), else catalogs; 1 and "catalogs" when the file has none of them.
func ConfigLine(data []byte) (int, string) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 1, "catalogs"
	}
	k, cats := template.Field(doc.Content[0], "catalogs")
	if k == nil {
		return 1, "catalogs"
	}
	for _, key := range []string{"versions", "list", "pattern"} {
		if kk, _ := template.Field(cats, key); kk != nil {
			if key == "pattern" {
				return kk.Line, "catalogs.pattern (without catalogs.versions, the directories it matches; list them in catalogs.versions)"
			}
			return kk.Line, "catalogs." + key
		}
	}
	return k.Line, "catalogs"
}
